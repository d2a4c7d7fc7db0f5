"""Valid lower bounds on every objective, cheap enough for 100,000-job instances.

`lower_bounds(instance)` returns, per objective, a value that no schedule satisfying rules
R1-R10 can beat (a live state's energy objectives get none, `live.Residual.shift`; a
preemptive one with running jobs is bounded by `live.Restartable`); every planner can
report it so that a gap is known even when no exact model runs. All bounds below come
from relaxations: they drop the rules that only make a schedule worse (R6 placement
details, R7, R9, R10 for admitted jobs, deadlines, horizon), so each one is at most the
optimum.

Ingredients
-----------
1. Per-job minimum duration `p_min(j)` (`_per_iteration_floor`): a profiled member of an
   interleaving group advances one iteration per phase cycle, each phase either solo (its
   solo iteration time) or a group containing j, whose cycle is `overhead[k] * TT(G)`.
   Claim: `TT(G) >= L_k(j)`, with `L_k = d_j + g_j + n_j` for k <= 3 and
   `L_4 = g_j + n_j + 0.95 * d_j`. Proof from the slot recursion (contract §4): slot
   `i` (the interval `[f[i], f[i+1]]`) is at least `n` of position `(i+1) mod 4`, at least
   `g` of position `(i+2) mod 4`, and slots `i-1, i` together are at least `d` of position
   `(i+3) mod 4`. So for the member at position q the slots of residues q, q+1 (data),
   q+2 (gpu) and q+3 (net) are disjoint and cover one 4-slot block whenever q <= 2, giving
   `f[i+4] - f[i] >= d+g+n` on each of the 20 blocks of `f[80..160]`. At q = 3 (only when
   k = 4) the data pair straddles two blocks, so only 19 of the 20 data pairs fit:
   `TT >= g + n + 19/20 d`. The pair formula gives `max(d_a, g_b+n_b) + max(d_b, g_a+n_a)
   >= d_a + g_a + n_a`. Hence per iteration the member needs at least
   `min(solo_it, min_k overhead[k] * L_k)`, minimised over its eligible node groups
   (GPU stage divided by the group's speed). Grouping is considered only when interleaving
   is enabled and another profiled job with the same GPU count exists; admissibility and
   memory limits are ignored (a relaxation).
2. Critical path: `head(j) = max(release_j, max_pred head(i) + p_min(i))`, tails likewise;
   `makespan >= head + p_min + tail`, `C_j >= e_j := head(j) + p_min(j)`, so
   `total_weighted_jct >= sum w (e_j - release_j)` and
   `total_weighted_tardiness >= sum w max(0, e_j - due_j)` (weights are >= 0).
3. Resource volume. A job's minimum GPU-time `share(j)` (in GPU x time units): solo it
   holds gpus_j GPUs for its duration. A group holds gpus GPUs for its span, the sum of
   its phases; each phase's time is split among its active members by one of three fixed
   schemes, each of which sums to at most the phase time:
   (A) in proportion to the GPU stage: `TT >= sum_q g_q` (every slot residue is at least
   the g of one position, positions are distinct residues; the pair formula is
   >= g_a+n_a+g_b+n_b), so member j gets >= `overhead[k] * g_j` per iteration;
   (B) equally: `TT >= L_k(j)` for every member, so j gets >= `overhead[k] * L_k(j) / k`;
   (C) half of each: `overhead[k] * (g_j + L_k(j) / k) / 2`, which sums to at most
   `overhead[k] * (sum g + max L) / 2 <= c(G)`.
   When jobs of one GPU count use at most 10 models, `_enumerate_groups` computes c(G)
   exactly for every multiset of those models (a superset of all groups and of the
   smaller groups their phases leave), evaluates the schemes on it, then raises the
   per-model shares one model at a time while every multiset still fits: any per-model
   share s with `sum_(t in G) s_t <= c(G)` for all G and `s_t <= solo_t` is a valid
   attribution, so each scheme only grows. The least exact c(G) also sharpens p_min.
   A share accrues only while j runs, inside `[start_j, end_j)`, at a rate of at most
   gpus_j. Each scheme gives its own set of shares and its own bounds; we keep the best.
   For a set S of node groups, the jobs whose eligible groups all lie in S use only S's
   GPUs, so `makespan >= r + (volume of those jobs with head >= r) / capacity`, where
   capacity is reduced by reserved GPU-time that admits none of those jobs (counted once
   per GPU even under overlapping reservations; a GPU under any such reservation is not
   usable by them). Done for the whole cluster, each single node group and each distinct
   eligible set that occurs. Pools: the same with `demand * p_min` and the pool capacity
   minus amounts held by reservations admitting none of the pool's users (Hall's condition
   with U = those reservations).
4. Weighted completion on a resource (`_lp_bound`, the mean-busy-time relaxation):
   map the GPU-time shares of a feasible schedule onto one machine of rate 1 by dividing
   by the capacity C: job j gets processing `p_j = share_j / C` at rate at most
   `u_j = gpus_j / C`, never before head_j, total rate <= 1. Its mean busy time M_j then
   satisfies `C_j >= M_j + p_j / (2 u_j) = M_j + share_j / (2 gpus_j)` (a rate-capped amount
   ends at the earliest half its minimal spread after its mean). The preemptive schedule
   that always runs the available job of largest w_j / p_j minimises `sum w_j M_j` over all
   preemptive single-machine schedules with release dates (an exchange argument on the
   mean busy times), a fortiori over rate-capped ones. So
   `sum w C >= LP + sum w share/(2 gpus)`. Run per node-group family (with its scheme of
   largest volume, to save time) and on every pool.
   We take the max of this and ingredient 2 for the jobs on the resource, plus
   ingredient 2 for the others.
5. Tardiness: for any set S of jobs with due dates, `sum w T >= sum_S w (C_j - due_j) +
   sum_(not S) w max(0, e_j - due_j)`; the first sum is bounded with ingredient 4 run on
   S alone (dropping the other jobs is a relaxation). S ranges over "due <= theta" for a
   few quantiles theta of the due dates.

6. Weighted completion with capacity over time (`planner.bounds_lp`, a time-indexed LP
   solved with HiGHS). Ingredient 4 lets a job run as fast as the whole resource; this
   one keeps each job at its own speed. Per job two modes: solo (GPU-time `gpus_j` per
   time unit, least duration the solo one) and interleaved (GPU-time per unit of
   progress at least the job's share from ingredient 3, least duration the job's
   iterations times the least cycle of any group holding it, `_iteration_times`). In
   any schedule, at every instant a job is solo or in a group, so its progress splits
   into the two modes; in each mode it progresses at most 1/least of the job per time
   unit, and the GPU-time it accrues is at least its per-progress share times the
   progress made (solo: exactly gpus_j per time unit). Summed over jobs, the GPU-time
   accrued in a slot of the grid is at most the capacity-time there (capacity minus
   reservations admitting none of the jobs, as in 3). Within slot t the job's progress
   happens no earlier than a_jt = max(slot start, head_j), so its mean progress time
   M_j >= sum a_jt x_jt, and progress at rate at most 1/least ends at least least/2
   after its mean (the argument of 4), so C_j >= M_j + least_j/2; also C_j >= e_j. The
   schedule's fractions x_jt and completions are therefore feasible for the LP, whose
   optimum is at most sum w_j C_j. Run on the same resources as 4, for the LP's jobs, plus
   e_j for the others. Its size is capped (planner.bounds_lp.MAX_COLUMNS: the grid
   coarsens with more jobs) and it is skipped above LP_MAX_JOBS jobs; HiGHS's optimum is
   shaved by _LP_SAFE for its tolerances. On instances/muri-testbed-100.json it lifts the
   bound from 55,595 to ~57,190 average JCT (well under a second); with interleaving
   disabled the same LP gives ~86,350 there. So the remaining gap lies in interleaving:
   pairs and groups of that testbed's models reach 1.5-2.2x the solo throughput, which
   the bound credits while the plans found so far hardly group at all.

7. Weighted completion with group types (`planner.bounds_config`, the configuration LP;
   its module docstring has the LP). Ingredient 6 prices grouped progress by a share
   valid for every group at once, so it never asks whether partners of the right models
   run at the same time. This one follows what the GPUs do. Run per node-group family
   F of 4 (the jobs whose eligible node groups all lie in F, F's GPUs less those reserved
   for none of them), when interleaving is enabled. Fix a feasible schedule. Work is
   counted in solo time units on the fastest node group U of F that one of these jobs may
   use, speed s*: `work_j` = iterations x solo iteration time at s* (the duration for an
   explicit job). At every instant a set of k GPUs runs nothing, one solo job, or a group
   whose co-runners (contract §8) form a multiset G of models; each member of model m
   makes one iteration per c(G) at its node's speed s <= s*, and c(G) only grows as the
   stages grow (the slot recursion and the pair formula are maxima of sums), so it makes
   at most `rho_m(G) = solo_m(s*) / c_s*(G)` work units per time unit; none during its
   restart. Group types: the co-runners of one of F's jobs run on one of its eligible
   node groups, so they are jobs that may use a node group of F that F's jobs use; G
   ranges over the multisets of 2..max_group of their models at count k, a model at most
   as often as such jobs have it (co-runners are distinct jobs), whose GPU memory fits
   the largest GPUs of those node groups (co-runners are a subset of a group admissible
   when formed; the cycle test of §4 need not hold for the subset and is not asked).
   Two kinds are left out, and their time is recounted. (i) c(G) >= the members' summed
   solo times: the members' rates sum to at most 1, so each member's progress is counted
   as solo progress (time rho_m tau <= tau for each, GPU-time k sum rho_m tau <= k tau).
   (ii) A type whose rate vector (n_m(G) rho_m(G) per m) is at most sum_l lam_l r(G_l),
   sum lam < 1, over the kept types of its count: its time y is recounted as lam_l y on
   those, no more GPU-time and no less progress of any model. Now let x^s_jt and x^g_jt
   be the fractions of j's work done in slot t solo (or in a type of kind i) and in a
   kept type's group, and y_Gb the time groups of type G holding one of F's jobs run in
   the slots of block b, summed over GPU sets. Capacity: each GPU of F serves at most one
   solo job or group at a time, and the GPUs reserved for none of F's jobs serve none of
   these; jobs from outside F only take room. Class (k, m): the grouped progress of F's
   jobs of model m at count k is at most what the groups deliver to members of model m,
   sum_G n_m(G) rho_m(G) y_Gb (partners outside F and restarts take some of it). One mode
   at a time: a job is solo or in one group at every instant, progressing at most 1 solo
   and at most `rho_j` (the largest rho_m(G) over the types of kind other than i holding
   its model, before (ii)) in a group, so `work_j x^s_jt + work_j x^g_jt / rho_j` is at
   most its time in slot t after its head, a_jt = max(slot start, head_j). Completion:
   M_j >= sum_t a_jt (x^s_jt + x^g_jt) (progress in slot t comes no earlier than a_jt),
   and C_j >= e_j. With rates at most max(1, rho_j), 4's argument gives C_j >= M_j +
   work_j / (2 max(1, rho_j)). When 0 < rho_j < 1 more holds: with S = work_j sum_t x^s_jt
   made at rate <= 1 and G = work_j sum_t x^g_jt at rate <= rho_j, the integral of
   (C_j - t) over the progress is least when the progress is packed right before C_j,
   the faster solo part last (a rearrangement: the densest progress nearest C_j), so
   work_j (C_j - M_j) >= S^2/2 + G (S + G/(2 rho_j)), i.e. C_j - M_j >= work_j/2 +
   (1/rho_j - 1) G^2/(2 work_j); restarts and slower rates only spread it more. This is
   convex in G, so each tangent, at G = theta work_j for theta in
   bounds_config.TANGENTS, is a valid linear row. Summing a slot's rows over a block
   keeps them valid. So the schedule gives a feasible point of the LP, whose
   optimum is at most sum w_j C_j; ceilings of ends only make schedules worse. Run for
   F's jobs of positive work, e_j for the rest. Size: the x grid gets about
   bounds_config.X_COLUMNS columns, the types' blocks at most Y_COLUMNS (a coarser block
   when types are many), skipped above MAX_CONFIG_COLUMNS or LP_MAX_JOBS jobs; optimum
   shaved by _LP_SAFE. Measured (one run, HiGHS): on instances/muri-testbed-100.json it
   lifts the bound from 57,186 to 63,285 average JCT (2.3 s, ~60k x and ~27k y columns);
   on Muri's 400-job cluster_trace (8 x 8) from 61,009 to 63,468 (2.0 s), the grid
   being coarser there. Each part counts: on the testbed, ingredient 6 gives 57,186,
   with one-mode-at-a-time rows added 59,190 (300 grid points), the types without those
   rows 57,945 (300 points, blocks of one slot), types and those rows 60,543, and the
   tangent rows bring it to 63,285.
   Slot cuts, in both 6 and 7 (argued in planner.bounds_lp's module docstring): the rows
   above price the progress made in a slot at the slot's start; progress at a bounded rate
   takes time inside the slot too, so M_j >= sum_t X_jt (a_jt + X_jt W_j / 2) (X_jt: j's
   progress in slot t, W_j: the least time all of it takes, work_j / max(1, rho_j) in 7),
   added as tangent rows after each solve. They lift 7 on the testbed from 63,285 to
   63,525 and on cluster_trace from 63,468 to 65,294 (about 0.5 s more each).

`named_lower_bounds` also says which ingredient gives each bound: "path" (2), "volume"
(3), "wspt" (4, 5), "lp" (6) or "config" (7); the CLI prints it next to the gap.

Time: O(n log n) in jobs (sorting, a heap), plus work per distinct job shape, plus the
LPs (up to about a second or two each at 400 jobs).
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from planner.bounds_config import X_COLUMNS, ConfigJobs, config_lp, count_types, multiset_cycles
from planner.bounds_lp import LP_ITERATIONS, grid, lp_stopped, weighted_completion_lp
from planner.durations import (
    StageTuple,
    gpu_mem_fits,
    solo_duration,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import ENERGY_OBJECTIVES, OBJECTIVES, Instance, Job, NodeGroup
from planner.precedence import heads_tails
from planner.schedule import Schedule, SolveInfo

# Float sums of phase times may differ from the exact arithmetic by a few ulps; shaving a
# relative 1e-9 keeps every bound on the safe side of a ceiling.
_SAFE = 1.0 - 1e-9

# The interval LP (ingredient 6) runs up to this many jobs; above, its size and time grow
# past what a bound computed on every solve may cost.
LP_MAX_JOBS = 2000
# HiGHS solves to a relative tolerance of about 1e-7; shave more than that.
_LP_SAFE = 1.0 - 1e-5

# The ways a group's GPU time is attributed to its members (module docstring, item 3).
SCHEMES = ("gpu-stage", "equal", "half-half")

# (job indices, amount each job holds, its minimum amount x time, capacity, capacity changes)
_Resource = tuple[np.ndarray, np.ndarray, np.ndarray, float, list[tuple[float, float]]]


def gap(value: float | None, bound: float | None) -> float | None:
    """Relative gap `(value - bound) / value`; None when either is missing or value is 0."""
    if value is None or bound is None or value == 0:
        return None
    return (value - bound) / value


def lower_bounds(
    instance: Instance, objectives: Sequence[str] | None = None, iterations: int = LP_ITERATIONS
) -> dict[str, float]:
    """Per objective, a value no feasible schedule can beat (see the module docstring);
    each LP gets `iterations` simplex iterations (`bounds_lp.lp_iterations`)."""
    return {k: v for k, (v, _) in named_lower_bounds(instance, objectives, iterations).items()}


# One word per ingredient of the module docstring, for the CLI's gap line; "cpsat" (the
# model's own bound) is added by planner.solvers.cpsat.
BOUND_NAMES = ("path", "volume", "wspt", "lp", "config")


def named_lower_bounds(
    instance: Instance, objectives: Sequence[str] | None = None, iterations: int = LP_ITERATIONS
) -> dict[str, tuple[float, str]]:
    """Per objective, (bound, the BOUND_NAMES word of the ingredient that gives it); each
    LP gets `iterations` simplex iterations."""
    names = tuple(objectives) if objectives is not None else tuple(instance.objective)
    bad = [n for n in names if n not in OBJECTIVES]
    if bad:
        raise ValueError(f"unknown objective {', '.join(bad)}; known: {', '.join(OBJECTIVES)}")
    if instance.is_live:  # contract §9: bound the waiting jobs, add what the fixed ones give
        from planner.live import residual, restartable

        res = residual(instance)
        # a plan may stop a running job (not `bounded`): bound a relaxation instead
        relax = res if res.bounded else restartable(instance)
        inner = named_lower_bounds(relax.instance, names, iterations)
        shifted = relax.shift({k: v for k, (v, _) in inner.items()})  # none for energy
        return {k: (shifted[k], inner[k][1]) for k in names if k in shifted}
    if instance.elastic or any(n in ENERGY_OBJECTIVES for n in names):
        return {k: (v, "path") for k, v in _simple_bounds(instance, names, iterations).items()}
    for inst, key, got in _RECENT:
        if inst is instance and key == (names, iterations):
            return dict(got)
    b = _Bounds(instance, iterations)
    out: dict[str, tuple[float, str]] = {}
    for name in names:
        if name == "makespan":
            v = b.makespan()
            out[name] = (v, "volume" if v > b.path_makespan() else "path")
        elif name == "total_weighted_jct":
            out[name] = b.weighted_jct_named()
        else:
            v = b.weighted_tardiness()
            out[name] = (v, "wspt" if v > b.path_tardiness() else "path")
    if not lp_stopped():  # a stopped LP gave no bound: not the bound of these iterations
        _RECENT.insert(0, (instance, (names, iterations), dict(out)))
        del _RECENT[4:]
    return out


# The last few results: the exact solvers' start runs every greedy rule on one instance,
# and each attaches the same bounds (the interval LP takes up to a second or two).
_RECENT: list[tuple[Instance, tuple[tuple[str, ...], int], dict[str, tuple[float, str]]]] = []


def _simple_bounds(instance: Instance, names: Sequence[str], iterations: int) -> dict[str, float]:
    """Bounds that stay valid when jobs choose their GPU count (contract §12): each job
    ends no earlier than its release plus its shortest solo duration over its counts and
    eligible nodes (a group never makes a member faster than solo). Energy: 0 when no GPU
    draw or price is negative. The volume bounds of `_Bounds` assume fixed counts, so the
    elastic case keeps only these."""
    if not instance.elastic:
        fixed = [n for n in names if n not in ENERGY_OBJECTIVES]
        full = lower_bounds(instance, fixed, iterations) if fixed else {}
    ends = {}
    for j in instance.jobs:
        best = 0
        if j.gpus:
            best = min(
                solo_duration(instance, j.at_count(c), g.speed)
                for c in j.gpu_counts
                for g in instance.eligible_groups(j.at_count(c))
            )
        elif j.duration is not None:
            best = j.duration
        ends[j.id] = (j, j.release + best)
    out: dict[str, float] = {}
    for name in names:
        if name == "energy_kwh":
            out[name] = 0.0
        elif name == "energy_cost":
            if all(p.price >= 0 for p in instance.power_price):
                out[name] = 0.0
        elif not instance.elastic:
            out[name] = full[name]
        elif name == "makespan":
            out[name] = float(max((e for _, e in ends.values()), default=0))
        elif name == "total_weighted_jct":
            out[name] = _SAFE * sum(j.weight * (e - j.release) for j, e in ends.values())
        else:
            out[name] = _SAFE * sum(
                j.weight * max(0, e - j.due) for j, e in ends.values() if j.due is not None
            )
    return out


def optional_bounds(
    instance: Instance, names: Sequence[str], iterations: int, info: SolveInfo
) -> dict[str, tuple[float, str]]:
    """`named_lower_bounds` for a planner: a bound is optional, so when computing it fails
    the plan goes on without one and `info["relaxation_bound_error"]` says why (every
    planner, `tests/test_bounds.py`)."""
    try:
        return named_lower_bounds(instance, list(names), iterations)
    except Exception as e:  # whatever broke, the plan stands without a bound
        info["relaxation_bound_error"] = repr(e)
        return {}


def with_bounds(
    instance: Instance, s: Schedule, names: Sequence[str], iterations: int = LP_ITERATIONS
) -> Schedule:
    """`s` with these lower bounds merged in (the larger value per objective) and the
    name of the tightest in `info["bound_by"]`; each LP gets `iterations` iterations
    (none added when they fail, `optional_bounds`)."""
    failed: SolveInfo = {}
    named = optional_bounds(instance, names, iterations, failed)
    info = {**(s.info or {}), **failed}
    if not named:
        return s.with_(info=info)
    lb = {k: v for k, (v, _) in named.items()}
    by = {k: w for k, (_, w) in named.items()}
    old_by = (s.info or {}).get("bound_by") or {}
    for k, v in (s.lower_bound or {}).items():
        if v is not None and v >= lb.get(k, v) and k in old_by:
            by[k] = old_by[k]
        if v is not None:
            lb[k] = max(lb.get(k, v), v)
    return s.with_(lower_bound=lb, info={**info, "bound_by": by})


def _loads(k: int, data: float, gpu: float, net: float) -> float:
    """L_k(j): a lower bound on TT of any k-group containing a job with these stages."""
    return gpu + net + (data if k <= 3 else 0.95 * data)


class _Kind:
    """What the bounds need of all jobs of one kind (same model, GPUs, node limits), per
    node group and per unit of `mult` (an iteration of a profiled job, a time unit of an
    explicit one). `inf` marks node groups the kind cannot use."""

    __slots__ = ("eligible", "dur", "shares")

    def __init__(self, eligible: np.ndarray, dur: np.ndarray, shares: list[np.ndarray]):
        self.eligible = eligible  # bool per node group
        self.dur = dur  # least duration, time units
        self.shares = shares  # per scheme A, B, C: least GPU x time units


def _scale(per_unit: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Rows of per-unit figures times each job's multiplier; inf ("not eligible") stays
    inf for a zero-length job instead of becoming nan."""
    with np.errstate(invalid="ignore"):
        out = per_unit * mult[:, None]
    return np.asarray(np.where(np.isnan(out), np.inf, out))


class _Bounds:
    def __init__(self, inst: Instance, iterations: int = LP_ITERATIONS):
        self.inst = inst
        self.iterations = iterations
        jobs = inst.jobs
        self.n = len(jobs)
        self.index = {j.id: i for i, j in enumerate(jobs)}
        # Group sizes a job might share a GPU set in: only with another profiled job of the
        # same GPU count, at most max_group.
        per_gpus: dict[int, int] = defaultdict(int)
        self.models_by_gpus: dict[int, list[str]] = defaultdict(list)
        self.model_weight: dict[tuple[int, str], float] = defaultdict(float)
        for j in jobs:
            if j.model is not None:
                self.model_weight[(j.gpus, j.model)] += j.gpus * (j.iterations or 0)
                per_gpus[j.gpus] += 1
                if j.model not in self.models_by_gpus[j.gpus]:
                    self.models_by_gpus[j.gpus].append(j.model)
        self.group_sizes: dict[int, tuple[int, ...]] = {}
        il = inst.interleaving
        for g, cnt in per_gpus.items():
            top = min(il.max_group, cnt) if il.enabled else 1
            self.group_sizes[g] = tuple(k for k in range(2, top + 1) if k in il.overhead)
        self.exact: dict[tuple[int, float], dict[str, tuple[float, list[float]]]] = {}
        self.group_names = [g.name for g in inst.node_groups]
        cache: dict[tuple[object, ...], int] = {}
        self.kinds: list[_Kind] = []
        kind_of = np.empty(self.n, dtype=int)
        mult = np.ones(self.n)
        fixed = np.zeros(self.n)  # duration of jobs that use no GPU
        for i, j in enumerate(jobs):
            key = (j.model, j.gpus, j.node_types, j.cpus_per_gpu, j.mem_gb_per_gpu)
            k = cache.get(key)
            if k is None:
                k = cache[key] = len(self.kinds)
                self.kinds.append(self._kind(j))
            kind_of[i] = k
            if j.model is not None:
                mult[i] = j.iterations or 0
            else:
                mult[i] = j.duration or 0
                fixed[i] = j.duration or 0
        self.kind_of, self.mult = kind_of, mult
        ng = len(self.group_names)
        self.eligible = (
            self._per_kind([k.eligible for k in self.kinds])[kind_of]
            if self.n
            else np.zeros((0, ng), dtype=bool)
        )
        if self.n and self.kinds:
            dur = _scale(self._per_kind([k.dur for k in self.kinds])[kind_of], mult)
            with np.errstate(invalid="ignore"):
                p_grp = np.ceil(dur * _SAFE - 1e-9)
            p = np.where(
                self.eligible.any(axis=1),
                np.min(np.where(self.eligible, p_grp, np.inf), axis=1, initial=np.inf),
                fixed,
            )
            self.p = np.where(np.isfinite(p), p, fixed)
            least = np.min(np.where(self.eligible, dur * _SAFE, np.inf), axis=1, initial=np.inf)
            self.least = np.where(np.isfinite(least), least, fixed)
        else:
            self.p = np.zeros(self.n)
            self.least = np.zeros(self.n)
        self.gpus = np.array([j.gpus for j in jobs], dtype=float)
        self.release = np.array([j.release for j in jobs], dtype=float)
        self.weight = np.array([j.weight for j in jobs], dtype=float)
        self.head, self.tail = self._critical_path()
        self.end = self.head + self.p  # earliest possible end of each job

    def shares(self, scheme: int) -> np.ndarray:
        """n x node groups: least GPU x time units of each job there (inf: not eligible)."""
        per = self._per_kind([k.shares[scheme] for k in self.kinds])[self.kind_of]
        return _scale(per, self.mult)

    def _per_kind(self, rows: list[Any]) -> np.ndarray:
        """Job kinds x node groups (reshaped explicitly: there may be no node groups)."""
        return np.array(rows).reshape(len(self.kinds), len(self.group_names))

    # ---- ingredient 1: per-job floors ------------------------------------------------
    def _per_iteration_floor(self, j: Job, g: NodeGroup) -> tuple[float, list[float]]:
        """(duration floor, GPU-time floors of schemes A, B, C) per iteration, in ms."""
        gp = self.inst.gpu_profile(j)
        solo = solo_iteration_ms(gp, g.speed)
        d, gpu, net = gp.stages.data, gp.stages.gpu / g.speed, gp.stages.net
        ov = self.inst.interleaving.overhead
        dur, shares = solo, [solo, solo, solo]
        for k in self.group_sizes.get(j.gpus, ()):
            lk = _loads(k, d, gpu, net)
            dur = min(dur, ov[k] * lk)
            for i, v in enumerate((gpu, lk / k, (gpu + lk / k) / 2)):
                shares[i] = min(shares[i], ov[k] * v)
        exact = self._exact_floors(j.gpus, g.speed).get(j.model or "")
        if exact is not None:  # both are valid; the enumeration is never weaker
            dur = max(dur, min(solo, exact[0]))
            shares = [max(a, min(solo, b)) for a, b in zip(shares, exact[1], strict=True)]
        return dur, shares

    def _exact_floors(self, gpus: int, speed: float) -> dict[str, tuple[float, list[float]]]:
        """Per model: the least cycle, and per-member GPU-time per scheme, over every
        multiset of 2..max_group models that jobs with this GPU count use (a superset of
        the groups and phase sub-groups that can occur). Skipped beyond 10 models."""
        key = (gpus, speed)
        if key not in self.exact:
            models = self.models_by_gpus.get(gpus, [])
            sizes = self.group_sizes.get(gpus, ())
            table: dict[str, tuple[float, list[float]]] = {}
            if sizes and len(models) <= 10:
                gps = [self.inst.profiles[m].by_gpus[gpus] for m in models]
                table = _enumerate_groups(
                    models,
                    [stage_tuple(gp, speed) for gp in gps],
                    sizes,
                    self.inst.interleaving.overhead,
                    [solo_iteration_ms(gp, speed) for gp in gps],
                    [self.model_weight[(gpus, m)] for m in models],
                )
            self.exact[key] = table
        return self.exact[key]

    def _kind(self, j: Job) -> _Kind:
        ok = {g.name for g in self.inst.eligible_groups(j)}
        ng = len(self.group_names)
        eligible = np.array([name in ok for name in self.group_names], dtype=bool)
        dur = np.full(ng, np.inf)
        shares = [np.full(ng, np.inf) for _ in SCHEMES]
        unit = self.inst.unit_ms
        for gi, g in enumerate(self.inst.node_groups):
            if not eligible[gi]:
                continue
            if j.model is None:  # per time unit of its explicit duration
                dur[gi] = 1.0
                for arr in shares:
                    arr[gi] = float(j.gpus)
                continue
            d, per_it = self._per_iteration_floor(j, g)
            dur[gi] = d / unit
            for arr, v in zip(shares, per_it, strict=True):
                arr[gi] = j.gpus * v * _SAFE / unit
        return _Kind(eligible, dur, shares)

    @cached_property
    def _mode_times(self) -> tuple[np.ndarray, np.ndarray]:
        """Per job, its least duration running solo and its least duration if every
        iteration ran in an interleaving group (inf when it never can), in time units,
        over its eligible node groups (ingredient 6)."""
        solo, grouped = np.full(self.n, np.inf), np.full(self.n, np.inf)
        per_kind: dict[int, tuple[float, float]] = {}
        unit = self.inst.unit_ms
        for i, j in enumerate(self.inst.jobs):
            k = int(self.kind_of[i])
            if k not in per_kind:
                per_kind[k] = (np.inf, np.inf)
                if j.model is None:
                    per_kind[k] = (1.0, np.inf)
                for g in self.inst.eligible_groups(j) if j.model is not None else ():
                    s_it, g_it = self._iteration_times(j, g)
                    old = per_kind[k]
                    per_kind[k] = (min(old[0], s_it / unit), min(old[1], g_it / unit))
            a, b = per_kind[k]
            m = self.mult[i]  # a zero-length job: 0, never inf x 0
            solo[i], grouped[i] = (a * m * _SAFE if m else 0.0), (b * m * _SAFE if m else 0.0)
        return solo, grouped

    def _iteration_times(self, j: Job, g: NodeGroup) -> tuple[float, float]:
        """(solo iteration time, least cycle of any group holding j), ms, on `g`."""
        gp = self.inst.gpu_profile(j)
        solo = solo_iteration_ms(gp, g.speed)
        d, gpu, net = gp.stages.data, gp.stages.gpu / g.speed, gp.stages.net
        ov = self.inst.interleaving.overhead
        sizes = self.group_sizes.get(j.gpus, ())
        cycle = min((ov[k] * _loads(k, d, gpu, net) for k in sizes), default=math.inf)
        exact = self._exact_floors(j.gpus, g.speed).get(j.model or "")
        if exact is not None and sizes:
            cycle = max(cycle, exact[0])
        return solo, cycle

    # ---- ingredient 2: critical path -------------------------------------------------
    def _critical_path(self) -> tuple[np.ndarray, np.ndarray]:
        ids = [j.id for j in self.inst.jobs]
        head, tail = heads_tails(self.inst, dict(zip(ids, self.p.tolist(), strict=True)))
        return (
            np.array([head[i] for i in ids], dtype=float),
            np.array([tail[i] for i in ids], dtype=float),
        )

    # ---- resources: (capacity rate over time, jobs, amounts, volumes) ------------------
    def _families(self) -> list[np.ndarray]:
        """Node-group masks to take volume bounds on: all, each one, each eligible set."""
        ng = len(self.group_names)
        seen: dict[tuple[bool, ...], None] = {(True,) * ng: None}
        for i in range(ng):
            seen.setdefault(tuple(i == k for k in range(ng)), None)
        for k in self.kinds:
            if len(seen) >= 64:
                break
            if k.eligible.any():
                seen.setdefault(tuple(bool(x) for x in k.eligible), None)
        return [np.array(m, dtype=bool) for m in seen]

    def _gpu_resources(self) -> Iterable[tuple[int, _Resource]]:
        """Per node-group family and share scheme: (family number, (job indices, GPUs per
        job, minimum GPU-time per job, GPU capacity, capacity changes [(time, delta)]))."""
        inst = self.inst
        shares = [self.shares(k) for k in range(len(SCHEMES))]
        uses = self.eligible.any(axis=1)
        for f, fam in enumerate(self._families()):
            inside = uses & ~(self.eligible & ~fam).any(axis=1)
            idx = np.flatnonzero(inside)
            if not len(idx):
                continue
            cap = float(
                sum(g.count * g.gpus for g, on in zip(inst.node_groups, fam, strict=True) if on)
            )
            names = {n for n, on in zip(self.group_names, fam, strict=True) if on}
            events = self._gpu_blocked(names, [inst.jobs[i] for i in idx])
            for sh in shares:
                vol = np.min(np.where(fam, sh[idx], np.inf), axis=1)
                yield f, (idx, self.gpus[idx], vol, cap, events)

    def _gpu_blocked(self, fam: set[str], jobs: list[Job]) -> list[tuple[float, float]]:
        """Capacity changes from GPUs of `fam` reserved for none of `jobs` (union per GPU)."""
        per_gpu: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
        for r in self.inst.reservations:
            if r.pool is not None or not r.nodes or r.end <= r.start:
                continue
            if any(r.admits.admits(j) for j in jobs):
                continue
            for name in r.nodes:
                node = self.inst.node_by_name.get(name)
                if node is None or node.group.name not in fam:
                    continue
                ids = r.gpus if r.gpus is not None else range(node.gpus)
                for k in ids:
                    if 0 <= k < node.gpus:
                        per_gpu[(name, k)].append((r.start, r.end))
        events: list[tuple[float, float]] = []
        for ivs in per_gpu.values():
            ivs.sort()
            cs, ce = ivs[0]
            for s, e in ivs[1:]:
                if s > ce:
                    events += [(cs, -1.0), (ce, 1.0)]
                    cs, ce = s, e
                else:
                    ce = max(ce, e)
            events += [(cs, -1.0), (ce, 1.0)]
        return events

    def _pool_resources(self) -> Iterable[_Resource]:
        inst = self.inst
        for pool, cap in inst.pools.items():
            members = [i for i, j in enumerate(inst.jobs) if j.demand.get(pool, 0.0) > 0]
            if not members:
                continue
            jobs = [inst.jobs[i] for i in members]
            idx = np.array(members, dtype=int)
            amount = np.array([j.demand[pool] for j in jobs], dtype=float)
            events: list[tuple[float, float]] = []
            for r in inst.reservations:
                if r.pool != pool or r.end <= r.start or r.amount <= 0:
                    continue
                if any(r.admits.admits(j) for j in jobs):
                    continue
                events += [(r.start, -r.amount), (r.end, r.amount)]
            yield idx, amount, amount * self.p[idx], float(cap), events

    # ---- objectives -----------------------------------------------------------------
    def path_makespan(self) -> float:
        """Ingredient 2 alone for the makespan."""
        best = float(np.max(self.end + self.tail)) if self.n else 0.0
        return float(math.ceil(best * _SAFE - 1e-9)) if best > 0 else 0.0

    def path_tardiness(self) -> float:
        """Ingredient 2 alone for the weighted tardiness."""
        due = np.array([j.due if j.due is not None else np.inf for j in self.inst.jobs])
        return float(np.sum(self.weight * np.maximum(0.0, self.end - due))) if self.n else 0.0

    def makespan(self) -> float:
        if self.n == 0:
            return 0.0
        best = float(np.max(self.end + self.tail))
        for idx, _, vol, cap, events in self.resources:
            best = max(best, _volume_bound(self.head[idx], vol, cap, events))
        return float(math.ceil(best * _SAFE - 1e-9)) if best > 0 else 0.0

    @cached_property
    def _gpu_list(self) -> list[tuple[int, _Resource]]:
        return list(self._gpu_resources())

    @cached_property
    def resources(self) -> list[_Resource]:
        """Every resource and share scheme (the volume bounds are cheap)."""
        return [r for _, r in self._gpu_list] + list(self._pool_resources())

    @cached_property
    def lp_resources(self) -> list[_Resource]:
        """For the costlier weighted-completion bound: per node-group family the scheme
        with the most volume, and every pool."""
        best: dict[int, _Resource] = {}
        for f, r in self._gpu_list:
            if f not in best or float(r[2].sum()) > float(best[f][2].sum()):
                best[f] = r
        return list(best.values()) + list(self._pool_resources())

    def _completion(self, sel: np.ndarray, resources: Sequence[_Resource]) -> list[float]:
        """Lower bounds on sum of w_j C_j over the jobs selected by the mask `sel`: the
        per-job one first, then one per resource."""
        w = self.weight
        per_job = w * self.end
        base = float(per_job[sel].sum())
        out = [base]
        for idx, amount, vol, cap, _ in resources:
            keep = sel[idx]
            if cap <= 0 or not keep.any():
                out.append(base)
                continue
            i, v = idx[keep], vol[keep]
            lp = _lp_bound(self.head[i], v / cap, w[i])
            lp += float(np.sum(w[i] * v / (2 * amount[keep])))
            here = float(per_job[i].sum())
            out.append(base - here + max(here, lp * _SAFE))
        return out

    @cached_property
    def _jct_parts(self) -> list[float]:
        return self._completion(np.ones(self.n, dtype=bool), self.lp_resources)

    def weighted_jct_named(self) -> tuple[float, str]:
        """The weighted JCT bound and the name of the ingredient that gives it: "path"
        (ingredient 2), "wspt" (4) or "lp" (6)."""
        if self.n == 0:
            return 0.0, "path"
        cands = [(self._jct_parts[0], "path"), (max(self._jct_parts), "wspt")]
        cands += [(v, "lp") for v in self._interval_lp_parts]
        cands += [(v, "config") for v in self._config_lp_parts]
        best, name = max(cands, key=lambda c: c[0])
        if name == "wspt" and best <= self._jct_parts[0]:
            name = "path"
        return max(0.0, best - float(np.sum(self.weight * self.release))), name

    @cached_property
    def _interval_lp_parts(self) -> list[float]:
        """Ingredient 6 per resource: sum of w_j C_j over all jobs (the LP for the
        resource's jobs, the per-job bound for the rest); empty when skipped."""
        w, per_job = self.weight, self.weight * self.end
        total = float(per_job.sum())
        out: list[float] = []
        if self.n > LP_MAX_JOBS:
            return out
        for idx, amount, vol, cap, events in self.lp_resources:
            keep = (vol > 0) & (amount > 0) & np.isfinite(vol)
            if cap <= 0 or not keep.any() or lp_stopped():
                continue
            i, v = idx[keep], vol[keep]
            solo_t, group_t = self._mode_times[0][i], self._mode_times[1][i]
            modes = [
                (amount[keep] * solo_t, solo_t),
                (np.where(np.isfinite(group_t), v, np.inf), group_t),
            ]
            points = grid(self.head[i], v, np.minimum(solo_t, group_t), cap, len(modes))
            room = _room(points, cap, events)
            lp = weighted_completion_lp(
                self.head[i], modes, self.end[i], w[i], points, room, self.iterations
            )
            if lp is not None:
                out.append(total - float(per_job[i].sum()) + lp * _LP_SAFE)
        return out

    # ---- ingredient 7: the configuration LP ------------------------------------------
    @cached_property
    def _config_lp_parts(self) -> list[float]:
        """Ingredient 7 per node-group family: sum of w_j C_j over all jobs (the LP for the
        family's jobs, the per-job bound for the rest); empty when skipped."""
        per_job = self.weight * self.end
        total = float(per_job.sum())
        out: list[float] = []
        if self.n > LP_MAX_JOBS or not self.inst.interleaving.enabled:
            return out
        fams = self._families()
        done: set[int] = set()
        for f, (idx, _, _, cap, events) in self._gpu_list:
            if f in done or cap <= 0 or lp_stopped():  # Ctrl-C: its types take seconds too
                continue
            done.add(f)
            lp = self._config_family(idx, fams[f], cap, events)
            if lp is not None:
                out.append(total - float(per_job[idx].sum()) + lp * _LP_SAFE)
        return out

    def _config_family(
        self, idx: np.ndarray, fam: np.ndarray, cap: float, events: list[tuple[float, float]]
    ) -> float | None:
        """Ingredient 7 on one family: sum of w_j C_j over its jobs (the LP, with e_j for
        jobs of no work), or None when none of them can group or the LP is skipped."""
        inst = self.inst
        on = self.eligible[idx].any(axis=0) & fam  # the family's node groups its jobs use
        groups = [g for g, u in zip(inst.node_groups, on, strict=True) if u]
        speed = max(g.speed for g in groups)
        mems = [g.gpu_mem_gb for g in groups]
        mem = None if any(x is None for x in mems) else max(x for x in mems if x is not None)
        partners = [inst.jobs[i] for i in np.flatnonzero((self.eligible & on).any(axis=1))]
        types = _config_types(inst, partners, speed, mem)
        jobs = [inst.jobs[i] for i in idx]
        work = np.array([_solo_work(inst, j, speed) for j in jobs])
        rho = np.array([types.best.get((j.gpus, j.model or ""), 0.0) for j in jobs])
        cls = np.array([types.classes.get((j.gpus, j.model or ""), -1) for j in jobs])
        keep = work > 0
        if not (rho[keep] > 0).any():
            return None
        i = idx[keep]
        cj = ConfigJobs(
            self.head[i],
            self.end[i],
            self.weight[i],
            work[keep],
            self.gpus[i],
            np.where(rho[keep] > 0, cls[keep], -1),
            rho[keep],
        )
        least = cj.work / np.maximum(1.0, cj.rho)
        points = grid(cj.head, cj.work * cj.gpus, least, cap, 2, X_COLUMNS)
        room = _room(points, cap, events)
        lp = config_lp(cj, types.gpus, types.rates, points, room, self.iterations)
        if lp is None:
            return None
        return lp + float(np.sum(self.weight[idx[~keep]] * self.end[idx[~keep]]))

    def weighted_tardiness(self) -> float:
        if self.n == 0:
            return 0.0
        due = np.array([j.due if j.due is not None else np.inf for j in self.inst.jobs])
        w = self.weight
        late = w * np.maximum(0.0, self.end - due)
        best = float(late.sum())
        has = np.isfinite(due) & (w > 0)
        if not has.any():
            return best
        # The two resources that bound the weighted completion best for all jobs.
        gains = self._jct_parts[1:]
        top = sorted(range(len(gains)), key=lambda r: -gains[r])[:2]
        chosen = [self.lp_resources[r] for r in top]
        for theta in sorted(set(np.quantile(due[has], [0.25, 0.5, 0.75, 1.0]).tolist())):
            sel = has & (due <= theta)
            rest = float(late[~sel].sum()) - float(np.sum(w[sel] * due[sel]))
            best = max(best, max(self._completion(sel, chosen)) + rest)
        return best


def _enumerate_groups(
    models: list[str],
    stages: list[StageTuple],
    sizes: Sequence[int],
    overhead: Mapping[int, float],
    solo: Sequence[float],
    weight: Sequence[float],
) -> dict[str, tuple[float, list[float]]]:
    """Every multiset of `sizes` members drawn from `models`: its c(G) (contract §4, the
    slot recursion of every ordering run side by side in numpy, and the pair formula), then
    per model the least c(G) and, per scheme A, B, C, a per-iteration GPU-time share
    (ms) such that the shares of every multiset's members sum to at most its c(G)."""
    sets, cycles = multiset_cycles(stages, sizes, overhead)
    if not sets:
        return {}
    out: dict[str, tuple[float, list[float]]] = {}
    for ms, c in zip(sets, cycles, strict=True):
        k = len(ms)
        gsum = sum(stages[m][1] for m in ms)
        for m in set(ms):
            ga = stages[m][1] / gsum if gsum > 0 else 1.0 / k
            vals = [c * ga, c / k, c * (ga + 1.0 / k) / 2]
            name = models[m]
            if name not in out:
                out[name] = (c, vals)
            else:
                old_c, old = out[name]
                out[name] = (min(old_c, c), [min(x, y) for x, y in zip(old, vals, strict=True)])
    # Raise each scheme's shares while every multiset still fits: any s with
    # sum_(t in G) s_t <= c(G) for all G and s_t <= solo_t is a valid attribution, so the
    # raised shares stay valid and only grow. Heaviest models first.
    containing: dict[int, list[int]] = defaultdict(list)
    for s_i, ms in enumerate(sets):
        for m in set(ms):
            containing[m].append(s_i)
    order = sorted(range(len(models)), key=lambda m: -weight[m])
    for scheme in range(len(SCHEMES)):
        sh = [min(solo[m], out[models[m]][1][scheme]) for m in range(len(models))]
        for m in order:
            slack = min(
                (cycles[s_i] - sum(sh[u] for u in sets[s_i])) / sets[s_i].count(m)
                for s_i in containing[m]
            )
            sh[m] = min(solo[m], sh[m] + max(0.0, slack))
        for m, name in enumerate(models):
            out[name][1][scheme] = sh[m]
    return out


class _Types(NamedTuple):
    """Group types for ingredient 7: per type its GPU count and members' rates (types x
    classes), the class number of each (GPU count, model) and its largest rate rho."""

    gpus: np.ndarray
    rates: np.ndarray
    classes: dict[tuple[int, str], int]
    best: dict[tuple[int, str], float]


def _config_types(
    inst: Instance, partners: Sequence[Job], speed: float, mem: float | None
) -> _Types:
    """The group types (`count_types`) of the models of `partners` (every job that may
    run on the family's nodes) per GPU count, on nodes of this speed and GPU memory."""
    by_count: dict[int, dict[str, int]] = defaultdict(dict)
    for j in partners:
        if j.model is not None:
            by_count[j.gpus][j.model] = by_count[j.gpus].get(j.model, 0) + 1
    il = inst.interleaving
    classes: dict[tuple[int, str], int] = {}
    best: dict[tuple[int, str], float] = {}
    blocks: list[tuple[int, int, np.ndarray]] = []  # (GPU count, first class, rates)
    for k, counts in sorted(by_count.items()):
        models = sorted(counts)
        top = min(il.max_group, sum(counts.values()))
        gps = [inst.profiles[m].by_gpus[k] for m in models]

        def fits(ms: tuple[int, ...], k: int = k, models: list[str] = models) -> bool:
            jobs = [Job(f"_{i}", k, models[m], 1) for i, m in enumerate(ms)]
            return gpu_mem_fits(inst, jobs, mem)

        got = count_types(
            [stage_tuple(gp, speed) for gp in gps],
            [solo_iteration_ms(gp, speed) for gp in gps],
            [counts[m] for m in models],
            [q for q in range(2, top + 1) if q in il.overhead],
            il.overhead,
            fits,
        )
        if not len(got.rates):
            continue
        blocks.append((k, len(classes), got.rates))
        for m_i, m in enumerate(models):
            classes[(k, m)] = len(classes)
            best[(k, m)] = float(got.best[m_i])
    rates = np.zeros((sum(len(r) for _, _, r in blocks), len(classes)))
    gpus, row = [], 0
    for k, first, r in blocks:
        rates[row : row + len(r), first : first + r.shape[1]] = r
        gpus += [k] * len(r)
        row += len(r)
    return _Types(np.array(gpus, dtype=int), rates, classes, best)


def _solo_work(inst: Instance, j: Job, speed: float) -> float:
    """A job's work in time units run solo on nodes of this speed (its duration when it
    has no model), shaved by _SAFE for float sums."""
    if j.model is None:
        return float(j.duration or 0)
    return (
        (j.iterations or 0) * solo_iteration_ms(inst.gpu_profile(j), speed) / inst.unit_ms * _SAFE
    )


def _volume_bound(
    head: np.ndarray, vol: np.ndarray, cap: float, events: list[tuple[float, float]]
) -> float:
    """max over thresholds r of the earliest T with capacity-time in [r, T] >= the volume of
    jobs with head >= r; capacity is `cap` plus the step changes in `events`."""
    if cap <= 0 or len(vol) == 0:
        return 0.0
    # Breakpoints of the capacity rate and the cumulative capacity A(t) at them.
    deltas: dict[float, float] = defaultdict(float)
    for t, dv in events:
        deltas[float(t)] += dv
    ts = sorted(set(deltas) | {0.0})
    rate = []
    cur = cap
    for t in ts:
        cur += deltas.get(t, 0.0)
        rate.append(max(0.0, cur))
    bt = np.array(ts)
    # Events at negative times do not occur (times are >= 0); rate before ts[0]=0 unused.
    br = np.array(rate)
    seg = np.diff(bt) * br[:-1]
    acc = np.concatenate(([0.0], np.cumsum(seg)))
    last_rate = br[-1] if br[-1] > 0 else cap  # after all reservations: full capacity

    def a_of(t: np.ndarray) -> np.ndarray:
        inside = np.interp(t, bt, acc)
        return np.where(t > bt[-1], acc[-1] + (t - bt[-1]) * last_rate, inside)

    order = np.argsort(-head, kind="stable")
    h = head[order]
    v = np.cumsum(vol[order])  # volume of jobs with head >= h[i] (ties: take the last)
    keep = np.append(h[1:] != h[:-1], True)
    h, v = h[keep], v[keep]
    target = a_of(h) + v
    # Smallest T with A(T) >= target: find the segment, then interpolate inside it.
    pos = np.searchsorted(acc, target, side="left")
    out = np.empty_like(target)
    beyond = pos >= len(acc)
    out[beyond] = bt[-1] + (target[beyond] - acc[-1]) / last_rate
    inb = ~beyond
    i = np.maximum(pos[inb] - 1, 0)
    r = br[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_in = np.where(r > 0, bt[i] + (target[inb] - acc[i]) / np.where(r > 0, r, 1.0), bt[i])
    out[inb] = np.where(pos[inb] == 0, bt[0], t_in)
    return float(np.max(np.maximum(out, h)))


def _room(points: np.ndarray, cap: float, events: list[tuple[float, float]]) -> np.ndarray:
    """Capacity-time in each slot [points[t], points[t+1]): `cap` plus the step changes
    in `events` (reservations that admit none of the resource's jobs), never below 0."""
    deltas: dict[float, float] = defaultdict(float)
    for t, dv in events:
        deltas[float(t)] += dv
    ts = sorted(set(deltas) | {0.0})
    rate, cur = [], cap
    for t in ts:
        cur += deltas.get(t, 0.0)
        rate.append(max(0.0, cur))
    bt, br = np.array(ts), np.array(rate)
    acc = np.concatenate(([0.0], np.cumsum(np.diff(bt) * br[:-1])))
    last = br[-1]
    a = np.where(points > bt[-1], acc[-1] + (points - bt[-1]) * last, np.interp(points, bt, acc))
    return np.asarray(np.diff(a))


def _lp_bound(release: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """min sum w_j M_j over preemptive one-machine schedules with release dates: the
    preemptive largest-w/p-first schedule (module docstring, ingredient 4); jobs with
    p = 0 add nothing."""
    keep = p > 0
    rel, p, w = release[keep], p[keep], w[keep]
    order = np.argsort(rel, kind="stable")
    rel_l, p_l, w_l = rel[order].tolist(), p[order].tolist(), w[order].tolist()
    n = len(rel_l)
    heap: list[tuple[float, int, float]] = []  # (-w/p, job, remaining)
    total = 0.0
    t = 0.0
    i = 0
    while i < n or heap:
        if not heap:
            t = max(t, rel_l[i])
        while i < n and rel_l[i] <= t:
            heapq.heappush(heap, (-w_l[i] / p_l[i], i, p_l[i]))
            i += 1
        nxt = rel_l[i] if i < n else math.inf
        while heap and t < nxt:
            ratio, j, rem = heapq.heappop(heap)
            run = min(rem, nxt - t)
            # w/p * integral of t over the piece
            total += -ratio * run * (2 * t + run) / 2.0
            t += run
            if rem - run > 1e-12 * p_l[j]:
                heapq.heappush(heap, (ratio, j, rem - run))
    return total


def earliest_ends(instance: Instance) -> dict[str, float]:
    """A lower bound on each job's end: its release and predecessors' chain plus its
    shortest duration on any node it may use (the per-job floor of the bounds above)."""
    if not instance.jobs:
        return {}
    b = _Bounds(instance)
    return {j.id: float(b.end[b.index[j.id]]) for j in instance.jobs}
