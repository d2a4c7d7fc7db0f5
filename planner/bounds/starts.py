"""Earliest starts for `planner.bounds` (ingredient 2's heads): what releases and `after`
give, raised by reservations (2a) and by strict priority (2b), as argued in
`planner.bounds`' module docstring.

`earliest_starts` finds the least solution of the inequalities there by passes that each
only raise heads to values every schedule's starts are at least: one over `after` in
topological order, one giving each job the first instant it could start alone among the
reservations (`Alone`), one over the jobs in release order giving each the largest head
among the jobs of higher priority released no later (a Fenwick tree over priority ranks,
as `planner.verify.times.check_r9`; within one release, higher priorities first). The
heads after any number of passes are valid; they stop at the least solution or after
`ROUNDS` rounds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from planner.instance import Instance, Job, over
from planner.precedence import topological_order

# Rounds of the passes at most (each costs O(n log n)); any round's heads are valid.
ROUNDS = 50


def r9_applies(inst: Instance) -> bool:
    """Does rule R9 bind the jobs' starts as ingredient 2b uses it: strict priority, a
    static instance (contract §9: R9 does not bind a running or done job; `planner.bounds`
    bounds a live state through a residual, with R9 only where it is the live state's)."""
    return inst.priority_policy == "strict" and not inst.is_live and len(inst.jobs) > 1


def alone_applies(inst: Instance) -> bool:
    """Does ingredient 2a hold: reservations, and no preemption (a job that may stop can
    run around a reservation in pieces, contract §8), a static instance."""
    return bool(inst.reservations) and not inst.preemption.enabled and not inst.is_live


def earliest_starts(
    inst: Instance,
    p: Sequence[float] | np.ndarray,
    p_group: np.ndarray | None = None,
    eligible: np.ndarray | None = None,
) -> np.ndarray:
    """Each job's earliest start (instance order) under R2, R4 and, where they apply, R10
    and R8 against reservations (2a, with `p_group[i, g]` the least duration of job `i` on
    node group `g`, inf where `eligible` is False) and R9 (2b); job `i` takes at least
    `p[i]` (the least over its node groups)."""
    jobs = inst.jobs
    n = len(jobs)
    index = {j.id: i for i, j in enumerate(jobs)}
    dur = [float(x) for x in p]
    head = [float(j.release) for j in jobs]
    order = [index[jid] for jid in topological_order(inst)]
    preds = [[index[a] for a in dict.fromkeys(j.after)] for j in jobs]
    chained = [i for i in order if preds[i]]
    alone = (
        Alone(inst, p_group, eligible)
        if p_group is not None and eligible is not None and alone_applies(inst)
        else None
    )
    strict = r9_applies(inst)
    if strict:
        prios = sorted({j.priority for j in jobs}, reverse=True)
        rank = {q: k + 1 for k, q in enumerate(prios)}  # 1: the highest priority
        ranks = [rank[j.priority] for j in jobs]
        # release order; within one release, higher priority (lower rank) first
        sweep = sorted(range(n), key=lambda i: (inst.arrival(jobs[i]), ranks[i]))
    for _ in range(ROUNDS):
        _after_pass(head, dur, chained, preds)
        raised = alone.pass_(head) if alone is not None else False
        if strict:
            raised = _r9_pass(head, sweep, ranks, len(prios)) or raised
        if not raised:
            break
    return np.array(head, dtype=float)


def _after_pass(
    head: list[float], dur: list[float], chained: list[int], preds: list[list[int]]
) -> None:
    """Raise each job's head to its predecessors' heads plus least durations (R4)."""
    for i in chained:
        h = head[i]
        for a in preds[i]:
            v = head[a] + dur[a]
            if v > h:
                h = v
        head[i] = h


def _r9_pass(head: list[float], sweep: list[int], ranks: list[int], size: int) -> bool:
    """Raise each job's head to the largest head of a job of higher priority released no
    later (R9), in the order `sweep`; whether a head rose."""
    tree = [-np.inf] * (size + 1)  # prefix maxima over ranks 1..k
    raised = False
    for i in sweep:
        r = ranks[i]
        k, best = r - 1, -np.inf  # ranks 1..r-1: strictly higher priority
        while k > 0:
            if tree[k] > best:
                best = tree[k]
            k -= k & -k
        h = head[i]
        if best > h:
            head[i] = h = best
            raised = True
        k = r
        while k <= size:
            if h > tree[k]:
                tree[k] = h
            k += k & -k
    return raised


@dataclass
class _Blocked:
    """Within one node group, for jobs of one admission: the GPUs reserved for none of
    them, per node that has some (per GPU, its reserved intervals), how many nodes have
    none, and every instant such a reservation ends."""

    gpus: int
    nodes: list[list[list[tuple[int, int]]]] = field(default_factory=list)
    clean: int = 0
    ends: list[int] = field(default_factory=list)

    def _whole(self, count: int) -> int:
        """Whole nodes `count` GPUs take (0: fewer than a node has, on one node)."""
        return -(-count // self.gpus) if count > self.gpus else 0

    def always(self, count: int) -> bool:
        """Do nodes free of these reservations hold `count` GPUs (`free_from` is its input)?"""
        whole = self._whole(count)
        return self.clean >= whole if whole else self.clean > 0

    def free_from(self, t: float, length: float, count: int) -> float:
        """The least start >= t of a window of `length` in which one node has `count` GPUs
        free of these reservations (count > a node's GPUs: count / GPUs-per-node whole nodes,
        rounded up)."""
        if self.always(count) or length <= 0:
            return t
        whole = self._whole(count)
        for s in [t, *(e for e in self.ends if e > t)]:
            if self._fits(s, length, count, whole):
                return s
        return max(t, self.ends[-1]) if self.ends else t  # after every reservation

    def _fits(self, s: float, length: float, count: int, whole: int) -> bool:
        e = s + length
        free_nodes = self.clean
        for node in self.nodes:
            free = sum(1 for ivs in node if not any(a < e and s < b for a, b in ivs))
            free += self.gpus - len(node)
            if whole:
                free_nodes += free == self.gpus
                if free_nodes >= whole:
                    return True
            elif free >= count:
                return True
        return False


class Alone:
    """Ingredient 2a: per job, the first instant it could start were it alone in the
    cluster with the reservations (R10 for its GPUs, R8 for its pools)."""

    def __init__(self, inst: Instance, p_group: np.ndarray, eligible: np.ndarray):
        self.inst = inst
        self.p_group, self.eligible = p_group, eligible
        gpu_res = [r for r in inst.reservations if r.pool is None and r.nodes and r.end > r.start]
        pool_res = [
            r for r in inst.reservations if r.pool is not None and r.end > r.start and r.amount > 0
        ]
        self.jobs: list[int] = []  # the jobs some reservation can delay
        self.keys: list[tuple[bool, ...]] = []
        self.groups: list[list[int]] = []  # their eligible node groups
        self._blocked: dict[tuple[tuple[bool, ...], int], _Blocked] = {}
        self.gpu_res, self.pool_res = gpu_res, pool_res
        rows = eligible.tolist()
        pooled = {r.pool for r in pool_res}
        named = {x for r in gpu_res + pool_res for x in r.admits.jobs}
        keys: dict[tuple[str | None, str | None], tuple[bool, ...]] = {}
        for i, j in enumerate(inst.jobs):
            groups = [g for g, ok in enumerate(rows[i]) if ok]
            if not (gpu_res and groups) and not any(j.demand.get(q or "", 0.0) > 0 for q in pooled):
                continue
            who = (j.tenant, j.id if j.id in named else None)  # what admission looks at
            key = keys.get(who)
            if key is None:
                key = keys[who] = tuple(r.admits.admits(j) for r in gpu_res + pool_res)
            lets = key[len(gpu_res) :]
            held = any(
                not ok and j.demand.get(r.pool or "", 0.0) > 0
                for r, ok in zip(pool_res, lets, strict=True)
            )
            count = min(j.gpu_counts)
            # no pool amount held from j, and a node group whose nodes that no reservation
            # excluding j touches hold its GPUs: j may start at its head
            if not held and any(self._group(key, g).always(count) for g in groups):
                continue
            self.jobs.append(i)
            self.keys.append(key)
            self.groups.append(groups)
        self._seen: dict[int, tuple[float, float]] = {}  # job: (head asked, its answer)

    def pass_(self, head: list[float]) -> bool:
        """Raise each job's head to its first start alone from there; whether one rose."""
        raised = False
        for i, key, groups in zip(self.jobs, self.keys, self.groups, strict=True):
            h, t = self._seen.get(i, (np.nan, np.nan))
            if h != head[i]:
                t = self.start(i, key, groups, head[i])
                self._seen[i] = (head[i], t)
            if t > head[i]:
                head[i] = t
                raised = True
        return raised

    def start(self, i: int, key: tuple[bool, ...], groups: list[int], h: float) -> float:
        """Job i's least start >= h alone: over its node groups (or none when it uses no
        GPU), the least instant both its GPUs and its pool demands are free for its least
        duration there (alternating the two searches reaches the least common instant)."""
        j = self.inst.jobs[i]
        if not groups:  # a job without GPUs: its duration is its own
            length = float(j.duration or 0)
            return _settled(h, lambda t: self._pool_free(j, key, t, length))
        best = np.inf
        count = min(j.gpu_counts)
        for g in groups:
            length = float(self.p_group[i, g])
            if not np.isfinite(length):
                continue
            blocked = self._group(key, g)

            def step(t: float, b: _Blocked = blocked, n: float = length) -> float:
                return self._pool_free(j, key, b.free_from(t, n, count), n)

            best = min(best, _settled(h, step))
        return float(best) if np.isfinite(best) else h

    def _group(self, key: tuple[bool, ...], g: int) -> _Blocked:
        got = self._blocked.get((key, g))
        if got is not None:
            return got
        group = self.inst.node_groups[g]
        out = _Blocked(group.gpus)
        per_node: dict[str, dict[int, list[tuple[int, int]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for r, lets in zip(self.gpu_res, key, strict=False):
            if lets:
                continue
            for name in r.nodes:
                node = self.inst.node_by_name.get(name)
                if node is None or node.group.name != group.name:
                    continue
                for k in r.gpus if r.gpus is not None else range(node.gpus):
                    if 0 <= k < node.gpus:
                        per_node[name][k].append((r.start, r.end))
        out.nodes = [list(gpus.values()) for gpus in per_node.values()]
        out.clean = group.count - len(per_node)
        out.ends = sorted(
            {b for gpus in per_node.values() for ivs in gpus.values() for _, b in ivs}
        )
        self._blocked[(key, g)] = out
        return out

    def _pool_free(self, j: Job, key: tuple[bool, ...], t: float, length: float) -> float:
        """The least start >= t of a window of `length` in which each pool has j's demand
        free of the reservations that do not admit j (Hall's condition, R8, with U those
        reservations: j can use none of what they hold)."""
        if length <= 0:
            return t
        lets = key[len(self.gpu_res) :]
        for pool, demand in j.demand.items():
            if demand <= 0:
                continue
            cap = self.inst.pools.get(pool, np.inf)
            held = [
                r for r, ok in zip(self.pool_res, lets, strict=True) if r.pool == pool and not ok
            ]
            if not held:
                continue
            starts = [t, *sorted({r.end for r in held if r.end > t})]
            for s in starts:
                e = s + length
                cuts = sorted({s, *(r.start for r in held if s < r.start < e)})
                # the verifier's and the planners' slack (`instance.over`, relative): an
                # absolute 1e-9 refused 5e6 beside 5e6 + 0.005 held of 1e7, which they accept
                if not any(
                    over(demand + sum(r.amount for r in held if r.start <= c < r.end), cap)
                    for c in cuts
                ):
                    t = s
                    break
            else:
                t = max(t, max(r.end for r in held))
        return t


def _settled(h: float, step: Callable[[float], float]) -> float:
    """The first fixed point of `step` from `h` (each step only moves forward, to a
    reservation's end; one pool's window may move past another's), or `h` when none comes
    within 1,000 steps: no raise, still valid."""
    t = h
    for _ in range(1000):
        t2 = step(t)
        if t2 == t:
            return t
        t = t2
    return h
