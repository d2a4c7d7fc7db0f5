"""Contract R9 in the engine: with `policy.priority` strict, no job starts before a job of
higher priority released no later (first starts only: a resumed segment starts nothing).

The policies order and backfill jobs their own way, so the engine checks each decision:
a job b may start now only if every job a with priority(a) > priority(b) and arrival(a) <=
arrival(b) has started, or starts now too. A job counts from its release even while it
waits for its predecessors (`after`): R9 is about releases, and the arrival is
`Instance.arrival`, the release R9 compares (in a live state's residual a waiting job's own,
before `now`; a stopped job's is after every other's, which takes it out of R9,
`planner.live.residual._exempt_from_r9`). Comparing the residual's releases, all `now`, held every
waiting job back behind a stopped job (tests/test_simulate.py). The jobs it holds back, and
every job behind a job that does not start now, are hidden from the policy, which decides
again without them (`Engine._decide`), so the GPUs it meant for them can go to other jobs;
they wait for a later decision. On `plan generate --family mixed --jobs 1000 --nodes 16
--seed 1 --preemption` under srsf-p, hiding only the jobs held back took 12 decisions of
the policy per engine decision (34 s); hiding the rest at once, 1.7 (7 s).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection

from planner.instance import Instance


class PriorityGate:
    """R9 for one engine run; inactive unless the instance is strict with two or more
    priorities."""

    def __init__(self, instance: Instance):
        self.levels = {j.priority for j in instance.jobs}
        self.active = instance.priority_policy == "strict" and len(self.levels) > 1
        order = sorted(instance.jobs, key=lambda j: (j.release, j.id))
        self.ids = [j.id for j in order]
        self.releases = [j.release for j in order]
        self.prio = {j.id: j.priority for j in order}
        # R9's release (`Instance.arrival`). A job R9 puts before one released by `now` is
        # released by then too, so `blocked` looks at released jobs only: a residual
        # releases a waiting job at max(arrival, now), and its stopped job, released at
        # now, arrives after every other and has the top priority (in no pair)
        self.arrival = {j.id: instance.arrival(j) for j in order}
        # Every job before this index of `ids` has started: a cache, valid while time only
        # moves forward (`reset` after the engine restores an earlier snapshot).
        self.first = 0

    def reset(self) -> None:
        self.first = 0

    def blocked(
        self, now: int, started: Callable[[str], bool], starting: Collection[str]
    ) -> set[str]:
        """Every job not started yet that may not start at `now` when `starting` are the
        first starts the policy chose: those of `starting` that R9 holds back, and every
        other job behind a job that does not start now (hiding them all at once spares
        the policy a decision per job it would reach for next)."""
        if not self.active or not starting:
            return set()
        while self.first < len(self.ids) and started(self.ids[self.first]):
            self.first += 1
        end = bisect.bisect_right(self.releases, now)
        waiting = [a for a in self.ids[self.first : end] if not started(a)]
        going = set(starting)
        lowest: dict[int, int] = {}  # priority -> the lowest arrival of a job not starting

        def wait(a: str) -> None:
            p = self.prio[a]
            lowest[p] = min(lowest.get(p, self.arrival[a]), self.arrival[a])

        def behind(b: str) -> bool:
            return any(p > self.prio[b] and r <= self.arrival[b] for p, r in lowest.items())

        for a in waiting:
            if a not in going:
                wait(a)
        while True:  # a job held back holds back the ones behind it
            new = {b for b in going if behind(b)}
            if not new:
                break
            going -= new
            for b in new:
                wait(b)
        # behind(b) for every waiting job at once: the lowest arrival of a higher level
        # (asking `behind` of each was most of R9's time on 1,000 generated mixed jobs)
        least = {q: min((r for p, r in lowest.items() if p > q), default=None) for q in self.levels}
        return {
            b
            for b in waiting
            if b not in going and (m := least[self.prio[b]]) is not None and self.arrival[b] >= m
        }
