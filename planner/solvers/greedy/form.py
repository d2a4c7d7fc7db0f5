"""Group forming for the `interleave` rule: when to run the next job as an interleaving
group instead of alone.

Grouping slows each member (up to ~1.3x per iteration), so it only pays when the partners
would otherwise wait. The rule, applied when the list reaches job j (its solo option is
known):
- candidates are the `planner.groups` candidate groups containing j whose other members are
  ready (predecessors placed), not placed yet and of the same priority and effective
  priority as j (so strict priority cannot be broken by pulling a partner forward);
- each candidate gets its earliest placement on its node group;
- the solo alternative is j's solo option plus, for each partner p, an estimate of its solo
  end: its earliest feasible solo start now, but no earlier than j's solo start plus the
  *queue wait*, the GPU-time of the waiting jobs ordered before p (including j) divided by
  the GPUs of the cluster;
- the candidate with the lowest cost is taken if its cost is below the solo alternative's.
  Cost: sum of w * end (total weighted JCT; makespan uses unit weights; weighted
  tardiness adds the tardiness term first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from planner.groups import CandidateGroup
from planner.instance import Instance, Job
from planner.solvers.greedy.place import Cluster, Option, Unit

Bounds = Callable[[Sequence[Job]], tuple[int, int | None]]


def cost(instance: Instance, objective: str, ends: Sequence[tuple[Job, float]]) -> float:
    if objective == "makespan":
        return sum(e for _, e in ends)
    total = sum(j.weight * e for j, e in ends)
    if objective == "total_weighted_tardiness":
        tard = sum(j.weight * max(0.0, e - j.due) for j, e in ends if j.due is not None)
        return tard * 1e6 + total
    return total


def choose_group(
    instance: Instance,
    job: Job,
    solo: Option,
    cands: Sequence[CandidateGroup],
    cluster: Cluster,
    available: Callable[[Job], bool],
    bounds: Bounds,
    solo_unit: Callable[[Job], Unit],
    queue_wait: Callable[[Job, int], float],
    objective: str,
) -> tuple[Unit, Option] | None:
    """The group to place instead of `job` alone, or None (see the module docstring)."""
    best: tuple[float, Unit, Option] | None = None
    by_id = instance.job_by_id
    ng_by_name = instance.group_by_name
    partner_est: dict[str, float] = {}
    for cg in cands:
        members = [by_id[i] for i in cg.jobs]
        partners = [m for m in members if m.id != job.id]
        if not all(available(p) for p in partners):
            continue
        unit = Unit(tuple(members), cg.gpus, ((ng_by_name[cg.node_group], cg.durations),))
        lb, ub = bounds(members)
        opt, _ = cluster.find(unit, lb, ub)
        if opt is None:
            continue
        grouped = cost(instance, objective,
                       [(m, opt.start + d) for m, d in zip(members, opt.durations, strict=True)])
        alone_ends: list[tuple[Job, float]] = [(job, float(solo.end))]
        for p in partners:
            if p.id not in partner_est:
                plb, pub = bounds([p])
                popt, _ = cluster.find(solo_unit(p), plb, pub)
                if popt is None:
                    partner_est[p.id] = float("inf")
                else:
                    start = max(float(popt.start), solo.start + queue_wait(p, solo.start))
                    partner_est[p.id] = start + (popt.end - popt.start)
            alone_ends.append((p, partner_est[p.id]))
        alone = cost(instance, objective, alone_ends)
        if grouped < alone and (best is None or grouped - alone < best[0]):
            best = (grouped - alone, unit, opt)
    return None if best is None else (best[1], best[2])
