"""Small index structures for the event-driven planner: a min segment tree (best waiting
job of a bucket, optionally among the first positions only) and a Fenwick tree (queue
sums by list position). Both are plain lists of numbers, O(log n) per operation."""

from __future__ import annotations

INF = 1 << 62


class MinTree:
    """Minimum over positions 0..n-1 of integer values (INF: empty)."""

    __slots__ = ("size", "tree")

    def __init__(self, n: int) -> None:
        size = 1
        while size < max(1, n):
            size *= 2
        self.size = size
        self.tree = [INF] * (2 * size)

    def set(self, i: int, value: int) -> None:
        tree = self.tree
        i += self.size
        tree[i] = value
        i >>= 1
        while i:
            a, b = tree[2 * i], tree[2 * i + 1]
            tree[i] = a if a < b else b
            i >>= 1

    def min_all(self) -> int:
        return self.tree[1]

    def prefix_min(self, hi: int) -> int:
        """Minimum over positions [0, hi)."""
        if hi >= self.size:
            return self.tree[1]
        res = INF
        lo, hi = self.size, hi + self.size
        tree = self.tree
        while lo < hi:
            if lo & 1:
                res = min(res, tree[lo])
                lo += 1
            if hi & 1:
                hi -= 1
                res = min(res, tree[hi])
            lo >>= 1
            hi >>= 1
        return res


class Fenwick:
    """Prefix sums over positions 0..n-1."""

    __slots__ = ("n", "tree", "total")

    def __init__(self, n: int) -> None:
        self.n = n
        self.tree = [0.0] * (n + 1)
        self.total = 0.0

    def add(self, i: int, value: float) -> None:
        self.total += value
        i += 1
        tree, n = self.tree, self.n
        while i <= n:
            tree[i] += value
            i += i & -i

    def prefix(self, i: int) -> float:
        """Sum over positions [0, i)."""
        s = 0.0
        tree = self.tree
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s
