"""The MILP planner: greedy start, grid, model, lexicographic solves, extraction, bound.

Status and bound:
- The greedy schedule gives the horizon, the warm start and the fallback: the answer is
  never worse than greedy (if the MILP finds nothing better, greedy's schedule is returned
  with status "feasible" and info["returned"] = "greedy").
- "optimal" only if every lexicographic stage was proved optimal by the solver (its own
  status, or an integral objective whose bound rounds up to the incumbent) AND the grid is
  exact: slot length 1 (integer times and durations, so every exact schedule is on the
  grid), no horizon cut that could exclude optimal schedules, no conservative pool rows.
  Otherwise the grid optimum is reported as "feasible", info["optimal_on_grid"] = True.
- lower_bound: the solver's bound when the grid is exact (first objective; later ones only
  after every earlier stage was proved). With slot > 1 the grid bound is not a bound of the
  exact problem (starts on the grid and rounded-up durations restrict it). For makespan
  without reservations and deadlines we subtract a valid rounding allowance
  (objective.rounding_allowance: how much later than any exact schedule a grid schedule
  may have to end); otherwise, and for the sum objectives, we report the simple valid bound
  (objective.simple_bounds). The larger valid value is reported. A returned schedule that
  meets a valid bound is "optimal" whatever the grid (info["optimal_by_bound"]).

Ctrl-C (options.stop): CBC gets SIGINT once a second; it stops at its next branch-and-bound
check and writes its best solution, which is used as a time-limited result. If it has not
stopped after backends.STOP_GRACE s (stuck in root cut generation, where it does not look),
it is killed and the best schedule we already hold (an earlier stage, or greedy) is
returned. HiGHS polls the event in its MIP and simplex interrupt callbacks and keeps its
incumbent; it does not look during presolve, so a stop there waits for presolve to end.
Remaining lexicographic stages are skipped; info["interrupted"] = True.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pulp

from planner.instance import Instance
from planner.schedule import Assignment, Group, Placement, Schedule
from planner.solvers import Progress, SolveOptions, objectives_of
from planner.solvers.milp import model as M
from planner.solvers.milp.backends import RunResult, run
from planner.solvers.milp.gpus import Holder, colour
from planner.solvers.milp.grid import Grid, make_grid, slot_length
from planner.solvers.milp.objective import (
    better,
    earliest_starts,
    end_caps,
    min_durations,
    rounding_allowance,
    semi_active_horizon,
    simple_bounds,
    tails,
    tighten,
    values,
)

DEFAULT_TIME_LIMIT = 30.0
# For sum objectives the valid end caps can reach far beyond the greedy makespan; the grid
# stops at this multiple of it (and then cannot claim optimality).
SUM_HORIZON_FACTOR = 2.0
# A grid this coarse says nothing useful: give up on the model and return greedy's plan.
MIN_SLOTS = 8


def solve_milp(instance: Instance, options: SolveOptions) -> Schedule:
    t0 = time.monotonic()
    names = objectives_of(instance, options)
    limit = options.time_limit if options.time_limit is not None else DEFAULT_TIME_LIMIT
    backend = options.milp_backend if options.milp_backend in ("cbc", "highs") else "cbc"
    solver_name = f"milp:{backend}"
    info: dict[str, Any] = {"backend": backend}

    def report(incumbent: float | None, bound: float | None, message: str = "") -> None:
        if options.progress is not None:
            options.progress(Progress(time.monotonic() - t0, incumbent, bound, message))

    greedy = _greedy(instance, options)
    gvals = values(instance, greedy, names) if greedy is not None else None
    info["greedy"] = greedy.solver if greedy is not None else None
    if gvals is not None:
        info["greedy_objective"] = dict(zip(names, gvals, strict=True))

    from planner.groups import candidate_groups

    units = M.build_units(instance, candidate_groups(instance, max_per_job=4))
    simple = simple_bounds(instance, units, names)
    report(gvals[0] if gvals else None, simple.get(names[0]), "greedy start")

    # horizon and valid end caps
    exact_horizon = True
    semi = semi_active_horizon(instance, units)
    if gvals is not None and greedy is not None:
        caps = end_caps(instance, units, names[0], gvals[0])
        greedy_end = max((a.end for a in greedy.jobs), default=0)
        if names[0] == "makespan":
            horizon = greedy_end
        else:
            need = semi
            if len(caps) == len(instance.jobs):
                need = min(need, max(caps.values(), default=0))
            horizon = int(max(greedy_end, min(need, SUM_HORIZON_FACTOR * greedy_end)))
            if need > horizon:
                exact_horizon = False
    else:
        caps = {}
        horizon = semi  # valid for every regular objective (see semi_active_horizon)
    if instance.horizon is not None:
        if horizon >= instance.horizon:
            exact_horizon = True  # the instance's own horizon is the true limit
        horizon = min(horizon, instance.horizon)
    horizon = max(horizon, 1)
    # Time windows: earliest starts from releases and precedence (valid on any grid); on
    # the exact grid also latest ends, so each job's successors still fit (caps, tails).
    earliest = earliest_starts(instance, min_durations(instance, units))
    if exact_horizon:
        caps = tighten(caps, horizon, tails(instance, units))

    # grid: slot length from options, coarsened while the model would be too large
    length = slot_length(horizon, options.slots, options.slot)
    first_length = length
    prev_slots: int | None = None
    while True:
        grid = make_grid(horizon, length, options.slot is None)
        warm_slots = _grid_starts(instance, greedy, units, length) if greedy is not None else None
        if warm_slots is not None:
            end = max((t * length + d for t, d in warm_slots.values()), default=0)
            if instance.horizon is None or end <= instance.horizon:
                grid = make_grid(max(horizon, end), length, grid.auto)
        # The caps hold for exact schedules; on a coarser grid starts are rounded up (and
        # greedy's shifted start may end later), so they would cut off every schedule.
        grid_caps = caps if length == 1 else {}
        binaries, nonzeros = M.size_estimate(instance, units, grid, grid_caps, earliest)
        if binaries <= M.MAX_BINARIES and nonzeros <= M.MAX_NONZEROS:
            break
        # Coarsening stops paying once the slot count no longer falls: greedy's start,
        # shifted onto a coarser grid, ends later in proportion to the slot length.
        if grid.slots <= MIN_SLOTS or (prev_slots is not None and grid.slots >= prev_slots):
            return _too_large(
                instance,
                greedy,
                solver_name,
                simple,
                info,
                t0,
                f"time-indexed model of {binaries:,} binaries and {nonzeros:,} "
                f"nonzeros stays over the limits ({M.MAX_BINARIES:,}, "
                f"{M.MAX_NONZEROS:,}) at slot {length}",
            )
        prev_slots = grid.slots
        length *= 2
    if length != first_length:
        info["coarsened"] = {
            "from_slot": first_length,
            "to_slot": length,
            "why": f"model over {M.MAX_BINARIES} binaries or {M.MAX_NONZEROS} nonzeros",
        }
    built = M.build(
        instance,
        units,
        grid,
        names,
        grid_caps,
        earliest=earliest,
        cmax_floor=simple.get("makespan", 0.0),
    )
    info.update(
        {
            "slot": grid.length,
            "slots": grid.slots,
            "horizon": grid.horizon,
            **built.sizes,
            **built.notes,
        }
    )
    exact_grid = grid.length == 1 and exact_horizon and not built.notes.get("pool_conservative")
    info["exact_grid"] = exact_grid

    warm = _set_warm(instance, built, greedy, warm_slots) if greedy is not None else "no greedy"
    info["warm_start"] = warm

    stages: list[dict[str, Any]] = []
    chosen: dict[str, float] | None = None
    proved_all = True
    interrupted = False
    bounds: dict[str, float] = {}
    for k, name in enumerate(names):
        if built.notes.get("no_start"):
            stages.append(
                {
                    "objective": name,
                    "status": "none",
                    "solver_says": "some jobs have no start slot on this grid",
                }
            )
            proved_all = False
            break
        remaining = limit - (time.monotonic() - t0)
        if k > 0 and (remaining < 1.0 or options.stop.is_set()):
            stages.append({"objective": name, "status": "skipped"})
            proved_all = False
            break
        built.prob.setObjective(built.objectives[name])
        budget = max(1.0, remaining / (len(names) - k))
        res: RunResult = run(
            built.prob,
            backend,
            budget,
            options.workers,
            options.seed,
            warm == "used" or (k > 0 and chosen is not None),
            options.stop,
            report if k == 0 else None,
        )
        interrupted = interrupted or res.interrupted
        stage = {
            "objective": name,
            "status": res.status,
            "value": res.objective,
            "bound": res.bound,
            "seconds": round(res.seconds, 2),
            "solver_says": res.detail,
        }
        stages.append(stage)
        if res.status in ("optimal", "feasible"):
            chosen = _snapshot(built)
            proved = res.status == "optimal" or _integral_proof(instance, name, res)
            stage["proved"] = proved
            if res.bound is not None and proved_all:
                bounds[name] = res.bound
            proved_all = proved_all and proved
            if k + 1 < len(names):
                _fix(built, name, res.objective)
        else:
            proved_all = False
            if chosen is not None:
                _restore(built, chosen)
            break
        if options.stop.is_set():
            if k + 1 < len(names):
                stages.append({"objective": names[k + 1], "status": "skipped"})
                proved_all = False
            break
    info["stages"] = stages
    if interrupted or options.stop.is_set():
        info["interrupted"] = True

    lower = _lower_bound(instance, units, names, grid, bounds, simple, exact_grid, gvals)
    schedule = None
    if chosen is not None:
        schedule = _extract(instance, built)
        if schedule is None:
            info["extract"] = "GPU index colouring failed"
    elapsed = time.monotonic() - t0
    if schedule is not None:
        problems = _violations(instance, schedule)
        if problems:
            info["milp_invalid"] = problems[:5]
            schedule = None
    milp_vals = values(instance, schedule, names) if schedule is not None else None
    if milp_vals is not None:
        info["milp_objective"] = dict(zip(names, milp_vals, strict=True))

    first_status = stages[0]["status"] if stages else "none"
    milp_ok = milp_vals is not None and (gvals is None or not better(gvals, milp_vals))
    if schedule is not None and milp_ok:
        status = (
            "optimal"
            if (
                proved_all
                and exact_grid
                and len(stages) == len(names)
                and all(s["status"] == "optimal" or s.get("proved") for s in stages)
            )
            else "feasible"
        )
        if status == "feasible" and proved_all and not exact_grid:
            info["optimal_on_grid"] = True
        info["returned"] = "milp"
        out = schedule.with_(
            solver=solver_name, status=status, lower_bound=lower or None, wall_s=elapsed, info=info
        )
    elif greedy is not None and gvals is not None:
        info["returned"] = "greedy"
        info["why"] = (
            "the MILP schedule is worse than greedy"
            if milp_vals is not None
            else f"no MILP schedule ({first_status})"
        )
        out = greedy.with_(
            solver=solver_name,
            status="feasible",
            lower_bound=lower or None,
            wall_s=elapsed,
            info=info,
        )
    else:
        infeasible = first_status == "infeasible" and exact_grid and not caps
        info["returned"] = "none"
        out = Schedule(
            instance=instance.name,
            solver=solver_name,
            status="infeasible" if infeasible else "unknown",
            lower_bound=None,
            wall_s=elapsed,
            info=info,
        )
    if out.status == "feasible" and out.lower_bound and out.jobs:
        got = values(instance, out, names)
        if all(
            n in out.lower_bound and v <= out.lower_bound[n] + 1e-6 * max(1.0, abs(v))
            for n, v in zip(names, got, strict=True)
        ):
            out = out.with_(status="optimal")  # it meets a valid bound: nothing can be better
            info["optimal_by_bound"] = True
    final = values(instance, out, names)[0] if out.jobs else None
    report(final, (lower or {}).get(names[0]), "done")
    return out


def _too_large(
    instance: Instance,
    greedy: Schedule | None,
    solver_name: str,
    bound: dict[str, float],
    info: dict[str, Any],
    t0: float,
    why: str,
) -> Schedule:
    """No model fits: greedy's schedule (never worse than greedy), or nothing."""
    info.update({"returned": "greedy" if greedy is not None else "none", "why": why})
    elapsed = time.monotonic() - t0
    if greedy is None:
        return Schedule(
            instance=instance.name, solver=solver_name, status="unknown", wall_s=elapsed, info=info
        )
    return greedy.with_(
        solver=solver_name, status="feasible", lower_bound=bound or None, wall_s=elapsed, info=info
    )


# --- greedy start ------------------------------------------------------------------------


def _greedy(instance: Instance, options: SolveOptions) -> Schedule | None:
    from planner.solvers.greedy import solve_greedy

    best: Schedule | None = None
    names = objectives_of(instance, options)
    best_vals: tuple[float, ...] | None = None
    # every rule: each takes milliseconds, and the best one sets the horizon and warm start
    from planner.solvers import GREEDY_RULES
    from planner.solvers.rcpsp_heuristic import rcpsp_start

    rules: list[str | None] = [
        r for r in GREEDY_RULES if r != "interleave" or instance.interleaving.enabled
    ]
    limit = options.time_limit if options.time_limit is not None else DEFAULT_TIME_LIMIT
    starts: list[Callable[[], Schedule | None]] = [
        *(partial(solve_greedy, instance, rule, options) for rule in rules),
        # plain RCPSP: sampling plus forward-backward improvement beats every list rule
        partial(rcpsp_start, instance, names, limit, options.seed),
    ]
    for start in starts:
        try:
            s = start()
        except Exception:  # a failing heuristic must not stop the exact solver
            continue
        if s is None:
            continue
        if s.status not in ("optimal", "feasible") or len(s.jobs) != len(instance.jobs):
            continue
        if _violations(instance, s):
            continue
        v = values(instance, s, names)
        if best_vals is None or better(v, best_vals):
            best, best_vals = s, v
    return best


def _violations(instance: Instance, schedule: Schedule) -> list[str]:
    from planner.verify import verify

    return [f"{v.rule}: {v.message}" for v in verify(instance, schedule)]


# --- warm start ----------------------------------------------------------------------------


def _grid_starts(
    instance: Instance, greedy: Schedule, units: Sequence[M.Unit], length: int
) -> dict[str, tuple[int, int]]:
    """Greedy's schedule moved onto the grid: job -> (start slot, exact duration).

    s' = ceil_L(sigma), sigma_j = max(s_j, e_i + D_i + a_i for jobs i ending by s_j, sigma
    of jobs starting no later): see objective.rounding_allowance for why this keeps
    capacity, precedence and priority (not reservation windows or deadlines: the solver
    then rejects the start, which costs nothing). With slot length 1 it is the identity.
    """
    jobs = sorted(greedy.jobs, key=lambda a: (a.start, a.id))
    sigma: dict[str, float] = {}
    out: dict[str, tuple[int, int]] = {}
    run_max = 0.0
    i = 0
    while i < len(jobs):
        k = i
        while k < len(jobs) and jobs[k].start == jobs[i].start:
            k += 1
        s = jobs[i].start
        need = float(s)
        for a in jobs[:i]:
            if a.end <= s:
                d = a.end - a.start
                allowance = (length - 1) + (-(-d // length) * length - d)
                shift = sigma[a.id] - a.start
                need = max(need, a.end + shift + allowance)
        need = max(need, run_max)
        slot = math.ceil(need / length - 1e-9)
        for a in jobs[i:k]:
            sigma[a.id] = need
            out[a.id] = (slot, a.end - a.start)
        run_max = need
        i = k
    return out


def _set_warm(
    instance: Instance, built: M.Built, greedy: Schedule, slots: dict[str, tuple[int, int]] | None
) -> str:
    """Give every variable its value in greedy's (grid-shifted) schedule; "used" or why not."""
    if slots is None:
        return "off"
    node_map = _relabel(instance, greedy)
    group_of = {a.id: a.group for a in greedy.jobs}
    members: dict[str, tuple[str, ...]] = defaultdict(tuple)
    for g in greedy.groups:
        members[g.id] = tuple(sorted(g.jobs))
    by_key: dict[tuple[tuple[str, ...], str | None, bool], M.Unit] = {}
    for u in built.units:
        ng = u.node_group.name if u.node_group else None
        by_key[(tuple(sorted(u.job_ids)), ng, u.group)] = u
    for v in built.prob.variables():
        v.varValue = 0.0
    done: set[str] = set()
    for a in greedy.jobs:
        if a.id in done:
            continue
        gid = group_of[a.id]
        ids = members[gid] if gid is not None else (a.id,)
        nodes = [node_map.get(p.node, p.node) for p in a.placement]
        ng = instance.node_by_name[nodes[0]].group.name if nodes else None
        found = by_key.get((ids, ng, gid is not None))
        if found is None:
            return f"greedy uses a group or placement the model lacks ({a.id})"
        u = found
        t = slots[a.id][0]
        if u.node_group is None or u.nodes_needed > 1:
            z = built.starts.get((u.index, -1, t))
            if z is None:
                return f"greedy start of {a.id} is outside the model's start range"
            z.varValue = 1.0
            for n in nodes:
                y = built.picks.get((u.index, instance.node_by_name[n].index, t))
                if y is None:
                    return f"greedy node of {a.id} excluded by symmetry breaking"
                y.varValue = 1.0
        else:
            x = built.starts.get((u.index, instance.node_by_name[nodes[0]].index, t))
            if x is None:
                return f"greedy start of {a.id} is outside the model's start range"
            x.varValue = 1.0
        done.update(ids)
    _complete(built)
    return "used"


def _complete(built: M.Built) -> None:
    """Values of the continuous variables implied by the binaries."""
    for c, prev, vs in built.cumulative:
        before = prev.varValue if prev is not None else 0.0
        c.varValue = before + sum(v.varValue or 0.0 for v in vs)
    if built.cmax is not None:
        built.cmax.varValue = max(
            (e for ends in built.ends.values() for v, e in ends.items() if (v.varValue or 0) > 0.5),
            default=0.0,
        )


def _relabel(instance: Instance, schedule: Schedule) -> dict[str, str]:
    """Rename identical nodes so the schedule obeys the model's symmetry breaking: within
    each group's interchangeable nodes, the node first used by the earliest job comes first."""
    reserved = M.gpu_reserved_nodes(instance)
    pos = {j.id: i for i, j in enumerate(instance.jobs)}
    first: dict[str, int] = {}
    for a in schedule.jobs:
        for p in a.placement:
            first[p.node] = min(first.get(p.node, len(pos)), pos[a.id])
    out: dict[str, str] = {}
    for ng in instance.node_groups:
        ident = [n.name for n in instance.nodes_of(ng) if n.name not in reserved]
        order = sorted(ident, key=lambda n: (first.get(n, len(pos) + 1), ident.index(n)))
        out.update({old: new for old, new in zip(order, ident, strict=True)})
    return out


# --- stages ----------------------------------------------------------------------------


def _snapshot(built: M.Built) -> dict[str, float]:
    """Every variable's value in the current solution, so a failed later stage (whose
    solver may have overwritten the values) can restore it."""
    return {v.name: float(v.varValue or 0.0) for v in built.prob.variables()}


def _restore(built: M.Built, saved: dict[str, float]) -> None:
    for v in built.prob.variables():
        v.varValue = saved.get(v.name, 0.0)


def _fix(built: M.Built, name: str, value: float | None) -> None:
    """Keep stage `name` at (or below) the value just found while the next one is solved."""
    if value is None:
        value = pulp.value(built.objectives[name]) or 0.0
    tol = 1e-6 * max(1.0, abs(value))
    built.prob.addConstraint(
        pulp.LpConstraint(built.objectives[name], pulp.LpConstraintLE, f"fix_{name}", value + tol)
    )


def _integral_proof(instance: Instance, name: str, res: RunResult) -> bool:
    """An integral objective is optimal once its bound rounds up to the incumbent."""
    if res.objective is None or res.bound is None:
        return False
    integral = name == "makespan" or all(float(j.weight).is_integer() for j in instance.jobs)
    return integral and math.ceil(res.bound - 1e-6) >= res.objective - 1e-6


def _lower_bound(
    instance: Instance,
    units: Sequence[M.Unit],
    names: Sequence[str],
    grid: Grid,
    bounds: dict[str, float],
    simple: dict[str, float],
    exact_grid: bool,
    gvals: tuple[float, ...] | None,
) -> dict[str, float]:
    out: dict[str, float] = dict(simple)  # valid for every schedule, so for the optimum too
    first = names[0]
    if exact_grid:
        for n, b in bounds.items():
            out[n] = max(out.get(n, -math.inf), b)
    elif first == "makespan" and first in bounds:
        no_windows = not instance.reservations and all(j.deadline is None for j in instance.jobs)
        if no_windows:
            upper = min(bounds[first], grid.horizon)
            ub = gvals[0] if gvals is not None else grid.horizon
            corrected = upper - rounding_allowance(units, grid.length, ub)
            out[first] = max(out[first], math.ceil(corrected - 1e-9))
    if first in out and first == "makespan":
        out[first] = float(math.ceil(out[first] - 1e-9))
    return out


# --- extraction ---------------------------------------------------------------------------


def _extract(instance: Instance, built: M.Built) -> Schedule | None:
    L = built.grid.length
    units = {u.index: u for u in built.units}
    picked: dict[tuple[int, int], list[int]] = defaultdict(list)
    for (ui, ni, t), y in built.picks.items():
        if (y.varValue or 0) > 0.5:
            picked[(ui, t)].append(ni)
    holders: list[Holder] = []
    chosen: list[tuple[int, M.Unit, int, list[str]]] = []
    for (ui, ni, t), v in built.starts.items():
        if (v.varValue or 0) <= 0.5:
            continue
        u = units[ui]
        nodes = (
            [instance.nodes[ni].name]
            if ni >= 0
            else [instance.nodes[n].name for n in sorted(picked[(ui, t)])]
        )
        key = len(chosen)
        chosen.append((key, u, t, nodes))
        for n in nodes:
            holders.append(
                Holder(
                    key, n, t * L, t * L + u.hold, u.gpus_per_node, tuple(m.job for m in u.members)
                )
            )
    gpus = colour(instance, holders)
    if gpus is None:
        return None
    jobs: list[Assignment] = []
    groups: list[Group] = []
    for key, u, t, nodes in chosen:
        gid = None
        if u.group:
            gid = f"g{len(groups) + 1}"
            groups.append(Group(gid, u.job_ids))
        placement = tuple(Placement(n, gpus[(key, n)]) for n in nodes)
        for m in u.members:
            jobs.append(Assignment(m.job.id, t * L, t * L + m.duration, placement, gid))
    order = {j.id: i for i, j in enumerate(instance.jobs)}
    jobs.sort(key=lambda a: order[a.id])
    return Schedule(
        instance=instance.name,
        solver="milp",
        status="feasible",
        jobs=tuple(jobs),
        groups=tuple(groups),
    )
