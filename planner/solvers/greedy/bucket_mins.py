"""Each bucket's best waiting job that may start now, for the event-driven engine
(`events.py`), kept from one start to the next instead of recomputed for every bucket.

A bucket's best rank now (`value`) depends on its tree (`waiting.py`: jobs entering,
leaving, set aside or restored), on whether its shape fits the free GPUs of one of its
node groups (`occupancy.py`) and, under strict priority, on the limit of its priority
level (`waiting.ReleasedByPriority`). Each of these reports what it changed (the queue's
`changed` buckets, the occupancy's `touched` node groups, the limits compared level by
level at a new epoch), and only the buckets it concerns are recomputed. The best bucket
is the top of a heap of (value, bucket) whose entries are checked against `value` when
they surface (lazy deletion).

An epoch is the time between two starts at one instant. Within it the engine passes over
a bucket whose pool demand failed (`park`), until the next epoch; so the best bucket is
the one with the least value not parked, exactly as when every bucket's value was
recomputed after each start (the values are the same function of the same state). On
`plan generate --family mixed --jobs 10000 --nodes 128 --seed 1` (strict priorities)
`greedy:interleave` made 13.2 million such recomputations.
"""

from __future__ import annotations

import bisect
import heapq
from collections import defaultdict

from planner.solvers.greedy.occupancy import Occupancy
from planner.solvers.greedy.trees import INF
from planner.solvers.greedy.waiting import ReleasedByPriority, WaitingJobs


class BucketMins:
    """The best rank of every bucket of `queue` that may start now; `released` is given
    under strict priority (None: no limits)."""

    def __init__(
        self, queue: WaitingJobs, occ: Occupancy, released: ReleasedByPriority | None
    ) -> None:
        self.queue, self.occ, self.released = queue, occ, released
        buckets = queue.buckets
        self.value = [INF] * len(buckets)
        self.heap: list[tuple[int, int]] = []
        self.parked: set[int] = set()
        self.held: list[tuple[int, int]] = []  # valid entries of parked buckets
        self.deferred: list[int] = []  # parked buckets that changed: recomputed once unparked
        # (node group, GPUs) -> the buckets of that shape, and whether it fits now
        self.of_shape: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.of_level: dict[int, list[int]] = defaultdict(list)
        for k, b in enumerate(buckets):
            self.of_level[b.prio].append(k)
            for gi in b.groups if b.gpus else ():
                self.of_shape[gi, b.gpus].append(k)
        self.shapes_of: dict[int, list[int]] = defaultdict(list)  # node group -> GPU counts
        for gi, g in self.of_shape:
            self.shapes_of[gi].append(g)
        self.fits = {shape: occ.can_fit(*shape) for shape in self.of_shape}
        self.limit: dict[int, int] = {p: INF for p in self.of_level}
        self.limits_due = released is not None
        queue.changed.update(range(len(buckets)))
        occ.touched.clear()

    def new_epoch(self) -> None:
        """A job started, or a new instant: parked buckets count again and the
        strict-priority limits may have moved."""
        self.parked.clear()
        for entry in self.held:
            heapq.heappush(self.heap, entry)
        self.held.clear()
        self.queue.changed.update(self.deferred)
        self.deferred.clear()
        self.limits_due = self.released is not None

    def park(self, k: int) -> None:
        """Pass over bucket `k` until the next epoch (its pool demand failed now)."""
        self.parked.add(k)

    def top(self) -> tuple[int, int] | None:
        """(rank, bucket index) of the best job that may start now, None if none."""
        if self.queue.changed or self.occ.touched or self.limits_due:
            self._refresh()
        heap, value, parked = self.heap, self.value, self.parked
        while heap:
            r, k = heap[0]
            if r != value[k]:
                heapq.heappop(heap)  # a value since replaced
            elif k in parked:
                self.held.append(heapq.heappop(heap))
            else:
                return r, k
        return None

    def _refresh(self) -> None:
        """Recompute the buckets whose value may have changed since the last look."""
        changed = self.queue.changed
        if self.occ.touched:
            self._refit(changed)
        if self.limits_due:
            self._relimit(changed)
        value, heap, parked = self.value, self.heap, self.parked
        for k in changed:
            if k in parked:  # its value is not looked at before the next epoch
                self.deferred.append(k)
                continue
            r = self._compute(k)
            if r != value[k]:
                value[k] = r
                if r < INF:
                    heapq.heappush(heap, (r, k))
        changed.clear()

    def _refit(self, changed: set[int]) -> None:
        """Shapes of the touched node groups whose fit changed: their buckets."""
        occ, fits = self.occ, self.fits
        for gi in occ.touched:
            for g in self.shapes_of.get(gi, ()):
                now = occ.can_fit(gi, g)
                if now != fits[gi, g]:
                    fits[gi, g] = now
                    changed.update(self.of_shape[gi, g])
        occ.touched.clear()

    def _relimit(self, changed: set[int]) -> None:
        """Priority levels whose strict-priority limit moved: their buckets."""
        assert self.released is not None
        self.limits_due = False
        for p, lim in self.released.limits().items():
            if self.limit.get(p, INF) != lim:
                self.limit[p] = lim
                changed.update(self.of_level.get(p, ()))

    def _compute(self, k: int) -> int:
        b = self.queue.buckets[k]
        if not b.count:
            return INF
        if b.gpus and not any(self.fits[gi, b.gpus] for gi in b.groups):
            return INF
        if self.released is None:
            return b.tree.min_all()
        return b.tree.prefix_min(bisect.bisect_left(b.rels, self.limit[b.prio]))
