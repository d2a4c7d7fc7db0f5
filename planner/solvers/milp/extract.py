"""From the MILP's solution to a Schedule (as `cpsat/extract.py` is CP-SAT's): the chosen
start units, their nodes, and GPU indices by colouring (`gpus.colour`); None when the
colouring fails."""

from __future__ import annotations

from collections import defaultdict

import planner.solvers.milp.model as milp_model
import planner.solvers.milp.variables as milp_vars
from planner.instance import Instance
from planner.schedule import Assignment, Group, Placement, Schedule
from planner.solvers.milp.gpus import NodeHold, colour


def extract(instance: Instance, built: milp_model.Built) -> Schedule | None:
    L = built.grid.length
    units = {u.index: u for u in built.units}
    picked: dict[tuple[int, int], list[int]] = defaultdict(list)
    for (ui, ni, t), y in built.picks.items():
        if (y.varValue or 0) > 0.5:
            picked[(ui, t)].append(ni)
    holders: list[NodeHold] = []
    chosen: list[tuple[int, milp_vars.StartUnit, int, list[str]]] = []
    for (ui, ni, t), v in built.starts.items():
        if (v.varValue or 0) <= 0.5:
            continue
        u = units[ui]
        nodes = (
            [instance.nodes[ni].name]
            if ni >= 0
            else [instance.nodes[n].name for n in sorted(picked[(ui, t)])]
        )
        key = len(chosen)
        chosen.append((key, u, t, nodes))
        for n in nodes:
            holders.append(
                NodeHold(
                    key, n, t * L, t * L + u.hold, u.gpus_per_node, tuple(m.job for m in u.members)
                )
            )
    gpus = colour(instance, holders)
    if gpus is None:
        return None
    jobs: list[Assignment] = []
    groups: list[Group] = []
    for key, u, t, nodes in chosen:
        gid = None
        if u.group:
            gid = f"g{len(groups) + 1}"
            groups.append(Group(gid, u.job_ids))
        placement = tuple(Placement(n, gpus[(key, n)]) for n in nodes)
        for m in u.members:
            count = u.gpus if m.job.elastic else None  # contract §12: the chosen count
            jobs.append(Assignment(m.job.id, t * L, t * L + m.duration, placement, gid, gpus=count))
    order = {j.id: i for i, j in enumerate(instance.jobs)}
    jobs.sort(key=lambda a: order[a.id])
    return Schedule(
        instance=instance.name,
        solver="milp",
        status="feasible",
        jobs=tuple(jobs),
        groups=tuple(groups),
    )
