"""Valid lower bounds on every objective, cheap enough for 100,000-job instances.

`lower_bounds(instance)` returns, per objective, a value that no schedule satisfying rules
R1-R10 can beat (a live state's energy objectives get none, `live.residual.Residual.shift`; a
preemptive one with running jobs is bounded by `live.running.Restartable`); every planner can
report it so that a gap is known even when no exact model runs. All bounds below come
from relaxations: they drop the rules that only make a schedule worse (R6 placement
details, R7, R10 for admitted jobs, deadlines, horizon; R9 and reservations enter only
through the earliest starts of 2a and 2b), so each one is at most the optimum.

Ingredients
-----------
1. Per-job minimum duration `p_min(j)` (`JobFloors._per_iteration_floor`): a profiled
   member of an interleaving group advances one iteration per phase cycle, each phase
   either solo (its solo iteration time) or a group containing j, whose cycle is
   `overhead[k] * TT(G)`.
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
   The heads also take 2a and 2b, and every ingredient below takes these heads as the
   jobs' earliest starts (`planner.bounds.starts.earliest_starts`: passes over `after`,
   2a and 2b, repeated until no head rises; each pass raises a head only to a value that
   every schedule's start of that job is at least, given that the heads before the pass
   are, so the heads stay valid after any number of passes).
2a. Reservations (`bounds.starts.Alone`, without preemption and in a static instance): R10
   says "during `[start, end)` the listed GPUs ... are usable only by jobs that `for`
   admits", and R8 that "the sum of running jobs' `demand` <= pool capacity minus what
   reservations hold", a pool reservation's amount usable only by the jobs it admits
   (Hall's condition with U = the reservations that do not admit j: j's demand fits in
   the capacity less what they hold). Without preemption j runs once, on its placement,
   for at least its least duration `p_g(j)` on its node group g (ingredient 1). So its
   start t has a node of g with j's GPU count free of every reservation that does not
   admit j throughout `[t, t + p_g(j))` (for more GPUs than a node has, that many whole
   nodes; an elastic job's least count), and each pool j demands has j's demand free of
   the pool reservations that do not admit j throughout that window. The least such t >=
   head(j), minimised over j's node groups, is a lower bound on its start: the windows'
   feasibility only changes at a reservation's end, so the search tries head(j) and those
   ends, alternating the GPU and pool searches (each gives the least instant >= its input
   that it allows, so neither steps past the least instant both allow). With preemption
   a job can run around a reservation in pieces (contract §8), so 2a is not used there.
2b. Strict priority (`policy.priority` "strict"): R9 says "if `priority(a) > priority(b)`
   and `release(a) <= release(b)`, then `start(a) <= start(b)`" (with preemption, on
   first starts, which is what heads bound). So `head(b) >= head(a)` for every such pair:
   one pass over the jobs in release order keeps, per priority, the largest head seen
   (a Fenwick tree over priority ranks). On mixed instances this is what the plans pay:
   a priority-1 job released early whose `after` chain or a tenant hold on the only node
   it fits delays its start holds back every priority-0 job released after it. A live
   state is bounded through its residual (below), where R9 is kept only when it is the
   live state's (`_r9_kept`; R9 compares `Instance.arrival`, the release the residual
   keeps for each waiting job; contract §9: R9 does not bind a running or done job).
   Measured on `plan generate --family mixed` (12-24 jobs, 2-4 nodes, seeds 1-10, CP-SAT
   optima without interleaving): the mean gap falls from 25.5% to 2.0%; 2a alone gives
   17.2%, 2b alone 13.4%; with strict priority off the optima fall by 18% and the gap
   without 2a and 2b is 12.0%, with reservations removed 15.1% (experiments/bounds_starts.py,
   rule by rule; tests/test_bounds_starts.py).
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
   When jobs of one GPU count use at most 10 models, `bounds.delivery.enumerate_groups`
   computes c(G) exactly for every multiset of those models (a superset of all groups and of the
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
4. Weighted completion on a resource (`bounds.volume.mean_busy_bound`, the mean-busy-time
   relaxation): map the GPU-time shares of a feasible schedule onto one machine of rate 1
   by dividing by the capacity C: job j gets processing `p_j = share_j / C` at rate at most
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

6. Weighted completion with capacity over time (`planner.bounds.lp`, a time-indexed LP
   solved with HiGHS). Ingredient 4 lets a job run as fast as the whole resource; this
   one keeps each job at its own speed. Per job two modes: solo (GPU-time `gpus_j` per
   time unit, least duration the solo one) and interleaved (GPU-time per unit of
   progress at least the job's share from ingredient 3, least duration the job's
   iterations times the least cycle of any group holding it, `JobFloors.iteration_times`). In
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
   e_j for the others. Its size is capped (planner.bounds.lp.MAX_COLUMNS: the grid
   coarsens with more jobs) and it is skipped above LP_MAX_JOBS jobs; HiGHS's optimum is
   shaved by LP_SAFE for its tolerances. On instances/muri-testbed-100.json it lifts the
   bound from 55,595 to ~57,190 average JCT (well under a second); with interleaving
   disabled the same LP gives ~86,350 there. So the remaining gap lies in interleaving:
   pairs and groups of that testbed's models reach 1.5-2.2x the solo throughput, which
   the bound credits while the plans found so far hardly group at all.

7. Weighted completion with group types (`planner.bounds.config`, the configuration LP;
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
   bounds.config.TANGENTS, is a valid linear row. Summing a slot's rows over a block
   keeps them valid. So the schedule gives a feasible point of the LP, whose
   optimum is at most sum w_j C_j; ceilings of ends only make schedules worse. Run for
   F's jobs of positive work, e_j for the rest. Size: the x grid gets about
   bounds.config.X_COLUMNS columns, the types' blocks at most Y_COLUMNS (a coarser block
   when types are many), skipped above MAX_CONFIG_COLUMNS or LP_MAX_JOBS jobs; optimum
   shaved by LP_SAFE. Measured (one run, HiGHS): on instances/muri-testbed-100.json it
   lifts the bound from 57,186 to 63,285 average JCT (2.3 s, ~60k x and ~27k y columns);
   on Muri's 400-job cluster_trace (8 x 8) from 61,009 to 63,468 (2.0 s), the grid
   being coarser there. Each part counts: on the testbed, ingredient 6 gives 57,186,
   with one-mode-at-a-time rows added 59,190 (300 grid points), the types without those
   rows 57,945 (300 points, blocks of one slot), types and those rows 60,543, and the
   tangent rows bring it to 63,285.
   Slot cuts, in both 6 and 7 (argued in planner.bounds.lp's module docstring): the rows
   above price the progress made in a slot at the slot's start; progress at a bounded rate
   takes time inside the slot too, so M_j >= sum_t X_jt (a_jt + X_jt W_j / 2) (X_jt: j's
   progress in slot t, W_j: the least time all of it takes, work_j / max(1, rho_j) in 7),
   added as tangent rows after each solve. They lift 7 on the testbed from 63,285 to
   63,525 and on cluster_trace from 63,468 to 65,294 (about 0.5 s more each).

`named_lower_bounds` also says which ingredient gives each bound: "path" (2), "volume"
(3), "wspt" (4, 5), "lp" (6) or "config" (7); the CLI prints it next to the gap.

Time: O(n log n) in jobs (sorting, a heap), plus work per distinct job shape, plus the
LPs (up to about a second or two each at 400 jobs).

Where the code is: this module holds the entry points; `planner.bounds.jobs` the per-job
quantities and the bound per resource (`JobBounds`, ingredients 1-7, LP_MAX_JOBS), on
`planner.bounds.floors`' floors per node group (`JobFloors`, 1) and
`planner.bounds.starts`' earliest starts (2, 2a, 2b); `planner.bounds.delivery`
what groups deliver (3 and 7), `planner.bounds.volume` capacity over time (3, 4),
`planner.bounds.lp` and `planner.bounds.config` the LPs (6, 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from planner.bounds.jobs import JobBounds
from planner.bounds.lp import LP_ITERATIONS, clocked, lp_stopped
from planner.instance import ENERGY_OBJECTIVES, OBJECTIVES, Instance
from planner.schedule import Schedule, SolveInfo

if TYPE_CHECKING:
    from planner.live.residual import Residual


def gap(value: float | None, bound: float | None) -> float | None:
    """Relative gap `(value - bound) / value`; None when either is missing or value is 0."""
    if value is None or bound is None or value == 0:
        return None
    return (value - bound) / value


def lower_bounds(
    instance: Instance, objectives: Sequence[str] | None = None, iterations: int = LP_ITERATIONS
) -> dict[str, float]:
    """Per objective, a value no feasible schedule can beat (see the module docstring);
    each LP gets `iterations` simplex iterations (`bounds.lp.lp_iterations`)."""
    return {k: v for k, (v, _) in named_lower_bounds(instance, objectives, iterations).items()}


def named_lower_bounds(
    instance: Instance, objectives: Sequence[str] | None = None, iterations: int = LP_ITERATIONS
) -> dict[str, tuple[float, str]]:
    """Per objective, (bound, the word of the ingredient of the module docstring that
    gives it: path, volume, wspt, lp or config, as the CLI's gap line shows it); each LP
    gets `iterations` simplex iterations."""
    names = tuple(objectives) if objectives is not None else tuple(instance.objective)
    bad = [n for n in names if n not in OBJECTIVES]
    if bad:
        raise ValueError(f"unknown objective {', '.join(bad)}; known: {', '.join(OBJECTIVES)}")
    with clocked(iterations):  # one bound's LPs share a clock (bounds.lp.clocked)
        return _named(instance, names, iterations)


def _named(
    instance: Instance, names: tuple[str, ...], iterations: int
) -> dict[str, tuple[float, str]]:
    """`named_lower_bounds` of known objective `names`."""
    if instance.is_live:  # contract §9: bound the waiting jobs, add what the fixed ones give
        from planner.live.residual import residual
        from planner.live.running import restartable

        res = residual(instance)
        # a plan may stop a running job (not `bounded`), or the residual holds a node whole
        # (stricter than the live state): bound a relaxation instead
        relax = res.loosened() if res.bounded else restartable(instance)
        inner = named_lower_bounds(_r9_kept(relax.instance, res), names, iterations)
        shifted = relax.shift({k: v for k, (v, _) in inner.items()})  # none for energy
        return {k: (shifted[k], inner[k][1]) for k in names if k in shifted}
    if any(n in ENERGY_OBJECTIVES for n in names):
        return _with_energy(instance, names, iterations)
    for inst, key, got in _RECENT:
        if inst is instance and key == (names, iterations):
            return dict(got)
    b = JobBounds(instance, iterations)
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


def _r9_kept(static: Instance, res: Residual) -> Instance:
    """`static`, a relaxation of live state `res.live`, with R9 dropped (`policy.priority`
    "none") unless it is the live state's R9 (ingredient 2b): the loosened residual, which
    compares the waiting jobs' own releases (`Instance.arrived`); not `restartable`'s
    relaxation (when not `res.bounded`), whose releases are moved to `now` and whose running
    jobs wait. A stopped job that resumes is in no R9 pair of the residual, as in the live
    state (`planner.live.residual._exempt_from_r9`)."""
    if res.bounded:
        return static
    return replace(static, priority_policy="none")


# The last few results: the exact solvers' start runs every greedy rule on one instance,
# and each attaches the same bounds (the interval LP takes up to a second or two).
_RECENT: list[tuple[Instance, tuple[tuple[str, ...], int], dict[str, tuple[float, str]]]] = []


def _with_energy(
    instance: Instance, names: Sequence[str], iterations: int
) -> dict[str, tuple[float, str]]:
    """The bounds of the other objectives, and for energy: 0 when no price is negative
    (a GPU's draw is never negative), none otherwise."""
    rest = [n for n in names if n not in ENERGY_OBJECTIVES]
    full = named_lower_bounds(instance, rest, iterations) if rest else {}
    out: dict[str, tuple[float, str]] = {}
    for name in names:
        if name in full:
            out[name] = full[name]
        elif name == "energy_kwh" or all(p.price >= 0 for p in instance.power_price):
            out[name] = (0.0, "path")
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


def tightest(*named: tuple[float, str] | None) -> tuple[float, str] | None:
    """The largest of these bounds with the name of what gave it (`info.bound_by`: an
    ingredient above, or a model's own, `cpsat`, `milp`), ties to the first listed; None
    when none is given. Every planner names its bound by this rule: CP-SAT lists the
    model's bound first, the MILP the relaxation's, `with_bounds` the plan's own."""
    given = [b for b in named if b is not None]
    return max(given, key=lambda b: b[0]) if given else None  # max keeps the first of ties


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
        if v is None:
            continue
        own = (v, old_by.get(k, ""))  # "": the plan names no source for it
        # ties: the plan's own bound when it names its source, else the ingredient
        lb[k], word = tightest(*((own, named.get(k)) if own[1] else (named.get(k), own))) or own
        if word:
            by[k] = word
        else:
            by.pop(k, None)
    return s.with_(lower_bound=lb, info={**info, "bound_by": by})


def earliest_ends(instance: Instance) -> dict[str, float]:
    """A lower bound on each job's end: its release and predecessors' chain plus its
    shortest duration on any node it may use (the per-job floor of the bounds above,
    without 2a and 2b: the solvers test a live state's residual with it, whose holds of
    free GPUs for running jobs may be stricter than the state's reservations,
    `planner.live.residual.Residual.conservative`)."""
    if not instance.jobs:
        return {}
    b = JobBounds(instance, starts=False)
    return {j.id: float(b.end[b.index[j.id]]) for j in instance.jobs}
