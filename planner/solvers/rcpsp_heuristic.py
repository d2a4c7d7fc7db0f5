"""A fast makespan heuristic for RCPSP-like instances: a genetic search over serial
schedules with forward-backward improvement.

Applies when the instance is a plain resource-constrained project (`applicable`): every
job has `gpus: 0` and an explicit duration, resources are pools only, no releases,
deadlines, reservations or instance horizon cuts, and strict priority cannot be broken.
Then a schedule is just start times, and the classic RCPSP heuristics apply:

- Serial schedule generation (SGS): jobs are taken one at a time, the eligible job
  (all predecessors placed) with the smallest priority key first, and started at the
  earliest time the pools allow for its whole duration (a time-indexed usage profile).
- Priority rules: LFT and LST (latest finish/start from the critical path), MTS (most
  total successors), GRPW (greatest rank positional weight), and random-biased variants
  of them: with the greedy planner's schedules, the first population.
- Forward-backward improvement (justification): right-justify the schedule against its
  makespan (a serial SGS on the reversed network, jobs by decreasing finish time), then
  left-justify it again (jobs by increasing start in the right-justified schedule); repeat
  while the makespan drops.
  Justification never makes the makespan worse; it is also applied to the greedy
  planner's schedules, so with time for those the result is never worse than list
  scheduling.
- The genetic search (the classic one on activity lists, with two-point crossover):
  parents by 2-tournament, the child's list decoded by the SGS and justified, its
  justified start order kept as its list; the best POPULATION distinct schedules
  survive. It stops at the time limit or when the population has converged
  (STALL_GENERATIONS).

The SGS, justification and a generation are compiled (planner.solvers.rcpsp_kernels).
Pure: `schedule(instance, time_limit, seed)` returns job id -> start time (or None when
the instance is not of this kind). `rcpsp_start` wraps it as a Schedule for
planner.solvers.exact.best_start: the CP-SAT hint and the MILP warm start, and both
solvers' horizon, on such instances.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from types import ModuleType

import numpy as np

from planner.instance import Instance
from planner.precedence import topological_order
from planner.schedule import Assignment, Schedule
from planner.solvers.greedy import solve_greedy
from planner.solvers.options import SolveOptions

EPS = 1e-9


def applicable(instance: Instance) -> bool:
    """Whether a start-time assignment respecting precedence and pool capacities is a
    valid schedule: no GPUs, explicit durations, no releases, deadlines, reservations,
    horizon, and no strict-priority pairs that placement order could break."""
    if not instance.jobs or instance.reservations or instance.horizon is not None:
        return False
    for j in instance.jobs:
        if (
            j.gpus != 0
            or j.duration is None
            or j.release != 0
            or j.deadline is not None
            or any(p not in instance.pools for p in j.demand)
        ):
            return False
    strict = instance.priority_policy == "strict"
    return not (strict and len({j.priority for j in instance.jobs}) > 1)


class Project:
    """Arrays for the SGS: durations, demands on the pools, predecessor/successor lists."""

    def __init__(self, instance: Instance):
        jobs = instance.jobs
        self.ids = [j.id for j in jobs]
        pos = {j.id: i for i, j in enumerate(jobs)}
        pools = sorted(instance.pools)
        self.n = len(jobs)
        self.dur = np.array([j.duration or 0 for j in jobs], dtype=np.int64)
        self.cap = np.array([instance.pools[p] for p in pools], dtype=float)
        self.dem = np.array(
            [[j.demand.get(p, 0.0) for p in pools] for j in jobs], dtype=float
        ).reshape(self.n, len(pools))
        self.pred: list[list[int]] = [sorted({pos[a] for a in j.after}) for j in jobs]
        self.succ: list[list[int]] = [[] for _ in jobs]
        for b, ps in enumerate(self.pred):
            for a in ps:
                self.succ[a].append(b)
        self.fits = bool(np.all(self.dem <= self.cap * (1 + EPS)))
        self.length = int(self.dur.sum()) + int(self.dur.max(initial=0)) + 1
        pred, succ = _csr(self.pred), _csr(self.succ)
        # the kernels' arguments after the key, forward and on the reversed network
        self.forward = (self.dur, self.dem, self.cap, *pred, *succ, self.length)
        self.backward = (self.dur, self.dem, self.cap, *succ, *pred, self.length)
        try:
            self._topo: list[int] | None = [pos[j] for j in topological_order(instance)]
        except ValueError:
            self._topo = None

    def topo(self) -> list[int] | None:
        """Job indices in topological order (None on a cycle)."""
        return self._topo


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Adjacency lists as offsets and one index array (the kernels take no lists)."""
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.array([x for xs in lists for x in xs], dtype=np.int64)
    return ptr, idx


def kernels() -> ModuleType:
    """planner.solvers.rcpsp_kernels, imported on first use: numba takes ~0.2 s to import,
    which only plain RCPSP instances need."""
    import planner.solvers.rcpsp_kernels as compiled

    return compiled


def sgs(p: Project, key: Sequence[float] | np.ndarray, reverse: bool = False) -> np.ndarray:
    """Serial SGS: starts (forward) or, with `reverse`, starts in the reversed network
    (time measured back from the end: real end = makespan - reversed start)."""
    return kernels().sgs(np.asarray(key, dtype=float), *(p.backward if reverse else p.forward))


def justify(p: Project, start: np.ndarray) -> np.ndarray:
    """Forward-backward improvement until the makespan stops dropping."""
    return kernels().justify(np.asarray(start, dtype=np.int64), *p.forward)


def rule_keys(p: Project) -> dict[str, np.ndarray]:
    """Priority keys (smaller first) of the classic rules."""
    order = p.topo()
    assert order is not None
    es = np.zeros(p.n, dtype=np.int64)
    for i in order:
        es[i] = max((int(es[a] + p.dur[a]) for a in p.pred[i]), default=0)
    cp = int((es + p.dur).max(initial=0))
    lf = np.full(p.n, cp, dtype=np.int64)
    for i in reversed(order):
        lf[i] = min((int(lf[s] - p.dur[s]) for s in p.succ[i]), default=cp)
    total: list[set[int]] = [set() for _ in range(p.n)]
    for i in reversed(order):
        for s in p.succ[i]:
            total[i] |= {s} | total[s]
    mts = np.array([len(t) for t in total], dtype=float)
    grpw = np.array(
        [p.dur[i] + sum(int(p.dur[s]) for s in p.succ[i]) for i in range(p.n)], dtype=float
    )
    tie = 1e-6 * np.arange(p.n)
    return {"lft": lf + tie, "lst": (lf - p.dur) + tie, "mts": -mts + tie, "grpw": -grpw + tie}


# The greedy rules whose schedules seed the justification (the default rule, FIFO, SJF).
SEED_RULES = (None, "fifo", "sjf")
# Above this many jobs the greedy planner's schedules are left out: on generated projects
# (`plan generate --family rcpsp`) one takes 0.87 s with 1,000 jobs, 3.4 s with 2,000 and
# grows with the square, past any time limit (its justified rules' schedules were better
# there anyway: 2,000 jobs, 3,144 against 3,503).
SEED_RULES_MAX_JOBS = 1000


def _greedy_start(instance: Instance, p: Project, rule: str | None) -> np.ndarray | None:
    """Starts of the greedy planner's schedule by `rule` (parallel or serial list
    scheduling), which justification can only improve; None if it is incomplete."""
    s = solve_greedy(instance, rule, SolveOptions())
    if s.status != "feasible" or len(s.jobs) != p.n:
        return None
    by_id = {a.id: a.start for a in s.jobs}
    return np.array([by_id[i] for i in p.ids], dtype=np.int64)


# Population of the genetic search, and the chance of swapping each adjacent pair of a
# child's start order. `experiments/rcpsp_search.py --alone 3` on the j120 sample (one
# run; population/mutation: mean gap): 100/0.05 1.99%, 100/0.15 2.20%, 200/0.05 1.82%,
# 200/0.15 1.70%, 400/0.05 1.64%, 400/0.15 1.41%, 400/0.3 1.53%, 800/0.15 1.57%,
# 800/0.3 1.74%; on j90 all within 0.62-0.78%.
POPULATION = 400
MUTATION = 0.15
# Seconds one call of the compiled generation may take (so the time limit and Ctrl-C hold)
STEP_S = 0.1
# The search stops when this many generations' worth of children (POPULATION each) in a
# row left the best makespan where it was: the population has converged. On the j120
# sample with population 200 the last improvement came by generation ~70 in 3 s (the
# first 1.1 s); stopping there gives CP-SAT the rest (`experiments/rcpsp_search.py`:
# j60 at 10 s 0.27% against 0.47% with 3 s of the search and no stop).
STALL_GENERATIONS = 50


def schedule(
    instance: Instance,
    time_limit: float = 1.0,
    seed: int = 0,
    stop: threading.Event | None = None,
) -> dict[str, int] | None:
    """Job id -> start of the best schedule found within `time_limit` seconds (or until
    `stop` is set), or None when the instance is not a plain RCPSP (`applicable`) or
    cannot be scheduled."""
    t0 = time.monotonic()
    if not applicable(instance):
        return None
    p = Project(instance)
    if not p.fits or p.topo() is None:
        return None
    rng = np.random.default_rng(seed)
    K = kernels()
    K.seed_rng(seed)
    keys = list(rule_keys(p).values())

    def going() -> bool:
        return time.monotonic() - t0 < time_limit and not (stop is not None and stop.is_set())

    # every rule once, whatever the time limit (milliseconds even on 2,000 jobs), then the
    # greedy planner's schedules while there is time: with time for them, never worse
    # than list scheduling
    pop = [justify(p, sgs(p, k)) for k in keys]
    for rule in SEED_RULES:
        if not going() or p.n > SEED_RULES_MAX_JOBS:
            break
        st = _greedy_start(instance, p, rule)
        if st is not None:
            pop.append(justify(p, st))
    while len(pop) < POPULATION and going():
        # random-biased rules: each key with noise of up to a fifth of its spread
        k = keys[len(pop) % len(keys)]
        pop.append(justify(p, sgs(p, k + rng.uniform(0, 0.2 * (float(np.ptp(k)) or 1.0), p.n))))
    starts = np.array(pop, dtype=np.int64)
    ms = np.array([K.makespan(st, p.dur) for st in starts], dtype=np.int64)
    count = POPULATION  # children per call: fewer where POPULATION would outlast STEP_S
    stalled = 0  # children since the best makespan last dropped
    while len(pop) == POPULATION and stalled < STALL_GENERATIONS * POPULATION and going():
        t, before = time.monotonic(), int(ms.min())
        starts, ms = K.generation(starts, ms, count, MUTATION, *p.forward)
        stalled = 0 if int(ms.min()) < before else stalled + count
        per_child = max(time.monotonic() - t, 1e-9) / count  # the first call compiles
        count = max(1, min(POPULATION, int(STEP_S / per_child)))
    best = starts[int(np.argmin(ms))]
    return {jid: int(s) for jid, s in zip(p.ids, best, strict=True)}


def heuristic_budget(instance: Instance, limit: float) -> float:
    """Seconds the RCPSP heuristic may take before CP-SAT or the MILP (its search stops
    sooner once converged, see STALL_GENERATIONS). Measured as `experiments/rcpsp_search.py`
    does, 10 s, 2 workers, one run each, mean gap to the best known. Population 200, no
    convergence stop: j120 sample 2.73% with 0.1 s, 1.51% with 3 s, 1.49% with 5 s; j90
    1.17% / 0.69% (0.1 s / 3 s); j60 0.40% / 0.47% (the search took the time CP-SAT needed
    to prove j6041_9). With the stop: j120 2.93% / 1.71%, j60 0.47% / 0.27%. On job shops
    (`Instance.disjunctive`), where CP-SAT's no-overlap reasoning does better than list
    schedules, 0.06% / 0.10% (la36: 1,268 against 1,274), so there it keeps to a moment."""
    if instance.disjunctive:
        return min(0.1, 0.005 * limit)
    return 0.3 * limit


def rcpsp_start(
    instance: Instance,
    names: tuple[str, ...],
    limit: float,
    seed: int,
    stop: threading.Event | None = None,
) -> Schedule | None:
    """On plain RCPSP instances with makespan first: the RCPSP heuristic's schedule
    (sampling plus forward-backward improvement; far better than list scheduling on
    PSPLIB j120): a better CP-SAT hint and MILP warm start, and a tighter horizon."""
    if names[0] != "makespan" or not applicable(instance):
        return None
    t = time.monotonic()
    starts = schedule(instance, heuristic_budget(instance, limit), seed, stop)
    if starts is None:
        return None
    jobs = tuple(
        Assignment(j.id, starts[j.id], starts[j.id] + (j.duration or 0)) for j in instance.jobs
    )
    return Schedule(instance.name, "rcpsp_heuristic", "feasible", jobs, wall_s=time.monotonic() - t)
