"""The time-indexed MILP, built in the order data -> variables (`variables.py`) ->
constraints (`constraints.py`) -> objectives (`objective.py`; the energy objectives are
`energy.py`'s, which needs the whole model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulp

import planner.solvers.milp.constraints as constraints
from planner.instance import Instance
from planner.solvers.milp.grid import Grid
from planner.solvers.milp.objective import WEIGHTED, add_objectives, sink_jobs, weight_scale
from planner.solvers.milp.variables import StartUnit, add_start_variables


@dataclass
class Built:
    prob: pulp.LpProblem
    grid: Grid
    units: list[StartUnit]
    # start variables: (unit, node index or -1, slot) -> var; node -1 for z variables
    starts: dict[tuple[int, int, int], pulp.LpVariable]
    # multi-node node choice: (unit, node index, slot) -> var
    picks: dict[tuple[int, int, int], pulp.LpVariable]
    ends: dict[str, dict[pulp.LpVariable, float]]  # job -> {start var: end time}
    objectives: dict[str, pulp.LpAffineExpression]
    cmax: pulp.LpVariable | None
    # cumulative variables in creation order: (var, previous one, start vars added)
    cumulative: list[tuple[pulp.LpVariable, pulp.LpVariable | None, list[pulp.LpVariable]]]
    sizes: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    # per unit: (start var, slot) of every start of that unit
    unit_starts: dict[int, list[tuple[pulp.LpVariable, int]]] = field(default_factory=dict)
    # objective -> metric value per model unit (the energy objectives are built in watts,
    # the weighted ones at `objective.weight_scale` times the metric)
    scales: dict[str, float] = field(default_factory=dict)
    # makespan as price pieces (planner.solvers.milp.energy): (on, offset, from, to)
    pieces: list[tuple[pulp.LpVariable, pulp.LpVariable, int, int]] = field(default_factory=list)
    # jobs without successors: the latest end is one of theirs (the `cmax_*` rows)
    sinks: list[str] = field(default_factory=list)
    # Cmax pinned to the latest end (planner.solvers.milp.energy): (binary, job) per sink
    last: list[tuple[pulp.LpVariable, str]] = field(default_factory=list)


def build(
    instance: Instance,
    units: list[StartUnit],
    grid: Grid,
    objectives: Sequence[str],
    caps: Mapping[str, int],
    precedence: str = "auto",
    earliest: Mapping[str, int] | None = None,
    cmax_floor: float = 0.0,
) -> Built:
    """The MILP on `grid`. `caps`: job -> latest allowed end (valid objective cuts);
    `earliest`: job -> earliest start; `cmax_floor`: a valid makespan lower bound, given to
    Cmax as its lower bound (the time-indexed LP alone often stays below the energy bound).

    precedence: "aggregated" (one row per arc: start_b >= end_a), "disaggregated"
    (per slot: started_b(t) <= finished_a(t), via cumulative variables; a much tighter LP
    whose rows grow with slots) or "auto" (disaggregated while it adds at most
    `constraints.MAX_CUMULATIVE_ROWS` rows).
    """
    prob = pulp.LpProblem("plan", pulp.LpMinimize)
    L = grid.length
    sv = add_start_variables(prob, instance, units, grid, caps, earliest)
    starts, picks, on_node, job_vars, unit_starts, _ = sv
    constraints.add_node_count(prob, sv.node_sets)
    notes_empty = constraints.add_one_start(prob, instance, job_vars)

    notes: dict[str, Any] = {}
    if notes_empty:
        notes["no_start"] = notes_empty
    constraints.add_gpu_and_node_capacity(instance, grid, prob, on_node)
    notes.update(constraints.add_pool_capacity(instance, grid, prob, units, unit_starts))
    cumulative: list[tuple[pulp.LpVariable, pulp.LpVariable | None, list[pulp.LpVariable]]] = []
    notes["precedence"] = constraints.add_precedence_and_priority(
        instance, grid, prob, job_vars, precedence, cumulative
    )

    ends = {jid: {v: float(t * L + d) for v, (t, d) in vs.items()} for jid, vs in job_vars.items()}
    sinks = sink_jobs(instance, ends)
    k = weight_scale(instance)
    objs, cmax = add_objectives(instance, prob, ends, sinks, objectives, cmax_floor, k)
    scales = {n: 1.0 / k for n in objs if n in WEIGHTED}

    sizes = {
        "binaries": len(starts) + len(picks),
        "variables": prob.numVariables(),
        "rows": prob.numConstraints(),
    }
    return Built(
        prob, grid, units, starts, picks, ends, objs, cmax, cumulative, sizes, notes,
        dict(unit_starts), sinks=sinks, scales=scales,
    )  # fmt: skip
