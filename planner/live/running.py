"""The progress of a live state's running jobs by §8 (contract §8 and §9), and the relaxation
of a preemptive live state that the lower bounds use.

`progress_at` says how far each running job has got at a time if it keeps running, and
`runs_until` how each segment ends when some of them stop; `run_units` walks the sets of
running segments (a group, or a solo job) that they and `fixed_assignments` share;
`restartable` builds `Restartable`, the live state with every job restartable from `now`,
for `planner.bounds` when `Residual.bounded` is false. Separate from `planner.live.residual` (the
residual around the fixed jobs and its merge) so that each module holds one
responsibility; the simulation's engine uses `progress_at` too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from planner.durations import ceil_units
from planner.instance import Instance, Job
from planner.progress import Leave, Runner, run_together
from planner.schedule import Assignment, Placement


@dataclass(frozen=True)
class Restartable:
    """A relaxation of a preemptive live state for lower bounds (`Residual.bounded` is
    false): every job not done waits from `max(release, now)` with the whole iterations (or
    time units) it has left, rounded down, and may run anywhere from there, in any group;
    a job with less than one left is dropped. Every plan of the live state gives such a
    plan that is no worse: a running job's continued segment, or its later ones and their
    restarts, run at least that work after `now`. `add` holds what the relaxation leaves
    out: the done jobs' weighted JCT and tardiness, the waiting jobs' weighted wait up to
    their relaxed release, and a dropped job's least share (it ends at `now` at the
    earliest); `ended` the latest end of a done job."""

    instance: Instance
    add: Mapping[str, float]
    ended: int

    def shift(self, lb: Mapping[str, float]) -> dict[str, float]:
        """Bounds of the relaxation as bounds of the live state (none for energy)."""
        out = {}
        for name, v in lb.items():
            if name == "makespan":
                out[name] = max(v, float(self.ended))
            elif name in self.add:
                out[name] = v + self.add[name]
        return out


def restartable(inst: Instance) -> Restartable:
    """The relaxation `Restartable` of live state `inst` (preemption enabled)."""
    now = inst.now
    done_by = progress_at(inst, now)
    jct = tardiness = 0.0
    ended = 0
    left: dict[str, int] = {}
    for j in inst.jobs:
        if j.state == "done":
            end = j.live.ended if j.live is not None and j.live.ended is not None else now
            ended = max(ended, end)
            jct += j.weight * (end - j.release)
            tardiness += j.weight * max(0, end - j.due) if j.due is not None else 0.0
            continue
        left[j.id] = math.floor(j.work - done_by.get(j.id, 0.0) + 1e-9)
    jobs = []
    for j in inst.jobs:
        if j.id not in left:
            continue
        if left[j.id] < 1:  # it ends at now at the earliest
            jct += j.weight * (now - j.release)
            tardiness += j.weight * max(0, now - j.due) if j.due is not None else 0.0
            ended = max(ended, now)
            continue
        release = max(j.release, now)
        jct += j.weight * (release - j.release)
        after = tuple(a for a in j.after if left.get(a, 0) >= 1)
        j = replace(j, live=None, release=release, after=after)
        if j.duration is not None:
            jobs.append(replace(j, duration=left[j.id]))
        else:
            jobs.append(replace(j, iterations=left[j.id]))
    add = {"total_weighted_jct": jct, "total_weighted_tardiness": tardiness}
    return Restartable(replace(inst, jobs=tuple(jobs), now=0), add, ended)


def progress_at(inst: Instance, t: int) -> dict[str, float]:
    """Each running job's progress at time `t` (>= now) by §8, if it keeps running."""
    every = {j.id: t for j in inst.jobs if j.state == "running"}
    return {jid: r.progress for jid, r in runs_until(inst, every).items()}


@dataclass(frozen=True)
class Ran:
    """How a running job's segment ends by §8 (`runs_until`)."""

    end: int
    progress: float  # the job's progress then
    finished: bool  # its work was done by then (it did not stop)


def runs_until(inst: Instance, stops: Mapping[str, int]) -> dict[str, Ran]:
    """Each running job's segment run on by §8, a job in `stops` stopping at its time there
    (>= now) unless its work is done before: its co-members run on without it from then,
    at the rates of the smaller group (contract §8, as a done co-member leaves)."""
    out = {}
    for running, origin, leaves in run_units(inst, stops):
        for j, leave in zip(running, leaves, strict=True):
            assert j.live is not None
            end = origin + ceil_units(leave.at_ms, inst.unit_ms)
            out[j.id] = Ran(end, (j.live.progress or 0.0) + leave.done, leave.finished)
    return out


def run_units(
    inst: Instance, stops: Mapping[str, int]
) -> Iterable[tuple[list[Job], int, list[Leave]]]:
    """Per set of running segments (a group label, or a solo job): its running members,
    the time progress counts from (`now` with progress given, else `started`; done
    co-members then run along until they ended), and how each member leaves by §8, a
    member in `stops` at its time there at the latest."""
    units: dict[str, list[Job]] = defaultdict(list)
    for j in inst.jobs:
        if j.live is not None:
            units[j.live.group or "~solo:" + j.id].append(j)
    for members in units.values():
        running = [j for j in members if j.state == "running"]
        if not running:
            continue
        first = running[0].live
        assert first is not None
        origin = inst.now if first.progress is not None else first.started
        runners = [_runner(inst, j, origin, None, stops.get(j.id)) for j in running]
        if first.progress is None:
            for j in members:
                if j.live is not None and j.live.ended is not None:
                    runners.append(_runner(inst, j, origin, j.live.ended, None))
        leaves = run_together(runners, inst.interleaving.overhead)
        yield running, origin, leaves[: len(running)]


def _runner(inst: Instance, j: Job, origin: int, ended: int | None, stop: int | None) -> Runner:
    """`ended`: a done co-runner's end (only its presence matters); `stop`: stop there."""
    assert j.live is not None
    work = math.inf if ended is not None else j.work - (j.live.progress or 0.0)
    until = min(x for x in (ended, stop, math.inf) if x is not None)
    stop_ms = None if until == math.inf else (until - origin) * inst.unit_ms
    # an explicit-duration job may hold no GPUs (pools only): its speed does not matter
    speed = inst.node_by_name[j.live.placement[0][0]].speed if j.live.placement else 1.0
    # at the count it runs at (contract §12)
    return Runner.of_job(inst, j.as_placed(), speed, work, 0.0, stop_ms)


def fixed_assignments(
    inst: Instance, stops: Mapping[str, int] | None = None
) -> dict[str, Assignment]:
    """Running and done jobs as the schedule keeps them; a running job ends as §8 says,
    one in `stops` at its time there at the latest (`runs_until`)."""
    return assignments_of(inst, runs_until(inst, stops or {}))


def assignments_of(inst: Instance, ran: Mapping[str, Ran]) -> dict[str, Assignment]:
    """`fixed_assignments` from `runs_until`'s answer, for a caller that has it."""
    out: dict[str, Assignment] = {}
    for j in inst.jobs:
        if j.live is not None:
            pl = tuple(Placement(n, g) for n, g in j.live.placement)
            end = j.live.ended if j.live.ended is not None else j.live.started
            out[j.id] = Assignment(j.id, j.live.started, end, pl, j.live.group)
    for jid, r in ran.items():
        out[jid] = replace(out[jid], end=r.end)
    return out
