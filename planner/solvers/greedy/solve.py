"""Greedy list-scheduling planner: two engines over the same rules (`order.RULES`).

- Event-driven (`events.py`, parallel schedule generation, O(n log n)): time moves
  forward; at every event the waiting job first in the rule's list that fits now starts.
  This is what runs at scale (100,000 jobs in well under a minute).
- Serial (`serial.py`, `place.py`/`timeline.py`): repeatedly take the ready job (all
  predecessors placed) with the smallest key and place it at its earliest feasible start
  anywhere in the future. It fills gaps (backfilling) but scans event times per job, so
  its work grows with jobs x queue length x nodes. Under `engine="auto"` it runs next to
  the event-driven engine, the better plan kept, within a work budget
  (SERIAL_WORK_BUDGET): a run that would cost more is stopped and the event-driven plan
  is returned, so the time spent grows with the instance's size, never past the budget
  plus the event-driven run.

Under the `interleave` rule a job may instead start together with ready partners as an
interleaving group (`form.py`); the same order without groups is planned too, both to
estimate when partners would otherwise finish and as the answer when grouping did not pay
on the instance's objectives (`info["grouping"]` says which). A job that cannot be placed
(a hard deadline, the horizon, or strict priority that precedence makes impossible) ends
the run with status "unknown" and `info["reason"]` naming the job and the constraint.
`info["engine"]` names the engine whose plan is returned.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from planner.bounds import with_bounds
from planner.elastic import count_choices, fixed_counts, held_back, hold_backs
from planner.groups import CandidateGroup, candidate_groups
from planner.instance import Instance
from planner.metrics import objective_values, objective_vector, strictly_better
from planner.precedence import effective_priorities
from planner.schedule import Schedule
from planner.solvers.greedy.events import TIMED_OUT, Result, plan_in_order
from planner.solvers.greedy.order import (
    RULES,
    best_solo_duration,
    default_rule,
    sort_keys,
)
from planner.solvers.greedy.place import OutOfWork, WorkMeter
from planner.solvers.greedy.serial import run_serial
from planner.solvers.options import SolveOptions, objectives_of
from planner.verify import verify

# Work units (candidate starts probed, nodes looked at, queue and placed-job entries read;
# see place.WorkMeter) the serial engine may spend under engine="auto", both of its runs
# (without and with groups) together. Every instance of instances/bench/ needs at most
# 82,000 (muri-testbed-200), a fraction of a second; generated dl instances of 1,000
# jobs on 16 nodes need ~2.2 million (1-2 s alone, many more on a loaded machine) and lose
# to the event-driven plan there anyway. A stopped run costs at most a few tenths of a
# second.
SERIAL_WORK_BUDGET = 250_000

ENGINES = ("auto", "serial", "events")


def solve_greedy(
    instance: Instance,
    rule: str | None,
    options: SolveOptions,
    engine: str = "auto",
    bounds: bool = True,
    grouping_in_limit: bool = False,
) -> Schedule:
    """Plan `instance` by list scheduling with the given rule (None: the default rule,
    "interleave" when interleaving is enabled, else "srsf").

    `engine`: "serial" (earliest feasible start in the future, with backfilling),
    "events" (event-driven, O(n log n), `events.py`) or "auto": both, the serial one within
    SERIAL_WORK_BUDGET, keeping the better plan on the objectives (ties: serial). The
    schedule's lower_bound holds `planner.bounds.lower_bounds`; `bounds=False` leaves
    them out, for a start whose solver computes them itself (`exact.best_start`).
    `grouping_in_limit`: under `interleave`, the event-driven run with groups (a second
    run, after the one without) ends at the time limit, counted from this call, and the
    plan without groups answers (`info["grouping"]` says so); `auto` keeps to its limit
    this way, while the plan of last resort, the run without groups, is never cut.
    """
    t_begin = time.perf_counter()
    rule = rule or default_rule(instance)
    if rule not in RULES:
        raise ValueError(f"unknown greedy rule {rule!r}")
    if engine not in ENGINES:
        raise ValueError(f"unknown greedy engine {engine!r}")
    names = list(objectives_of(instance, options))
    holds = hold_backs(instance, names)
    stop = options.stop
    deadline = t_begin + options.limit
    cut = deadline if grouping_in_limit else None
    if instance.elastic or holds:
        best = _variants(instance, rule, names, engine, holds, stop, deadline, cut)
    else:
        best = _solve_fixed(instance, rule, names, engine, stop, cut)
    if bounds and (best.status == "feasible" or not stop.is_set()):
        best = with_bounds(instance, best, names, options.bound_iterations)
    return best.with_(wall_s=time.perf_counter() - t_begin)


def _variants(
    instance: Instance,
    rule: str,
    names: list[str],
    engine: str,
    holds: list[tuple[str, dict[str, int]]],
    stop: threading.Event,
    deadline: float,
    cut: float | None,
) -> Schedule:
    """The best plan over the count choices (`planner.elastic.count_choices`) and, under
    `energy_cost`, over holding jobs back to cheaper prices (`planner.elastic.hold_backs`).
    Every plan is valid for `instance`: a held-back plan that breaks a rule of it (strict
    priority can, as releases move) is dropped. Past `deadline` (the time limit) or once
    `stop` is set, the plans not yet made are skipped, as soon as one is found
    (`info.variants`: how many of how many were tried). `cut`: see `_solve_fixed`."""
    choices = count_choices(instance) if instance.elastic else [("listed", {})]
    plans = [
        (name, counts, hold, starts)
        for name, counts in choices
        for hold, starts in [("", {}), *holds]
    ]
    best: Schedule | None = None
    best_val: list[float] | None = None
    for k, (name, counts, hold, starts) in enumerate(plans):
        if k and (stop.is_set() or (best_val is not None and time.perf_counter() > deadline)):
            assert best is not None
            return best.with_(info={**best.info, "variants": f"{k} of {len(plans)}"})
        fixed = held_back(fixed_counts(instance, counts), starts)
        s = _solve_fixed(fixed, rule, names, engine, stop, cut)
        if s.status != "feasible" or (hold and verify(instance, s)):
            best = best or s
            continue
        val = objective_vector(instance, s, names)
        if best_val is None or strictly_better(val, best_val):  # ties: the earlier variant
            info = {**s.info, "elastic": name} if instance.elastic else dict(s.info)
            if hold:
                info["held_back"] = hold
            best, best_val = s.with_(info=info), val
    assert best is not None
    return best


def _solve_fixed(
    instance: Instance,
    rule: str,
    names: list[str],
    engine: str,
    stop: threading.Event,
    cut: float | None = None,
) -> Schedule:
    """One greedy plan of an instance whose jobs run at their `gpus` (no bounds). `cut`
    (`time.perf_counter()`, None: none): when the event-driven run with groups ends."""
    t_begin = time.perf_counter()
    engines: tuple[str, ...] = (engine,)
    if engine == "auto":
        # The serial run is skipped outright when its least work is already over budget.
        cheap = serial_floor(instance) <= SERIAL_WORK_BUDGET
        engines = ("serial", "events") if cheap else ("events",)
    budget = SERIAL_WORK_BUDGET if engine == "auto" else None
    interleave = rule == "interleave" and instance.interleaving.enabled
    cands = candidate_groups(instance) if interleave else None
    best: Schedule | None = None
    best_val: list[float] | None = None
    for e in engines:
        if best is not None and stop.is_set():
            break
        try:
            s = _plan(instance, rule, names, e, t_begin, cands, WorkMeter(budget), stop, cut)
        except OutOfWork:
            continue  # the serial engine would cost more than the budget: events only
        s = s.with_(info={**s.info, "engine": e})
        if s.status != "feasible":
            best = best or s
            continue
        val = objective_vector(instance, s, names)
        if best_val is None or strictly_better(val, best_val):  # ties: serial, which runs first
            best, best_val = s, val
    assert best is not None
    return best


def serial_floor(instance: Instance) -> int:
    """The least work (place.WorkMeter units) of one serial run: each job probes at least
    one start, looking at every node of a node group it may use (unless a pool already
    refuses that start)."""
    sizes = Counter(n.group.name for n in instance.nodes)
    return sum(
        1 + min((sizes[g.name] for g in instance.eligible_groups(j)), default=0) if j.gpus else 1
        for j in instance.jobs
    )


def plan_order(
    instance: Instance,
    rule: str,
    names: Sequence[str],
    ranks: Sequence[int],
    interleave: bool,
    baseline: dict[str, int] | None = None,
    cands: Sequence[CandidateGroup] | None = None,
    eager: bool = False,
    stop: threading.Event | None = None,
    deadline: float | None = None,
) -> Schedule:
    """One event-driven run with an explicit list order (`ranks` aligned with the jobs):
    the building block of the improvement search. No bounds, no solo/grouped comparison.
    `eager`, `stop`, `deadline`: see events.plan_in_order."""
    t_begin = time.perf_counter()
    strict = instance.priority_policy == "strict"
    eff = effective_priorities(instance) if interleave and strict else None
    if interleave and cands is None:
        cands = candidate_groups(instance)
    res = plan_in_order(
        instance,
        ranks,
        interleave and instance.interleaving.enabled,
        names[0],
        cands or (),
        baseline,
        eff,
        eager,
        stop,
        deadline,
    )
    return _result_schedule(instance, f"greedy:{rule}", rule, res, t_begin)


def rule_ranks(instance: Instance, rule: str) -> list[int]:
    """List positions of the jobs (aligned with instance.jobs) under a rule's keys."""
    solo = {j.id: best_solo_duration(instance, j) for j in instance.jobs}
    keys = sort_keys(instance, rule, solo)
    order = sorted(range(len(instance.jobs)), key=lambda i: keys[instance.jobs[i].id])
    ranks = [0] * len(order)
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks


def _result_schedule(
    instance: Instance, solver: str, rule: str, res: Result, t_begin: float
) -> Schedule:
    if res.assignments is None:
        return Schedule(
            instance.name,
            solver,
            "unknown",
            info={"reason": res.reason, "job": res.job},
            wall_s=time.perf_counter() - t_begin,
        )
    return Schedule(
        instance=instance.name,
        solver=solver,
        status="feasible",
        jobs=tuple(res.assignments),
        groups=tuple(res.groups),
        lower_bound=None,
        wall_s=time.perf_counter() - t_begin,
        info={"rule": rule, "groups": len(res.groups)},
    )


def _plan(
    instance: Instance,
    rule: str,
    names: Sequence[str],
    engine: str,
    t_begin: float,
    cands: Sequence[CandidateGroup] | None,
    meter: WorkMeter,
    stop: threading.Event,
    cut: float | None,
) -> Schedule:
    """One engine's plan; under `interleave` (cands given) with and without groups, the
    event-driven run with groups ending at `cut` (None: at its end)."""
    interleave = cands is not None
    run: Callable[[bool, dict[str, int] | None], Schedule]
    if engine == "events":
        ranks = rule_ranks(instance, rule)

        def run(grouping: bool, baseline: dict[str, int] | None) -> Schedule:
            # cut only where the plan without groups (`baseline`) can answer instead
            deadline = cut if grouping and baseline is not None else None
            return plan_order(
                instance,
                rule,
                names,
                ranks,
                grouping,
                baseline,
                cands,
                stop=stop,
                deadline=deadline,
            )
    else:

        def run(grouping: bool, baseline: dict[str, int] | None) -> Schedule:
            groups = (cands or ()) if grouping else ()
            return run_serial(instance, rule, names[0], groups, baseline, t_begin, meter)

    if not interleave:
        return run(False, None)
    # The same order without groups: its ends estimate when a partner would finish if it
    # is not pulled into a group now (see form.py), and it is kept when grouping did not
    # pay on the objectives after all (the local estimates can be wrong).
    base = run(False, None)
    baseline = {a.id: a.end for a in base.jobs} if base.status == "feasible" else None
    grouped = run(True, baseline)
    if grouped.info.get("reason") == TIMED_OUT and base.status == "feasible":
        info = {**base.info, "grouping": "cut: the time limit ended the run with groups"}
        return base.with_(info=info, wall_s=time.perf_counter() - t_begin)
    if base.status != "feasible" or grouped.status != "feasible" or not grouped.groups:
        return grouped if grouped.status == "feasible" else base
    og = objective_values(instance, grouped, names)
    ob = objective_values(instance, base, names)
    # ties: the plan with groups
    if strictly_better([ob[n] for n in names], [og[n] for n in names]):
        info = {
            **base.info,
            "grouping": "dropped: the plan without groups is better",
            "grouped_objective": og[names[0]],
        }
        return base.with_(info=info, wall_s=time.perf_counter() - t_begin)
    return grouped.with_(info={**grouped.info, "grouping": "kept", "solo_objective": ob[names[0]]})
