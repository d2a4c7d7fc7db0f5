"""Concrete GPU indices for a solution that only fixed GPU counts per node.

Per node, an interval colouring: take the holders (solo jobs and groups) by start time and
give each the free GPUs it may use for its whole interval (every GPU reservation covering
the GPU and overlapping the interval admits all members). Among those, GPUs that only the
holder's reservations make usable come first, so unrestricted GPUs stay free for others.
Without reservations this always succeeds (at any instant at most `gpus` are busy); with
them it can fail, and the caller then falls back to another schedule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from planner.instance import Instance, Job, Reservation


@dataclass(frozen=True)
class NodeHold:
    key: int
    node: str
    start: int
    end: int  # when it frees its GPUs (a group: its last member's end)
    count: int
    members: tuple[Job, ...]


def colour(
    instance: Instance, holders: Sequence[NodeHold]
) -> dict[tuple[int, str], tuple[int, ...]] | None:
    """(holder key, node) -> GPU indices, or None if the greedy colouring gets stuck."""
    res: dict[str, list[Reservation]] = defaultdict(list)
    for r in instance.reservations:
        if r.pool is None:
            for n in r.nodes:
                res[n].append(r)
    by_node: dict[str, list[NodeHold]] = defaultdict(list)
    for h in holders:
        by_node[h.node].append(h)
    out: dict[tuple[int, str], tuple[int, ...]] = {}
    for node_name, hs in by_node.items():
        node = instance.node_by_name[node_name]
        free_at = [0] * node.gpus  # GPU busy until this time
        hs.sort(key=lambda h: (h.start, -(h.end - h.start), h.key))
        for h in hs:

            def score(g: int, h: NodeHold = h, here: str = node_name) -> tuple[int, int] | None:
                own = 0
                for r in res[here]:
                    covers = r.gpus is None or g in r.gpus
                    if not covers or r.end <= h.start or r.start >= max(h.end, h.start + 1):
                        continue
                    if not all(r.admits.admits(m) for m in h.members):
                        return None
                    own += 1
                return (-own, g)

            ok = []
            for g in range(node.gpus):
                if free_at[g] > h.start and h.end > h.start:
                    continue
                s = score(g)
                if s is not None:
                    ok.append(s)
            if len(ok) < h.count:
                return None
            chosen = sorted(g for _, g in sorted(ok)[: h.count])
            for g in chosen:
                free_at[g] = max(free_at[g], h.end)
            out[(h.key, node_name)] = tuple(chosen)
    return out
