"""A policy that runs a batch plan (`partition.py`): groups of similar length, in Smith's
order, each kept to its last member's end.

Grouping pays through throughput: a pair runs each member at rate r = solo iteration /
group cycle, together r_a + r_b > 1 solo-jobs per unit of time, so the jobs waiting behind
it start sooner; its price is that every member runs slower. When the queue is long (all
jobs at time 0 on a busy cluster) the right groups are a planning problem of their own,
which `partition.Batcher` solves for the waiting jobs.

At each decision: if a waiting job is not in the plan (a release), the waiting jobs are
planned again (`Batcher.plan`, EVALS local-search moves, seeded); then what runs keeps its
GPUs and the plan's groups whose members all wait start first fit, in the plan's order
(backfilling: a group that does not fit is passed over). No run is ever stopped, so the
plan needs no preemption and is valid whether or not the instance enables it.
"""

from __future__ import annotations

import math
import threading
import time

from planner.durations import best_speed, solo_iteration_ms
from planner.instance import Admits, Instance
from planner.metrics import objective_vector, strictly_better
from planner.schedule import Placement, Schedule, schedule_from_dict
from planner.simulate.engine import simulate
from planner.simulate.model import Decision, PlacementT, Policy, SimJob, View, Want
from planner.simulate.output import result_to_schedule_dict
from planner.simulate.packer import Packer
from planner.simulate.policies import end_on, jobs_of, kept_packer, placed_as, settle
from planner.solvers.lanes import lanes, side_by_side
from planner.solvers.options import SolveOptions, objectives_of
from planner.solvers.preempt.partition import Batcher, Ids, Timed
from planner.solvers.preempt.policy import Keys
from planner.verify import verify

# Local-search moves per plan: on all-at-zero windows of 60 Muri jobs a plan costs well
# under a second (experiments/preemption_targets.py).
EVALS = 10_000
# Annealing heat of a first plan (partition._Search): on trace2's all-at-zero window of
# jobs 0-59 without preemption, 0.01 gives 1.12-1.18x sjf's avg JCT over three seeds,
# hill climbing (0) 1.11-1.12x.
HEAT = 0.01
# Time units by which a planned start may be "now" (float noise of the estimate).
EPS = 1e-6
# Moves per later plan (Replan), warm-started from the last one.
REPLAN_EVALS = 300
# Batch plans are made only for a batch: every job released at the same time, at most this
# many (a plan of 60 jobs takes about a second; the estimate grows with jobs x groups).
BATCH_MAX_JOBS = 150
# Share of the time limit `batch_plan` may spend on further seeds after the first.
BATCH_SHARE = 0.4
# Below this time limit (seconds) the preemptive planner makes no batch starts: a first
# plan of 60 jobs costs about a second inside one engine decision, which the time limit
# cannot cut. `plan:auto` plans every decision as a batch with 1 s: with the batch starts
# trace2's first 200 jobs took 5.0 s of policy time per decision
# (experiments/policies.py --traces trace2 --policies plan:auto).
BATCH_MIN_LIMIT = 5.0
# Release plans (`release_plan`) made by `batch_plan`: one seed annealing for this share
# of the time limit (the estimate is a non-delay list schedule, about 0.9 ms on
# muri-testbed-100). On the testbed, four seeds each, avg JCT of the engine's run: with the
# first estimate (3.4 ms) 3,000 moves 90,506-102,730 s, 6,000 (about 11 s) 88,039-92,045 s,
# 60 s 83,316 and 83,960 s; with this one 12 s 84,147-89,729 s. The time is CP-SAT's
# (auto): instances/bench/gen-dl-40j-4n-s1 at 30 s, avg JCT before 5,882 and 6,249 s, with
# two seeds in 40% of the limit 6,115 and 6,442 s, with this share 6,189 and 6,192 s.
RELEASE_SHARE = 0.2
# ... and with two lanes (`planner.solvers.lanes`: both cores anneal, one seed each, and the
# better plan is kept), this share. Testbed, `auto --time-limit 60`, runs alternating in
# one batch (experiments/release_plans.py's instance; every schedule verified): gap to the
# bound with 0.2 24.5 / 23.2 / 23.7 / 24.9 / 22.9%, with 0.3 23.6 / 24.4 / 23.1 / 22.8 /
# 23.6%; the better lane's plan 84,381-85,314 s against 84,249-84,577 s.
RELEASE_SHARE_TWO_LANES = 0.3
# Annealing heat of a release plan (partition._Search). On the testbed, 12 s, seeds 0-3:
# 0.003 84,211-89,116 s, 0.01 84,147-89,729 s, 0.03 84,546-86,132 s, 0.1 84,362-93,483 s.
RELEASE_HEAT = 0.03


def _plannable(instance: Instance) -> bool:
    """Groups allowed, and few enough jobs for a batch plan."""
    il = instance.interleaving
    return il.enabled and il.max_group > 1 and 1 < len(instance.jobs) <= BATCH_MAX_JOBS


def _modelled(instance: Instance) -> bool:
    """Jobs `partition.Batcher` plans as the rules want: profiled, on GPUs, without
    dependencies, pool demands or strict priorities that differ, and no present
    (contract §9). Elsewhere its plans break rules the engine then holds them to (on
    `plan generate --family mixed` instances with every release at 0, `Replan` left jobs
    waiting and `Batch` failed; the search's start lost the time)."""
    strict = instance.priority_policy == "strict"
    return (
        all(j.profiled and j.gpus >= 1 and not j.after and not j.demand for j in instance.jobs)
        and not (strict and len({j.priority for j in instance.jobs}) > 1)
        and not instance.is_live
    )


def is_batch(instance: Instance) -> bool:
    """Every job released at once, few enough for a batch plan, groups allowed, jobs it
    models and no reservations."""
    return (
        _plannable(instance)
        and len({j.release for j in instance.jobs}) == 1
        and _modelled(instance)
        and not instance.reservations
    )


def batch_starts(instance: Instance, limit: float) -> list[Keys]:
    """The preemptive planner's extra starts (search.py) on a batch: `Replan` (mode
    "batch") and the kept plan `Batch` (mode "batch-kept", valid with preemption too; on
    trace4 jobs 60-119 it beats Replan, experiments/preemption_targets.py); none when the
    time limit is under BATCH_MIN_LIMIT."""
    if not is_batch(instance) or limit < BATCH_MIN_LIMIT:
        return []
    return [BatchKeys(mode="batch"), BatchKeys(mode="batch-kept")]


def batch_policy(keys: Keys) -> Policy:
    """The policy of a batch mode, with a seed that follows the keys' random factors, so
    every point the order search tries (search.py) also anneals from another seed."""
    seed = round(sum(keys.mult.values()) * 1000) % 2**31
    return Batch(keys, seed=seed) if keys.mode == "batch-kept" else Replan(keys, seed=seed)


class BatchKeys(Keys):
    """`Keys` whose modes "batch" and "batch-kept" run `Replan` and `Batch` (see `make` in
    search.py)."""

    @property
    def policy(self) -> str:
        if self.mode.startswith("batch"):
            return self.mode
        return Keys.policy.fget(self)  # type: ignore[attr-defined]


class Batch(Policy):
    """Runs the batch plan of the waiting jobs (module doc)."""

    preemptive = False

    def __init__(
        self, keys: Keys, evals: int = EVALS, seed: int = 0, fixed: list[Timed] | None = None
    ):
        self.name = "batch" if fixed is None else "release"
        self.keys, self.evals, self.seed = keys, evals, seed
        # `fixed`: a plan of every job made beforehand (`release_plan`), never remade
        self.fixed = fixed is not None
        self.timed: list[Timed] | None = fixed
        self.plan: list[Ids] = [t.ids for t in fixed or []]
        self.planned: set[str] = set()
        self.t0 = 0

    def decide(self, view: View) -> Decision:
        waiting = sorted((s for s in view.jobs if s.run is None), key=self.keys.key)
        wait_ids = {s.id for s in waiting}
        if not self.fixed and wait_ids - self.planned:
            b = Batcher(view.instance, waiting)
            self.plan = b.plan(self.evals, self.seed, HEAT)
            # the estimate's starts hold only on a cluster nothing holds
            self.timed = b.timed(self.plan, as_listed=True) if not view.runs else None
            self.planned, self.t0 = set(wait_ids), view.now
        by_id = {s.id: s for s in view.jobs}
        p = kept_packer(view)
        wants = [Want(info.members, info.placement) for info in view.runs.values()]
        wake: float | None = None
        timed = self.timed or [Timed(g, 0.0, ()) for g in self.plan]
        for t in timed:
            if not all(i in wait_ids for i in t.ids):
                continue
            if self.t0 + t.start > view.now + EPS:
                wake = self.t0 + t.start if wake is None else min(wake, self.t0 + t.start)
                continue
            members = [by_id[i] for i in t.ids]
            pl = on_nodes(view, p, members, t.nodes)
            if pl is not None:
                wants.append(Want(t.ids, pl))
        return Decision(tuple(wants), None if wake is None else math.ceil(wake - EPS))


def on_nodes(
    view: View, p: Packer, members: list[SimJob], nodes: tuple[int, ...]
) -> PlacementT | None:
    """The group booked on `nodes` (c GPUs of one node, or all of each node) if they are
    free now; first fit anywhere when no nodes are given."""
    jobs, end = jobs_of(members), end_on(p, view, members, preemptive=False)
    if not nodes:
        return p.place(jobs, end)
    inst = view.instance
    c = max(1, members[0].gpus)
    if len(nodes) == 1 and c <= inst.nodes[nodes[0]].gpus:
        free = sorted(p.free[nodes[0]])
        pl: PlacementT = (Placement(inst.nodes[nodes[0]].name, tuple(free[:c])),)
        if len(free) < c:
            return None
    else:
        pl = tuple(Placement(inst.nodes[i].name, tuple(range(inst.nodes[i].gpus))) for i in nodes)
    return pl if p.take(pl, jobs, end) else None


class Replan(Policy):
    """With preemption: at every decision all unfinished jobs are planned again from their
    remaining work (`Batcher.plan`, warm-started from the last plan, REPLAN_EVALS moves),
    and the groups the plan starts now run; `settle` keeps an unchanged run on its GPUs, a
    changed one restarts (contract §8 restart costs)."""

    preemptive = True

    def __init__(self, keys: Keys, evals: int = EVALS, seed: int = 0):
        self.name = "batch"
        self.keys, self.evals, self.seed = keys, evals, seed
        self.plan: list[Ids] | None = None

    def decide(self, view: View) -> Decision:
        order = sorted(view.jobs, key=self.keys.key)
        if not order:
            return Decision(())
        b = Batcher(view.instance, order)
        if self.plan is None:
            self.plan = b.plan(self.evals, self.seed, HEAT)
        else:
            ids = {s.id for s in order}
            start: list[Ids] = []
            for g in self.plan:
                left = tuple(i for i in g if i in ids)
                if not left:
                    continue
                # what is left of a group need not be a group contract §4 admits (a triple
                # can be, two of its members not): then its members start alone
                start.extend([left] if b.ends(left) is not None else [(i,) for i in left])
            seen = {i for g in start for i in g}
            start += [(s.id,) for s in order if s.id not in seen]
            self.plan = b.plan(REPLAN_EVALS, self.seed + len(ids), 0.0, start)
        timed = b.timed(self.plan, as_listed=True) or []
        by_id = {s.id: s for s in order}
        p = Packer(view.instance, view.now)
        chosen = []
        for t in timed:
            if t.start > EPS:
                continue
            members = [by_id[i] for i in t.ids]
            pl = p.place(jobs_of(members), end_on(p, view, members, preemptive=False))
            if pl is not None:
                chosen.append(placed_as(members, pl))
        return Decision(settle(view, chosen))


def is_release_batch(instance: Instance) -> bool:
    """Jobs released at different times that `release_plan` plans in one go: no preemption
    (the preemptive planner regroups instead), groups allowed, at most BATCH_MAX_JOBS
    profiled jobs, no dependencies, no present (contract §9; `plan replan` plans the
    waiting jobs of a live state as such an instance, `planner.live.residual`) and only GPU
    reservations for nobody that start by the first release (the estimate takes them as
    GPUs busy until their end, `partition.Batcher`)."""
    first = min((j.release for j in instance.jobs), default=0)
    return (
        not instance.preemption.enabled
        and _plannable(instance)
        and len({j.release for j in instance.jobs}) > 1
        and _modelled(instance)
        and all(
            r.pool is None and r.admits == Admits() and r.start <= first
            for r in instance.reservations
        )
    )


def unstarted(instance: Instance) -> list[SimJob]:
    """Every job as a policy sees it at its release before anything ran: all its work left
    (iterations, or time for an explicit duration), and that work in solo time units on
    its fastest node group (`durations.best_speed`), as the engine's views show it."""
    out = []
    for j in instance.jobs:
        left = float(j.iterations or 0) if j.model is not None else float(j.duration or 0)
        solo = left
        if j.model is not None:
            it = solo_iteration_ms(instance.gpu_profile(j), best_speed(instance, j))
            solo = left * it / instance.unit_ms
        out.append(SimJob(j, j.release, left, solo, 0, None))
    return out


def release_plan(
    instance: Instance, seed: int, seconds: float, stop: threading.Event | None = None
) -> Batch:
    """`Batch` running one plan of every job made at time 0 knowing every release
    (`partition.Batcher` with releases): each group starts at its planned time on its
    planned nodes and keeps its GPUs to its last member's end. The search anneals for
    `seconds`, or until `stop` is set."""
    jobs = sorted(unstarted(instance), key=lambda s: (s.remaining_solo or 0.0, s.id))
    b = Batcher(instance, jobs, {j.id: float(j.release) for j in instance.jobs})
    plan = b.plan(0, seed, RELEASE_HEAT, seconds=seconds, stop=stop)
    return Batch(Keys(), seed=seed, fixed=b.timed(plan) or [])


Kept = tuple[list[float], Schedule]


def batch_planned(instance: Instance) -> bool:
    """Whether `batch_plan` makes plans for `instance` (else it returns None at once)."""
    return is_batch(instance) or is_release_batch(instance)


def batch_plan(instance: Instance, options: SolveOptions) -> Schedule | None:
    """The best verified `Batch` plan (no preemption): on a batch over seeds 0, 1, ...
    while BATCH_SHARE of the time limit lasts (at least one each lane), on a release batch
    (`is_release_batch`) one `release_plan` per lane annealing for RELEASE_SHARE of it
    (RELEASE_SHARE_TWO_LANES with two); None on other instances or when no plan verified.
    With two lanes (`planner.solvers.lanes`) a forked child takes the odd seeds."""
    if not batch_planned(instance):
        return None
    batch = is_batch(instance)
    two = lanes(options.workers) == 2
    release_share = RELEASE_SHARE_TWO_LANES if two else RELEASE_SHARE
    share = (BATCH_SHARE if batch else release_share) * options.limit
    t0 = time.perf_counter()

    def lane(first: int, step: int) -> Kept | None:
        return _seeds(instance, options, batch, range(first, 1 << 30, step), t0 + share)

    if not two:
        best = lane(0, 1)
    else:
        # (a lane that failed leaves the odd seeds untried; the plan stands on the even ones)
        theirs, best, _ = side_by_side(lambda: lane(1, 2), lambda: lane(0, 2), share, options.stop)
        # ties: the even seeds' lane
        if theirs is not None and (best is None or strictly_better(theirs[0], best[0])):
            best = theirs
    return None if best is None else best[1]


def _seeds(
    instance: Instance, options: SolveOptions, batch: bool, seeds: range, until_t: float
) -> Kept | None:
    """The best verified plan over `seeds` (offsets to `options.seed`): the first always,
    the next ones on a batch while the clock is before `until_t` and no stop is set."""
    names = list(objectives_of(instance, options))
    best: Kept | None = None
    for seed in seeds:
        if seed != seeds[0] and (
            not batch or time.perf_counter() >= until_t or options.stop.is_set()
        ):
            break
        s0 = options.seed + seed
        try:
            if batch:
                pol = Batch(Keys(), seed=s0)
            else:
                pol = release_plan(instance, s0, until_t - time.perf_counter(), options.stop)
            res = simulate(instance, pol)
        except (RuntimeError, ValueError, KeyError):
            break  # a rule the engine does not know: the other planners answer
        s = schedule_from_dict(result_to_schedule_dict(instance, res))
        v = objective_vector(instance, s, names)
        # ties: the earlier seed
        if (best is None or strictly_better(v, best[0])) and not verify(instance, s):
            best = (v, s.with_(solver=f"{pol.name}-kept:seed={s0}"))
    return best
