"""Muri's grouping without preemption: groups formed when they start and kept until their
members end (contract v1 groups), run in `planner.simulate`'s engine.

At each release or completion, what runs keeps its GPUs. The waiting jobs, in `muri-s`'s
order (remaining GPU-time), become candidates as in Muri (first fit on the free GPUs, each
fitting job booking a GPU set for itself and the next `max_group - 1` jobs of its GPU
count); while the candidates need more GPUs than are free, jobs of the same GPU count are
merged by Muri's maximum-weight matching on interleaving efficiency. The groups, in the
order of their best member, start first fit where they fit now; the rest wait. Every run
keeps its members together to the end, so the plan needs no preemption.

`kept_plan` runs it with a few orders and returns the best verified plan; `auto` and
`greedy:interleave` compare it with their own plan on instances without preemption.
"""

from __future__ import annotations

import time

from planner.instance import Instance
from planner.metrics import objective_values, objective_vector, strictly_better
from planner.schedule import Schedule, schedule_from_dict
from planner.simulate.engine import simulate
from planner.simulate.engine_state import Stopped
from planner.simulate.model import Decision, SimJob, View, Want
from planner.simulate.muri import Muri
from planner.simulate.output import result_to_schedule_dict
from planner.simulate.packer import Packer
from planner.simulate.policies import Runs, end_on, jobs_of, packer_with, running_runs
from planner.solvers.options import SolveOptions, objectives_of
from planner.solvers.preempt.policy import Deadline, Keys, Memo
from planner.verify import verify

# GPU exponents of the order tried (on cluster_trace.csv without preemption, 8 x 8: a = 0,
# remaining time alone, gives avg JCT 232,073 s; a = 1, Muri's remaining GPU-time, 288,518 s).
GPU_EXPONENTS = (0.0, 0.5, 1.0)
# Above this many jobs Muri's matching makes the engine run too slow (see search.py).
KEPT_MAX_JOBS = 2_000


class KeptMuri(Muri):
    preemptive = False

    def __init__(self, memo: Memo | None = None) -> None:
        super().__init__("muri-s")
        self.name = "muri-kept"
        if memo is not None:  # matching weights and type-level matchings of the instance
            self._weights, self._matchers = memo.weights, memo.matchers
        # the running runs of the view last seen, its `runs` first: their placements and
        # jobs, booked on each packer of the decision, and the GPUs they leave free
        self._running: tuple[object, Runs, int] | None = None

    def _booked(self, view: View) -> tuple[Runs, int]:
        """What `kept_packer` books for `view`, worked out once per engine decision (the
        policy made three packers a decision, each finding the running jobs among all)."""
        if self._running is None or self._running[0] is not view.runs:
            runs = running_runs(view)
            self._running = (view.runs, runs, packer_with(view, runs).free_gpus)
        return self._running[1], self._running[2]

    def _free_packer(self, view: View) -> Packer:
        return packer_with(view, self._booked(view)[0])

    def _capacity(self, view: View) -> int:
        return self._booked(view)[1]

    def decide(self, view: View) -> Decision:
        wants = [Want(info.members, info.placement) for info in view.runs.values()]
        waiting = sorted((s for s in view.jobs if s.run is None), key=self._key)
        if not waiting:
            return Decision(tuple(wants))
        cands = self._candidates(view, waiting)
        packs = self._group(view, cands) if cands else []
        rank = {s.id: i for i, s in enumerate(waiting)}
        packs.sort(key=lambda pk: min(rank[m.id] for m in pk))
        p = self._free_packer(view)
        for pk in packs:
            jobs = jobs_of(pk)
            if p.cannot_fit(jobs):  # `place` fails: no need to work out the run's end
                continue
            pl = p.place(jobs, end_on(p, view, pk, preemptive=False))
            if pl is not None:
                wants.append(Want(tuple(m.id for m in pk), pl))
        return Decision(tuple(wants))


class _Keyed(KeptMuri):
    """KeptMuri with the order `remaining solo time x GPUs^gpu_exp` (muri-s: 1)."""

    def __init__(self, gpu_exp: float, memo: Memo | None = None):
        super().__init__(memo)
        self.keys = Keys(gpu_exp=gpu_exp)
        # each job's key with the view it was worked out from: a waiting job's view stays
        # the same object from one decision to the next (`Engine._view`)
        self._keys: dict[str, tuple[SimJob, tuple[float, int, str]]] = {}

    def _key(self, s: SimJob) -> tuple[float, int, str]:
        got = self._keys.get(s.id)
        if got is None or got[0] is not s:
            got = self._keys[s.id] = (s, self.keys.key(s))
        return got[1]


def kept_plan(instance: Instance, options: SolveOptions) -> Schedule | None:
    """The best verified KeptMuri plan over GPU_EXPONENTS on the objectives (None: no run
    finished or verified, or the instance is not one it plans: see KEPT_MAX_JOBS). The
    runs stop at the time limit, counted from the call, or when `options.stop` is set: on
    trace1.csv whole (1,494 jobs) the three runs took 3.8 s of CPU (4.9 s before they shared
    a Memo and Muri's candidates came from a heap), on `plan generate --family mixed --jobs
    1000 --nodes 32 --seed 1` 9.0 s (12.1 s). `greedy:interleave` and `auto`
    call it after their greedy plan with what that leaves of the limit: with
    `--time-limit 2` the whole command took 2.7-2.8 s (5.0-5.1 s when it had all of it)."""
    il = instance.interleaving
    if not il.enabled or il.max_group < 2 or len(instance.jobs) > KEPT_MAX_JOBS:
        return None
    names = list(objectives_of(instance, options))
    best: tuple[list[float], Schedule] | None = None
    halt = Deadline(time.perf_counter() + options.limit, options.stop)
    memo = Memo(instance)  # the runs share what no order changes, as the search's do
    for a in GPU_EXPONENTS:
        try:
            res = simulate(instance, _Keyed(a, memo), stop=halt)
        except Stopped:
            break
        except (RuntimeError, ValueError, KeyError):
            continue
        s = schedule_from_dict(result_to_schedule_dict(instance, res))
        v = objective_vector(instance, s, names)
        # ties: the earlier order of GPU_EXPONENTS
        if (best is None or strictly_better(v, best[0])) and not verify(instance, s):
            best = (v, s.with_(solver=f"muri-kept:a={a:g}"))
    return None if best is None else best[1]


def the_better(
    instance: Instance, options: SolveOptions, a: Schedule | None, b: Schedule | None
) -> Schedule | None:
    """The better of two plans (either may be None) on the objectives; `a` on ties. A plan
    without the instance's jobs (a planner that found none) is no plan: its objectives
    read 0, and `auto` once returned the preemptive search's empty plan over CP-SAT's
    schedule (tests/test_auto.py)."""
    if a is not None and not a.jobs and instance.jobs:
        a = None
    if b is not None and not b.jobs and instance.jobs:
        b = None
    if a is None or b is None:
        return a or b
    names = list(objectives_of(instance, options))
    va, vb = objective_vector(instance, a, names), objective_vector(instance, b, names)
    return b if strictly_better(vb, va) else a


def better_of(
    instance: Instance, sched: Schedule, kept: Schedule | None, options: SolveOptions
) -> Schedule:
    """`kept` (a kept_plan) under `sched`'s solver name if it beats `sched` on the objectives,
    else `sched`; either way `info["kept"]` says what the comparison found and whether the
    plan returned is Muri's kept grouping. A proved status stays as it is."""
    if kept is None or sched.status in ("optimal", "infeasible"):
        return sched
    names = list(objectives_of(instance, options))
    ok = objective_values(instance, kept, names)
    note = {"solver": kept.solver, "objective": ok[names[0]]}
    if sched.status == "feasible" and sched.jobs:
        os_ = objective_values(instance, sched, names)
        # ties: `sched`, the plan of the solver asked for
        if not strictly_better([ok[n] for n in names], [os_[n] for n in names]):
            return sched.with_(info={**sched.info, "kept": {**note, "returned": False}})
    # the solver name stays the one asked for (greedy rules keep their names); info says
    # that Muri's kept grouping produced the plan
    info = {**sched.info, "kept": {**note, "returned": True}}
    return kept.with_(
        solver=sched.solver or kept.solver,
        status="feasible",
        info=info,
        lower_bound=sched.lower_bound,
    )
