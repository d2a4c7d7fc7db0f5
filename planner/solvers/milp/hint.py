"""The start schedule as the MILP's warm start (as `cpsat/hint.py` is CP-SAT's): moved
onto the grid (`grid_starts`), its nodes relabelled for the model's symmetry breaking
(`planner.solvers.symmetry`), every variable given its value (`set_warm`, "used" or why
not)."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict

import planner.solvers.milp.model as milp_model
import planner.solvers.milp.variables as milp_vars
from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers.milp.energy import complete_pieces
from planner.solvers.symmetry import relabel_for_symmetry


def grid_starts(greedy: Schedule, length: int) -> dict[str, tuple[int, int]]:
    """Greedy's schedule moved onto the grid: job -> (start slot, exact duration).

    s' = ceil_L(sigma), sigma_j = max(s_j, e_i + D_i + a_i for jobs i ending by s_j, sigma
    of jobs starting no later): see horizon.rounding_allowance for why this keeps
    capacity, precedence and priority (not reservation windows or deadlines: the solver
    then rejects the start, which costs nothing). With slot length 1 it is the identity.
    """
    jobs = sorted(greedy.jobs, key=lambda a: (a.start, a.id))
    out: dict[str, tuple[int, int]] = {}
    # Jobs already placed, by end: those ending by the next start leave the heap into
    # `ended_need`, which only grows as starts do. One pass, not a pass over every earlier
    # job per start (3,000 jobs: 12 s of the MILP's time limit spent here before).
    placed: list[tuple[int, str, float]] = []
    ended_need = 0.0
    run_max = 0.0
    i = 0
    while i < len(jobs):
        k = i
        while k < len(jobs) and jobs[k].start == jobs[i].start:
            k += 1
        s = jobs[i].start
        while placed and placed[0][0] <= s:
            ended_need = max(ended_need, heapq.heappop(placed)[2])
        need = max(float(s), ended_need, run_max)
        slot = math.ceil(need / length - 1e-9)
        for a in jobs[i:k]:
            d = a.end - a.start
            out[a.id] = (slot, d)
            allowance = (length - 1) + (-(-d // length) * length - d)
            heapq.heappush(placed, (a.end, a.id, a.end + (need - a.start) + allowance))
        run_max = need
        i = k
    return out


def set_warm(
    instance: Instance,
    built: milp_model.Built,
    greedy: Schedule,
    slots: dict[str, tuple[int, int]] | None,
) -> str:
    """Give every variable its value in greedy's (grid-shifted) schedule; "used" or why not."""
    if slots is None:
        return "off"
    node_map = relabel_for_symmetry(instance, greedy)
    group_of = {a.id: a.group for a in greedy.jobs}
    members: dict[str, tuple[str, ...]] = defaultdict(tuple)
    for g in greedy.groups:
        members[g.id] = tuple(sorted(g.jobs))
    by_key: dict[tuple[tuple[str, ...], str | None, bool, int], milp_vars.StartUnit] = {}
    for u in built.units:
        ng = u.node_group.name if u.node_group else None
        by_key[(tuple(sorted(u.job_ids)), ng, u.group, u.gpus)] = u
    for v in built.prob.variables():
        v.varValue = 0.0
    done: set[str] = set()
    for a in greedy.jobs:
        if a.id in done:
            continue
        gid = group_of[a.id]
        ids = members[gid] if gid is not None else (a.id,)
        nodes = [node_map.get(p.node, p.node) for p in a.placement]
        ng = instance.node_by_name[nodes[0]].group.name if nodes else None
        count = sum(len(set(p.gpus)) for p in a.placement)
        found = by_key.get((ids, ng, gid is not None, count))
        if found is None:
            return f"greedy uses a group or placement the model lacks ({a.id})"
        u = found
        t = slots[a.id][0]
        if u.node_group is None or u.nodes_needed > 1:
            z = built.starts.get((u.index, -1, t))
            if z is None:
                return f"greedy start of {a.id} is outside the model's start range"
            z.varValue = 1.0
            for n in nodes:
                y = built.picks.get((u.index, instance.node_by_name[n].index, t))
                if y is None:
                    return f"greedy node of {a.id} excluded by symmetry breaking"
                y.varValue = 1.0
        else:
            x = built.starts.get((u.index, instance.node_by_name[nodes[0]].index, t))
            if x is None:
                return f"greedy start of {a.id} is outside the model's start range"
            x.varValue = 1.0
        done.update(ids)
    complete(built)
    return "used"


def complete(built: milp_model.Built) -> None:
    """Values of the continuous variables implied by the binaries."""
    for c, prev, vs in built.cumulative:
        before = prev.varValue if prev is not None else 0.0
        c.varValue = before + sum(v.varValue or 0.0 for v in vs)
    if built.cmax is not None:
        built.cmax.varValue = max(
            (e for ends in built.ends.values() for v, e in ends.items() if (v.varValue or 0) > 0.5),
            default=0.0,
        )
    complete_pieces(built)
