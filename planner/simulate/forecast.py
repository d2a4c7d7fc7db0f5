"""What `plan[:SOLVER]` plans at a decision on a preemptive instance (`solvers/rolling.py`), and
what it takes from the plan.

The plan's instance holds the known jobs (running and waiting, each released at `now` with
the work it has left) and, as a forecast of the load to come, `phantoms`: a copy of every
job released in the last `window` time units, released `window` later than it was (fresh
ids, the same profile and work). A plan of the known jobs alone assumes nothing more
arrives, so it spends throughput to finish them sooner; the phantoms make it pay for that
the way the cluster will. The forecast uses only the past: the jobs released by `now`.
Phantoms are released after `now`, so the plan never starts one at `now`; they only weigh
in the plan's objective (all jobs count) and so in which plan is chosen.

The decision is what the plan runs at `now`: the segments of known jobs starting then,
grouped by the plan's group labels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from planner.instance import Instance, Job
from planner.schedule import Schedule
from planner.simulate.model import SimJob, View
from planner.simulate.packer import count_of

# Work left below this counts as none (as in `planner.simulate.trajectory`).
_DONE = 1e-9
# A phantom's id: a prefix no imported or generated job id starts with.
PHANTOM = "~forecast~"


def remaining_jobs(view: View, jobs: Sequence[SimJob]) -> list[Job]:
    """`jobs` from `view.now` on: each released at `now` with the work it has left (whole
    iterations, or time units, rounded up), without `after` (its predecessors are done)
    or deadline."""
    out = []
    for s in jobs:
        left = max(1, math.ceil((s.remaining_iters or 0.0) - _DONE))
        j = s.job
        j = replace(j, iterations=left) if j.model is not None else replace(j, duration=left)
        out.append(replace(j, release=view.now, after=(), deadline=None, live=None))
    return out


def phantoms(view: View, window: int, limit: int, repeats: int = 1) -> list[Job]:
    """Copies of the jobs released in (now - window, now], released `window` later, then
    `2 window` later, ... (`repeats` times): at most `limit` in all, the nearest first and,
    within one repeat, the latest released first. Jobs with predecessors are left out
    (their release is not theirs to repeat)."""
    if window <= 0 or limit <= 0:
        return []
    past = [
        j for j in view.instance.jobs if not j.after and view.now - window < j.release <= view.now
    ]
    past.sort(key=lambda j: (-j.release, j.id))
    out = [
        replace(
            j,
            id=f"{PHANTOM}{r}~{j.id}",
            release=j.release + r * window,
            deadline=None,
            live=None,
        )
        for r in range(1, repeats + 1)
        for j in past
    ]
    return out[:limit]


def original(job_id: str) -> str | None:
    """The id of the job a phantom copies; None for a job that is not a phantom."""
    if not job_id.startswith(PHANTOM):
        return None
    return job_id[len(PHANTOM) :].partition("~")[2]


def plan_instance(view: View, jobs: Sequence[Job], preemptive: bool) -> Instance:
    """A static instance of `jobs` (time 0 as origin, no horizon); preemption as the
    simulated instance has it, or off."""
    inst = view.instance
    pre = inst.preemption if preemptive else replace(inst.preemption, enabled=False)
    return replace(inst, jobs=tuple(jobs), now=0, preemption=pre, horizon=None)


def starts_now(sched: Schedule, now: int, known: Sequence[SimJob]) -> list[list[SimJob]]:
    """The groups of known jobs whose segment starts at `now` in the plan, each elastic
    member at the GPU count the plan gives it there (contract §12): at the count it ran at,
    a running job the plan resumed at another count was placed at its old count, in a
    group of members of different counts (`tests/test_rolling.py`)."""
    by_id = {s.id: s for s in known}
    out: dict[str, list[SimJob]] = {}
    for a in sched.jobs:
        if a.id not in by_id:
            continue
        for seg in a.pieces():
            if seg.start == now:
                s = by_id[a.id]
                if s.job.elastic:
                    s = replace(s, job=s.job.at_count(count_of(seg.placement)))
                out.setdefault(seg.group or a.id, []).append(s)
    return list(out.values())


def next_start(
    sched: Schedule, now: int, known: Sequence[SimJob], forecast: Sequence[Job]
) -> int | None:
    """The first time after `now` a known job's segment starts in the plan, leaving out the
    times a phantom arrives or ends: no real event is due then, the plan moved for a
    forecast."""
    ids = {s.id for s in known}
    quiet = {j.release for j in forecast}
    quiet.update(seg.end for a in sched.jobs if a.id.startswith(PHANTOM) for seg in a.pieces())
    later = [
        seg.start
        for a in sched.jobs
        if a.id in ids
        for seg in a.pieces()
        if seg.start > now and seg.start not in quiet
    ]
    return min(later, default=None)


@dataclass(frozen=True)
class Followed:
    """A plan made at an arrival, followed at the completions after it while the cluster
    runs as planned: `ids` are the jobs it knew, `until` the first phantom's arrival (the
    plan past it moves for a forecast, not for the cluster)."""

    sched: Schedule
    ids: frozenset[str]
    until: int | None

    def groups_at(self, view: View, slack: int) -> list[list[SimJob]] | None:
        """The groups of known jobs the plan runs at `view.now`; None when the plan no
        longer holds: a job it did not know waits, a phantom has arrived, a job runs past
        its planned end, or one ended more than `slack` units before it."""
        now = view.now
        ids = {s.id for s in view.jobs}
        if not ids <= self.ids or (self.until is not None and now >= self.until):
            return None
        ends = {a.id: a.end for a in self.sched.jobs}
        if any(ends[i] <= now for i in ids):
            return None
        if any(ends[i] > now + slack for i in self.ids - ids):
            return None
        by_id = {s.id: s for s in view.jobs}
        out: dict[str, list[SimJob]] = {}
        for a in self.sched.jobs:
            if a.id in by_id:
                for seg in a.pieces():
                    if seg.start <= now < seg.end:
                        out.setdefault(seg.group or a.id, []).append(by_id[a.id])
        return list(out.values())

    def wake(self, now: int) -> int | None:
        """The plan's next change for a known job after `now` (a start, or a stop that is
        not the job's end), if it comes before `until`."""
        times = [
            t
            for a in self.sched.jobs
            if a.id in self.ids
            for seg in a.pieces()
            for t in (seg.start, seg.end if seg.end < a.end else seg.start)
            if t > now
        ]
        first = min(times, default=None)
        if first is None or (self.until is not None and first >= self.until):
            return None
        return first
