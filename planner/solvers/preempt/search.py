"""Planning with preemption (contract §8): Muri's online engine, run with full knowledge,
as the start, then a search over its job order.

Start: `planner.simulate`'s engine with `muri-s` (interleaving enabled) or `srsf-p` (not):
at every release and completion it stops jobs and re-forms groups. The planner knows every
release, so the run is a plan. With interleaving, Muri's policy with its groups re-formed
for throughput (`regroup.py`), `srsf-p` (the same engine, no groups) and the filler policy
(`filler.py`, FILLER_SLACKS) are further engine starts, and the greedy list plan (no
preemption, `solve_greedy`) another: the best is the incumbent, so the result is never
worse than any start.

Search (until the time limit or `options.stop`), each candidate one engine run with the
order `remaining solo time x GPUs^a / weight? x mult[job]` (`policy.Keys`):
1. the GPU exponent a in SEARCH_GPU_EXPONENTS with the incumbent's way of grouping, then the
   other ways of grouping with the incumbent's exponent, then with weights (when weights
   differ), each combination once (the starts count);
2. then the incumbent's per-job factors of a random window of WINDOW_SHARE of the jobs (in
   release order), each multiplied by exp(N(0, s)) with s drawn from SIGMAS (random keys
   around the incumbent, a (1+1) evolution strategy). Such a run resumes from the
   incumbent's last engine snapshot before the window's first release (`engine.Snapshot`:
   the decisions before it cannot differ), about a third of a whole run on average.
A candidate that beats the incumbent on the objectives (lexicographic) becomes the
incumbent; when the search ends, the last incumbent that `planner.verify` passes is the
result (`settle`). An engine run that fails (a job it cannot place: the engine does not
know every rule of the instance) is counted and skipped; if the start itself fails, the
greedy plan is returned.

A candidate must also not end later than the better start (makespan), so the search does
not trade the last job's end for average JCT.

Two lanes (`planner.solvers.lanes`, `--workers` 2 or more, Linux, two cores): after the
starts, a forked child runs random keys from seed + 1 while this process runs the
candidates above; the child's settled plan is the result when it is better. On
cluster_trace.csv at 120 s (one run each, docs/PREEMPTION.md): 101,489 s average JCT with
one lane, 101,039 s with two (the child's plan won; 139 and 153 engine runs, the starts
counted in both). On an instance the weighted policy plans (`weighted.eligible`: at most
100 jobs, ...), the child runs that policy instead, from the start of the time limit, one
run per beta of `weighted.BETAS` while its time lasts: on the five heavy all-at-zero
windows of 60 Muri jobs with preemption, `auto` 60 s, its plan won on all five (trace1 jobs
120-179: 421,425 s against 437,528 s before it; docs/PREEMPTION.md has the figures).

Measured on cluster_trace.csv (400 jobs, 8 x 8, Muri's restart costs; docs/PREEMPTION.md,
its first table): 120 s give 101,489 s average JCT with one lane (muri-s: 120,101 s).

Engine runs cost time that grows with decisions x queue: above MURI_MAX_JOBS jobs Muri's
matching is replaced by `srsf-p` for the start and no search is made (measured, one core
shared: muri-s 400 jobs 2.5 s, 2,000 jobs on 32 nodes 230 s; srsf-p 2,000 jobs 19 s,
10,000 jobs on 128 nodes 91 s of CPU); above SRSF_MAX_JOBS the engine is not run and the
greedy list plan (no preemption, valid for a preemptive instance) is returned.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from planner.bounds import with_bounds
from planner.instance import Instance
from planner.metrics import objective_values, objective_vector, strictly_better
from planner.schedule import Schedule, schedule_from_dict
from planner.simulate.engine import simulate
from planner.simulate.engine_state import Snapshot, Stopped
from planner.simulate.model import Policy
from planner.simulate.output import result_to_schedule_dict
from planner.solvers.greedy import solve_greedy
from planner.solvers.lanes import lanes, side_by_side
from planner.solvers.options import Progress, SolveOptions, objectives_of
from planner.solvers.preempt.batch import batch_policy, batch_starts
from planner.solvers.preempt.filler import Filler
from planner.solvers.preempt.policy import REGROUP, Deadline, KeyedMuri, KeyedSrsf, Keys, Memo
from planner.solvers.preempt.weighted import (
    BETA,
    BETAS,
    RESERVE,
    WeightedRegroup,
    eligible,
    reset_highs_threads,
)
from planner.verify import verify

# (chosen, not tuned; `kept.GPU_EXPONENTS`, measured, are the kept grouping's)
SEARCH_GPU_EXPONENTS = (1.5, 1.0, 0.5, 0.0)
# Random keys change only the jobs of one window of releases (this share of the jobs), so a
# gain in one busy period is not undone by noise elsewhere. On cluster_trace.csv, 100 engine
# runs from the same starts (one run each, avg JCT): share 0.1 with sigmas (0.1, 0.3, 0.6)
# 108,834 s; 0.05 107,809 s; 0.025 111,198 s; 0.05 with (0.3, 0.6, 1.0) 107,144 s.
SIGMAS = (0.3, 0.6, 1.0)
WINDOW_SHARE = 0.05
# Fillers' slack (filler.py) of the extra starts: on all-at-zero 60-job windows of trace2,
# 0.3 gives avg JCT 503,894 s against srsf-p's 521,293 (0.1: 521,293; 0.6: 507,615); on
# cluster_trace.csv, 1.0 gives 178,551 against 0.3's 202,796 (muri-s: 120,101).
FILLER_SLACKS = (0.3, 1.0)
# Decisions between two snapshots of an engine run (each copies the engine's state: about
# 400 segment lists on cluster_trace.csv, whose 800 decisions give 100 snapshots).
SNAPSHOT_EVERY = 8
MURI_MAX_JOBS = 600
SRSF_MAX_JOBS = 3_000


def make(
    interleave: bool, keys: Keys, memo: Memo | None = None, deadline: float = math.inf
) -> Policy:
    """The policy `keys.mode` names; a preemptive list policy when the instance does not
    interleave."""
    if not interleave or keys.mode == "solo":
        return KeyedSrsf(keys)
    if keys.mode == "weighted":
        return WeightedRegroup(deadline, BETA if keys.beta is None else keys.beta, memo)
    if keys.mode.startswith("batch"):
        return batch_policy(keys)
    if keys.mode == "filler":
        return Filler(keys, keys.slack)
    return KeyedMuri(keys, memo)


def solve_preempt(
    instance: Instance, options: SolveOptions, search: bool = True, plain: Schedule | None = None
) -> Schedule:
    """The best verified plan of the engine runs tried within `options.limit` seconds
    (`search=False`: the start only, the better of the engine run and the greedy plan).
    `plain` replaces the greedy plan: a live state's (contract §9) is the residual's
    (`planner.solvers.dispatch`), whose running jobs the engine may stop at `now`."""
    t0 = time.perf_counter()
    s = _Search(instance, options, t0, plain)
    two = search and lanes(options.workers) == 2
    theirs = None
    if two and s.interleave_runs and eligible(instance):
        # the weighted policy's run (`weighted.py`) takes most of the time limit: it gets
        # the second lane from the start, while this lane makes the starts and searches
        limit = options.limit
        theirs, _, s.lane_missing = side_by_side(
            s.weighted_lane, s.start_and_explore, limit, options.stop
        )
    else:
        s.start()
        if search and s.engine_ok and s.interleave_runs:
            if two and not s.out_of_time():
                left = s.deadline - time.perf_counter()
                theirs, _, s.lane_missing = side_by_side(
                    s.second_lane, s.explore, left, options.stop
                )
            else:
                s.explore()
    s.settle()
    if theirs is not None:
        s.take(*theirs)
    return s.result()


class _Search:
    def __init__(
        self, instance: Instance, options: SolveOptions, t0: float, plain: Schedule | None
    ):
        self.instance, self.options, self.t0 = instance, options, t0
        self.names = list(objectives_of(instance, options))
        self.deadline = t0 + options.limit
        self.interleave = instance.interleaving.enabled and instance.interleaving.max_group > 1
        # Muri's matching is too slow on long queues (module docstring); a live state's
        # done jobs are no part of them
        active = sum(1 for j in instance.jobs if j.state != "done")
        self.interleave_runs = self.interleave and active <= MURI_MAX_JOBS
        self.engine_runs = active <= SRSF_MAX_JOBS
        self.makespan_cap: float | None = None
        self.rng = random.Random(options.seed)
        self.best: Schedule | None = None
        self.best_val: list[float] = []
        self.best_keys = Keys()
        self.engine_ok = False
        self.found_by = "start"
        self.stats = dict.fromkeys(
            ("runs", "resumed", "cut", "failed", "rejected", "improvements"), 0
        )
        self.halt = Deadline(self.deadline, options.stop)
        self.start_values: dict[str, float] = {}
        self.memo = Memo(instance)
        self.snaps: list[Snapshot] = []  # the incumbent engine run's
        self.last_snaps: list[Snapshot] = []
        self.history: list[tuple[Schedule, list[float], Keys | None, str]] = []
        self.plain = plain
        self.lane_missing: str | None = None  # why the second lane gave no result
        self.tried: set[tuple[float, bool, str, float, bool]] = set()
        # the engine releases a live state's waiting jobs at `now` at the earliest
        self.releases = {j.id: max(j.release, instance.now) for j in instance.jobs}

    def explore(self, candidates: Iterator[Keys] | None = None) -> None:
        """Engine runs of the candidates (default: `candidates()`) until the time is up."""
        for keys in self.candidates() if candidates is None else candidates:
            if self.out_of_time():
                break
            self.attempt(keys)

    def start_and_explore(self) -> None:
        self.start()
        if self.engine_ok:
            self.explore()

    def weighted_lane(self) -> tuple[Schedule, list[float], Keys, str, int]:
        """In a forked child: the weighted policy's engine runs, one per beta of
        `weighted.BETAS` while the time lasts, the best verified (RuntimeError when every
        run was cut or broke the rules: the child then gives nothing)."""
        self.options = replace(self.options, progress=None)  # the terminal is the parent's
        # HiGHS's thread pool does not survive a fork: a MIP in the child of a process that
        # had solved one hung (`tests/test_weighted.py`)
        reset_highs_threads()
        best: tuple[Schedule, list[float], Keys] | None = None
        took = 0.0
        for beta in BETAS:
            if best is not None and self.weighted_until() - time.perf_counter() < 1.5 * took:
                break  # the next run would be cut
            t0 = time.perf_counter()
            keys = Keys(mode="weighted", beta=beta)
            plan = self.run(keys)
            took = max(took, time.perf_counter() - t0)
            if plan is None or verify(self.instance, plan):
                continue
            val = self.value(plan)
            if best is None or strictly_better(val, best[1]):  # ties: the earlier beta
                best = (plan, val, keys)
        if best is None:
            raise RuntimeError("no plan of the weighted policy")
        label = f"engine {best[2].policy} (beta {best[2].beta:g})"
        return best[0], best[1], best[2], label, self.stats["runs"]

    def second_lane(self) -> tuple[Schedule, list[float], Keys, str, int]:
        """In a forked child (`planner.solvers.lanes`): random keys around the incumbent
        from another seed (the structured candidates are the first lane's), settled;
        (plan, values, keys, found by, engine runs)."""
        self.rng = random.Random(self.options.seed + 1)
        self.options = replace(self.options, progress=None)  # the terminal is the parent's
        self.explore(self.random_keys())
        self.settle()
        assert self.best is not None
        val = self.value(self.best)  # settle may have fallen back to the greedy plan
        return self.best, val, self.best_keys, self.found_by, self.stats["runs"]

    def take(self, best: Schedule, val: list[float], keys: Keys, label: str, runs: int) -> None:
        """The second lane's settled plan becomes the result if it beats this lane's."""
        self.stats["second_lane_runs"] = runs
        if self.best is not None and val >= self.value(self.best):
            return
        self.best, self.best_val, self.best_keys = best, val, keys
        self.found_by = f"{label} (second lane)"

    def policy_name(self) -> str:
        return "muri-s" if self.interleave_runs else "srsf-p"

    def out_of_time(self) -> bool:
        return self.options.stop.is_set() or time.perf_counter() >= self.deadline

    def value(self, s: Schedule) -> list[float]:
        return objective_vector(self.instance, s, self.names)

    def run(self, keys: Keys) -> Schedule | None:
        """One engine run as a schedule; None if the engine could not finish it, or the time
        limit or the caller's stop came first. A run that
        changes only the incumbent's factors of some jobs resumes from the incumbent's last
        snapshot before the first of those jobs is released (decisions before it cannot
        differ); `last_snaps` keeps the run's snapshots for when it becomes the incumbent."""
        self.stats["runs"] += 1
        if not keys.mult:
            self.tried.add(keys.shape)
        start = self.resume_point(keys)
        if start is not None:
            self.stats["resumed"] += 1
        prefix = [x for x in self.snaps if start is not None and x.t < start.t]
        record: list[Snapshot] = []
        try:
            res = simulate(
                self.instance,
                make(self.interleave_runs, keys, self.memo, self.weighted_until()),
                start=start,
                record=record,
                every=SNAPSHOT_EVERY,
                stop=self.halt,
            )
            self.last_snaps = prefix + record
            return schedule_from_dict(result_to_schedule_dict(self.instance, res))
        except Stopped:
            self.stats["cut"] += 1
            return None
        except (RuntimeError, ValueError, KeyError):
            self.stats["failed"] += 1
            return None

    def weighted_until(self) -> float:
        """When the weighted policy hands its decisions to Muri's regrouping: early enough
        that its run ends within the time limit, not cut (`weighted.RESERVE`)."""
        return self.deadline - RESERVE * self.options.limit

    def resume_point(self, keys: Keys) -> Snapshot | None:
        base = self.best_keys
        if not self.snaps or keys.shape != base.shape:
            return None
        if keys.mode.startswith("batch"):  # batch.Replan keeps a plan between decisions
            return None
        changed = [a for a in {*keys.mult, *base.mult} if keys.mult.get(a) != base.mult.get(a)]
        if not changed:
            return None
        first = min(self.releases[a] for a in changed)
        before = [x for x in self.snaps if x.t <= first]
        return before[-1] if before else None

    def offer(self, s: Schedule, label: str, keys: Keys | None) -> bool:
        """Make `s` the incumbent if it is better; it is verified when the search ends
        (`settle`), which falls back to the previous incumbent if it does not pass (one
        verification of a 400-job plan takes about a second: as long as a dozen resumed
        engine runs)."""
        v = self.value(s)
        if self.best is not None and v >= self.best_val:
            return False
        ms = objective_values(self.instance, s, ["makespan"])["makespan"]
        if self.makespan_cap is not None and ms > self.makespan_cap:
            return False
        self.history.append((s, v, keys, label))
        self._adopt(len(self.history) - 1)
        self.snaps = self.last_snaps if keys is not None else []
        self.report(f"incumbent: {label}")
        return True

    def _adopt(self, i: int) -> None:
        s, v, keys, label = self.history[i]
        self.best, self.best_val, self.found_by = s, v, label
        self.best_keys = keys if keys is not None else Keys()

    def settle(self) -> None:
        """The last incumbent that passes `planner.verify` becomes the result."""
        while self.history:
            s = self.history[-1][0]
            if not verify(self.instance, s):
                self._adopt(len(self.history) - 1)
                return
            self.stats["rejected"] += 1
            self.history.pop()
        self.best, self.found_by = self.plain, "greedy (nothing else passed the verifier)"

    def report(self, msg: str) -> None:
        if self.options.progress is not None and self.best_val:
            self.options.progress(Progress(self.best_val[0], None, msg))

    def start(self) -> None:
        # the greedy plan first (offered last, so it wins no tie): it answers when the
        # engine's runs meet the deadline
        if self.plain is None:
            self.plain = solve_greedy(self.instance, None, self.options)
        plain = self.plain
        eng = self.run(Keys()) if self.engine_runs else None
        if eng is not None:
            self.engine_ok = self.offer(eng, f"engine {self.policy_name()}", Keys())
            if self.engine_ok:
                self.start_values["engine"] = self.best_val[0]
        for keys in self.other_starts():
            if self.out_of_time():  # its run would be cut at once
                break
            other = self.run(keys)
            if other is not None:
                self.start_values[f"engine {keys.policy}"] = self.value(other)[0]
                self.engine_ok = self.offer(other, f"engine {keys.policy}", keys) or self.engine_ok
        if plain.jobs:
            self.start_values["greedy"] = self.value(plain)[0]
            self.offer(plain, self._plain_label(plain), None)
            if self.best is plain:
                self.best_keys = Keys()
        elif self.best is None:
            self.best = plain
        if self.best is not None and self.best.jobs:
            self.makespan_cap = objective_values(self.instance, self.best, ["makespan"])["makespan"]

    def _plain_label(self, plain: Schedule) -> str:
        if self.instance.is_live:
            return f"residual {plain.solver} (running jobs kept to their ends)"
        return f"greedy:{plain.info.get('rule', '')} (no preemption)"

    def other_starts(self) -> list[Keys]:
        """With interleaving: Muri's groups re-formed for throughput (regroup.py), the same
        order without groups, with fillers (filler.py) and, on a batch, similar-length
        groups re-planned or kept (batch.py)."""
        if not self.interleave_runs:
            return []
        fillers = [Keys(mode="filler", slack=x) for x in FILLER_SLACKS]
        return [
            REGROUP,
            Keys(mode="solo"),
            *fillers,
            *batch_starts(self.instance, self.options.limit),
        ]

    def candidates(self) -> Iterator[Keys]:
        for keys in self.structured():
            # each order and way of grouping once (`run` records the shape it ran)
            if keys.shape not in self.tried:
                yield keys
        yield from self.random_keys()

    def structured(self) -> Iterator[Keys]:
        """The incumbent with each GPU exponent, then each way of grouping, then weights."""
        base = self.best_keys
        for a in SEARCH_GPU_EXPONENTS:
            yield replace(base, gpu_exp=a, mult={})
        for mode, slack, regroup in (
            ("muri", 0.0, True),
            ("muri", 0.0, False),
            ("solo", 0.0, False),
            *(("filler", x, False) for x in FILLER_SLACKS),
        ):
            yield replace(base, mode=mode, slack=slack, regroup=regroup, mult={})
        if len({j.weight for j in self.instance.jobs}) > 1:
            for a in SEARCH_GPU_EXPONENTS:
                yield replace(base, gpu_exp=a, weighted=True, mult={})

    def random_keys(self) -> Iterator[Keys]:
        ids = [j.id for j in sorted(self.instance.jobs, key=lambda j: (j.release, j.id))]
        span = max(1, int(len(ids) * WINDOW_SHARE))
        while True:
            base = self.best_keys
            sigma = self.rng.choice(SIGMAS)
            lo = self.rng.randrange(max(1, len(ids) - span + 1))
            mult = dict(base.mult)
            for jid in ids[lo : lo + span]:
                mult[jid] = base.mult.get(jid, 1.0) * math.exp(self.rng.gauss(0.0, sigma))
            yield replace(base, mult=mult)

    def attempt(self, keys: Keys) -> None:
        s = self.run(keys)
        if s is None:
            return
        label = f"engine {keys.policy} keys a={keys.gpu_exp:g}"
        label += " weighted" if keys.weighted else ""
        if keys.mult:
            label += " random keys"
        if self.offer(s, label, keys):
            self.stats["improvements"] += 1

    def result(self) -> Schedule:
        assert self.best is not None
        best = self.best
        engine = self.engine_ok and not self.found_by.startswith(("greedy", "residual"))
        policy = self.best_keys.policy if self.interleave_runs else "srsf-p"
        plain = "the residual's plan" if self.instance.is_live else "greedy (no preemption)"
        searched = self.found_by.startswith("engine") and "keys" in self.found_by
        solver = f"preempt:{policy}" + ("+search" if searched else "") if engine else best.solver
        info: dict[str, Any] = {
            **{k: v for k, v in best.info.items() if k not in ("simulation",)},
            "preempt": {
                "start": (
                    f"engine {self.policy_name()}"
                    + "".join(f", engine {k.policy}" for k in self.other_starts())
                    + f" and {plain}"
                    if self.engine_runs
                    else f"{plain}: engine skipped above {SRSF_MAX_JOBS:,} jobs"
                ),
                "found_by": self.found_by,
                "start_objective": self.start_values,
                **self.stats,
                "time_s": round(time.perf_counter() - self.t0, 3),
            },
        }
        if self.lane_missing is not None:
            info["preempt"]["second_lane"] = self.lane_missing
        if "simulation" in best.info:
            info["simulation"] = best.info["simulation"]
        if not engine and self.stats["cut"] and not self.engine_ok:  # said in the summary
            cut_by = "the interrupt" if self.options.stop.is_set() else "the time limit"
            info["reason"] = (
                f"{cut_by} cut every engine run, so this is {plain}; "
                "a longer --time-limit gives the preemptive plan"
            )
        out = best.with_(solver=solver, info=info, wall_s=time.perf_counter() - self.t0)
        if self.instance.is_live:  # the residual's bounds, if any, are `dispatch`'s to judge
            return out
        return with_bounds(self.instance, out, self.names, self.options.bound_iterations)
