"""Group forming for the `interleave` rule: when to run the next job as an interleaving
group instead of alone.

Grouping slows each member (up to ~1.3x per iteration), so it only pays when the partners
would otherwise wait. The rule, applied when the list reaches job j (its solo option is
known):
- candidates are the `planner.groups` candidate groups containing j whose other members are
  ready (predecessors placed), not placed yet and, under strict priority, of the same
  priority and effective priority as j (so R9 cannot be broken by pulling a partner
  forward), and whose members are of similar length (shortest >= MIN_EVENNESS * span);
- each candidate gets its earliest placement on its node group;
- the solo alternative is j's solo option plus, for each partner p, an estimate of its solo
  end: its earliest feasible solo start now, but no earlier than j's solo start plus the
  *queue wait* (the GPU-time of the waiting jobs ordered before p, divided by the GPUs of
  the cluster) and no earlier than its end in the same order planned without groups;
- the group's cost also carries what the queue pays: it holds its GPUs `span - d_j` longer
  than j alone, now, delaying every job waiting behind j (by that time * gpus / cluster
  GPUs, fluid estimate), while each partner's own later run disappears, which helps the
  jobs waiting behind that partner;
- the candidate with the lowest cost is taken if its cost is below the solo alternative's.
  Cost: sum of w * end (total weighted JCT; makespan uses unit weights; weighted
  tardiness adds the tardiness term first).
Measured over 26 windows of 100 Muri jobs (experiments/greedy_windows.py), this averages 3.8%
lower JCT than srsf; comparing without the queue term made it 9% worse than srsf.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from planner.groups import CandidateGroup
from planner.instance import Instance, Job
from planner.solvers.greedy.place import Cluster, Option, Unit

# A group's shortest member must last at least this share of its span. Measured on the
# Muri windows: 0 (no limit) 0.965 of srsf's JCT, 0.25 0.962, 0.5 0.963, 0.7 0.982; and on
# muri-testbed-100 0.25 turns a 3% loss into a 7% gain.
MIN_EVENNESS = 0.25

Bounds = Callable[[Sequence[Job]], tuple[int, int | None]]


class Queue:
    """A view of the waiting jobs (ready, unplaced) in list order, for cost estimates."""

    def __init__(
        self,
        heap: list[tuple[Any, str]],
        keys: Mapping[str, Any],
        placed: Mapping[str, Any],
        by_id: Mapping[str, Job],
        solo: Mapping[str, int],
        total_gpus: int,
    ):
        self.heap, self.keys, self.placed, self.by_id = heap, keys, placed, by_id
        self.solo, self.total_gpus = solo, total_gpus

    def _waiting(self, now: int) -> list[tuple[Any, Job]]:
        return [
            (k, self.by_id[i])
            for k, i in self.heap
            if i not in self.placed and self.by_id[i].release <= now
        ]

    def wait(self, job: Job, now: int) -> float:
        """Fluid estimate of the wait caused by jobs ahead of `job`: their GPU-time / GPUs."""
        k = self.keys[job.id]
        work = sum(j.gpus * self.solo[j.id] for kk, j in self._waiting(now) if kk < k)
        return work / self.total_gpus

    def behind(self, job: Job, now: int, exclude: Sequence[str]) -> float:
        """Total weight of the jobs waiting behind `job` (released by `now`)."""
        k = self.keys[job.id]
        return sum(j.weight for kk, j in self._waiting(now) if kk > k and j.id not in exclude)


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
    queue: Queue,
    objective: str,
    baseline: Mapping[str, int] | None = None,
) -> tuple[Unit, Option] | None:
    """The group to place instead of `job` alone, or None (see the module docstring)."""
    best: tuple[float, Unit, Option] | None = None
    by_id = instance.job_by_id
    ng_by_name = instance.group_by_name
    partner_est: dict[str, float] = {}
    partner_start: dict[str, float] = {}
    for cg in cands:
        members = [by_id[i] for i in cg.jobs]
        partners = [m for m in members if m.id != job.id]
        if min(cg.durations) < MIN_EVENNESS * cg.span:
            continue  # too uneven: the long member would hold the GPUs mostly alone
        if not all(available(p) for p in partners):
            continue
        unit = Unit(tuple(members), cg.gpus, ((ng_by_name[cg.node_group], cg.durations),))
        lb, ub = bounds(members)
        opt, _ = cluster.find(unit, lb, ub)
        if opt is None:
            continue
        grouped = cost(
            instance,
            objective,
            [(m, opt.start + d) for m, d in zip(members, opt.durations, strict=True)],
        )
        alone_ends: list[tuple[Job, float]] = [(job, float(solo.end))]
        for p in partners:
            if p.id not in partner_est:
                plb, pub = bounds([p])
                popt, _ = cluster.find(solo_unit(p), plb, pub)
                if popt is None:
                    partner_est[p.id] = float("inf")
                    partner_start[p.id] = float("inf")
                else:
                    start = max(float(popt.start), solo.start + queue.wait(p, solo.start))
                    partner_est[p.id] = start + (popt.end - popt.start)
                    partner_start[p.id] = partner_est[p.id] - (popt.end - popt.start)
                    if baseline is not None:
                        partner_est[p.id] = max(partner_est[p.id], float(baseline[p.id]))
                        partner_start[p.id] = partner_est[p.id] - (popt.end - popt.start)
            alone_ends.append((p, partner_est[p.id]))
        alone = cost(instance, objective, alone_ends)
        # What the queue pays: the group holds its GPUs `span - d_j` longer than j alone,
        # now, delaying the jobs waiting behind j; in exchange each partner's own run
        # (later) disappears, which helps the jobs waiting behind that partner.
        share = cg.gpus / queue.total_gpus
        solo_d = solo.end - solo.start
        extern = share * (opt.end - opt.start - solo_d) * queue.behind(job, solo.start, cg.jobs)
        for p in partners:
            extern -= (
                share
                * (partner_est[p.id] - partner_start[p.id])
                * queue.behind(p, solo.start, cg.jobs)
            )
        grouped += extern
        if grouped < alone and (best is None or grouped - alone < best[0]):
            best = (grouped - alone, unit, opt)
    return None if best is None else (best[1], best[2])
