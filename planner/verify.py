"""The independent checker of contract §5 (what `plan check` runs).

`verify(instance, schedule)` lists every violation of rules R1-R11. It shares no code
with the planners: from the package it uses only the problem data (`instance`), the
schedule type (`schedule`), the duration formulas (`durations`) and the §8 progress
arithmetic built on them (`progress`), so a planner bug cannot hide itself by being
repeated here.

Semantics (contract §5 plus the README section "What we chose where the contract is
silent"):
- Intervals are half-open `[start, end)`; zero-length jobs occupy nothing.
- The schedule is checked as it is, whatever its status, with one exception: a schedule
  that claims nothing (no jobs) and has status `infeasible` or `unknown` verifies to `[]`.
  Callers decide whether to verify partial `unknown` schedules (they will show R1
  "missing" violations).
- Group membership is taken from each segment's `group` field (a job without `segments`
  is one segment); the `groups` list must name exactly the jobs carrying each label (R1).
- Preemption (contract §8): R2, R4 and R9 use a job's first start and last end; R5-R8 and
  R10 apply to every segment; R3 runs the rate-based progress of §8, which for one
  segment per job and static groups gives the §4 durations; R11 checks the segments.
- R3 checks group admissibility (2..max_group profiled members, equal GPU counts, cycle
  shorter than the sum of solo times, interleaving enabled). The GPU-memory part of
  admissibility is reported once, under R7 (per-GPU memory), not twice.
- R6 and R7 work on "holders": a solo job, or a whole group, which holds the union of its
  members' GPUs from the group's start to its last member's end. CPU/memory (R7) and
  pools (R8) count each member only while it runs.
- Elastic jobs (contract §12): a segment's GPU count is the size of its placement; R5
  checks it is one of the job's counts (and that a job entry's `gpus`, when given, is its
  first segment's count); R3 runs the segment at that count (profile, restart cost) and
  refuses a group whose members run at different counts.
- R8 uses the exact subset rule (Hall's condition) for pool reservations, so pool
  reservations are checked there; R10 covers GPU reservations only.
- Live state (contract §9): a waiting job starting before `now` breaks R2; a running job's
  first segment must start at `started` (R2) with the given placement and group (R5), and
  may end no earlier than `now`; a done job is kept as given (R2, R5) and is exempt from
  R3 and, without a placement, from R5. R3 runs a running job's first segment from
  `started` (co-runners that are done leave at their `ended`), or, with `progress` given,
  from `now` with the work left. R9 does not apply when the later-starting job is running
  or done: its start is history.
- Overloads (R7, R8) are reported once per episode: at the instant the load first
  exceeds the capacity, not again while it stays over.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from planner.durations import (
    ceil_units,
    group_gpu_mem,
    inadmissible_reason,
    restart_units,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import Instance, Job, Node, Reservation
from planner.progress import Runner, run_together
from planner.schedule import Assignment, Schedule, Segment

_TOL = 1e-9  # float slack on capacities


@dataclass(frozen=True)
class Violation:
    rule: str  # "R1".."R11"
    message: str
    job: str | None = None
    node: str | None = None
    gpu: int | None = None
    time: int | None = None

    def __str__(self) -> str:
        where = []
        if self.job is not None:
            where.append(f"job {self.job}")
        if self.node is not None:
            where.append(f"node {self.node}")
        if self.gpu is not None:
            where.append(f"GPU {self.gpu}")
        if self.time is not None:
            where.append(f"t={self.time}")
        head = f"{self.rule} " + (", ".join(where) + ": " if where else "")
        return head + self.message


@dataclass(frozen=True)
class _Holder:
    """A solo job or a whole group holding GPUs over [start, end)."""

    label: str  # "job x" or "group g (a, b)"
    job: str  # a representative job id (the solo job, or the group's first member)
    start: int
    end: int
    gpus: dict[str, frozenset[int]]  # node -> GPU indices (valid ones only)
    members: tuple[str, ...]


def verify(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violation of contract §5 by `schedule` for `instance` (empty list: valid)."""
    if not schedule.jobs and schedule.status in ("infeasible", "unknown"):
        return []
    out: list[Violation] = []
    ok = _check_r1(instance, schedule, out)  # id -> assignment of the checkable jobs
    sound = _check_r11(instance, ok, out)  # ids whose segments are in order
    ok = {jid: _span(a) if jid in sound else a for jid, a in ok.items()}
    pieces = [p for jid, a in ok.items() if jid in sound for p in _pieces(a)]
    members = _members(pieces)
    _check_r2(instance, ok, out)
    _check_live(instance, ok, members, out)
    placed = _check_r5(instance, pieces, out)  # keys of the pieces with a valid placement
    _check_count_field(instance, ok, out)
    _check_r3(instance, pieces, members, placed, out)
    _check_r4(instance, ok, out)
    holders = _holders(instance, pieces, members)
    _check_r6(members, holders, out)
    _check_r7(instance, pieces, holders, out)
    _check_r8(instance, pieces, out)
    if instance.priority_policy == "strict":
        _check_r9(instance, ok, out)
    _check_r10(instance, pieces, out)
    return out


# --- R1: every job exactly once, sane times, consistent groups -------------------------


def _check_r1(inst: Instance, s: Schedule, out: list[Violation]) -> dict[str, Assignment]:
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
        if not (_is_int(a.start) and _is_int(a.end)):
            out.append(
                Violation("R1", f"start {a.start!r} and end {a.end!r} must be integers", jid)
            )
            continue
        if a.end < a.start:
            out.append(Violation("R1", f"end {a.end} is before start {a.start}", jid, time=a.start))
            continue
        if a.end == a.start and not _zero_length(inst, inst.job_by_id[jid]):
            out.append(
                Violation("R1", "start == end for a job that is not zero-length", jid, time=a.start)
            )
            continue
        ok[jid] = a
    # Groups: the list and the jobs' `group` fields must agree.
    listed: dict[str, tuple[str, ...]] = {}
    for g in s.groups:
        if g.id in listed:
            out.append(Violation("R1", f"group {g.id} is listed more than once"))
            continue
        listed[g.id] = g.jobs
        for m in g.jobs:
            if m not in inst.job_by_id:
                out.append(Violation("R1", f"group {g.id} lists unknown job {m}", m))
            elif m in seen and g.id not in seen[m].labels():
                out.append(
                    Violation(
                        "R1", f"group {g.id} lists the job, whose group is {seen[m].group}", m
                    )
                )
        if len(set(g.jobs)) != len(g.jobs):
            out.append(Violation("R1", f"group {g.id} lists a job more than once"))
    for jid, a in seen.items():
        for label in sorted(a.labels()):
            if label not in listed:
                out.append(Violation("R1", f"group {label} is not in the schedule's groups", jid))
            elif jid not in listed[label]:
                out.append(Violation("R1", f"group {label} does not list the job", jid))
    return ok


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _zero_length(inst: Instance, job: Job) -> bool:
    if job.duration is not None:
        return job.duration == 0
    return not job.iterations


def _members(pieces: list[Assignment]) -> dict[str, list[Assignment]]:
    """Group label -> its members' segments, from the segments' `group`, in job-id order."""
    out: dict[str, list[Assignment]] = defaultdict(list)
    for p in sorted(pieces, key=lambda p: p.id):
        if p.group is not None:
            out[p.group].append(p)
    return dict(out)


def _pieces(a: Assignment) -> list[Assignment]:
    """A job's segments as one-segment assignments, so per-segment rules read them alike."""
    return [Assignment(a.id, g.start, g.end, g.placement, g.group) for g in a.pieces()]


def _span(a: Assignment) -> Assignment:
    """The job from its first segment's start to its last segment's end (contract §8)."""
    segs = a.pieces()
    return replace(a, start=segs[0].start, end=segs[-1].end)


Key = tuple[str, int]  # a segment: (job id, its start)


def _key(p: Assignment) -> Key:
    return (p.id, p.start)


# --- R11: segments (contract §8) -----------------------------------------------------


def _check_r11(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> set[str]:
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
    empty_ok = len(segs) == 1 and _zero_length(inst, inst.job_by_id[jid])
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


# --- R2: release, deadline, horizon -------------------------------------------------


def _check_r2(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    for jid, a in ok.items():
        j = inst.job_by_id[jid]
        if a.start < j.release:
            out.append(
                Violation(
                    "R2", f"starts at {a.start} before its release {j.release}", jid, time=a.start
                )
            )
        if j.deadline is not None and a.end > j.deadline:
            out.append(
                Violation("R2", f"ends at {a.end} after its deadline {j.deadline}", jid, time=a.end)
            )
        if inst.horizon is not None and a.end > inst.horizon:
            out.append(
                Violation(
                    "R2", f"ends at {a.end} after the horizon {inst.horizon}", jid, time=a.end
                )
            )


# --- Live state (contract §9): what runs or ran is kept as given --------------------


def _check_live(
    inst: Instance,
    ok: dict[str, Assignment],
    members: dict[str, list[Assignment]],
    out: list[Violation],
) -> None:
    for jid, a in ok.items():
        j = inst.job_by_id[jid]
        if j.live is None:
            if a.start < inst.now:
                msg = f"starts at {a.start}, before now {inst.now}, yet it was waiting"
                out.append(Violation("R2", msg, jid, time=a.start))
            continue
        first = a.pieces()[0]
        if first.start != j.live.started:
            msg = f"{j.state} since {j.live.started}, but starts at {first.start}"
            out.append(Violation("R2", msg, jid, time=first.start))
        given = tuple(sorted((n, tuple(sorted(g))) for n, g in j.live.placement))
        if given != tuple(sorted((p.node, tuple(sorted(p.gpus))) for p in first.placement)):
            out.append(Violation("R5", f"{j.state} job: placement differs from the given one", jid))
        if first.group != j.live.group:
            msg = f"{j.state} job: group {first.group} differs from the given {j.live.group}"
            out.append(Violation("R5", msg, jid))
        if j.live.ended is not None and (len(a.pieces()) > 1 or a.end != j.live.ended):
            msg = f"done job ended at {j.live.ended}, but the schedule ends it at {a.end}"
            out.append(Violation("R2", msg, jid, time=a.end))
        elif j.live.ended is None and first.end < inst.now:
            msg = f"running job's segment ends at {first.end}, before now {inst.now}"
            out.append(Violation("R2", msg, jid, time=first.end))
    _check_live_groups(inst, members, out)


def _check_live_groups(
    inst: Instance, members: dict[str, list[Assignment]], out: list[Violation]
) -> None:
    """A given group label holds exactly its given members (no newcomer joins it)."""
    given: dict[str, set[str]] = defaultdict(set)
    for j in inst.jobs:
        if j.live is not None and j.live.group is not None:
            given[j.live.group].add(j.id)
    for label, ids in given.items():
        for p in members.get(label, []):
            if p.id not in ids:
                formed = ", ".join(sorted(ids))
                msg = f"joins group {label}, formed before now from {formed}"
                out.append(Violation("R5", msg, p.id, time=p.start))


# --- R5: placement ------------------------------------------------------------------


def _count(a: Assignment | Segment) -> int:
    """The GPU count a segment runs at: the size of its placement (contract §12)."""
    return sum(len(set(p.gpus)) for p in a.placement)


def _job_for(inst: Instance, a: Assignment) -> Job:
    """The job as it runs in segment `a`: at the segment's count when that is one of an
    elastic job's counts; else the job itself (R5 reports a count it may not run at)."""
    j = inst.job_by_id[a.id]
    c = _count(a)
    return j.at_count(c) if j.elastic and c in j.gpu_counts else j


def _check_count_field(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    """A job entry's `gpus`, when given, is its first segment's count (contract §12)."""
    for jid, a in ok.items():
        first = a.pieces()[0]
        if a.gpus is not None and a.gpus != _count(first):
            msg = f"gpus is {a.gpus}, the first segment runs at {_count(first)} GPUs"
            out.append(Violation("R5", msg, jid, time=a.start))


def _check_r5(inst: Instance, pieces: list[Assignment], out: list[Violation]) -> set[Key]:
    placed: set[Key] = set()
    for a in pieces:
        n0 = len(out)
        j = inst.job_by_id[a.id]
        live = j.live
        if live is not None and live.state == "done" and not live.placement:
            if a.placement:
                out.append(Violation("R5", "a done job given without placement has none", a.id))
            continue
        if j.elastic and a.placement and _count(a) not in j.gpu_counts:
            allowed = ", ".join(map(str, j.gpu_counts))
            msg = f"runs at {_count(a)} GPUs, the job may run at {allowed}"
            out.append(Violation("R5", msg, a.id, time=a.start))
            continue
        _placement(inst, _job_for(inst, a), a, out)
        if len(out) == n0:
            placed.add(_key(a))
    return placed


def _placement(inst: Instance, j: Job, a: Assignment, out: list[Violation]) -> None:
    def bad(msg: str, node: str | None = None, gpu: int | None = None) -> None:
        out.append(Violation("R5", msg, j.id, node, gpu, a.start))

    if j.gpus == 0:
        if a.placement:
            bad("a job with 0 GPUs must have no placement")
        return
    if not a.placement:
        bad(f"needs {j.gpus} GPUs but has no placement")
        return
    n0 = len(out)
    nodes: list[Node] = []
    for p in a.placement:
        node = inst.node_by_name.get(p.node)
        if node is None:
            bad("unknown node", p.node)
            continue
        nodes.append(node)
        for gi in p.gpus:
            if not (_is_int(gi) and 0 <= gi < node.gpus):
                bad(f"GPU index {gi} does not exist (the node has {node.gpus})", p.node, gi)
        if len(set(p.gpus)) != len(p.gpus):
            bad("a GPU is listed twice", p.node)
    if len(out) > n0:
        return  # the counts below would only repeat these faults
    names = [p.node for p in a.placement]
    if len(set(names)) != len(names):
        bad("a node appears twice in the placement")
        return
    groups = {n.group.name for n in nodes}
    if len(groups) > 1:
        bad(f"nodes of different node groups ({', '.join(sorted(groups))})")
        return
    ng = nodes[0].group
    if j.node_types is not None and ng.name not in j.node_types:
        bad(f"node group {ng.name} is not in node_types ({', '.join(j.node_types)})", nodes[0].name)
    if j.gpus <= ng.gpus:
        if len(a.placement) != 1:
            bad(f"{j.gpus} GPUs fit one {ng.gpus}-GPU node but {len(a.placement)} nodes are used")
        elif len(set(a.placement[0].gpus)) != j.gpus:
            bad(
                f"uses {len(set(a.placement[0].gpus))} GPUs, the job has {j.gpus}",
                a.placement[0].node,
            )
        return
    if j.gpus % ng.gpus:
        bad(f"{j.gpus} GPUs is not a whole number of {ng.gpus}-GPU nodes")
        return
    want = j.gpus // ng.gpus
    if len(a.placement) != want:
        bad(f"needs {want} whole {ng.name} nodes, uses {len(a.placement)}")
    full = set(range(ng.gpus))
    for p in a.placement:
        if set(p.gpus) != full:
            bad("a multi-node job must use every GPU of each node", p.node)


# --- R3: durations and group admissibility ------------------------------------------


def _speed(inst: Instance, a: Assignment) -> float:
    if a.placement and a.placement[0].node in inst.node_by_name:
        return inst.node_by_name[a.placement[0].node].speed
    return 1.0


def _duration_ok(j: Job, actual: int, expected: int) -> bool:
    if j.profiled:
        return abs(actual - expected) <= 1
    return actual == expected


def _check_r3(
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
    skip = {p.id for p in pieces if inst.job_by_id[p.id].gpus and _key(p) not in placed}
    units: list[tuple[int, str, list[Assignment]]] = []
    for gid, segs in members.items():
        jobs = [_job_for(inst, p) for p in segs]
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
    for _, gid, segs in sorted(units, key=lambda u: (u[0], u[1], u[2][0].id)):
        if any(p.id in skip for p in segs):
            skip.update(p.id for p in segs)  # co-runners' progress is unknown too
            continue
        _run_unit(inst, gid, segs, by_job, left, out)


def _work(j: Job) -> float:
    return float(j.duration if j.duration is not None else j.iterations or 0)


def _runner(
    inst: Instance, p: Assignment, index: int, last: bool, work: float, origin: int
) -> Runner:
    """A segment from `origin` (its start, or `now` for a running job with progress)."""
    j = _job_for(inst, p)  # the restart cost and profile at this segment's count (§12)
    restart = restart_units(inst, j) * inst.unit_ms if index else 0.0
    stop = None if last else (p.end - origin) * inst.unit_ms
    if not j.profiled:  # one "iteration" per time unit
        return Runner(work, (0.0, 0.0, 0.0), inst.unit_ms, restart, stop)
    gp, speed = inst.gpu_profile(j), _speed(inst, p)
    return Runner(work, stage_tuple(gp, speed), solo_iteration_ms(gp, speed), restart, stop)


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
    left: dict[str, float],
    out: list[Violation],
) -> None:
    """Run one set of segments that start together and check each member's end. Done
    members (contract §9) are not checked; they run along as co-runners until they ended."""
    done = [p for p in segs if inst.job_by_id[p.id].state == "done"]
    segs = [p for p in segs if inst.job_by_id[p.id].state != "done"]
    if not segs:
        return
    origin = _live_origin(inst, segs, left)
    index = [by_job[p.id].index(p) for p in segs]
    last = [k == len(by_job[p.id]) - 1 for p, k in zip(segs, index, strict=True)]
    runners = [
        _runner(inst, p, k, z, left[p.id], origin)
        for p, k, z in zip(segs, index, last, strict=True)
    ]
    if origin == segs[0].start:
        runners += [_runner(inst, d, 0, False, math.inf, d.start) for d in done]
    leaves = run_together(runners, inst.interleaving.overhead)[: len(segs)]
    where = f" in group {gid} ({', '.join(p.id for p in segs)})" if gid else ""
    for p, k, z, leave in zip(segs, index, last, leaves, strict=True):
        j = inst.job_by_id[p.id]
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


def _inadmissible(inst: Instance, jobs: Sequence[Job], speed: float) -> str | None:
    if not inst.interleaving.enabled:
        return "interleaving is disabled in the instance"
    # GPU memory is left to R7 so that one fault is reported once.
    return inadmissible_reason(inst, jobs, speed, None)


# --- R4: precedence -----------------------------------------------------------------


def _check_r4(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    for jid, b in ok.items():
        for pred in inst.job_by_id[jid].after:
            a = ok.get(pred)
            if a is not None and b.start < a.end:
                out.append(
                    Violation(
                        "R4",
                        f"starts at {b.start} before {pred} ends at {a.end}",
                        jid,
                        time=b.start,
                    )
                )


# --- holders (R6, R7) ---------------------------------------------------------------


def _valid_gpus(inst: Instance, a: Assignment) -> dict[str, set[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for p in a.placement:
        node = inst.node_by_name.get(p.node)
        if node is None:
            continue
        out[p.node].update(g for g in p.gpus if _is_int(g) and 0 <= g < node.gpus)
    return out


def _holders(
    inst: Instance, pieces: list[Assignment], members: dict[str, list[Assignment]]
) -> list[_Holder]:
    out: list[_Holder] = []
    for a in pieces:
        if a.group is None and a.placement:
            gp = _valid_gpus(inst, a)
            out.append(
                _Holder(
                    f"job {a.id}",
                    a.id,
                    a.start,
                    a.end,
                    {n: frozenset(g) for n, g in gp.items()},
                    (a.id,),
                )
            )
    for gid, segs in members.items():
        union: dict[str, set[int]] = defaultdict(set)
        for p in segs:
            for n, g in _valid_gpus(inst, p).items():
                union[n] |= g
        if not union:
            continue
        ids = [p.id for p in segs]
        out.append(
            _Holder(
                f"group {gid} ({', '.join(ids)})",
                ids[0],
                min(p.start for p in segs),
                max(p.end for p in segs),
                {n: frozenset(g) for n, g in union.items()},
                tuple(ids),
            )
        )
    return out


# --- R6: GPU exclusivity ------------------------------------------------------------


def _check_r6(
    members: dict[str, list[Assignment]], holders: list[_Holder], out: list[Violation]
) -> None:
    for gid, segs in members.items():
        ref = segs[0]
        ref_pl = _pl_key(ref)
        for a in segs[1:]:
            if _pl_key(a) != ref_pl:
                out.append(
                    Violation(
                        "R6",
                        f"placement differs from {ref.id}'s in group {gid}",
                        a.id,
                        time=a.start,
                    )
                )
            if a.start != ref.start:
                out.append(
                    Violation(
                        "R6",
                        f"starts at {a.start}, {ref.id} of group {gid} at {ref.start}",
                        a.id,
                        time=a.start,
                    )
                )
    # Sweep per GPU: sort intervals by start; any interval starting before the latest end
    # seen so far overlaps the holder with that end.
    per_gpu: dict[tuple[str, int], list[int]] = defaultdict(list)
    for k, h in enumerate(holders):
        if h.end <= h.start:
            continue
        for n, gs in h.gpus.items():
            for g in gs:
                per_gpu[(n, g)].append(k)
    clashes: dict[tuple[int, int, str], tuple[list[int], int]] = {}
    for (n, g), ks in per_gpu.items():
        ks.sort(key=lambda k: (holders[k].start, holders[k].end))
        cur = -1
        for k in ks:
            h = holders[k]
            if cur >= 0 and h.start < holders[cur].end:
                key = (cur, k, n)
                gpus, _ = clashes.setdefault(key, ([], h.start))
                gpus.append(g)
            if cur < 0 or h.end > holders[cur].end:
                cur = k
    for (c, k, n), (gpus, t) in sorted(clashes.items(), key=lambda x: (x[1][1], x[0][2])):
        first, later = holders[c], holders[k]
        gpus.sort()
        out.append(
            Violation(
                "R6",
                f"{later.label} [{later.start}, {later.end}) and {first.label} "
                f"[{first.start}, {first.end}) share GPU(s) {', '.join(map(str, gpus))}",
                later.job,
                n,
                gpus[0],
                t,
            )
        )


def _pl_key(a: Assignment) -> frozenset[tuple[str, frozenset[int]]]:
    return frozenset((p.node, frozenset(p.gpus)) for p in a.placement)


# --- R7: node CPU / memory and per-GPU memory ---------------------------------------


def _check_r7(
    inst: Instance, pieces: list[Assignment], holders: list[_Holder], out: list[Violation]
) -> None:
    # Per-GPU memory: a holder sits alone on its GPUs (R6), so this is static.
    for h in holders:
        need = group_gpu_mem(inst, [inst.job_by_id[m] for m in h.members])
        if need <= 0:
            continue
        for n in sorted(h.gpus):
            cap = inst.node_by_name[n].group.gpu_mem_gb
            if cap is not None and h.gpus[n] and need > cap + _TOL:
                out.append(
                    Violation(
                        "R7",
                        f"{h.label} needs {need:g} GB per GPU, the GPUs have {cap:g} GB",
                        h.job,
                        n,
                        min(h.gpus[n]),
                        h.start,
                    )
                )
    # CPU and memory over time, each job (group member) while it runs.
    events: dict[str, list[tuple[int, int, str, int]]] = defaultdict(list)
    for a in pieces:
        if a.end <= a.start:
            continue
        for n, gs in _valid_gpus(inst, a).items():
            if gs:
                events[n].append((a.start, 1, a.id, len(gs)))
                events[n].append((a.end, 0, a.id, len(gs)))  # ends sort before starts
    for n in sorted(events):
        ng = inst.node_by_name[n].group
        caps = [("CPUs", ng.cpus, "cpus_per_gpu"), ("GB of memory", ng.mem_gb, "mem_gb_per_gpu")]
        caps = [c for c in caps if c[1] is not None]
        if not caps:
            continue
        evs = sorted(events[n])
        running: dict[str, int] = {}
        over = [False] * len(caps)
        i = 0
        while i < len(evs):
            t = evs[i][0]
            started: list[str] = []
            while i < len(evs) and evs[i][0] == t:
                _, kind, jid, k = evs[i]
                if kind:
                    running[jid] = k
                    started.append(jid)
                else:
                    running.pop(jid, None)
                i += 1
            for c, (what, cap, attr) in enumerate(caps):
                assert cap is not None
                load = sum(k * getattr(inst.job_by_id[jid], attr) for jid, k in running.items())
                now_over = load > cap + _TOL
                if now_over and not over[c]:
                    who = _some(sorted(running))
                    out.append(
                        Violation(
                            "R7",
                            f"{load:g} {what} in use, the node has {cap:g} (running: {who})",
                            started[0] if started else None,
                            n,
                            None,
                            t,
                        )
                    )
                over[c] = now_over


# --- R8: pools with reservations ----------------------------------------------------


def _check_r8(inst: Instance, pieces: list[Assignment], out: list[Violation]) -> None:
    for pool, cap in inst.pools.items():
        res = [r for r in inst.reservations if r.pool == pool]
        users = [(a.id, a, inst.job_by_id[a.id].demand.get(pool, 0.0)) for a in pieces]
        users = [u for u in users if u[2] > 0 and u[1].end > u[1].start]
        if not users:
            continue
        # A job's signature: the reservations of this pool that admit it (static).
        sig = {
            jid: frozenset(r.id for r in res if r.admits.admits(inst.job_by_id[jid]))
            for jid, _, _ in users
        }
        checks = sorted({a.start for _, a, _ in users} | {r.start for r in res})
        # Sweep: events sorted by time; ends before starts at equal times (half-open).
        evs = sorted(
            [(a.start, 1, jid, d) for jid, a, d in users]
            + [(a.end, 0, jid, d) for jid, a, d in users]
        )
        load: dict[frozenset[str], float] = defaultdict(float)
        running: dict[str, float] = {}
        last_bad: frozenset[str] | None = None
        i = 0
        for t in checks:
            started: list[str] = []
            while i < len(evs) and evs[i][0] <= t:
                _, kind, jid, d = evs[i]
                if kind:
                    load[sig[jid]] += d
                    running[jid] = d
                    if evs[i][0] == t:
                        started.append(jid)
                else:
                    load[sig[jid]] -= d
                    running.pop(jid, None)
                i += 1
            active = [r for r in res if r.start <= t < r.end]
            bad = _hall(cap, active, load)
            if bad is None:
                last_bad = None
                continue
            # One report per episode, unless a different subset becomes the worst one.
            key = frozenset(r.id for r in bad[0])
            if key == last_bad:
                continue
            last_bad = key
            u, demand, room = bad
            who = _some(
                [f"{j} {running[j]:g}" for j in sorted(running) if not (sig[j] & {r.id for r in u})]
            )
            if u:
                held = f"{cap:g} minus {sum(r.amount for r in u):g} held by " + ", ".join(
                    sorted(r.id for r in u)
                )
                msg = (
                    f"pool {pool}: jobs not admitted by {', '.join(sorted(r.id for r in u))} "
                    f"demand {demand:g} > {room:g} ({held}); ({who})"
                )
            else:
                msg = f"pool {pool}: demand {demand:g} > capacity {cap:g} ({who})"
            culprit = next((j for j in started if not (sig[j] & {r.id for r in u})), None)
            out.append(Violation("R8", msg, culprit, None, None, t))


def _hall(
    cap: float, active: Sequence[Reservation], load: dict[frozenset[str], float]
) -> tuple[tuple[Reservation, ...], float, float] | None:
    """The most-violated subset U of active reservations, with its demand and room.

    A reservation that admits none of the running jobs only lowers the room when added
    to U, so it is always in the worst U; only the others are enumerated (2^k subsets of
    the k reservations that admit a running job, k is small in practice).
    """
    used = {rid for s, v in load.items() if v > _TOL for rid in s}
    fixed = tuple(r for r in active if r.id not in used)
    free = [r for r in active if r.id in used]
    worst: tuple[tuple[Reservation, ...], float, float] | None = None
    gap = 0.0
    for size in range(len(free) + 1):
        for extra in combinations(free, size):
            u = fixed + extra
            ids = {r.id for r in u}
            demand = sum(v for s, v in load.items() if not (s & ids))
            room = cap - sum(r.amount for r in u)
            if demand - room > gap + _TOL:
                gap = demand - room
                worst = (u, demand, room)
    return worst


# --- R9: strict priority ------------------------------------------------------------


def _check_r9(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    """For each job b, the job a with priority > b's, release <= b's and the latest start.

    Jobs are taken in release order; a Fenwick tree over priority ranks (reversed, so a
    prefix is "priority greater than") keeps the latest start seen: O(n log n).
    """
    ids = sorted(ok, key=lambda j: inst.job_by_id[j].release)
    prios = sorted({inst.job_by_id[j].priority for j in ids}, reverse=True)
    rank = {p: i + 1 for i, p in enumerate(prios)}  # 1 = highest priority
    size = len(prios)
    tree: list[tuple[int, str]] = [(-(2**62), "")] * (size + 1)

    def update(i: int, val: tuple[int, str]) -> None:
        while i <= size:
            if val > tree[i]:
                tree[i] = val
            i += i & -i

    def query(i: int) -> tuple[int, str]:  # max over ranks 1..i
        best = (-(2**62), "")
        while i > 0:
            if tree[i] > best:
                best = tree[i]
            i -= i & -i
        return best

    k = 0
    while k < len(ids):
        rel = inst.job_by_id[ids[k]].release
        batch = []
        while k < len(ids) and inst.job_by_id[ids[k]].release == rel:
            batch.append(ids[k])
            k += 1
        for jid in batch:  # equal releases count: release(a) <= release(b)
            update(rank[inst.job_by_id[jid].priority], (ok[jid].start, jid))
        for jid in batch:
            b = inst.job_by_id[jid]
            if b.live is not None:
                continue  # running or done: its start is history (contract §9)
            start_a, a = query(rank[b.priority] - 1)
            if a and start_a > ok[jid].start:
                pa = inst.job_by_id[a].priority
                out.append(
                    Violation(
                        "R9",
                        f"starts at {ok[jid].start} (priority {b.priority}) before {a} "
                        f"(priority {pa}, released at {inst.job_by_id[a].release}) starts at "
                        f"{start_a}",
                        jid,
                        time=ok[jid].start,
                    )
                )


# --- R10: GPU reservations ----------------------------------------------------------


def _check_r10(inst: Instance, pieces: list[Assignment], out: list[Violation]) -> None:
    by_node: dict[str, list[tuple[Assignment, set[int]]]] = defaultdict(list)
    for a in pieces:
        if a.end > a.start:
            for n, gs in _valid_gpus(inst, a).items():
                by_node[n].append((a, gs))
    for r in inst.reservations:
        if r.pool is not None or r.end <= r.start:
            continue
        for n in r.nodes:
            node = inst.node_by_name.get(n)
            if node is None:
                continue
            reserved = set(r.gpus) if r.gpus is not None else set(range(node.gpus))
            for a, gs in by_node.get(n, []):
                jid = a.id
                hit = gs & reserved
                if not hit or a.end <= r.start or a.start >= r.end:
                    continue
                if r.admits.admits(inst.job_by_id[jid]):
                    continue
                out.append(
                    Violation(
                        "R10",
                        f"uses GPU(s) {', '.join(map(str, sorted(hit)))} reserved by {r.id} "
                        f"[{r.start}, {r.end}), which does not admit it",
                        jid,
                        n,
                        min(hit),
                        max(a.start, r.start),
                    )
                )


def _some(names: Sequence[str], limit: int = 8) -> str:
    """A readable list of names, cut after `limit` (big overloads name thousands)."""
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


def rules(violations: Iterable[Violation]) -> set[str]:
    """The rules broken, e.g. {"R3", "R6"} (handy in tests and summaries)."""
    return {v.rule for v in violations}
