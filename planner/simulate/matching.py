"""Maximum-weight matching of packs whose weight depends only on their type.

Muri pairs jobs (and later pairs of pairs) by a maximum-weight matching. Jobs of the same
model and GPU count are interchangeable, so the matching is solved on types with counts
(a b-matching) and then assigned to concrete packs in order. The type problem is made small
before it is handed to rustworkx's blossom algorithm, exactly:
- a type `a` whose nodes outnumber all its possible partners of other types (`S_a`) keeps at
  most `S_a` nodes beyond its own pairs: with an `a-a` edge, some optimum pairs at least
  `ceil((c_a - S_a - 1) / 2)` of them with each other (at most `S_a` go elsewhere, at most
  one stays single), so those pairs are set aside; without one, the surplus stays single.
Type-level answers are memoised on the counts, which repeat from one decision to the next.
When the reduced problem still has more than `EXACT_NODES` nodes, the heaviest type pairs
are taken greedily instead: an approximation, used only on large queues.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence

import rustworkx as rx

Weight = Callable[[Hashable, Hashable], float]

# Largest reduced problem solved exactly. Chosen when the blossom algorithm was networkx's
# (pure Python, about 10 ms on 32 nodes); rustworkx's finds matchings of the same weight
# 20-26 times faster (`experiments/matching_speed.py`, README "Simulating policies"); the
# bound stays, so that plans stay the same.
EXACT_NODES = 32
# rustworkx's matching takes integer weights: the weights (interleaving efficiencies near
# 1) times this, rounded, keep every difference above 1e-12.
WEIGHT_SCALE = 10**12
# Weights above this count as equal (efficiencies in the catalogue are at most about 2.2):
# an interleaving overhead of 1e-300 (valid input: any factor > 0) gives a group an
# efficiency near 1e300, which times WEIGHT_SCALE was infinite, and 1e100 an integer
# past rustworkx's 64 bits (exit 3 both: tests/test_groups.py); 1e5 keeps the matched
# weights of up to EXACT_NODES nodes under 2**63
MAX_WEIGHT = 1e5


def _reduce(
    types: Sequence[Hashable], counts: list[int], w: Weight
) -> tuple[list[int], dict[int, int]]:
    """Reduced counts and, per type index, the number of `a-a` pairs set aside."""
    n = len(types)
    cnt = list(counts)
    aside: dict[int, int] = {}
    for a in range(n):
        s = sum(cnt[b] for b in range(n) if b != a and w(types[a], types[b]) > 0)
        if cnt[a] <= s + 1:
            continue
        if w(types[a], types[a]) > 0:
            m = (cnt[a] - s) // 2  # ceil((c - s - 1) / 2)
            aside[a] = m
            cnt[a] -= 2 * m
        else:
            cnt[a] = s
    return cnt, aside


def _solve_types(
    types: Sequence[Hashable], counts: Sequence[int], weight: Weight
) -> dict[tuple[int, int], int]:
    """Quota of pairs per (type index, type index) of a maximum-weight b-matching."""
    w = _cached(weight)
    cnt, aside = _reduce(types, list(counts), w)
    if sum(cnt) > EXACT_NODES:
        return _greedy_types(types, list(counts), w)
    owner, edges = node_graph(types, cnt, w)
    quota = type_pairs(blossom(len(owner), edges), owner)
    for a, m in aside.items():
        if m:
            quota[(a, a)] = quota.get((a, a), 0) + m
    return quota


def _cached(weight: Weight) -> Weight:
    """`weight`, each pair of types asked once: `_reduce` asks every pair, and the node
    graph every pair of nodes, most of them of types already asked (kept_plan on 1,000
    generated mixed jobs asked Muri's weight a million times). Kept by the types' ids: one
    solve's types all live while it runs."""
    seen: dict[tuple[int, int], float] = {}

    def w(a: Hashable, b: Hashable) -> float:
        key = (id(a), id(b))
        got = seen.get(key)
        if got is None:
            got = seen[key] = weight(a, b)
        return got

    return w


def node_graph(
    types: Sequence[Hashable], cnt: Sequence[int], w: Weight
) -> tuple[list[int], list[tuple[int, int, float]]]:
    """One node per counted pack (its type index in `owner`) and an edge of weight w > 0
    between every two nodes whose types may pair."""
    owner = [a for a, c in enumerate(cnt) for _ in range(c)]
    edges = []
    for u in range(len(owner)):
        for v in range(u + 1, len(owner)):
            wt = w(types[owner[u]], types[owner[v]])
            if wt > 0:
                edges.append((u, v, wt))
    return owner, edges


def blossom(nodes: int, edges: Sequence[tuple[int, int, float]]) -> set[tuple[int, int]]:
    """rustworkx's maximum-weight matching of the graph (its weights scaled to integers)."""
    g: rx.PyGraph[None, int] = rx.PyGraph()
    g.add_nodes_from([None] * nodes)
    g.add_edges_from([(u, v, round(min(wt, MAX_WEIGHT) * WEIGHT_SCALE)) for u, v, wt in edges])
    return set(rx.max_weight_matching(g, weight_fn=int))


def type_pairs(
    pairs: Iterable[tuple[int, int]], owner: Sequence[int]
) -> dict[tuple[int, int], int]:
    """The matched node pairs counted per (type index, type index)."""
    quota: dict[tuple[int, int], int] = {}
    for u, v in pairs:
        key = (min(owner[u], owner[v]), max(owner[u], owner[v]))
        quota[key] = quota.get(key, 0) + 1
    return quota


def _greedy_types(
    types: Sequence[Hashable], counts: list[int], w: Weight
) -> dict[tuple[int, int], int]:
    """Heaviest type pair first, as many pairs as the counts allow, and so on."""
    n = len(types)
    edges = [(a, b) for a in range(n) for b in range(a, n) if w(types[a], types[b]) > 0]
    edges.sort(key=lambda e: (-w(types[e[0]], types[e[1]]), e))
    quota: dict[tuple[int, int], int] = {}
    for a, b in edges:
        q = counts[a] // 2 if a == b else min(counts[a], counts[b])
        if q > 0:
            quota[(a, b)] = q
            counts[a] -= q
            counts[b] -= q
    return quota


class TypeMatcher:
    """Matches sequences of typed nodes; `weight(type_a, type_b)` > 0 means an edge."""

    def __init__(self, weight: Weight):
        self.weight = weight
        self._memo: dict[tuple[tuple[Hashable, int], ...], dict[tuple[int, int], int]] = {}

    def pairs(self, node_types: Sequence[Hashable]) -> list[tuple[int, ...]]:
        """Singles and pairs of node indices, each listed at its later member's position."""
        types: list[Hashable] = []
        index: dict[Hashable, int] = {}
        counts: list[int] = []
        for t in node_types:
            if t not in index:
                index[t] = len(types)
                types.append(t)
                counts.append(0)
            counts[index[t]] += 1
        key = tuple(zip(types, counts, strict=True))
        quota = self._memo.get(key)
        if quota is None:
            quota = _solve_types(types, counts, self.weight)
            self._memo[key] = quota
        return _assign(node_types, index, quota)


def _assign(
    node_types: Sequence[Hashable], index: dict[Hashable, int], quota: dict[tuple[int, int], int]
) -> list[tuple[int, ...]]:
    """Realise the type quotas on concrete nodes: each node pairs with the earliest waiting
    node of a type it still owes a pair to, else waits; pairs close as early as they can."""
    left = dict(quota)
    # each type's quotas: (quota key, partner type); looked up for its nodes only (every
    # node went through every quota)
    owed: dict[int, list[tuple[tuple[int, int], int]]] = {}
    for x, y in left:
        owed.setdefault(x, []).append(((x, y), y))
        if y != x:
            owed.setdefault(y, []).append(((x, y), x))
    waiting: dict[int, list[int]] = {}
    out: list[tuple[int, ...] | None] = [None] * len(node_types)
    for u, t in enumerate(node_types):
        a = index[t]
        best: tuple[int, int] | None = None
        for key, b in owed.get(a, ()):
            if left[key] <= 0:
                continue
            if waiting.get(b) and (best is None or waiting[b][0] < best[1]):
                best = (b, waiting[b][0])
        if best is not None:
            b, v = best
            waiting[b].pop(0)
            left[(min(a, b), max(a, b))] -= 1
            out[u] = (v, u)
        else:
            waiting.setdefault(a, []).append(u)
    result: list[tuple[int, ...]] = []
    paired = {i for p in out if p is not None for i in p}
    for u in range(len(node_types)):
        if out[u] is not None:
            result.append(out[u])  # type: ignore[arg-type]
        elif u not in paired:
            result.append((u,))
    return result
