"""A solver spec string (`greedy:sjf`, `cpsat`, `milp`, `auto`) to a schedule.

CP-SAT, MILP and auto are imported when first used, so that OR-Tools or PuLP load only
for the solver that needs them (every `plan` command imports this module; OR-Tools alone
takes about half a second to load).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from planner.bounds.lp import stoppable
from planner.errors import UsageError
from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers.greedy import RULES as GREEDY_RULES
from planner.solvers.greedy import solve_greedy
from planner.solvers.greedy.order import default_rule
from planner.solvers.options import SolveOptions, objectives_of
from planner.solvers.plain import missed_limit, plain_infeasibility, reserved_out

if TYPE_CHECKING:
    from planner.live.residual import Residual


# Share of a live state's time limit the residual plan gets when the preemptive planner
# then runs from the present (`_solve_live`). Not tuned: against the residual alone with
# the whole limit it is better or equal in all eight replans of
# experiments/replan_present.py (cluster_trace.csv, 15 s, README "Replanning").
RESIDUAL_SHARE = 0.5
MILP_BACKENDS = ("cbc", "highs")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`greedy:sjf` -> ("greedy", "sjf"); checks the name and rule."""
    name, colon, rule = spec.partition(":")
    if colon and not rule:
        use = "greedy or greedy:RULE" if name == "greedy" else name
        raise UsageError(f"solver {spec!r} names no rule after ':': use {use}")
    if name not in ("auto", "greedy", "cpsat", "milp"):
        raise UsageError(
            f"unknown solver {spec!r}: use auto, cpsat, milp[:BACKEND] or greedy[:RULE]"
        )
    if name == "greedy":
        if rule and rule not in GREEDY_RULES:
            raise UsageError(f"unknown greedy rule {rule!r}: use one of {', '.join(GREEDY_RULES)}")
        return name, rule or None
    if name == "milp" and rule:  # the name a MILP schedule carries, `milp:cbc`, read back
        if rule not in MILP_BACKENDS:
            raise UsageError(f"unknown MILP back end {rule!r}: use {' or '.join(MILP_BACKENDS)}")
        return name, rule
    if rule:
        raise UsageError(f"solver {name!r} takes no rule")
    return name, None


def solve(instance: Instance, spec: str, options: SolveOptions | None = None) -> Schedule:
    """Plan `instance` with the solver named by `spec`; the result is not yet verified."""
    options = (options or SolveOptions()).pinned()
    with stoppable(options.stop):  # Ctrl-C stops the bound LPs too
        return _solve(instance, spec, options)


def _solve(instance: Instance, spec: str, options: SolveOptions) -> Schedule:
    name, rule = parse_spec(spec)
    if not instance.jobs:  # nothing to plan: the empty plan is optimal for every objective
        return Schedule(instance.name, spec, "optimal", info={"reason": "the instance has no jobs"})
    if instance.is_live:
        return _solve_live(instance, spec, options)
    sched = _solve_static(instance, name, rule, options)
    if options.start is not None and sched.jobs:
        sched = _no_worse_than_start(instance, sched, options)
    return _optimal_by_bound(instance, sched, options)


def _optimal_by_bound(instance: Instance, sched: Schedule, options: SolveOptions) -> Schedule:
    """`exact.optimal_by_bound` for the plans of greedy, the preemptive engine and auto
    (the exact solvers' `finish` applies it itself): any plan that meets a valid bound is
    optimal, whoever found it."""
    from planner.solvers.exact import optimal_by_bound

    lower = {k: v for k, v in (sched.lower_bound or {}).items() if v is not None}
    return optimal_by_bound(instance, sched, objectives_of(instance, options), lower)


def _solve_static(
    instance: Instance, name: str, rule: str | None, options: SolveOptions
) -> Schedule:
    """A plan of an instance that is no live state, with its reason when there is none."""
    sched = _dispatch(instance, name, rule, options)
    if not sched.jobs:  # name the job and the constraint when the instance plainly says
        reason = plain_infeasibility(instance)
        if reason is not None:  # a proof: no schedule exists; the solver's own words
            info = dict(sched.info)  # (often the same, or a bare status) are kept apart
            if "reason" in info:
                info["solver_reason"] = info.pop("reason")
            sched = sched.with_(status="infeasible", info={**info, "reason": reason})
    return sched


def _dispatch(instance: Instance, name: str, rule: str | None, options: SolveOptions) -> Schedule:
    if name == "greedy" and rule is None and instance.preemption.enabled:
        # the default rule on a preemptive instance: the best of the preemptive
        # planner's starts (its engine runs and the list plan), without its search
        from planner.solvers.preempt import solve_preempt

        return solve_preempt(instance, options, search=False)
    if name == "greedy" and (rule or default_rule(instance)) == "interleave":
        # interleaving without preemption: the list plan or Muri's grouping with groups
        # kept to the end (planner.solvers.preempt.kept), whichever is better
        from planner.solvers.preempt.kept import better_of, kept_plan

        t0 = time.perf_counter()
        plan = solve_greedy(instance, rule, options)
        # the kept plans get what the list plan leaves of the limit (on trace1.csv whole,
        # 1,494 jobs, `--time-limit 2` took 5.1 s when they had all of it)
        kept = kept_plan(instance, options.spent_since(t0))
        return better_of(instance, plan, kept, options)
    if name == "greedy":
        return solve_greedy(instance, rule, options)
    if name == "cpsat":
        from planner.solvers.cpsat import solve_cpsat

        return solve_cpsat(instance, options)
    if name == "milp":
        from planner.solvers.milp import solve_milp

        backend = options.milp_backend if rule is None else rule  # the spec's wins
        return solve_milp(instance, replace(options, milp_backend=backend))
    from planner.solvers.auto import solve_auto

    return solve_auto(instance, options)


def _solve_live(instance: Instance, spec: str, options: SolveOptions) -> Schedule:
    """A live state (contract §9): plan the waiting jobs around the fixed ones
    (`planner.live.residual`), with the solver named by `spec`; with preemption, `auto` and
    `greedy` then run the engine from the present, which may stop running jobs at `now`
    (`_from_the_present`); with every solver, the plan is never worse than the plan in
    force (`options.start`, `plan replan`) carried on."""
    from planner.live.residual import residual

    t0 = time.perf_counter()
    res = residual(instance)
    name, rule = parse_spec(spec)
    engine = instance.preemption.enabled and rule is None and name in ("auto", "greedy")
    first = replace(options, time_limit=options.limit * RESIDUAL_SHARE) if engine else options
    if not res.proves:  # the residual's bounds are dropped (`Residual.merge`): no LP for them
        first = replace(first, bound_lp_iterations=0)
    merged = _plan_stops(instance, res, spec, first)
    if engine and res.late(res.co_runners()) is None:
        left = replace(options, time_limit=max(0.0, options.limit - (time.perf_counter() - t0)))
        merged = _from_the_present(instance, merged, left, search=name == "auto")
    if options.start is not None:
        merged = _no_worse_than_in_force(instance, res, merged, options)
    if not res.proves and merged.jobs:  # the residual's bounds do not hold: a relaxation's
        from planner.bounds import with_bounds

        names = objectives_of(instance, options)
        merged = with_bounds(instance, merged, names, options.bound_iterations)
    return merged


def _from_the_present(
    instance: Instance, merged: Schedule, options: SolveOptions, search: bool
) -> Schedule:
    """The preemptive planner (`solve_preempt`) on the live state itself: its engine starts
    from the present (`planner.simulate.engine`, running jobs as runs since `started`) and
    may stop them at `now`, which the residual cannot; the residual's plan `merged` is its
    plain start, whose bound (what `Residual.merge` kept of the residual's) stays."""
    from planner.solvers.preempt import solve_preempt

    out = solve_preempt(instance, options, search=search, plain=merged)
    if not out.jobs:
        return merged
    status = "feasible" if out.status == "optimal" else out.status
    return out.with_(status=status, lower_bound=merged.lower_bound)


def _plan_stops(instance: Instance, res: Residual, spec: str, options: SolveOptions) -> Schedule:
    """The residual's plan; when the running jobs that must stop could stop in more than one
    way (`Residual.stop_chosen`, `live.residual.stop_choices`: run on after `now` until the
    reservation that stops them begins, or stop at `now`; their co-members run on without
    them, or stop with them), the best of one plan per way, the time shared evenly:
    running on keeps the work done meanwhile, stopping at `now` frees GPUs sooner for a
    waiting job, a co-member that runs on may meet a deadline that its stopped rest would
    miss, and one stopped with them may free its GPUs for a waiting job with a deadline
    (tests/test_live.py has states where each wins). No residual is every plan's, so their
    proofs and bounds go (`_solve_live` computes a relaxation's). A "no schedule" stands
    only from the way that stops every such job at `now` and lets co-members run on, when
    proved (`_plan_residual`): its proofs are of ends that no plan's stop times move (a
    waiting job's earliest end, a running job's without co-members) and of the rests of
    jobs that every plan stops, released at `now` (a rest ends no sooner when stopped
    later: it runs no faster than alone)."""
    if not res.stop_chosen:
        return _plan_residual(instance, res, spec, options)
    from planner.live.residual import residual, stop_choices
    from planner.metrics import objective_values, strictly_better

    t0 = time.perf_counter()
    choices = stop_choices(instance)
    names = objectives_of(instance, options)
    best: tuple[list[float], Schedule, str] | None = None
    proof: Schedule | None = None
    for k, (choice, stops) in enumerate(choices.items()):
        left = max(0.0, options.limit - (time.perf_counter() - t0)) / (len(choices) - k)
        one = residual(instance, choice, choices) if k else res
        plan = _plan_residual(instance, one, spec, replace(options, time_limit=left))
        when = "now" if all(t == instance.now for t in stops.values()) else "later"
        if not plan.jobs:
            # a co-member stopped with them has a rest that a plan letting it run on lacks
            if when == "now" and not choice.endswith("+group"):
                proof = plan
            continue
        values = objective_values(instance, plan, names)
        key = [values[n] for n in names]
        if best is None or strictly_better(key, best[0]):  # ties: the earlier choice
            best = (key, plan, when + ("+group" if choice.endswith("+group") else ""))
    if best is None:
        unproved = plan.with_(status="unknown") if plan.status == "infeasible" else plan
        picked, how = proof or unproved, None
    else:
        _, picked, how = best
    status = "feasible" if picked.status == "optimal" else picked.status
    info = {**picked.info, "stop": how} if how else picked.info  # how the stopped jobs stop
    return picked.with_(status=status, lower_bound=None, info=info)


def _plan_residual(instance: Instance, res: Residual, spec: str, options: SolveOptions) -> Schedule:
    from planner.bounds import earliest_ends
    from planner.live.residual import HELD_FOR_RUNNING
    from planner.verify import verify

    # a waiting job's earliest end in the residual, released at now at the earliest, is
    # one in every plan of the live state when nothing it waits for runs now (stopping a
    # running job's co-member could speed that up): a deadline it misses is proved missed
    waits = frozenset(j.id for j in res.instance.jobs if j.after) | res.stand_ins
    # nor does a running job's, or its rest's, when it runs with co-members (`co_runners`)
    soft = res.co_runners()
    ends = earliest_ends(res.instance) if soft else None  # for both checks below
    late = res.late(soft) or missed_limit(res.instance, waits | soft, ends)
    # nodes taken for good (a node down, a reservation to the horizon) leave a waiting job
    # too few in every plan whatever R9 asks: what running jobs hold is not counted
    late = late or reserved_out(res.instance, res.stand_ins, HELD_FOR_RUNNING)
    if late is not None:
        return Schedule(instance.name, spec, "infeasible", info={"reason": late})
    unproved = (res.late() or missed_limit(res.instance, waits, ends)) if soft else None
    if unproved is not None:  # no plan of the residual, but maybe one of the live state
        return Schedule(instance.name, spec, "unknown", info={"reason": unproved})
    clash = res.clash()
    if clash is not None:  # proved, unless a plan may stop a running job (Residual.clash)
        if instance.preemption.enabled:
            return Schedule(instance.name, spec, "unknown", info={"reason": clash})
        return Schedule(instance.name, spec, "infeasible", info={"reason": clash})
    if not res.instance.jobs:  # nothing left to decide
        empty = Schedule(instance.name, spec, "optimal")
        return res.merge(empty).with_(lower_bound=None)
    if options.start is not None:
        options = replace(options, start=res.start_of(options.start))
    # the residual is no live state; the plan in force is compared with the merged plan
    # (`_no_worse_than_in_force`), not here
    sched = _solve_static(res.instance, *parse_spec(spec), options)
    merged = res.merge(sched)
    if res.stopped and merged.jobs and verify(instance, merged):
        # a resumed job's own profile holds only its solo time (planner.live.resume): a group
        # formed with it would not be one of §8. Its profile forbids every group, so this
        # is only a safety net: plan again without groups
        merged = res.merge(solve(res.instance, "greedy:srsf", options))
    return merged


def _no_worse_than_start(instance: Instance, sched: Schedule, options: SolveOptions) -> Schedule:
    """`sched`, or the plan in force (`options.start`) when it is a plan of the instance
    and better. `plan replan` before any start (`--now 0`) makes no live state (contract
    §9: nothing running or done), and a greedy rule takes no start: without this its
    replan could be worse than the plan with nothing changed (tests/test_live.py)."""
    from planner.solvers.exact import given_start
    from planner.solvers.preempt.kept import better_of

    kept = given_start(instance, options)
    if kept is None:
        return sched
    return better_of(instance, sched, kept.with_(solver="plan-in-force"), options)


def _no_worse_than_in_force(
    instance: Instance, res: Residual, merged: Schedule, options: SolveOptions
) -> Schedule:
    """`merged`, or the plan in force carried on (`Residual.in_force`) when it is valid and
    better (a greedy rule takes no start, so this is its only such guarantee). `merged`'s
    bound, if any, holds for every plan (`Residual.merge` keeps one only then), so it
    stays; a proof goes when the plan in force beats it."""
    from planner.solvers.preempt.kept import better_of
    from planner.verify import verify

    assert options.start is not None
    kept = res.in_force(options.start)
    if not isinstance(kept, str) and (wrong := verify(instance, kept)):
        kept = f"breaks {wrong[0]}"
    if isinstance(kept, str):  # say why it was not kept (`plan replan`'s info)
        note = {"solver": "plan-in-force", "returned": False, "reason": kept}
        return merged.with_(info={**merged.info, "kept": note})
    unproved = merged.with_(status="feasible" if merged.jobs else "unknown")
    out = better_of(instance, unproved, kept, options)
    if out.info.get("kept", {}).get("returned"):
        return out.with_(lower_bound=merged.lower_bound)
    return merged.with_(info=out.info)
