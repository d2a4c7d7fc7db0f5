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
The cost comparison itself is `fit.GroupCost`, shared with the event-driven engine.
Measured over 26 windows of 100 Muri jobs (experiments/greedy_windows.py), this averages 3.8%
lower JCT than srsf; comparing without the queue term made it 9% worse than srsf.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from planner.groups import CandidateGroup
from planner.instance import Instance, Job
from planner.solvers.greedy.fit import GroupCost, Span
from planner.solvers.greedy.place import (
    Cluster,
    NodeOption,
    PlacedOption,
    PlacementUnit,
    WorkMeter,
)

# A group's shortest member must last at least this share of its span. Measured on the
# Muri windows when it was set: 0 (no limit) 0.965 of srsf's JCT, 0.25 0.962, 0.5 0.963,
# 0.7 0.982; and on muri-testbed-100 0.25 turned a 3% loss into a 7% gain. Measured again
# on 2026-12-02, after the rule's cost changed (`experiments/greedy_windows.py --evenness
# 0,0.25,0.5,0.7`, one run): 0.975, 0.977, 0.977, 0.988; on the testbed
# (`experiments/greedy_rules.py`) the rule forms no group at 0 or 0.25 (113,742 s, as
# srsf) and six at 0.5 (110,983 s), while `greedy:interleave` returns Muri's kept grouping
# when better. So 0 is best on the windows (by 0.2%) and 0.5 on the testbed (by 2.4%),
# none on both: left at 0.25, which ties 0.5 on the windows and 0 on the testbed.
MIN_EVENNESS = 0.25


def too_uneven(cg: CandidateGroup) -> bool:
    """The long member would hold the GPUs mostly alone (see MIN_EVENNESS)."""
    return min(cg.durations) < MIN_EVENNESS * cg.span


class StartWindow(NamedTuple):
    """Earliest start and, under strict priority, latest start (None: unbounded)."""

    earliest: int
    latest: int | None


class Queue:
    """A view of the waiting jobs (ready, unplaced) in list order, for cost estimates,
    seen at time `now` (set by the chooser). Reading it is charged to `meter`."""

    def __init__(
        self,
        heap: list[tuple[Any, str]],
        keys: Mapping[str, Any],
        placed: Mapping[str, Any],
        by_id: Mapping[str, Job],
        solo: Mapping[str, int],
        total_gpus: int,
        meter: WorkMeter,
    ):
        self.heap, self.keys, self.placed, self.by_id = heap, keys, placed, by_id
        self.solo, self.total_gpus, self.meter = solo, total_gpus, meter
        self.now = 0

    def _waiting(self) -> list[tuple[Any, Job]]:
        self.meter.spend(len(self.heap))
        return [
            (k, self.by_id[i])
            for k, i in self.heap
            if i not in self.placed and self.by_id[i].release <= self.now
        ]

    def wait(self, job: Job) -> float:
        """Fluid estimate of the wait caused by jobs ahead of `job`: their GPU-time / GPUs."""
        k = self.keys[job.id]
        work = sum(j.gpus * self.solo[j.id] for kk, j in self._waiting() if kk < k)
        return work / self.total_gpus

    def behind(self, job: Job, exclude: Sequence[str]) -> float:
        """Total weight of the jobs waiting behind `job` (released by `now`)."""
        k = self.keys[job.id]
        return sum(j.weight for kk, j in self._waiting() if kk > k and j.id not in exclude)


class SerialPlan(Protocol):
    """What the chooser needs from the serial engine's state."""

    def start_window(self, members: Sequence[Job]) -> StartWindow: ...

    def solo_unit(self, job: Job) -> PlacementUnit: ...

    def available(self, job: Job) -> bool: ...


class Pick(NamedTuple):
    """The group chosen instead of a job alone, and its placement."""

    unit: PlacementUnit
    option: PlacedOption


class GroupChooser:
    """form.py's rule for the serial engine: the group to place instead of a job alone."""

    def __init__(
        self,
        instance: Instance,
        cluster: Cluster,
        queue: Queue,
        plan: SerialPlan,
        objective: str,
        baseline: Mapping[str, int] | None,
    ):
        self.instance, self.cluster, self.queue, self.plan = instance, cluster, queue, plan
        self.objective, self.baseline = objective, baseline

    def choose(self, job: Job, solo: PlacedOption, cands: Sequence[CandidateGroup]) -> Pick | None:
        """The cheapest candidate group whose cost is below the job alone's, else None."""
        best: tuple[float, Pick] | None = None
        by_id = self.instance.job_by_id
        self.queue.now = solo.start
        costs = GroupCost(
            self.objective,
            job,
            Span(solo.start, solo.end),
            self.queue,
            self.queue.total_gpus,
            self.baseline,
        )
        for cg in cands:
            members = [by_id[i] for i in cg.jobs]
            partners = [m for m in members if m.id != job.id]
            if too_uneven(cg) or not all(self.plan.available(p) for p in partners):
                continue
            ng = self.instance.group_by_name[cg.node_group]
            unit = PlacementUnit(tuple(members), cg.gpus, (NodeOption(ng, cg.durations),))
            opt, _ = self.cluster.find(unit, *self.plan.start_window(members))
            if opt is None:
                continue
            for p in partners:
                self._estimate(costs, p, solo)
            ends = [float(opt.start + d) for d in opt.durations]
            gain = costs.gain(members, Span(opt.start, opt.end), ends, cg.gpus)
            if gain < 0 and (best is None or gain < best[0]):
                best = (gain, Pick(unit, opt))
        return None if best is None else best[1]

    def _estimate(self, costs: GroupCost, p: Job, solo: PlacedOption) -> None:
        """Partner `p` alone: its earliest feasible solo start now, but no earlier than the
        job's solo start plus its queue wait."""
        if p.id in costs.partner:
            return
        popt, _ = self.cluster.find(self.plan.solo_unit(p), *self.plan.start_window([p]))
        if popt is None:
            costs.partner_span(p, float("inf"), 0.0)
            return
        earliest = max(float(popt.start), solo.start + self.queue.wait(p))
        costs.partner_span(p, earliest, float(popt.end - popt.start))
