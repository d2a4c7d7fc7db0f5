"""The waiting jobs of the event-driven engine (`events.py`): released, predecessors ended,
not started; kept apart from the engine's rules as the cluster's state is (`occupancy.py`).

- Buckets by shape (priority under strict, GPU count, eligible node groups, pool need):
  each a min segment tree over its jobs sorted by (release, list position), holding list
  positions (INF: not waiting, or set aside until the next event). The engine looks at a
  bucket only when its shape may fit, and under strict priority only at a prefix of it.
- Queue sums by list position (Fenwick trees), kept only for the `interleave` rule: the
  GPU-time waiting ahead of a job and the weight waiting behind it (`fit.QueueEstimates`).
- Strict priority (R9): the released, unstarted jobs by priority level (those waiting on
  predecessors too), for the least release of a higher priority (`ReleasedByPriority`).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from planner.instance import Job
from planner.solvers.greedy.trees import INF, Fenwick, MinTree

# A job's positive pool demands with their admission classes, (pool, class, amount) sorted;
# empty for a job that takes no time (it fits every pool).
PoolNeed = tuple[tuple[str, frozenset[int], float], ...]
# (priority under strict else 0, GPUs, eligible node group indices, pool need)
BucketKey = tuple[int, int, tuple[int, ...], PoolNeed]


class Bucket:
    """The waiting jobs of one shape. `key` is the engine's (priority, GPUs, node group
    indices, pool need); `count` how many are waiting now."""

    __slots__ = ("key", "index", "prio", "gpus", "groups", "need", "jobs", "rels", "tree", "count")

    def __init__(self, key: BucketKey, index: int):
        self.key, self.index = key, index
        self.prio, self.gpus, self.groups, self.need = key
        self.jobs: list[int] = []  # job indices, sorted by (release, rank)
        self.rels: list[int] = []
        self.tree = MinTree(0)
        self.count = 0


class WaitingJobs:
    """Which jobs wait, by bucket; `member[i]`: job `i` is in its bucket's tree;
    `changed`: the indices of the buckets whose tree changed (`bucket_mins.py` clears it)."""

    def __init__(
        self,
        jobs: Sequence[Job],
        rank: Sequence[int],
        keys: Sequence[BucketKey],
        work: Sequence[int],
        sums: bool,
        total_gpus: int,
        arrive: Sequence[int],
    ):
        """`keys[i]`: job i's bucket key; `work[i]`: its GPU-time, summed when `sums`;
        `arrive[i]`: the release R9 compares (`Instance.arrival`)."""
        self.jobs, self.rank, self.work = jobs, rank, work
        self.sums, self.total_gpus = sums, total_gpus
        n = len(jobs)
        self.idx = {j.id: i for i, j in enumerate(jobs)}
        self.member = [False] * n
        self.pos = [0] * n
        by_key: dict[BucketKey, Bucket] = {}
        self.bucket: list[Bucket] = []
        for i, key in enumerate(keys):
            b = by_key.get(key)
            if b is None:
                b = by_key[key] = Bucket(key, len(by_key))
            b.jobs.append(i)
            self.bucket.append(b)
        self.buckets = list(by_key.values())
        for b in self.buckets:
            b.jobs.sort(key=lambda i: (arrive[i], rank[i]))
            b.rels = [arrive[i] for i in b.jobs]
            b.tree = MinTree(len(b.jobs))
            for p, i in enumerate(b.jobs):
                self.pos[i] = p
        self.fw_work = Fenwick(n)
        self.fw_weight = Fenwick(n)
        self.changed: set[int] = set()

    def enter(self, i: int) -> None:
        b = self.bucket[i]
        b.tree.set(self.pos[i], self.rank[i])
        b.count += 1
        self.changed.add(b.index)
        self.member[i] = True
        if self.sums:
            self.fw_work.add(self.rank[i], self.work[i])
            self.fw_weight.add(self.rank[i], self.jobs[i].weight)

    def leave(self, i: int) -> None:
        b = self.bucket[i]
        b.tree.set(self.pos[i], INF)
        b.count -= 1
        self.changed.add(b.index)
        self.member[i] = False
        if self.sums:
            self.fw_work.add(self.rank[i], -self.work[i])
            self.fw_weight.add(self.rank[i], -self.jobs[i].weight)

    def set_aside(self, i: int) -> None:
        """Hide waiting job `i` from its bucket's minimum until `restore`."""
        b = self.bucket[i]
        b.tree.set(self.pos[i], INF)
        self.changed.add(b.index)

    def restore(self, i: int) -> None:
        if self.member[i]:
            b = self.bucket[i]
            b.tree.set(self.pos[i], self.rank[i])
            self.changed.add(b.index)

    def ahead(self, i: int) -> float:
        """GPU-time of the waiting jobs before job `i` in the list, per cluster GPU."""
        return self.fw_work.prefix(self.rank[i]) / self.total_gpus

    def weight_behind(self, i: int, exclude: Sequence[int]) -> float:
        """Weight of the waiting jobs after `i` in the list, except `exclude`."""
        r = self.rank[i]
        w = self.fw_weight.total - self.fw_weight.prefix(r + 1)
        for e in exclude:
            if self.member[e] and self.rank[e] > r:
                w -= self.jobs[e].weight
        return w

    # fit.QueueEstimates, by job
    def wait(self, job: Job) -> float:
        return self.ahead(self.idx[job.id])

    def behind(self, job: Job, exclude: Sequence[str]) -> float:
        return self.weight_behind(self.idx[job.id], [self.idx[x] for x in exclude])


class ReleasedByPriority:
    """Per priority level, a heap of (release R9 compares, job index) of the released jobs;
    started ones are dropped lazily (`started` is the engine's list)."""

    def __init__(self, jobs: Sequence[Job], started: Sequence[bool], arrive: Sequence[int]):
        self.jobs, self.started, self.arrive = jobs, started, arrive
        self.levels = sorted({j.priority for j in jobs}, reverse=True)
        self.heap: dict[int, list[tuple[int, int]]] = {p: [] for p in self.levels}

    def release(self, i: int) -> None:
        job = self.jobs[i]
        heapq.heappush(self.heap[job.priority], (self.arrive[i], i))

    def limit(self, prio: int) -> int:
        """Least release among released, unstarted jobs of priority above `prio`."""
        return min((self._least(p) for p in self.levels if p > prio), default=INF)

    def limits(self) -> dict[int, int]:
        """`limit` of every priority level, in one pass from the highest."""
        out: dict[int, int] = {}
        m = INF
        for p in self.levels:
            out[p] = m
            m = min(m, self._least(p))
        return out

    def _least(self, p: int) -> int:
        """Least release among released, unstarted jobs of priority `p` (INF: none)."""
        h = self.heap[p]
        while h and self.started[h[0][1]]:
            heapq.heappop(h)
        return h[0][0] if h else INF
