"""Node symmetry, shared by the exact back ends: which nodes are interchangeable, and a
start schedule's nodes renamed so that it obeys the symmetry breaking both models add
(`cpsat.constraints.add_symmetry_breaking`, `milp.variables.symmetry_limits`: the job at
instance position i may use only the first K_i interchangeable nodes of a group)."""

from __future__ import annotations

from planner.instance import Instance, Node
from planner.schedule import Schedule


def gpu_reserved_nodes(instance: Instance) -> set[str]:
    """The nodes a GPU reservation names: never interchangeable with their group's others."""
    return {n for r in instance.reservations if r.pool is None for n in r.nodes}


def interchangeable_nodes(instance: Instance) -> list[list[Node]]:
    """Per node group, its nodes named by no GPU reservation, in instance order; groups
    with fewer than two such nodes are left out (nothing to break)."""
    reserved = gpu_reserved_nodes(instance)
    out = []
    for ng in instance.node_groups:
        free = [n for n in instance.nodes_of(ng) if n.name not in reserved]
        if len(free) > 1:
            out.append(free)
    return out


def job_positions(instance: Instance) -> dict[str, int]:
    """Each job's position in the instance: the order the symmetry breaking ranks by."""
    return {j.id: i for i, j in enumerate(instance.jobs)}


def relabel_for_symmetry(instance: Instance, schedule: Schedule) -> dict[str, str]:
    """Old node name -> new: within each class of interchangeable nodes, the nodes sorted
    by the smallest instance position of the jobs they run (unused ones last, ties by
    position) take the class's names in order. Nodes left out keep their names."""
    position = job_positions(instance)
    first: dict[str, int] = {}
    for a in schedule.jobs:
        for p in (p for piece in a.pieces() for p in piece.placement):
            first[p.node] = min(first.get(p.node, len(position)), position[a.id])
    out: dict[str, str] = {}
    for cls in interchangeable_nodes(instance):
        names = [n.name for n in cls]
        order = sorted(range(len(names)), key=lambda i: (first.get(names[i], len(position)), i))
        out.update({names[old]: names[new] for new, old in enumerate(order)})
    return out
