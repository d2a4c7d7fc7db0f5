"""R1 (every job exactly once, sane times, consistent groups) and R11 (segments,
contract §8)."""

from __future__ import annotations

from planner.instance import Instance
from planner.schedule import Assignment, Schedule, Segment
from planner.verify.base import Violation, is_int, zero_length

# --- R1: every job exactly once, sane times, consistent groups -------------------------


def check_r1(inst: Instance, s: Schedule, out: list[Violation]) -> dict[str, Assignment]:
    seen: dict[str, Assignment] = {}
    for a in s.jobs:
        if a.id not in inst.job_by_id:
            out.append(Violation("R1", "job is not in the instance", a.id))
        elif a.id in seen:
            out.append(Violation("R1", "job appears more than once", a.id))
        else:
            seen[a.id] = a
    for j in inst.jobs:
        if j.id not in seen:
            out.append(Violation("R1", "job is missing from the schedule", j.id))
    ok: dict[str, Assignment] = {}
    for jid, a in seen.items():
        if not (is_int(a.start) and is_int(a.end)):
            out.append(
                Violation("R1", f"start {a.start!r} and end {a.end!r} must be integers", jid)
            )
            continue
        if a.end < a.start:
            out.append(Violation("R1", f"end {a.end} is before start {a.start}", jid, time=a.start))
            continue
        if a.end == a.start and not zero_length(inst, inst.job_by_id[jid]):
            out.append(
                Violation("R1", "start == end for a job that is not zero-length", jid, time=a.start)
            )
            continue
        ok[jid] = a
    # Groups: the list and the jobs' `group` fields must agree.
    listed: dict[str, tuple[str, ...]] = {}
    labels = {jid: a.labels() for jid, a in seen.items()}
    for g in s.groups:
        if g.id in listed:
            out.append(Violation("R1", f"group {g.id} is listed more than once"))
            continue
        listed[g.id] = g.jobs
        if not g.jobs:  # no job carries its label: a group that never ran
            out.append(Violation("R1", f"group {g.id} lists no job"))
        for m in g.jobs:
            if m not in inst.job_by_id:
                out.append(Violation("R1", f"group {g.id} lists unknown job {m}", m))
            elif m in seen and g.id not in labels[m]:
                out.append(
                    Violation(
                        "R1", f"group {g.id} lists the job, whose group is {seen[m].group}", m
                    )
                )
        if len(set(g.jobs)) != len(g.jobs):
            out.append(Violation("R1", f"group {g.id} lists a job more than once"))
    for jid in seen:
        for label in sorted(labels[jid]):
            if label not in listed:
                out.append(Violation("R1", f"group {label} is not in the schedule's groups", jid))
            elif jid not in listed[label]:
                out.append(Violation("R1", f"group {label} does not list the job", jid))
    return ok


# --- R11: segments (contract §8) -----------------------------------------------------


def check_r11(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> set[str]:
    """Segments only with preemption, in order, each `start < end`, matching the job's own
    fields, at most one segment per group label. Returns the jobs whose segments are in
    order (the others are left out of the per-segment rules)."""
    sound: set[str] = set()
    for jid, a in ok.items():
        segs = a.pieces()
        if len(segs) > 1 and not inst.preemption.enabled:
            msg = f"{len(segs)} segments, but preemption is disabled"
            out.append(Violation("R11", msg, jid, time=a.start))
        if _segments_in_order(inst, jid, segs, out):
            sound.add(jid)
        if a.segments:
            _segments_agree(a, out)
    return sound


def _segments_in_order(
    inst: Instance, jid: str, segs: tuple[Segment, ...], out: list[Violation]
) -> bool:
    n0 = len(out)
    empty_ok = len(segs) == 1 and zero_length(inst, inst.job_by_id[jid])
    for k, g in enumerate(segs):
        if g.start >= g.end and not empty_ok:
            msg = f"segment {k} [{g.start}, {g.end}) does not have start < end"
            out.append(Violation("R11", msg, jid, time=g.start))
        if k and g.start < segs[k - 1].end:
            msg = (
                f"segment {k} starts at {g.start}, before segment {k - 1} ends at {segs[k - 1].end}"
            )
            out.append(Violation("R11", msg, jid, time=g.start))
    return len(out) == n0


def _segments_agree(a: Assignment, out: list[Violation]) -> None:
    """The job's own start/end/placement/group against its segments (contract §8)."""
    first, end = a.segments[0], a.segments[-1].end
    if (a.start, a.end) != (first.start, end):
        msg = f"start {a.start} and end {a.end} differ from the segments' {first.start} and {end}"
        out.append(Violation("R11", msg, a.id, time=a.start))
    if (a.placement, a.group) != (first.placement, first.group):
        msg = "placement and group differ from the first segment's"
        out.append(Violation("R11", msg, a.id, time=a.start))
    labels = [g.group for g in a.segments if g.group is not None]
    for label in sorted({x for x in labels if labels.count(x) > 1}):
        msg = f"group {label} is on more than one of its segments"
        out.append(Violation("R11", msg, a.id))
