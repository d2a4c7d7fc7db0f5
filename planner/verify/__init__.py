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
  A job whose segments overlap or are out of order (R11) is still checked by R5 and R10
  segment by segment; R3 and R6-R8, which add up the job's progress or load, leave it
  out, as a job running twice at once has no meaning there.
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

from collections.abc import Iterable

from planner.instance import Instance
from planner.schedule import Schedule
from planner.verify.base import Violation, members_of, pieces_of, span_of
from planner.verify.capacity import check_r6, check_r7, check_r8, holders_of
from planner.verify.jobs import check_r1, check_r11
from planner.verify.placement import check_count_field, check_r5
from planner.verify.times import check_live, check_r2, check_r4, check_r9, check_r10
from planner.verify.work import check_r3


def verify(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violation of contract §5 by `schedule` for `instance` (empty list: valid)."""
    if not schedule.jobs and schedule.status in ("infeasible", "unknown"):
        return []
    out: list[Violation] = []
    ok = check_r1(instance, schedule, out)  # id -> assignment of the checkable jobs
    sound = check_r11(instance, ok, out)  # ids whose segments are in order
    ok = {jid: span_of(a) if jid in sound else a for jid, a in ok.items()}
    pieces = [p for jid, a in ok.items() if jid in sound for p in pieces_of(a)]
    # Segments out of order still keep R5 and R10 one by one (contract §8).
    loose = [p for jid, a in ok.items() if jid not in sound for p in pieces_of(a)]
    members = members_of(pieces)
    check_r2(instance, ok, out)
    check_live(instance, ok, members, out)
    placed = check_r5(instance, pieces, out)  # keys of the pieces with a valid placement
    check_r5(instance, loose, out)
    check_count_field(instance, ok, out)
    check_r3(instance, pieces, members, placed, out)
    check_r4(instance, ok, out)
    holders = holders_of(instance, pieces, members)
    check_r6(members, holders, out)
    check_r7(instance, pieces, holders, out)
    check_r8(instance, pieces, out)
    if instance.priority_policy == "strict":
        check_r9(instance, ok, out)
    check_r10(instance, [*pieces, *loose], out)
    return out


def rules(violations: Iterable[Violation]) -> set[str]:
    """The rules broken, e.g. {"R3", "R6"} (handy in tests and summaries)."""
    return {v.rule for v in violations}


__all__ = ["Violation", "rules", "verify"]
