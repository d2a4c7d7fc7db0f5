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

from planner.durations import restart_units, solo_iteration_ms, stage_tuple
from planner.instance import Instance, Job
from planner.progress import Runner, run_together
from planner.schedule import Schedule, Segment

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


def _runner(
    inst: Instance, jid: str, p: Segment, origin: int, stop: int, left: float, k: int
) -> Runner:
    """Segment `k` of job `jid` with `left` work, run from `origin` until `stop`."""
    j = _at_count(inst.job_by_id[jid], sum(len(x.gpus) for x in p.placement))
    restart = restart_units(inst, j) * inst.unit_ms if k and origin == p.start else 0.0
    stop_ms = (stop - origin) * inst.unit_ms
    if not j.profiled:  # one "iteration" per time unit
        return Runner(left, (0.0, 0.0, 0.0), inst.unit_ms, restart, stop_ms)
    node = inst.node_by_name.get(p.placement[0].node) if p.placement else None
    speed = node.speed if node is not None else 1.0
    gp = inst.gpu_profile(j)
    return Runner(left, stage_tuple(gp, speed), solo_iteration_ms(gp, speed), restart, stop_ms)


def _at_count(j: Job, count: int) -> Job:
    """The job as it runs at `count` GPUs (contract §12), when that is one of its counts."""
    return j.at_count(count) if j.elastic and count in j.gpu_counts else j


def _given(j: Job) -> float:
    """The `progress` a running job of a live instance gives, else 0."""
    if j.live is not None and j.state == "running" and j.live.progress is not None:
        return max(0.0, min(j.live.progress, j.work))
    return 0.0
