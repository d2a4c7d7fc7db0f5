"""`--solver auto`: choose a planner by the size of the exact model and the time limit.

Rule (the README copies this table):

| CP-SAT model size (placement options)      | auto runs                                   |
| ------------------------------------------ | ------------------------------------------- |
| <= OPTIONS_PER_SECOND x time limit         | `cpsat` (best-start hint; its own bound)    |
|    (at least MIN_CPSAT_OPTIONS)            |                                             |
| larger, and time left after the greedy plan| `greedy` + anytime improvement (`improve`)  |
| larger, no time left                       | `greedy`                                    |

Before the batch and release plans (which take 20-40% of the limit first), a model of at
most PROBE_MAX_OPTIONS options goes to CP-SAT alone for PROBE_SHARE of the limit; a proof
there ends the solve.

Model size = sum over jobs of the nodes (or node sets, for multi-node jobs) each may use,
plus, per candidate interleaving group, the nodes of its node group: the number of
optional placements CP-SAT has to decide. The time limit is `--time-limit` (default
DEFAULT_TIME_LIMIT s). MILP is never chosen: its time-indexed model grows with the
horizon's slots, and in experiments/milp_bench.py CP-SAT with 10 s beat it with 30 s (PSPLIB
j30: 20/20 proved optimal vs 14/20 for HiGHS, 11/20 for CBC; muri-30: total weighted JCT
4.19M vs 4.24M for CBC and 4.28M for HiGHS).

Measured (experiments/scale_bench.py --auto --time-limit 10, 2 workers; model options in
brackets; ratio = CP-SAT's total weighted JCT / greedy + improvement's):
dl-30 [170] 0.866, dl-60 [707] 0.940, dl-120 [2,781] 1.001, dl-250 [11,581] 1.002,
dl-500 [46,440] 1.000; mixed-30 [93] 0.874, mixed-60 [393] 0.971, mixed-120 [1,692] 1.004,
mixed-250 [7,480] 1.003, mixed-500 [29,346] 1.002. CP-SAT wins clearly below ~700
options, ties from ~1,700 on: the crossover is about 100 options per second of limit.

A plain RCPSP with makespan first (`rcpsp_heuristic.applicable`: no GPUs, pools only, as
PSPLIB) has no placement choices: `cpsat`, started from the RCPSP heuristic, at any size.

Every schedule returned here carries planner.bounds' lower bounds (merged with what the
solver proved) and `info["auto"] = {"chose": ..., "why": ..., "model_options": ...}`.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from planner.bounds import with_bounds
from planner.groups import candidate_groups
from planner.instance import ENERGY_OBJECTIVES, Instance
from planner.schedule import Schedule
from planner.solvers.exact import cpsat_size, given_start
from planner.solvers.greedy import solve_greedy
from planner.solvers.improve import improve
from planner.solvers.options import DEFAULT_TIME_LIMIT, SolveOptions, objectives_of
from planner.solvers.preempt import solve_preempt
from planner.solvers.preempt.batch import batch_plan, batch_planned
from planner.solvers.preempt.kept import better_of, kept_plan, the_better
from planner.solvers.preempt.search import SRSF_MAX_JOBS
from planner.solvers.rcpsp_heuristic import applicable

OPTIONS_PER_SECOND = 100
MIN_CPSAT_OPTIONS = 300
# Above this many jobs the candidate groups are not enumerated for the estimate: the
# solo options alone already exceed any CP-SAT limit.
_GROUP_ESTIMATE_MAX_JOBS = 5_000
# Time the preemptive search must leave before the planner without preemption gets it.
REST_MIN_S = 0.5
# On a preemptive instance this small, when CP-SAT's model fits, CP-SAT without
# preemption gets this share of the limit after the search: the search had kept a greedy
# plan 0.3% above the bound that CP-SAT meets in 0.6 s (tests/test_auto.py). With 40%, on
# 36 generated instances of 8-24 jobs at 5 s, better on 5 (by up to 4.2%) and worse on
# none (`experiments/auto_preemptive_small.py`, README "Choosing a solver").
SMALL_PREEMPTIVE_JOBS = 30
SMALL_PREEMPTIVE_CPSAT_SHARE = 0.4
# With an energy objective on a preemptive instance, the share of the limit for the
# engine's plans with segments (plain `greedy`'s there) before the planner without
# preemption: kept when better on the objectives, so `auto` is never worse than `greedy`
# (tests/test_auto.py: 5,832 against 6,775 makespan first).
ENERGY_ENGINE_SHARE = 0.25
# A model this small, on an instance the batch or release plans take 20-40% of the limit
# for (`batch.BATCH_SHARE`, `batch.RELEASE_SHARE`), goes to CP-SAT alone first for
# PROBE_SHARE of the limit; a proof there ends the solve (`plan generate --family dl
# --jobs 8 --nodes 1`, 14 options, took 10 s of the default 30 s for a plan CP-SAT proves
# optimal in 0.5 s).
# PROBE_MAX_OPTIONS: on 36 generated instances of 10-24 jobs (3 s each), CP-SAT alone
# proved 18 of the 19 up to 40 options (the other ended in 0.5 s: optimal on its time
# grid, not proved); of the 5 of 41-50 options, two ran their whole 3 s unproved, and
# with 100, three of 63-71 options lost 0.04-0.55% (the probe's time). An unproved probe's
# plan is dropped: CP-SAT starts again from the best start after the batch plans.
# experiments/auto_probe.py (10 s, one run): on the 13 instances probed the same plans,
# median wall 3.31 -> 0.22 s.
PROBE_MAX_OPTIONS = 40
PROBE_SHARE = 0.1


def model_size(instance: Instance) -> int:
    """Solo options plus, per candidate interleaving group, the nodes it may use."""
    size = cpsat_size(instance)
    if instance.interleaving.enabled and len(instance.jobs) <= _GROUP_ESTIMATE_MAX_JOBS:
        count = {g.name: g.count for g in instance.node_groups}
        size += sum(count[cg.node_group] for cg in candidate_groups(instance))
    return size


def cpsat_limit(time_limit: float) -> int:
    """The largest model (placement options) given to CP-SAT for this time limit."""
    return max(MIN_CPSAT_OPTIONS, int(OPTIONS_PER_SECOND * time_limit))


def choose(
    instance: Instance, time_limit: float | None = None, first_objective: str | None = None
) -> tuple[str, str, int]:
    """(solver, why, model options): "cpsat" or "greedy+improve" (see the module table);
    with `first_objective` "makespan", a plain RCPSP is "cpsat" at any size."""
    limit_s = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    size = model_size(instance)
    cap = cpsat_limit(limit_s)
    if size > cap and first_objective == "makespan" and applicable(instance):
        # No placement choices: the RCPSP heuristic's start and CP-SAT at any size
        # (generated projects, 10 s: 2,000 jobs 3,144 against greedy and improvement's
        # 3,503; 10,000 jobs 14,816 in 10.7 s against 16,785 in 56 s)
        return "cpsat", "a plain RCPSP: the RCPSP heuristic's start and CP-SAT", size
    if size <= cap:
        return (
            "cpsat",
            (
                f"CP-SAT model of {size:,} placement options fits the limit "
                f"{cap:,} for {limit_s:g} s"
            ),
            size,
        )
    return (
        "greedy+improve",
        (
            f"{size:,} placement options exceed the CP-SAT limit {cap:,} "
            f"for {limit_s:g} s: greedy, then improvement in the time left"
        ),
        size,
    )


def solve_auto(instance: Instance, options: SolveOptions) -> Schedule:
    """Plan with CP-SAT when its model fits the time limit, else greedy plus improvement."""
    t0 = time.perf_counter()
    options = options.pinned()  # the time limits given to the parts below shrink
    names = list(objectives_of(instance, options))
    name, why, size = choose(instance, options.time_limit, names[0])
    sched: Schedule | None = None
    kept = given_start(instance, options)  # the plan in force (`plan replan`), if it holds
    first: Schedule | None = None
    if not instance.preemption.enabled:
        if name == "cpsat" and size <= PROBE_MAX_OPTIONS and batch_planned(instance):
            probe = _probe(instance, options)
            if probe is not None and probe.status in ("optimal", "infeasible"):
                why += f"; proved in its first {PROBE_SHARE:.0%} of the limit"
                return _finished(instance, probe, (name, why, size), options, t0)
        if name != "cpsat":
            # the greedy plan first, so that the kept plans keep to what is left of the
            # limit: on trace1.csv whole (1,494 jobs) the greedy plan takes about 1.7 s,
            # and `--time-limit 2` took 5.1 s when the kept plans had the whole limit.
            # Its run with groups ends at the limit (the plan without them answers): on
            # `plan generate --family mixed --jobs 10000 --nodes 128 --seed 1` it ran on
            # for the whole of both runs, `--time-limit 10` taking 23-67 s
            first = solve_greedy(instance, None, options, grouping_in_limit=True)
        # Muri's grouping with groups kept to the end, and the batch or release plan: more
        # plans, compared at the end
        rest = options.spent_since(t0)
        for other in (kept_plan(instance, rest), batch_plan(instance, rest)):
            kept = the_better(instance, options, kept, other)
        options = options.spent_since(t0)
    t1 = time.perf_counter()  # options.limit counts from here
    if (
        instance.preemption.enabled
        and len(instance.jobs) <= SRSF_MAX_JOBS
        and not any(n in ENERGY_OBJECTIVES for n in names)
    ):
        # above SRSF_MAX_JOBS the engine is not run: greedy + improvement plans instead;
        # the engine's orders know no prices or power, so an energy objective (first or
        # tie-breaker) goes to the plans below (one segment per job is a plan of a
        # preemptive instance too)
        plain_name = name
        name, why = "preempt", "preemption is enabled: Muri's engine as the start, then search"
        search = options
        if plain_name == "cpsat" and len(instance.jobs) <= SMALL_PREEMPTIVE_JOBS:
            share = 1.0 - SMALL_PREEMPTIVE_CPSAT_SHARE
            search = replace(options, time_limit=options.limit * share)
        sched = solve_preempt(instance, search)
        rest = options.spent_since(t1)
        if rest.limit >= REST_MIN_S and not options.stop.is_set():
            # The search ends early when it has nothing to re-form (projects of pool-only
            # jobs: one engine run and the greedy plan, 0.2 s of 3). A plan without
            # segments is a plan of a preemptive instance too: the rest of the limit goes
            # to the planner without preemption (tests/test_auto.py).
            plain, plain_name, _ = _without_preemption(instance, rest, plain_name, "", kept, None)
            if plain.jobs and the_better(instance, options, sched, plain) is plain:
                why += (
                    f"; {plain_name} without segments, in the {rest.limit:.1f} s left, did better"
                )
                sched, name = plain, plain_name
    elif instance.preemption.enabled and len(instance.jobs) <= SRSF_MAX_JOBS:
        # an energy objective: the engine's orders know no power or prices, but its plans
        # (plain `greedy`'s here) may still be the better ones, as segments may pay
        engine_options = replace(options, time_limit=options.limit * ENERGY_ENGINE_SHARE)
        engine = solve_preempt(instance, engine_options, search=False)
        rest = options.spent_since(t1)
        sched, name, why = _without_preemption(instance, rest, name, why, kept, first)
        if engine.jobs and the_better(instance, options, sched, engine) is engine:
            why += "; Muri's engine with segments (greedy's plan) did better"
            sched, name = engine, "preempt"
    else:
        sched, name, why = _without_preemption(instance, options, name, why, kept, first)
    if kept is not None:
        sched = better_of(instance, sched, kept, options)
    return _finished(instance, sched, (name, why, size), options, t0)


def _probe(instance: Instance, options: SolveOptions) -> Schedule | None:
    """CP-SAT alone for PROBE_SHARE of the limit, or None when it is not installed."""
    try:
        from planner.solvers.cpsat import solve_cpsat  # OR-Tools loads only when chosen
    except ImportError:
        return None
    return solve_cpsat(instance, replace(options, time_limit=options.limit * PROBE_SHARE))


def _finished(
    instance: Instance,
    sched: Schedule,
    choice: tuple[str, str, int],
    options: SolveOptions,
    t0: float,
) -> Schedule:
    """`sched` with planner.bounds' lower bounds, `info["auto"]` from `choice` (planner,
    why, model options) and its wall time since `t0`."""
    name, why, size = choice
    info: dict[str, Any] = {
        **sched.info,
        "auto": {"chose": name, "why": why, "model_options": size},
    }
    names = list(objectives_of(instance, options))
    sched = with_bounds(instance, sched, names, options.bound_iterations)
    return sched.with_(info=info, wall_s=time.perf_counter() - t0)


def _without_preemption(
    instance: Instance,
    options: SolveOptions,
    name: str,
    why: str,
    kept: Schedule | None,
    first: Schedule | None,
) -> tuple[Schedule, str, str]:
    """(plan, planner, why) of the planner `choose` named, within `options.limit` from
    now: CP-SAT started from `kept`, or the greedy plan (`first` when already made) and
    the improvement search in the time left."""
    t1 = time.perf_counter()
    sched: Schedule | None = None
    if name == "cpsat":
        try:
            from planner.solvers.cpsat import solve_cpsat  # OR-Tools loads only when chosen

            sched = solve_cpsat(instance, replace(options, start=kept))
        except ImportError as e:  # a back end that is not installed
            name, why = "greedy+improve", f"cpsat unavailable ({e}); greedy and improvement"
    if sched is None:
        sched = first or solve_greedy(instance, None, options, grouping_in_limit=True)
        left = options.limit - (time.perf_counter() - t1)
        if left > 0 and sched.status == "feasible" and not options.stop.is_set():
            sched = improve(instance, replace(options, time_limit=left), start=sched)
        else:
            name = "greedy"
            why += "; no time left for improvement" if sched.status == "feasible" else ""
    return sched, name, why
