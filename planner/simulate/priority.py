"""Contract R9 in the engine: with `policy.priority` strict, no job starts before a job of
higher priority released no later (first starts only: a resumed segment starts nothing).

The policies order and backfill jobs their own way, so the engine checks each decision:
a job b may start now only if every job a with priority(a) > priority(b) and release(a) <=
release(b) has started, or starts now too. A job counts from its release even while it
waits for its predecessors (`after`): R9 is about releases. The jobs it holds back are
hidden from the policy, which decides again without them (`Engine._decide`), so the GPUs
it meant for them can go to other jobs; they wait for a later decision.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection

from planner.instance import Instance


class PriorityGate:
    """R9 for one engine run; inactive unless the instance is strict with two or more
    priorities."""

    def __init__(self, instance: Instance):
        levels = {j.priority for j in instance.jobs}
        self.active = instance.priority_policy == "strict" and len(levels) > 1
        order = sorted(instance.jobs, key=lambda j: (j.release, j.id))
        self.ids = [j.id for j in order]
        self.releases = [j.release for j in order]
        self.prio = {j.id: j.priority for j in order}
        self.release = {j.id: j.release for j in order}
        # Every job before this index of `ids` has started: a cache, valid while time only
        # moves forward (`reset` after the engine restores an earlier snapshot).
        self.first = 0

    def reset(self) -> None:
        self.first = 0

    def held(self, now: int, started: Callable[[str], bool], starting: Collection[str]) -> set[str]:
        """The jobs of `starting` (first starts at `now`) that R9 holds back."""
        if not self.active or not starting:
            return set()
        while self.first < len(self.ids) and started(self.ids[self.first]):
            self.first += 1
        end = bisect.bisect_right(self.releases, now)
        going = set(starting)
        lowest: dict[int, int] = {}  # priority -> the lowest release of a job not started

        def wait(a: str) -> None:
            p = self.prio[a]
            lowest[p] = min(lowest.get(p, self.release[a]), self.release[a])

        for a in self.ids[self.first : end]:
            if a not in going and not started(a):
                wait(a)
        out: set[str] = set()
        while True:
            new = {
                b
                for b in going
                if any(p > self.prio[b] and r <= self.release[b] for p, r in lowest.items())
            }
            if not new:
                return out
            out |= new
            going -= new
            for b in new:
                wait(b)
