"""What the two exact solvers (CP-SAT and MILP) share: the start, the horizon, the finish.

- `best_start`: the best valid schedule over every greedy rule and, on plain RCPSP
  instances, the RCPSP heuristic; compared by `metrics.strictly_better` within
  OBJECTIVE_TOL. It is the CP-SAT hint / MILP warm start, bounds the horizon, and is the
  fallback.
- `semi_active_horizon` and `end_caps`: a horizon and per-job latest ends that cut off no
  schedule at least as good as the start, so "optimal" and bounds stay proofs.
- `finish`: verify the model's schedule, keep it only if no worse than the start, and say
  "optimal" only when the solver proved it or the schedule meets a valid bound. The
  `info` keys it writes are declared in `planner.schedule.SolveInfo`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

from planner.instance import Instance
from planner.metrics import objective_values, objective_vector, strictly_better
from planner.precedence import heads_tails
from planner.schedule import Schedule, SolveInfo, Status
from planner.solvers.greedy import RULES, solve_greedy
from planner.solvers.greedy.order import default_rule
from planner.solvers.options import SolveOptions, objectives_of
from planner.solvers.rcpsp_heuristic import applicable, rcpsp_start
from planner.verify import verify

# Relative tolerance on objective values: plans of the start portfolio within it tie (the
# earlier rule wins, so the start does not depend on the order the rules ran in), and a
# plan within it of a bound meets it (`meets_bound`)
OBJECTIVE_TOL = 1e-6


def values(instance: Instance, schedule: Schedule, names: Sequence[str]) -> tuple[float, ...]:
    """The schedule's objective values, in the order of `names`."""
    return tuple(objective_vector(instance, schedule, names))


# "Never worse than the start" tells apart what float sums cannot: a MILP on a coarse
# grid, optimal within OBJECTIVE_TOL, returned 600 ms more than its start at 2.6e9 ms
# (tests/test_milp.py)
_NOISE = 1e-12


def start_rules(instance: Instance) -> tuple[str, ...]:
    """The greedy rules tried for the start: each takes milliseconds on exact-size models."""
    return tuple(r for r in RULES if r != "interleave" or instance.interleaving.enabled)


# Share of the time limit the start portfolio may take before the exact model gets the
# rest (model building counts too): on the demo the five greedy rules take about 0.7 s
# together, so from a 3 s limit on every rule is tried.
START_SHARE = 0.25
# Candidate interleaving groups each job keeps at most (planner.groups keeps its most
# efficient ones, partners of similar length): CP-SAT keeps fewer on big instances
# (`cpsat.horizon.max_per_job`), the MILP this many (its grid keeps its models small).
# Chosen, not tuned; where every admissible group fits (`ALL_GROUPS_MAX` of each back
# end, measured) the models take them all.
MAX_GROUPS_PER_JOB = 4


def best_start(instance: Instance, options: SolveOptions, info: SolveInfo) -> Schedule | None:
    """The best complete, valid schedule over `start_rules` and the RCPSP heuristic, tried
    while START_SHARE of the time limit lasts: the RCPSP heuristic first on a plain RCPSP
    with makespan first, else the instance's default greedy rule; then the others until
    the time is up (ties go to the earlier rule of `start_rules`,
    so with time for all the answer does not depend on the order), then Muri's grouping
    kept to the end in what is left (`_kept_start`); `options.start` instead when it is
    complete, valid and strictly better. Writes the start's solver and
    objective values to `info`, and why a rule failed (`start_errors`): a failing rule
    costs the exact solver one start, and is reported rather than hidden."""
    names = objectives_of(instance, options)
    quiet = SolveOptions(
        objective=options.objective, seed=options.seed, bound_lp_iterations=options.bound_iterations
    )
    rules = (*start_rules(instance), "rcpsp")
    # On a plain RCPSP the heuristic goes first: it justifies the greedy planner's
    # schedules itself when there is time, and on big projects the greedy rules alone
    # would use up the share (2,000 generated jobs: 3.4 s each, a 10 s limit's 2.5 s).
    first = "rcpsp" if names[0] == "makespan" and applicable(instance) else default_rule(instance)
    deadline = time.monotonic() + START_SHARE * options.limit
    best: tuple[int, Schedule, tuple[float, ...]] | None = None
    errors: dict[str, str] = {}
    for k in sorted(range(len(rules)), key=lambda k: rules[k] != first):
        if best is not None and (time.monotonic() >= deadline or options.stop.is_set()):
            break
        rule = rules[k]
        try:
            if rule == "rcpsp":  # plain RCPSP: beats every list rule (PSPLIB j120)
                s = rcpsp_start(instance, names, options.limit, options.seed, options.stop)
            else:
                # The first plan is the answer of last resort: a stop does not cut it, but
                # it cuts the later ones (Ctrl-C 3 s into cpsat on 3,000 generated mixed
                # jobs exited 21 s later, after another rule ran; tests/test_milp.py).
                # No bounds: the solver computes its own once (README "What we chose
                # where the contract is silent", the time limit).
                run = quiet if best is None else replace(quiet, stop=options.stop)
                s = solve_greedy(instance, rule, run, bounds=False)
        except Exception as e:  # a failing heuristic must not stop the exact solver
            errors[rule] = f"{type(e).__name__}: {e}"
            continue
        if s is None or s.status not in ("optimal", "feasible"):
            if s is not None and s.info.get("reason") and "start_failed" not in info:
                info["start_failed"] = f"{s.solver}: {s.info['reason']}"  # the first rule's
            continue
        if len(s.jobs) != len(instance.jobs) or verify(instance, s):
            continue
        v = values(instance, s, names)
        tol = OBJECTIVE_TOL  # ties (within it) go to the earlier rule of `rules`
        if (
            best is None
            or strictly_better(v, best[2], tol)
            or (not strictly_better(best[2], v, tol) and k < best[0])
        ):
            best = (k, s, v)
    kept = _kept_start(instance, options, quiet, deadline)
    if kept is not None:
        v = values(instance, kept, names)
        if best is None or strictly_better(v, best[2], OBJECTIVE_TOL):  # ties: the rules'
            best = (len(rules), kept, v)
    given = given_start(instance, options)
    start = best[1] if best is not None else None
    if given is not None and (
        best is None or strictly_better(values(instance, given, names), best[2], OBJECTIVE_TOL)
    ):
        start = given  # strictly better only: ties keep the portfolio's start
    if errors:
        info["start_errors"] = errors
    if start is not None:
        info["greedy_solver"] = start.solver
        info["greedy_objective"] = objective_values(instance, start, names)
    return start


def _kept_start(
    instance: Instance, options: SolveOptions, quiet: SolveOptions, deadline: float
) -> Schedule | None:
    """Muri's grouping with groups kept to the end (`preempt.kept.kept_plan`, what plain
    `greedy` adds on an interleaving instance), in what is left of the start's share, so
    that `cpsat` and `milp` are never worse than `greedy` there; not when the caller
    gives a start (`auto` gives this plan or a better one), nor with preemption (its
    planner is the engine's)."""
    left = deadline - time.monotonic()
    if options.start is not None or instance.preemption.enabled or left <= 0:
        return None
    from planner.solvers.preempt.kept import kept_plan  # the engine, only when it runs

    s = kept_plan(instance, replace(quiet, time_limit=left, stop=options.stop))  # verified
    return s if s is not None and len(s.jobs) == len(instance.jobs) else None


def cpsat_size(instance: Instance) -> int:
    """Solo options of the CP-SAT model: one per job, GPU count (contract §12) and
    eligible node (or node set)."""
    size = 0
    for base in instance.jobs:
        n = 0
        for job in (base.at_count(c) for c in base.gpu_counts):
            groups = instance.eligible_groups(job)
            n += sum(
                g.count if job.gpus <= g.gpus else g.count // (job.gpus // g.gpus) for g in groups
            )
        size += max(1, n)
    return size


def given_start(instance: Instance, options: SolveOptions) -> Schedule | None:
    """`options.start` when it is a complete plan of `instance` that the verifier passes
    (auto's kept plan; `plan replan`'s plan in force), else None."""
    given = options.start
    ids = {j.id for j in instance.jobs}
    if given is None or {a.id for a in given.jobs} != ids or verify(instance, given):
        return None
    return given


def earliest_starts(instance: Instance, pmin: Mapping[str, int]) -> dict[str, int]:
    """Release and precedence only (a valid earliest start of every job)."""
    return heads_tails(instance, pmin)[0]


def semi_active_horizon(instance: Instance, longest: Mapping[str, int], slack: int = 0) -> int:
    """A time by which every job ends in SOME optimal schedule, for any regular objective.

    Left-shifting jobs one unit at a time never raises makespan, JCT or tardiness and keeps
    every rule, so some optimal schedule is semi-active: each start is a release, the end
    of a job, hold or reservation, or (R9) another job's start. Chaining those, no job ends
    after the last release or reservation end plus the sum of every job's longest duration
    (`longest`) plus `slack`, the time group holds may outlast their members.
    """
    origin = max([j.release for j in instance.jobs] + [r.end for r in instance.reservations] + [0])
    return origin + sum(longest.values()) + slack


def price_wait(instance: Instance, names: Sequence[str]) -> int:
    """The room a horizon needs beyond `semi_active_horizon` so that it still holds some
    optimal schedule when energy_cost is among `names`: the last price change B.

    energy_cost is not regular (waiting for a cheaper price may pay), but after B the price
    is 0 (contract §12): left-shifting the jobs that start at or after B (never before B)
    keeps or lowers it and every other objective, so some optimal schedule ends by B + the
    semi-active horizon. 0 when energy_cost is not asked for or there are no prices."""
    if "energy_cost" not in names or not instance.power_price:
        return 0
    return max(p.end for p in instance.power_price)


def end_caps(
    instance: Instance, pmin: Mapping[str, int], name: str, value: float
) -> dict[str, int]:
    """Latest end of each job in ANY schedule whose `name` objective is <= `value` (the
    start's). So the caps cut off no optimal schedule; jobs absent are not capped.
    `pmin`: each job's shortest duration.

    makespan: end <= value. Weighted JCT: w_j (end_j - r_j) <= value - sum over the other
    jobs of their lower bounds. Weighted tardiness: the same with tardiness terms.
    """
    if name == "makespan":
        return {j.id: math.floor(value + 1e-9) for j in instance.jobs}
    es = earliest_starts(instance, pmin)
    if name == "total_weighted_jct":
        origin = {j.id: j.release for j in instance.jobs}
    elif name == "total_weighted_tardiness":
        origin = {j.id: j.due for j in instance.jobs if j.due is not None}
    else:
        return {}
    lbs = {
        j.id: j.weight * max(0, es[j.id] + pmin.get(j.id, 0) - origin[j.id])
        for j in instance.jobs
        if j.id in origin
    }
    total = sum(lbs.values())
    caps = {}
    for j in instance.jobs:
        if j.id not in origin or j.weight <= 0:
            continue
        # the sums' float error, divided by a small weight, may be units of time: a weight
        # of 1e-310 beside one of 1e6 made it infinite (exit 3)
        slack = 1e-9 + 1e-12 * (abs(value) + total) / j.weight
        room = (value - (total - lbs[j.id])) / j.weight + slack
        if math.isfinite(room):
            caps[j.id] = origin[j.id] + math.floor(room)
    return caps


def meets_bound(
    instance: Instance, schedule: Schedule, names: Sequence[str], lower: Mapping[str, float]
) -> bool:
    """Whether the schedule reaches a valid lower bound on every objective (so it is
    optimal, lexicographically too)."""
    got = values(instance, schedule, names)
    # relative (README): an absolute 10^-6 called a plan of 3.77e-5 optimal beside a bound
    # of 3.73e-5 (tests/test_bounds.py)
    return all(
        n in lower and v <= lower[n] + OBJECTIVE_TOL * abs(v)
        for n, v in zip(names, got, strict=True)
    )


# The first stage's status, in the "no schedule" reason, when no stage ran (no time was
# left for it, or Ctrl-C came first)
NotRun = Literal["not run"]
NOT_RUN: NotRun = "not run"


def finish(
    instance: Instance,
    solver: str,
    names: Sequence[str],
    candidate: Schedule | None,
    start: Schedule | None,
    *,
    proved: bool,
    lower: Mapping[str, float] | None,
    info: SolveInfo,
    t0: float,
    why_none: str,
    infeasible: bool = False,
) -> Schedule:
    """The exact solver's answer: the model's `candidate` if it verifies and is no worse
    than `start`, else the start, else no schedule ("infeasible" only when `infeasible`,
    a proof). "optimal" when `proved` (the candidate's optimality) or when the returned
    schedule meets `lower`. `why_none` says why there is no candidate, when there is none.
    `info` is completed with returned / reason / invalid / model_objective /
    optimal_by_bound; `t0` is the solve's time.monotonic() start."""
    reason = why_none
    if candidate is not None:
        bad = verify(instance, candidate)
        if bad:
            info["invalid"] = [f"{v.rule}: {v.message}" for v in bad[:5]]
            candidate, reason = None, "the model's schedule breaks a rule (a planner bug)"
    if candidate is not None:
        info["model_objective"] = dict(zip(names, values(instance, candidate, names), strict=True))
        # ties (within float error) go to the model's plan
        if start is not None and strictly_better(
            values(instance, start, names), values(instance, candidate, names), _NOISE
        ):
            candidate, reason = None, "the model's schedule is worse than the start"
    family = solver.partition(":")[0]
    if candidate is None and start is None:
        # the greedy start's failure names a job and a rule; the model's status does not
        failed = info.get("start_failed")
        info["returned"], info["reason"] = "none", f"{reason}; {failed}" if failed else reason
        status: Status = "infeasible" if infeasible else "unknown"
        return Schedule(
            instance.name, solver, status, wall_s=time.monotonic() - t0, info=dict(info)
        )
    if candidate is not None:
        info["returned"] = family
        out = candidate.with_(solver=solver, status="optimal" if proved else "feasible")
    else:
        assert start is not None
        info["returned"], info["reason"] = "greedy", reason
        out = start.with_(solver=solver, status="feasible")
    out = optimal_by_bound(instance, out.with_(info=dict(info)), names, lower or {})
    return out.with_(lower_bound=dict(lower) if lower else None, wall_s=time.monotonic() - t0)


def optimal_by_bound(
    instance: Instance, s: Schedule, names: Sequence[str], lower: Mapping[str, float]
) -> Schedule:
    """`s`, marked `optimal` (`info.optimal_by_bound`) when it is `feasible` and meets the
    valid lower bounds `lower` on every objective: nothing can be better (README). The
    exact solvers' `finish` and the dispatcher, for every other planner, call it."""
    if s.status != "feasible" or not lower or not meets_bound(instance, s, names, lower):
        return s
    return s.with_(status="optimal", info={**s.info, "optimal_by_bound": True})
