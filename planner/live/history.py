"""How much work a schedule's jobs have done by a given time, by the progress rule of
contract §8: what `plan replan` needs for a job that was stopped and resumed before `now`
(its progress does not follow from its current segment alone).

Segments that start together (a group label, or one solo segment) are run in order of
their start, each member from the work its job has left, up to its segment's end or the
time asked for, whichever comes first; a segment after a job's first pays its restart
cost. A schedule of a live instance (contract §9) counts a running job with `progress`
from `now`, and a done co-member runs along until it ended.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from planner.durations import ceil_units, restart_units
from planner.instance import Instance, Job
from planner.progress import Runner, run_together
from planner.schedule import Group, Schedule, Segment

Piece = tuple[str, int, Segment]  # job id, segment index, segment


def work_done(inst: Instance, s: Schedule, t: int) -> dict[str, float]:
    """Iterations (time units for explicit-duration jobs) each job has done by time `t`."""
    # a running job of a live instance with `progress` has done that much by `now`, even
    # when its segment starts at `now` (and so is not run below when `t` is `now`)
    left = {j.id: j.work - _given(j) for j in inst.jobs}
    for origin, unit in _units(inst, s, t):
        runners = []
        for jid, k, p in unit:
            j = inst.job_by_id[jid]
            if j.live is not None and j.state == "done":  # runs along until it ended
                runners.append(_runner(inst, jid, p, origin, min(p.end, t), math.inf, k))
                continue
            runners.append(_runner(inst, jid, p, origin, min(p.end, t), left[jid], k))
        leaves = run_together(runners, inst.interleaving.overhead)
        for (jid, _, _), leave in zip(unit, leaves, strict=True):
            if inst.job_by_id[jid].state != "done":
                left[jid] = max(0.0, left[jid] - leave.done)
    return {j.id: j.work - left[j.id] for j in inst.jobs}


def _units(inst: Instance, s: Schedule, t: int) -> Iterable[tuple[int, list[Piece]]]:
    """Each set of segments starting before `t`, in order of start, with the time its
    progress counts from: its start, or `now` for running jobs of a live state with
    `progress` (their done co-members are then left out)."""
    by_label: dict[str, list[Piece]] = defaultdict(list)
    solo: list[Piece] = []
    for a in s.jobs:
        for k, p in enumerate(a.pieces()):
            if p.start < t:
                (by_label[p.group] if p.group else solo).append((a.id, k, p))
    units = list(by_label.values()) + [[p] for p in solo]
    units.sort(key=lambda u: (u[0][2].start, u[0][0]))
    for unit in units:
        lives = [inst.job_by_id[jid].live for jid, k, _ in unit if k == 0]
        running = [x for x in lives if x is not None and x.state == "running"]
        if running and all(x.progress is not None for x in running):
            yield inst.now, [q for q in unit if inst.job_by_id[q[0]].state != "done"]
        else:
            yield unit[0][2].start, unit


def retimed(inst: Instance, s: Schedule) -> Schedule:
    """`s` with its segments' ends recomputed by §8 from their starts, placements and
    groups, for jobs that may have less work left than `s` planned for: a job's last
    segment ends when its work is done (rounded up to a time unit), and one whose work is
    done sooner ends there and loses its later segments (a group label left on one of them
    is dropped). A live state's running jobs count from their `progress` at `now`; its done
    jobs stay as they are. `plan replan` carries the plan in force on with it when a job
    waits again with the work it has left (`planner.live.residual.Residual.in_force`)."""
    left = {j.id: j.work - _given(j) for j in inst.jobs}
    last = {a.id: len(a.pieces()) - 1 for a in s.jobs}
    done = {j.id for j in inst.jobs if j.live is not None and j.state == "done"}
    kept = {a.id: list(a.pieces()) if a.id in done else [] for a in s.jobs}
    for origin, unit in _units(inst, s, max((a.end for a in s.jobs), default=0) + 1):
        if any(jid in done for jid, _, _ in unit):  # counted from its start: as given
            for jid, _, p in unit:
                kept[jid].extend([] if jid in done else [p])
            continue
        for jid, _, p in unit:
            if left[jid] <= 0 and not kept[jid]:  # no work at all (zero-length): as planned
                kept[jid].append(p)
        unit = [q for q in unit if left[q[0]] > 0]
        stops = [None if k == last[jid] else p.end for jid, k, p in unit]
        runners = [
            _runner(inst, jid, p, origin, stop, left[jid], k)
            for (jid, k, p), stop in zip(unit, stops, strict=True)
        ]
        leaves = run_together(runners, inst.interleaving.overhead)
        for (jid, _, p), leave in zip(unit, leaves, strict=True):
            end = _end(inst.job_by_id[jid], p, origin, leave.at_ms, inst.unit_ms, leave.finished)
            left[jid] = 0.0 if leave.finished else left[jid] - leave.done
            kept[jid].append(Segment(p.start, end, p.placement, p.group))
    labels: dict[str, list[str]] = defaultdict(list)
    for jid, segs in kept.items():
        for label in sorted({p.group for p in segs if p.group is not None}):
            labels[label].append(jid)
    alone = {g for g, ids in labels.items() if len(ids) < 2}
    for jid, segs in kept.items():
        kept[jid] = [replace(p, group=None) if p.group in alone else p for p in segs]
    jobs = tuple(a.with_pieces(kept[a.id]) for a in s.jobs)
    groups = tuple(Group(g, tuple(ids)) for g, ids in labels.items() if g not in alone)
    return s.with_(jobs=jobs, groups=groups)


# Rounds of `carried_on`: each moves the plan on past every slip the last retiming showed;
# chosen, not tuned (tests/data/carried-on-slip*.json settles in one round; a plan still
# slipping after them is left to the verifier, which refuses it).
CARRY_ROUNDS = 8


def carried_on(inst: Instance, s: Schedule) -> Schedule:
    """`retimed(inst, s)`, the plan moved on where a segment would otherwise overlap what
    follows it: a job waiting again has its work rounded up to whole iterations (§9), and
    in a group whose cycle is longer than the time unit that can end its last segment
    more than the unit §4 lets a checker accept after `s` planned it, on GPUs the plan
    gives to another segment from then on. Every start and end at or after such a planned
    end moves by the slip, so what followed it still follows it; what ends earlier than
    planned leaves a gap (tests/test_live.py)."""
    out = retimed(inst, s)
    for _ in range(CARRY_ROUNDS):
        slips = _slips(s, out)
        if not slips:
            break
        s = _moved_on(s, slips)
        out = retimed(inst, s)
    return out


def _slips(planned: Schedule, out: Schedule) -> list[tuple[int, int]]:
    """(planned end, slip) of each last segment that `out` ends later than `planned` did,
    by more than `_end` keeps, in order of planned end."""
    ends = {a.id: a.pieces() for a in planned.jobs}
    slips = []
    for a in out.jobs:
        was, now = ends[a.id], a.pieces()
        if len(was) == len(now) and was[-1].start == now[-1].start and now[-1].end > was[-1].end:
            slips.append((was[-1].end, now[-1].end - was[-1].end))
    return sorted(slips)


def _moved_on(s: Schedule, slips: list[tuple[int, int]]) -> Schedule:
    """`s` with every time at or after a slip's planned end later by that slip (summed)."""

    def moved(t: int) -> int:
        return t + sum(by for at, by in slips if at <= t)

    jobs = tuple(
        a.with_pieces([replace(p, start=moved(p.start), end=moved(p.end)) for p in a.pieces()])
        for a in s.jobs
    )
    return s.with_(jobs=jobs)


def _end(j: Job, p: Segment, origin: int, at_ms: float, unit_ms: float, finished: bool) -> int:
    """Segment `p`'s end when it is run from `origin` and leaves at `at_ms`. A profiled job's
    end the plan gives stays when it is within the time unit §4 lets a checker accept: a job
    stopped before `now` waits again with a whole number of iterations left, a fraction
    more than the plan ran, and the instant it moves the end by would make the segment
    overlap the next one on its GPUs (tests/test_live.py)."""
    if not finished:
        return p.end
    end = origin + ceil_units(at_ms, unit_ms)
    return p.end if j.profiled and abs(end - p.end) <= 1 else end


def _runner(
    inst: Instance, jid: str, p: Segment, origin: int, stop: int | None, left: float, k: int
) -> Runner:
    """Segment `k` of job `jid` with `left` work, run from `origin` until `stop` (None: until
    its work is done)."""
    j = inst.job_by_id[jid].run_at(sum(len(x.gpus) for x in p.placement))
    restart = restart_units(inst, j) * inst.unit_ms if k and origin == p.start else 0.0
    stop_ms = None if stop is None else (stop - origin) * inst.unit_ms
    node = inst.node_by_name.get(p.placement[0].node) if p.placement else None
    speed = node.speed if node is not None else 1.0
    return Runner.of_job(inst, j, speed, left, restart, stop_ms)


def _given(j: Job) -> float:
    """The `progress` a running job of a live instance gives, else 0."""
    if j.live is not None and j.state == "running" and j.live.progress is not None:
        return max(0.0, min(j.live.progress, j.work))
    return 0.0
