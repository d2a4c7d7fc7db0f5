"""The serial greedy engine (serial schedule generation with backfilling).

Repeatedly take the ready job (all predecessors placed) with the smallest key and place it
at its earliest feasible start anywhere in the future (`place.Cluster.find`), no earlier
than its release, its predecessors' ends and, under strict priority, the starts of placed
higher-priority jobs released no later (`start_window`). Under the `interleave` rule a
job may instead start with ready partners as a group (`form.GroupChooser`).

It scans event times per job, so its work grows with the queue: every probe is charged to
the cluster's `WorkMeter`, and a spent budget ends the run with `place.OutOfWork`.
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from planner.durations import solo_duration
from planner.groups import CandidateGroup
from planner.instance import Instance, Job
from planner.precedence import effective_priorities, successors
from planner.schedule import Assignment, Group, Schedule
from planner.solvers.greedy.fit import same_priority_class
from planner.solvers.greedy.form import GroupChooser, Queue, StartWindow
from planner.solvers.greedy.order import best_solo_duration, sort_keys
from planner.solvers.greedy.place import (
    Cluster,
    NodeOption,
    PlacedOption,
    PlacementUnit,
    WorkMeter,
)


class _Started(NamedTuple):
    """A placed job, as strict priority (R9) sees it."""

    priority: int
    release: int
    start: int


class SerialEngine:
    """One run of the serial engine with a fixed rule (see the module docstring)."""

    def __init__(
        self,
        instance: Instance,
        rule: str,
        objective: str,
        cands: Sequence[CandidateGroup],
        baseline: dict[str, int] | None,
        meter: WorkMeter,
    ):
        self.instance, self.rule = instance, rule
        self.strict = instance.priority_policy == "strict"
        self.by_id = instance.job_by_id
        solo = {j.id: best_solo_duration(instance, j) for j in instance.jobs}
        self.keys = sort_keys(instance, rule, solo)
        self.cluster = Cluster(instance, meter)
        self.succ = successors(instance)
        self.waiting = {j.id: len(set(j.after)) for j in instance.jobs}
        self.heap = [(self.keys[j.id], j.id) for j in instance.jobs if self.waiting[j.id] == 0]
        heapq.heapify(self.heap)
        self.placed: dict[str, Assignment] = {}
        self.groups: list[Group] = []
        self.started: list[_Started] = []
        self.cands_of: dict[str, list[CandidateGroup]] = defaultdict(list)
        for cg in cands:
            for i in cg.jobs:
                self.cands_of[i].append(cg)
        total_gpus = sum(n.gpus for n in instance.nodes) or 1
        queue = Queue(self.heap, self.keys, self.placed, self.by_id, solo, total_gpus, meter)
        self.chooser = GroupChooser(instance, self.cluster, queue, self, objective, baseline)
        self.eff_prio = effective_priorities(instance) if cands and self.strict else {}

    # ---- the view form.GroupChooser uses ------------------------------------------------
    def start_window(self, members: Sequence[Job]) -> StartWindow:
        """Release, predecessors' ends and, under strict priority, placed jobs' starts."""
        lb = 0
        ub: int | None = None
        for m in members:
            lb = max(lb, m.release, *(self.placed[a].end for a in m.after))
            if not self.strict:
                continue
            self.cluster.meter.spend(len(self.started))
            arrived = self.instance.arrival(m)  # R9's release (a live state's own)
            for s in self.started:
                if s.priority > m.priority and s.release <= arrived:
                    lb = max(lb, s.start)
                elif s.priority < m.priority and arrived <= s.release:
                    ub = s.start if ub is None else min(ub, s.start)
        return StartWindow(lb, ub)

    def solo_unit(self, job: Job) -> PlacementUnit:
        if job.gpus == 0:
            return PlacementUnit(
                (job,), 0, (NodeOption(None, (solo_duration(self.instance, job),)),)
            )
        opts = tuple(
            NodeOption(g, (solo_duration(self.instance, job, g.speed),))
            for g in self.instance.eligible_groups(job)
        )
        return PlacementUnit((job,), job.gpus, opts)

    def available(self, job: Job) -> bool:
        return job.id not in self.placed and self.waiting[job.id] == 0

    # ---- the run --------------------------------------------------------------------
    def run(self, t_begin: float) -> Schedule:
        """Place every job in key order; a job that cannot be placed ends the run."""
        solver = f"greedy:{self.rule}"
        while self.heap:
            _, jid = heapq.heappop(self.heap)
            if jid in self.placed:
                continue  # already placed as a group member
            why = self._place(self.by_id[jid])
            if why is not None:
                return _failed(self.instance, solver, self.by_id[jid], why, t_begin)
        if len(self.placed) != len(self.instance.jobs):  # a cycle in `after` (validated away)
            missing = sorted(set(self.by_id) - set(self.placed))
            reason = f"jobs {missing[:5]} wait on a precedence cycle"
            return Schedule(
                self.instance.name,
                solver,
                "unknown",
                info={"reason": reason},
                wall_s=time.perf_counter() - t_begin,
            )
        return Schedule(
            instance=self.instance.name,
            solver=solver,
            status="feasible",
            jobs=tuple(self.placed[j.id] for j in self.instance.jobs),
            groups=tuple(self.groups),
            lower_bound=None,
            wall_s=time.perf_counter() - t_begin,
            info={"rule": self.rule, "groups": len(self.groups)},
        )

    def _place(self, job: Job) -> str | None:
        """Place `job` (alone or in a group); the reason it cannot be placed, else None."""
        unit = self.solo_unit(job)
        lb, ub = self.start_window([job])
        if ub is not None and ub < lb:
            return (
                f"strict priority: it cannot start before {lb} but a placed "
                f"lower-priority job released no earlier starts at {ub}"
            )
        if job.elastic:
            unit, opt, why = self._best_count(job, lb, ub)
        else:
            opt, why = self.cluster.find(unit, lb, ub)
        if opt is None:
            return why
        group_id = None
        cands = [
            cg
            for cg in self.cands_of.get(job.id, ())
            if not self.strict
            or same_priority_class([self.by_id[i] for i in cg.jobs], job, self.eff_prio)
        ]
        pick = self.chooser.choose(job, opt, cands) if cands else None
        if pick is not None:
            unit, opt = pick
            group_id = f"g{len(self.groups) + 1}"
            self.groups.append(Group(group_id, tuple(m.id for m in unit.members)))
        self._book(unit, opt, group_id)
        return None

    def _best_count(
        self, job: Job, lb: int, ub: int | None
    ) -> tuple[PlacementUnit, PlacedOption | None, str]:
        """An elastic job's count chosen at placement (contract §12): the one that ends it
        first from its earliest feasible start, ties to fewer GPUs."""
        best: tuple[tuple[int, int], PlacementUnit, PlacedOption] | None = None
        why = ""
        for c in job.gpu_counts:
            unit = self.solo_unit(job.at_count(c))
            opt, reason = self.cluster.find(unit, lb, ub)
            if opt is None:
                why = why or reason
                continue
            key = (opt.start + opt.durations[0], c)
            if best is None or key < best[0]:
                best = (key, unit, opt)
        if best is None:
            return self.solo_unit(job), None, why
        return best[1], best[2], ""

    def _book(self, unit: PlacementUnit, opt: PlacedOption, group_id: str | None) -> None:
        self.cluster.book(unit, opt)
        for m, d in zip(unit.members, opt.durations, strict=True):
            self.placed[m.id] = Assignment(m.id, opt.start, opt.start + d, opt.placement, group_id)
            self.started.append(_Started(m.priority, self.instance.arrival(m), opt.start))
            for s in self.succ[m.id]:
                self.waiting[s] -= 1
                if self.waiting[s] == 0:
                    heapq.heappush(self.heap, (self.keys[s], s))


def run_serial(
    instance: Instance,
    rule: str,
    objective: str,
    cands: Sequence[CandidateGroup],
    baseline: dict[str, int] | None,
    t_begin: float,
    meter: WorkMeter,
) -> Schedule:
    """One serial run (groups from `cands`, empty: none); raises place.OutOfWork when
    `meter`'s budget is spent."""
    return SerialEngine(instance, rule, objective, cands, baseline, meter).run(t_begin)


def _failed(instance: Instance, solver: str, job: Job, why: str, t_begin: float) -> Schedule:
    return Schedule(
        instance.name,
        solver,
        "unknown",
        info={"reason": f"job {job.id}: {why}", "job": job.id},
        wall_s=time.perf_counter() - t_begin,
    )
