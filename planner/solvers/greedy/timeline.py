"""Resource availability over time for the greedy planner.

`GpuTimeline`, one per GPU, answers "is this GPU free during [t0, t1)?" and books it: the
sorted, disjoint busy intervals of jobs and groups (exclusive use, R6) plus the
reservations on that GPU (R10), checked per job. Node CPUs, node memory and pools are
`planner.pools`' timelines, which the simulation's packer shares.

The planner's candidate start times are event times: ends of booked intervals and ends of
reservations (`Events`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from planner.instance import Job, Reservation
from planner.solvers.greedy.fit import blocks


class Events:
    """Sorted distinct times at which some resource becomes free."""

    def __init__(self) -> None:
        self.times: list[int] = []

    def add(self, t: int) -> None:
        i = bisect.bisect_left(self.times, t)
        if i == len(self.times) or self.times[i] != t:
            self.times.insert(i, t)

    def after(self, t: int) -> Iterator[int]:
        """Times strictly greater than t, ascending. Lazy: a search usually stops after a
        few of them, and copying the tail per search would be quadratic in the jobs; do
        not add times while iterating."""
        times = self.times
        i = bisect.bisect_right(times, t)
        while i < len(times):
            yield times[i]
            i += 1


class GpuTimeline:
    """Busy intervals of one GPU (disjoint, sorted) and its reservations."""

    __slots__ = ("starts", "ends", "reservations")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.reservations: list[Reservation] = []

    def free(self, t0: int, t1: int, members: Sequence[Job]) -> bool:
        """No booked interval overlaps [t0, t1) and no reservation that fails to admit a
        member overlaps it. (Conservative for groups: the whole hold is checked.)"""
        if t1 <= t0:
            return True
        i = bisect.bisect_right(self.ends, t0)
        if i < len(self.starts) and self.starts[i] < t1:
            return False
        return not any(blocks(r, t0, t1, members) for r in self.reservations)

    def book(self, t0: int, t1: int) -> None:
        if t1 <= t0:
            return
        i = bisect.bisect_right(self.ends, t0)
        self.starts.insert(i, t0)
        self.ends.insert(i, t1)
