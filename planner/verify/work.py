"""R3: durations by the rate-based progress of contract §8 (the §4 durations for
static groups), and group admissibility."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from planner.durations import (
    ceil_units,
    inadmissible_reason,
    restart_units,
)
from planner.instance import TOL, Instance, Job
from planner.progress import Runner, run_together
from planner.schedule import Assignment
from planner.verify.base import Key, Violation, job_for, piece_key

# --- R3: durations and group admissibility ------------------------------------------

# Work left, as a share of a job's work, below which a segment has nothing to do (float
# noise in the work left grows with the work), unless that is more than `_nothing` allows.
_NOTHING = 1e-9


def _nothing(inst: Instance, j: Job, r: Runner) -> float:
    """The work left below which a segment of `j` has nothing to do: `_NOTHING` of its
    work, or what it does alone in the ceiling's float tolerance of a time unit (`TOL`),
    whichever is less. A job of 10^12 s preempted 500 s before its end had "nothing" left
    by the share alone, and its resume, which the planners made, broke R3 (so did a job of
    10^9 iterations a node failure stopped with less than one left: `plan replan` exit 3;
    tests/test_verify.py)."""
    return min(_NOTHING * _work(j), TOL * inst.unit_ms / r.solo_ms)


def _speed(inst: Instance, a: Assignment) -> float:
    if a.placement and a.placement[0].node in inst.node_by_name:
        return inst.node_by_name[a.placement[0].node].speed
    return 1.0


def _duration_ok(j: Job, actual: int, expected: int) -> bool:
    if j.profiled:
        return abs(actual - expected) <= 1
    return actual == expected


def check_r3(
    inst: Instance,
    pieces: list[Assignment],
    members: dict[str, list[Assignment]],
    placed: set[Key],
    out: list[Violation],
) -> None:
    """Durations by the progress rule of contract §8 (for one segment per job and static
    groups, the §4 durations). Sets of segments that start together (a group, or one solo
    segment) are run in order of their start, each member from the work its job had left."""
    by_job: dict[str, list[Assignment]] = defaultdict(list)
    for p in pieces:
        by_job[p.id].append(p)
    skip = {p.id for p in pieces if inst.job_by_id[p.id].gpus and piece_key(p) not in placed}
    units: list[tuple[int, str, list[Assignment]]] = []
    for gid, segs in members.items():
        jobs = [job_for(inst, p) for p in segs]
        why = _inadmissible(inst, jobs, _speed(inst, segs[0]))
        if why is not None:
            name = f"group {gid} ({', '.join(p.id for p in segs)})"
            out.append(
                Violation("R3", f"{name} is not admissible: {why}", segs[0].id, time=segs[0].start)
            )
            skip.update(p.id for p in segs)
        units.append((segs[0].start, gid, segs))
    units += [(p.start, "", [p]) for p in pieces if p.group is None]
    left = {jid: _work(inst.job_by_id[jid]) for jid in by_job}
    # each piece's place among its job's segments, by identity: `list.index` compared the
    # pieces field by field, quadratic in a job's segments (a simulation with `--interval`
    # gives jobs hundreds of them)
    order = {id(p): k for segs in by_job.values() for k, p in enumerate(segs)}
    late: set[str] = set()  # jobs with a segment after their work was done, reported once
    for _, gid, segs in sorted(units, key=lambda u: (u[0], u[1], u[2][0].id)):
        if any(p.id in skip for p in segs):
            skip.update(p.id for p in segs)  # co-runners' progress is unknown too
            continue
        _run_unit(inst, gid, segs, by_job, order, left, late, out)


def _work(j: Job) -> float:
    return float(j.duration if j.duration is not None else j.iterations or 0)


def _runner(
    inst: Instance, p: Assignment, index: int, last: bool, work: float, origin: int
) -> Runner:
    """A segment from `origin` (its start, or `now` for a running job with progress)."""
    j = job_for(inst, p)  # the restart cost and profile at this segment's count (§12)
    restart = restart_units(inst, j) * inst.unit_ms if index else 0.0
    stop = None if last else (p.end - origin) * inst.unit_ms
    return Runner.of_job(inst, j, _speed(inst, p), work, restart, stop)


def _live_origin(inst: Instance, segs: list[Assignment], left: dict[str, float]) -> int:
    """Where a unit's progress is counted from: `now` when its members are running jobs
    with `progress` given (their work left is set here), else the unit's start."""
    lives = [inst.job_by_id[p.id].live for p in segs]
    progress = [x.progress for x in lives if x is not None and x.state == "running"]
    if not progress or None in progress or segs[0].start != _started(inst, segs[0].id):
        return segs[0].start
    for p in segs:
        live = inst.job_by_id[p.id].live
        # a waiting job in a running job's group breaks R5 (reported there): it counts
        # from its own work
        if live is not None and live.progress is not None:
            left[p.id] = max(0.0, _work(inst.job_by_id[p.id]) - live.progress)
    return inst.now


def _started(inst: Instance, jid: str) -> int | None:
    live = inst.job_by_id[jid].live
    return live.started if live is not None else None


def _run_unit(
    inst: Instance,
    gid: str,
    segs: list[Assignment],
    by_job: dict[str, list[Assignment]],
    order: dict[int, int],
    left: dict[str, float],
    late: set[str],
    out: list[Violation],
) -> None:
    """Run one set of segments that start together and check each member's end. Done
    members (contract §9) are not checked; they run along as co-runners until they ended."""
    done = [p for p in segs if inst.job_by_id[p.id].state == "done"]
    segs = [p for p in segs if inst.job_by_id[p.id].state != "done"]
    if not segs:
        return
    origin = _live_origin(inst, segs, left)
    index = [order[id(p)] for p in segs]
    last = [k == len(by_job[p.id]) - 1 for p, k in zip(segs, index, strict=True)]
    runners = [
        _runner(inst, p, k, z, left[p.id], origin)
        for p, k, z in zip(segs, index, last, strict=True)
    ]
    if origin == segs[0].start:
        runners += [_runner(inst, d, 0, False, math.inf, d.start) for d in done]
    leaves = run_together(runners, inst.interleaving.overhead)[: len(segs)]
    where = f" in group {gid} ({', '.join(p.id for p in segs)})" if gid else ""
    for p, k, z, leave, r in zip(segs, index, last, leaves, runners[: len(segs)], strict=True):
        j = inst.job_by_id[p.id]
        if k and left[p.id] <= _nothing(inst, j, r):
            # contract §8: earlier segments end before the work is done, so no segment
            # starts after it (it would end when its restart does, doing nothing)
            if p.id not in late:
                msg = f"segment {k} [{p.start}, {p.end}){where} starts after its job's work is done"
                out.append(Violation("R3", msg, p.id, time=p.start))
                late.add(p.id)
            continue
        left[p.id] = max(0.0, left[p.id] - leave.done)
        want = ceil_units(leave.at_ms, inst.unit_ms)
        if len(by_job[p.id]) == 1:
            if not _duration_ok(j, p.end - origin, want):
                msg = f"lasts {p.end - p.start}{where}, the duration is {origin - p.start + want}"
                out.append(Violation("R3", msg, p.id, time=p.start))
        elif z and not _duration_ok(j, p.end, origin + want):
            msg = f"segment {k} [{p.start}, {p.end}){where} should end at {origin + want}"
            out.append(Violation("R3", msg, p.id, time=p.start))
        elif not z and leave.finished and p.end > origin + want + (1 if j.profiled else 0):
            msg = (
                f"segment {k} [{p.start}, {p.end}){where}: the work is done at "
                f"{origin + want}, yet later segments follow"
            )
            out.append(Violation("R3", msg, p.id, time=p.start))
            late.add(p.id)  # its later segments are the same fault


def _inadmissible(inst: Instance, jobs: Sequence[Job], speed: float) -> str | None:
    if not inst.interleaving.enabled:
        return "interleaving is disabled in the instance"
    # GPU memory is left to R7 so that one fault is reported once.
    return inadmissible_reason(inst, jobs, speed, None)
