"""Greedy list-scheduling planner: two engines over the same rules (`order.py`).

- Event-driven (`events.py`, parallel schedule generation, O(n log n)): time moves
  forward; at every event the waiting job first in the rule's list that fits now starts.
  This is what runs at scale (100,000 jobs in well under a minute).
- Serial (`_run` here, `place.py`/`timeline.py`): repeatedly take the ready job (all
  predecessors placed) with the smallest key and place it at its earliest feasible start
  anywhere in the future, no earlier than its release, its predecessors' ends and, under
  strict priority, the starts of placed higher-priority jobs released no later. It fills
  gaps (backfilling) but scans event times per job: quadratic, so it only runs on small
  instances (SERIAL_MAX_WORK), next to the event-driven engine, the better plan kept.

Under the `interleave` rule a job may instead start together with ready partners as an
interleaving group (`form.py`); the same order without groups is planned too, both to
estimate when partners would otherwise finish and as the answer when grouping did not pay
on the instance's objectives (`info["grouping"]` says which). A job that cannot be placed
(a hard deadline, the horizon, or strict priority that precedence makes impossible) ends
the run with status "unknown" and `info["reason"]` naming the job and the constraint.
`info["engine"]` names the engine whose plan is returned.
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict
from collections.abc import Sequence

from planner.durations import solo_duration
from planner.groups import CandidateGroup, candidate_groups
from planner.instance import Instance, Job
from planner.metrics import objective_values
from planner.precedence import successors
from planner.schedule import Assignment, Group, Schedule
from planner.solvers import SolveOptions, objectives_of
from planner.solvers.greedy.events import Result, simulate
from planner.solvers.greedy.form import Queue, choose_group
from planner.solvers.greedy.order import (
    RULES,
    best_solo_duration,
    default_rule,
    effective_priorities,
    sort_keys,
)
from planner.solvers.greedy.place import Cluster, Unit

__all__ = ["solve_greedy", "RULES", "plan_order", "rule_ranks", "with_bounds"]


# Up to this many jobs x nodes the serial planner (earliest start anywhere in the future,
# `place.py`) runs as well and the better plan is kept; it backfills gaps but scans event
# times per job, which is quadratic. Above it only the event-driven planner runs.
SERIAL_MAX_WORK = 20_000

ENGINES = ("auto", "serial", "events")


def solve_greedy(
    instance: Instance, rule: str | None, options: SolveOptions, engine: str = "auto"
) -> Schedule:
    """Plan `instance` by list scheduling with the given rule (None: the default rule,
    "interleave" when interleaving is enabled, else "srsf").

    `engine`: "serial" (earliest feasible start in the future, with backfilling),
    "events" (event-driven, O(n log n), `events.py`) or "auto": both when jobs x nodes is at
    most SERIAL_MAX_WORK, keeping the better plan on the objectives (ties: serial), else
    events. The schedule's lower_bound holds `planner.bounds.lower_bounds`.
    """
    t_begin = time.perf_counter()
    rule = rule or default_rule(instance)
    if rule not in RULES:
        raise ValueError(f"unknown greedy rule {rule!r}")
    if engine not in ENGINES:
        raise ValueError(f"unknown greedy engine {engine!r}")
    names = list(objectives_of(instance, options))
    if engine == "auto":
        small = len(instance.jobs) * max(1, len(instance.nodes)) <= SERIAL_MAX_WORK
        engines = ("serial", "events") if small else ("events",)
    else:
        engines = (engine,)
    best: Schedule | None = None
    best_val: list[float] | None = None
    for e in engines:
        s = _plan(instance, rule, names, e, t_begin)
        s = s.with_(info={**s.info, "engine": e})
        if s.status != "feasible":
            best = best or s
            continue
        ov = objective_values(instance, s, names)
        val = [ov[n] for n in names]
        if best_val is None or val < best_val:
            best, best_val = s, val
    assert best is not None
    return with_bounds(instance, best, names).with_(wall_s=time.perf_counter() - t_begin)


def with_bounds(instance: Instance, s: Schedule, names: Sequence[str]) -> Schedule:
    """`s` with planner.bounds' lower bounds merged in (the larger value per objective)."""
    from planner.bounds import lower_bounds

    lb = dict(lower_bounds(instance, list(names)))
    for k, v in (s.lower_bound or {}).items():
        if v is not None:
            lb[k] = max(lb.get(k, v), v)
    return s.with_(lower_bound=lb)


def plan_order(
    instance: Instance,
    rule: str,
    names: Sequence[str],
    ranks: Sequence[int],
    interleave: bool,
    baseline: dict[str, int] | None = None,
    cands: Sequence[CandidateGroup] | None = None,
    eager: bool = False,
) -> Schedule:
    """One event-driven run with an explicit list order (`ranks` aligned with the jobs):
    the building block of the improvement search. No bounds, no solo/grouped comparison.
    `eager`: form a group whenever one fits (see events.simulate)."""
    t_begin = time.perf_counter()
    strict = instance.priority_policy == "strict"
    eff = effective_priorities(instance) if interleave and strict else None
    if interleave and cands is None:
        cands = candidate_groups(instance)
    res = simulate(
        instance,
        ranks,
        interleave and instance.interleaving.enabled,
        names[0],
        cands or (),
        baseline,
        eff,
        eager,
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
    instance: Instance, rule: str, names: Sequence[str], engine: str, t_begin: float
) -> Schedule:
    objective = names[0]
    interleave = rule == "interleave" and instance.interleaving.enabled
    if engine == "events":
        ranks = rule_ranks(instance, rule)
        cands = candidate_groups(instance) if interleave else None

        def run(grouping: bool, baseline: dict[str, int] | None) -> Schedule:
            return plan_order(instance, rule, names, ranks, grouping, baseline, cands)
    else:

        def run(grouping: bool, baseline: dict[str, int] | None) -> Schedule:
            return _run(instance, rule, objective, grouping, baseline, t_begin)

    if not interleave:
        return run(False, None)
    # The same order without groups: its ends estimate when a partner would finish if it
    # is not pulled into a group now (see form.py), and it is kept when grouping did not
    # pay on the objectives after all (the local estimates can be wrong).
    base = run(False, None)
    baseline = {a.id: a.end for a in base.jobs} if base.status == "feasible" else None
    grouped = run(True, baseline)
    if base.status != "feasible" or grouped.status != "feasible" or not grouped.groups:
        return grouped if grouped.status == "feasible" else base
    og = objective_values(instance, grouped, names)
    ob = objective_values(instance, base, names)
    if [ob[n] for n in names] < [og[n] for n in names]:
        info = {
            **base.info,
            "grouping": "dropped: the plan without groups is better",
            "grouped_objective": og[names[0]],
        }
        return base.with_(info=info, wall_s=time.perf_counter() - t_begin)
    return grouped.with_(info={**grouped.info, "grouping": "kept", "solo_objective": ob[names[0]]})


def _run(
    instance: Instance,
    rule: str,
    objective: str,
    interleave: bool,
    baseline: dict[str, int] | None,
    t_begin: float,
) -> Schedule:
    solver = f"greedy:{rule}"
    strict = instance.priority_policy == "strict"
    by_id = instance.job_by_id
    solo = {j.id: best_solo_duration(instance, j) for j in instance.jobs}
    keys = sort_keys(instance, rule, solo)
    cluster = Cluster(instance)

    succ = successors(instance)
    waiting = {j.id: len(set(j.after)) for j in instance.jobs}
    heap = [(keys[j.id], j.id) for j in instance.jobs if waiting[j.id] == 0]
    heapq.heapify(heap)

    placed: dict[str, Assignment] = {}
    groups: list[Group] = []
    started: list[tuple[int, int, int]] = []  # (priority, release, start) of placed jobs

    cands_of: dict[str, list[CandidateGroup]] = defaultdict(list)
    if interleave:
        for cg in candidate_groups(instance):
            for i in cg.jobs:
                cands_of[i].append(cg)
    total_gpus = sum(n.gpus for n in instance.nodes) or 1

    def bounds(members: Sequence[Job]) -> tuple[int, int | None]:
        lb = 0
        ub: int | None = None
        for m in members:
            lb = max(lb, m.release, *(placed[a].end for a in m.after))
            if not strict:
                continue
            for prio, rel, st in started:
                if prio > m.priority and rel <= m.release:
                    lb = max(lb, st)
                elif prio < m.priority and m.release <= rel:
                    ub = st if ub is None else min(ub, st)
        return lb, ub

    def solo_unit(job: Job) -> Unit:
        if job.gpus == 0:
            return Unit((job,), 0, ((None, (solo_duration(instance, job),)),))
        opts = tuple(
            (g, (solo_duration(instance, job, g.speed),)) for g in instance.eligible_groups(job)
        )
        return Unit((job,), job.gpus, opts)

    def available(job: Job) -> bool:
        return job.id not in placed and waiting[job.id] == 0

    queue = Queue(heap, keys, placed, by_id, solo, total_gpus)

    eff_prio: dict[str, int] = {}
    if interleave and strict:
        eff_prio = effective_priorities(instance)

    while heap:
        _, jid = heapq.heappop(heap)
        if jid in placed:
            continue  # already placed as a group member
        job = by_id[jid]
        unit = solo_unit(job)
        lb, ub = bounds([job])
        if ub is not None and ub < lb:
            return _failed(
                instance,
                solver,
                job,
                f"strict priority: it cannot start before {lb} but a placed "
                f"lower-priority job released no earlier starts at {ub}",
                t_begin,
            )
        opt, why = cluster.find(unit, lb, ub)
        if opt is None:
            return _failed(instance, solver, job, why, t_begin)
        group_id = None
        if interleave and cands_of.get(jid):
            # Under strict priority, partners share the job's priority and are not raised
            # by successors, so pulling them forward cannot break R9 for jobs placed later.
            cands = [
                cg
                for cg in cands_of[jid]
                if not strict
                or all(
                    by_id[i].priority == job.priority
                    and eff_prio[i] == eff_prio[jid] == job.priority
                    for i in cg.jobs
                )
            ]
            pick = (
                choose_group(
                    instance,
                    job,
                    opt,
                    cands,
                    cluster,
                    available,
                    bounds,
                    solo_unit,
                    queue,
                    objective,
                    baseline,
                )
                if cands
                else None
            )
            if pick is not None:
                unit, opt = pick
                group_id = f"g{len(groups) + 1}"
                groups.append(Group(group_id, tuple(m.id for m in unit.members)))
        cluster.book(unit, opt)
        for m, d in zip(unit.members, opt.durations, strict=True):
            placed[m.id] = Assignment(m.id, opt.start, opt.start + d, opt.placement, group_id)
            started.append((m.priority, m.release, opt.start))
            for s in succ[m.id]:
                waiting[s] -= 1
                if waiting[s] == 0:
                    heapq.heappush(heap, (keys[s], s))

    if len(placed) != len(instance.jobs):  # only with a cycle in `after` (validated away)
        missing = sorted(set(by_id) - set(placed))
        return Schedule(
            instance.name,
            solver,
            "unknown",
            info={"reason": f"jobs {missing[:5]} wait on a precedence cycle"},
            wall_s=time.perf_counter() - t_begin,
        )
    jobs = tuple(placed[j.id] for j in instance.jobs)
    return Schedule(
        instance=instance.name,
        solver=solver,
        status="feasible",
        jobs=jobs,
        groups=tuple(groups),
        lower_bound=None,
        wall_s=time.perf_counter() - t_begin,
        info={"rule": rule, "groups": len(groups)},
    )


def _failed(instance: Instance, solver: str, job: Job, why: str, t_begin: float) -> Schedule:
    return Schedule(
        instance.name,
        solver,
        "unknown",
        info={"reason": f"job {job.id}: {why}", "job": job.id},
        wall_s=time.perf_counter() - t_begin,
    )
