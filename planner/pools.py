"""Usage over time of shared amounts (contract R7 node CPUs and memory, R8 pools), for the
greedy planner's timelines and the simulation's packer:
- `StepProfile`: a piecewise-constant usage (node CPUs, node memory, one pool class);
- `PoolTimeline`: a pool with its reservations, using the exact subset rule (Hall's
  condition) of the README section "What we chose where the contract is silent" for
  reservations that admit jobs.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from itertools import combinations

from planner.instance import Job, Reservation, over


class StepProfile:
    """Usage as a step function: `values[i]` holds on [times[i], times[i+1])."""

    __slots__ = ("times", "values")

    def __init__(self) -> None:
        self.times: list[int] = [0]
        self.values: list[float] = [0.0]

    def _split(self, t: int) -> int:
        i = bisect.bisect_right(self.times, t) - 1
        if self.times[i] != t:
            self.times.insert(i + 1, t)
            self.values.insert(i + 1, self.values[i])
            return i + 1
        return i

    def max_over(self, t0: int, t1: int) -> float:
        if t1 <= t0:
            return 0.0
        i = bisect.bisect_right(self.times, t0) - 1
        j = bisect.bisect_left(self.times, t1)
        return max(self.values[i:j])

    def at(self, t: int) -> float:
        return self.values[bisect.bisect_right(self.times, t) - 1]

    def add(self, t0: int, t1: int, amount: float) -> None:
        if t1 <= t0 or amount == 0:
            return
        i = self._split(t0)
        j = self._split(t1)
        for k in range(i, j):
            self.values[k] += amount

    def breakpoints(self, t0: int, t1: int) -> list[int]:
        i = bisect.bisect_right(self.times, t0)
        j = bisect.bisect_left(self.times, t1)
        return self.times[i:j]


class PoolTimeline:
    """A pool's usage per admission class and its reservations (R8, R10).

    A job's class is the set of this pool's reservations that admit it. The rule (README,
    "What we chose where the contract is silent"): at every instant, for every subset U of
    the active reservations, the demand of running jobs admitted by no reservation in U is
    at most capacity - sum of U's amounts.
    """

    def __init__(self, capacity: float, reservations: Sequence[Reservation]):
        self.capacity = capacity
        self.reservations = list(reservations)
        self.by_class: dict[frozenset[int], StepProfile] = {}
        self._classes: dict[str, frozenset[int]] = {}

    def job_class(self, job: Job) -> frozenset[int]:
        cls = self._classes.get(job.id)
        if cls is None:
            cls = frozenset(i for i, r in enumerate(self.reservations) if r.admits.admits(job))
            self._classes[job.id] = cls
        return cls

    def fits(self, t0: int, t1: int, items: Sequence[tuple[int, frozenset[int], float]]) -> bool:
        """Whether extra demands `items` = (end, class, amount), all starting at t0, fit."""
        if not items:
            return True
        if t1 <= t0:
            return True
        # Most demands that do not fit fail at their start (the list schedulers try every
        # waiting job at every event): look there before gathering the breakpoints.
        if not self._fits_at(t0, items):
            return False
        points: set[int] = set()
        for prof in self.by_class.values():
            points.update(prof.breakpoints(t0, t1))
        for end, _, _ in items:
            if t0 < end < t1:
                points.add(end)
        for r in self.reservations:
            for x in (r.start, r.end):
                if t0 < x < t1:
                    points.add(x)
        points.discard(t0)
        return all(self._fits_at(tau, items) for tau in sorted(points))

    def fits_at(self, tau: int, cls: frozenset[int], amount: float) -> bool:
        """Whether `amount` more of class `cls` fits at the instant `tau` (a run starting
        there fits nowhere if not here; more of the same class fits no better)."""
        return self._fits_at(tau, [(tau + 1, cls, amount)])

    def _fits_at(self, tau: int, items: Sequence[tuple[int, frozenset[int], float]]) -> bool:
        if not self.reservations:  # the rule below with U empty only
            load = sum(p.at(tau) for p in self.by_class.values())
            load += sum(amount for end, _, amount in items if tau < end)
            return not over(load, self.capacity)
        usage: dict[frozenset[int], float] = {c: p.at(tau) for c, p in self.by_class.items()}
        for end, cls, amount in items:
            if tau < end:
                usage[cls] = usage.get(cls, 0.0) + amount
        active = [i for i, r in enumerate(self.reservations) if r.start <= tau < r.end]
        return self._ok(usage, active)

    def _ok(self, usage: dict[frozenset[int], float], active: list[int]) -> bool:
        return self._broken(usage, active) is None

    def _broken(
        self, usage: dict[frozenset[int], float], active: list[int]
    ) -> tuple[tuple[int, ...], float] | None:
        """The first subset U of `active` (smallest first) whose rule fails, with the load
        of the classes it admits none of; None when every subset holds."""
        for k in range(len(active) + 1):
            for sub in combinations(active, k):
                u = set(sub)
                held = sum(self.reservations[i].amount for i in sub)
                load = sum(v for c, v in usage.items() if not (c & u))
                if over(load + held, self.capacity):
                    return sub, load
        return None

    def overbooked_at(self, tau: int) -> tuple[list[Reservation], float] | None:
        """Where the booked usage breaks the rule at the instant `tau`: the reservations U
        and the load of the classes they admit none of; None when it holds."""
        usage = {c: p.at(tau) for c, p in self.by_class.items()}
        active = [i for i, r in enumerate(self.reservations) if r.start <= tau < r.end]
        found = self._broken(usage, active)
        return None if found is None else ([self.reservations[i] for i in found[0]], found[1])

    def book(self, t0: int, t1: int, cls: frozenset[int], amount: float) -> None:
        prof = self.by_class.get(cls)
        if prof is None:
            prof = self.by_class[cls] = StepProfile()
        prof.add(t0, t1, amount)


def pools_fit(
    pools: Mapping[str, PoolTimeline], members: Sequence[Job], t: int, durs: Sequence[int]
) -> bool:
    """Whether `members` starting at `t`, each running its duration, fit every pool."""
    for name, pool in pools.items():
        items = [
            (t + d, pool.job_class(m), m.demand[name])
            for m, d in zip(members, durs, strict=True)
            if m.demand.get(name)
        ]
        if items and not pool.fits(t, max(e for e, _, _ in items), items):
            return False
    return True
