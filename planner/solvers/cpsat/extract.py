"""From solver values to a Schedule: chosen options, nodes, and GPU indices.

GPU indices are assigned per node and GPU class by a sweep over time: uses sorted by
start take the lowest free indices of the class, and give them back at their end. The
class cumulative guarantees enough free GPUs at every start, and GPUs of one class are
covered by the same reservations, so the sweep cannot fail on a solution of the model;
`IndexError` is raised if it ever does (the caller then falls back to greedy).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from planner.schedule import Assignment, Group, Placement, Schedule
from planner.solvers.cpsat.variables import CpsatModel

Value = Callable[[Any], int]


def _sweep(
    items: list[tuple[int, int, int, int]], indices: tuple[int, ...]
) -> dict[int, list[int]]:
    """items: (start, end, count, key) -> key: assigned indices."""
    free = sorted(indices)
    active: list[tuple[int, int, list[int]]] = []
    out: dict[int, list[int]] = {}
    for s, e, count, key in sorted(items):
        while active and active[0][0] <= s:
            _, _, got = heapq.heappop(active)
            free = sorted(free + got)
        if count > len(free):
            if s == e:  # a zero-length use overlaps nothing
                out[key] = sorted(indices)[:count]
                continue
            raise IndexError("not enough free GPUs in a class")
        got, free = free[:count], free[count:]
        out[key] = got
        if e > s:
            heapq.heappush(active, (e, key, got))
        else:
            free = sorted(free + got)
    return out


def assign_gpus(cm: CpsatModel, value: Value) -> dict[int, list[int]]:
    """Index of a present GPU use in cm.uses -> its GPU indices on its node."""
    per: dict[tuple[str, int], list[tuple[int, int, int, int]]] = defaultdict(list)
    for i, u in enumerate(cm.uses):
        if not u.gpus or not value(u.lit):
            continue
        s, e = value(u.start), value(u.end)
        for k, n in u.per_class.items():
            cnt = n if isinstance(n, int) else value(n)
            if cnt:
                per[(u.node.name, k)].append((s, e, cnt, i))
    out: dict[int, list[int]] = defaultdict(list)
    for (node, k), items in per.items():
        for i, got in _sweep(items, cm.classes[node][k]).items():
            out[i].extend(got)
    return out


def extract(cm: CpsatModel, value: Value, solver_name: str = "cpsat") -> Schedule:
    gpus = assign_gpus(cm, value)
    placements: dict[str, list[Placement]] = defaultdict(list)
    group_of: dict[str, int] = {}
    used_groups: list[int] = []
    for i, u in enumerate(cm.uses):
        if i not in gpus:
            continue
        place = Placement(u.node.name, tuple(sorted(gpus[i])))
        for jid in u.jobs:
            placements[jid].append(place)
        if u.group is not None:
            if u.group not in used_groups:
                used_groups.append(u.group)
            for jid in u.jobs:
                group_of[jid] = u.group
    starts = {j: value(jv.start) for j, jv in cm.jobs.items()}
    used_groups.sort(key=lambda g: (value(cm.groups[g].start), cm.groups[g].cand.jobs))
    gid = {g: f"g{n + 1}" for n, g in enumerate(used_groups)}
    node_pos = {n.name: n.index for n in cm.instance.nodes}
    jobs = []
    for j in cm.instance.jobs:
        jv = cm.jobs[j.id]
        pl = tuple(sorted(placements.get(j.id, []), key=lambda p: node_pos[p.node]))
        g = group_of.get(j.id)
        jobs.append(
            Assignment(j.id, starts[j.id], value(jv.end), pl, gid[g] if g is not None else None)
        )
    groups = tuple(Group(gid[g], cm.groups[g].cand.jobs) for g in used_groups)
    return Schedule(cm.instance.name, solver_name, "feasible", tuple(jobs), groups)
