"""Precedence (`after`, contract §2) as a directed acyclic graph: successor lists,
topological order, heads and tails, ancestors, descendants and effective priorities.

Every walk here is iterative. The reader admits `after` chains of any length, and a
recursive walk fails on a chain longer than Python's recursion limit (a 1,500-job chain
is planned by every solver in tests/test_precedence.py). All functions take a validated
`Instance`, whose `after` is acyclic and names only known jobs; job order is instance
order wherever an order is visible, so results are deterministic.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from planner.instance import Instance

Num = TypeVar("Num", int, float)
K = TypeVar("K", bound=Hashable)


def successors(instance: Instance) -> dict[str, list[str]]:
    """Each job's direct successors (jobs naming it in `after`), in instance order,
    each once even if `after` repeats it."""
    succ: dict[str, list[str]] = {j.id: [] for j in instance.jobs}
    for j in instance.jobs:
        for a in dict.fromkeys(j.after):
            succ[a].append(j.id)
    return succ


def topological_order(instance: Instance) -> list[str]:
    """Kahn's algorithm: the jobs without predecessors in instance order, then each job as
    soon as its last predecessor is placed. Raises ValueError on a cycle (the reader
    refuses cycles, so this only guards instances built by hand)."""
    succ = successors(instance)
    waiting = {j.id: len(set(j.after)) for j in instance.jobs}
    order = [j.id for j in instance.jobs if waiting[j.id] == 0]
    for jid in order:  # `order` grows while we walk it
        for s in succ[jid]:
            waiting[s] -= 1
            if waiting[s] == 0:
                order.append(s)
    if len(order) < len(instance.jobs):
        raise ValueError("precedence cycle in `after` (the reader should have refused it)")
    return order


def heads_tails(
    instance: Instance, durations: Mapping[str, Num]
) -> tuple[dict[str, Num], dict[str, Num]]:
    """(head, tail) of every job for the given durations (a job absent counts 0).

    head: the earliest start that release and precedence allow (max of the release and
    each predecessor's head + duration). tail: the longest chain of successor durations
    that must follow the job's end (0 for a job without successors)."""
    order = topological_order(instance)
    by_id = instance.job_by_id
    zero: Num = 0
    head: dict[str, Num] = {}
    for jid in order:
        h: Num = by_id[jid].release
        for a in by_id[jid].after:
            h = max(h, head[a] + durations.get(a, zero))
        head[jid] = h
    succ = successors(instance)
    tail: dict[str, Num] = {}
    for jid in reversed(order):
        tail[jid] = max((durations.get(s, zero) + tail[s] for s in succ[jid]), default=zero)
    return head, tail


def _reach(step: Mapping[str, list[str]], order: list[str]) -> dict[str, set[str]]:
    """Transitive closure of `step`, filled in an order where every job's steps come first."""
    out: dict[str, set[str]] = {}
    for jid in order:
        acc: set[str] = set()
        for x in step[jid]:
            acc.add(x)
            acc |= out[x]
        out[jid] = acc
    return out


def ancestors(instance: Instance) -> dict[str, set[str]]:
    """Every job's transitive predecessors."""
    preds = {j.id: list(dict.fromkeys(j.after)) for j in instance.jobs}
    return _reach(preds, topological_order(instance))


def descendants(instance: Instance) -> dict[str, set[str]]:
    """Every job's transitive successors."""
    return _reach(successors(instance), topological_order(instance)[::-1])


def effective_priorities(instance: Instance) -> dict[str, int]:
    """Each job's priority raised to the highest priority among its transitive successors
    (a job that must finish before an important one inherits its importance). A stopped
    job of a live state's residual counts with its own priority (`Instance.queued`): the
    one it has there only takes it out of R9, it does not make it go first."""
    succ = successors(instance)
    eff: dict[str, int] = {}
    for jid in reversed(topological_order(instance)):
        own = instance.order_priority(instance.job_by_id[jid])
        eff[jid] = max([own, *(eff[s] for s in succ[jid])])
    return {j.id: eff[j.id] for j in instance.jobs}


def cycles(edges: Mapping[K, Sequence[K]]) -> list[list[K]]:
    """Every cycle a depth-first search over `edges` (node -> the nodes it points to, roots
    in mapping order) closes, in the order found, each as the path from the node the
    closing edge points to through the node it leaves (`planner.validate.after_cycles`,
    `planner.importers.psplib`). Edges to nodes not in `edges` are ignored."""
    state: dict[K, int] = {}  # 1 on the stack, 2 done
    found: list[list[K]] = []
    for root in edges:
        if root in state:
            continue
        stack: list[tuple[K, int]] = [(root, 0)]
        trail: list[K] = [root]
        state[root] = 1
        while stack:
            node, i = stack[-1]
            if i < len(edges[node]):
                stack[-1] = (node, i + 1)
                nxt = edges[node][i]
                if state.get(nxt) == 1:
                    found.append(trail[trail.index(nxt) :])
                elif nxt not in state and nxt in edges:
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    trail.append(nxt)
            else:
                state[node] = 2
                stack.pop()
                trail.pop()
    return found
