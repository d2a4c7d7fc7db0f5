"""Variables of the time-indexed MILP (the data -> variables step of `model.build`).

A *unit* is one way to run one or more jobs together: a job solo at one of its GPU counts
(contract §12) on a node group, or an interleaving candidate group (planner.groups) on a
node group. Its binaries say where and when it starts:

- single-node units (GPUs fit on one node): x[u, n, t] = 1 if u starts on node n at slot t;
- multi-node units (whole nodes of one group): z[u, t] for the start and y[u, n, t] for the
  nodes it takes (`constraints.add_node_count`: sum_n y[u, n, t] = k * z[u, t]);
- units without GPUs (explicit jobs with gpus 0, e.g. PSPLIB activities): z[u, t] only.

Identical nodes (same group, named by no GPU reservation) are interchangeable; instead of
aggregating them (which would lose the per-node GPU fit of single-node jobs), we break the
symmetry: the i-th job eligible for the group may only use the first K_i of them, where
K_i sums the nodes needed by jobs 0..i. Relabelling the nodes of any schedule by the first
job that uses them gives a schedule of that form, so no optimum is lost; it removes
(count! / ...) equivalent copies and, for early jobs, most of their variables.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pulp

from planner import precedence
from planner.durations import solo_duration
from planner.instance import Instance, Job, Node, NodeGroup
from planner.solvers.milp.grid import Grid
from planner.solvers.symmetry import gpu_reserved_nodes, job_positions

# Above these the grid is coarsened (solve.py): a model this size already takes CBC most
# of a 30 s budget to read and to solve its root LP.
MAX_BINARIES = 60_000
# (Set beside MAX_BINARIES, not measured on its own.)
MAX_NONZEROS = 1_200_000


@dataclass(frozen=True)
class Member:
    job: Job
    duration: int  # exact end - start in time units on the unit's node group


@dataclass(frozen=True)
class StartUnit:
    index: int
    members: tuple[Member, ...]
    node_group: NodeGroup | None  # None: no placement
    nodes_needed: int  # 0 no placement, 1 one node, k whole nodes
    gpus_per_node: int
    group: bool  # an interleaving candidate group

    @property
    def hold(self) -> int:
        """How long the unit holds its GPUs: until its last member ends."""
        return max(m.duration for m in self.members)

    @property
    def job_ids(self) -> tuple[str, ...]:
        return tuple(m.job.id for m in self.members)

    @property
    def gpus(self) -> int:
        """GPUs the unit holds: the count its jobs run at."""
        return self.nodes_needed * self.gpus_per_node if self.node_group is not None else 0


def build_units(instance: Instance, candidates: Iterable[Any]) -> list[StartUnit]:
    """Solo options of every job (one per allowed GPU count and eligible node group; one
    start is chosen among them all, so exactly one count), then the candidate groups
    (planner.groups), which run their members at their listed count `Job.gpus`."""
    units: list[StartUnit] = []
    for j in instance.jobs:
        if j.gpus == 0:
            member = Member(j, solo_duration(instance, j))
            units.append(StartUnit(len(units), (member,), None, 0, 0, False))
            continue
        for jc in (j.at_count(c) for c in j.gpu_counts):  # a unit per count (contract §12)
            for ng in instance.eligible_groups(jc):
                k = jc.gpus // ng.gpus if jc.gpus > ng.gpus else 1
                member = Member(jc, solo_duration(instance, jc, ng.speed))
                units.append(StartUnit(len(units), (member,), ng, k, min(jc.gpus, ng.gpus), False))
    ancestors = precedence.ancestors(instance)
    for cg in candidates:
        ng = instance.group_by_name[cg.node_group]
        jobs = [instance.job_by_id[i] for i in cg.jobs]
        ids = set(cg.jobs)
        if any(ancestors[i] & ids for i in ids):
            continue  # a member must follow another: they cannot start together
        k = cg.gpus // ng.gpus if cg.gpus > ng.gpus else 1
        members = tuple(Member(j, d) for j, d in zip(jobs, cg.durations, strict=True))
        units.append(StartUnit(len(units), members, ng, k, min(cg.gpus, ng.gpus), True))
    return units


def symmetry_limits(instance: Instance, units: Sequence[StartUnit]) -> dict[tuple[int, str], int]:
    """(unit, node group) -> how many of the group's identical nodes the unit may use.

    Identical nodes are a group's nodes named by no GPU reservation, in instance order.
    Job i (in instance order, among jobs eligible for the group) may use the first K_i,
    K_i = sum of nodes needed by the eligible jobs 0..i; a group unit, the smallest K of its
    members (they share a node, whose first user is at most the earliest member).
    """
    order = job_positions(instance)
    need: dict[tuple[str, str], int] = {}
    for u in units:
        if u.node_group is None:
            continue
        for m in u.members:
            key = (u.node_group.name, m.job.id)
            need[key] = max(need.get(key, 0), u.nodes_needed)
    prefix: dict[tuple[str, str], int] = {}
    for ng in instance.node_groups:
        total = 0
        for j in sorted((jid for (g, jid) in need if g == ng.name), key=order.__getitem__):
            total += need[(ng.name, j)]
            prefix[(ng.name, j)] = total
    out: dict[tuple[int, str], int] = {}
    for u in units:
        if u.node_group is not None:
            out[(u.index, u.node_group.name)] = min(
                prefix[(u.node_group.name, m.job.id)] for m in u.members
            )
    return out


def unit_nodes(
    instance: Instance, u: StartUnit, limits: Mapping[tuple[int, str], int], reserved: set[str]
) -> list[Node]:
    """Nodes the unit may use after symmetry breaking among identical nodes."""
    assert u.node_group is not None
    nodes = instance.nodes_of(u.node_group)
    ident = [n for n in nodes if n.name not in reserved]
    allowed = {n.name for n in ident[: limits[(u.index, u.node_group.name)]]}
    return [n for n in nodes if n.name in reserved or n.name in allowed]


def start_range(
    u: StartUnit,
    grid: Grid,
    instance: Instance,
    caps: Mapping[str, int],
    earliest: Mapping[str, int] | None = None,
) -> range:
    """Start slots of unit u: after every member's earliest start (release, or the
    precedence bound in `earliest`), within the grid, and every member ends by its
    deadline, the instance horizon and its objective cap (exact times)."""
    early = earliest or {}
    lo = max(grid.first(max(m.job.release, early.get(m.job.id, 0))) for m in u.members)
    hi = grid.slots - grid.span(u.hold)  # last start slot keeping the unit on the grid
    for m in u.members:
        limit = (
            min(v for v in (m.job.deadline, instance.horizon, caps.get(m.job.id)) if v is not None)
            if any(v is not None for v in (m.job.deadline, instance.horizon, caps.get(m.job.id)))
            else None
        )
        if limit is not None:
            hi = min(hi, (limit - m.duration) // grid.length)
    return range(lo, hi + 1)


def size_estimate(
    instance: Instance,
    units: Sequence[StartUnit],
    grid: Grid,
    caps: Mapping[str, int],
    earliest: Mapping[str, int] | None = None,
) -> tuple[int, int]:
    """(binaries, nonzeros) the model would have on this grid (capacity rows dominate)."""
    limits = symmetry_limits(instance, units)
    reserved = gpu_reserved_nodes(instance)
    binaries = 0
    nonzeros = 0
    for u in units:
        starts = len(start_range(u, grid, instance, caps, earliest))
        if starts <= 0:
            continue
        width = 1 if u.node_group is None else len(unit_nodes(instance, u, limits, reserved))
        per = starts * width * (1 + (u.nodes_needed > 1))
        binaries += per
        # each variable sits in its hold slots' GPU rows plus members' CPU/mem/pool rows
        touches = grid.span(u.hold) + sum(grid.span(m.duration) for m in u.members)
        nonzeros += per * (2 + touches)
    return binaries, nonzeros


class StartVars(NamedTuple):
    starts: dict[tuple[int, int, int], pulp.LpVariable]  # (unit, node or -1, slot)
    picks: dict[tuple[int, int, int], pulp.LpVariable]  # (unit, node, slot) of node sets
    # per node index: list of (var, unit, start slot) of what runs on it
    on_node: dict[int, list[tuple[pulp.LpVariable, StartUnit, int]]]
    # per job: start var -> (start slot, exact duration)
    job_vars: dict[str, dict[pulp.LpVariable, tuple[int, int]]]
    # per unit: list of (var, slot) whose sum is "unit starts at slot" (for pools)
    unit_starts: dict[int, list[tuple[pulp.LpVariable, int]]]
    # multi-node starts: (unit, slot, z, the y of each node it may take)
    node_sets: list[tuple[StartUnit, int, pulp.LpVariable, list[pulp.LpVariable]]]


def add_start_variables(
    prob: pulp.LpProblem,
    instance: Instance,
    units: list[StartUnit],
    grid: Grid,
    caps: Mapping[str, int],
    earliest: Mapping[str, int] | None,
) -> StartVars:
    """The binaries: a unit starting on a node at a slot (x), or a unit starting at a slot
    (z) with the nodes it picks (y) for multi-node units (their count row is
    `constraints.add_node_count`'s)."""
    limits = symmetry_limits(instance, units)
    reserved = gpu_reserved_nodes(instance)
    starts: dict[tuple[int, int, int], pulp.LpVariable] = {}
    picks: dict[tuple[int, int, int], pulp.LpVariable] = {}
    # per node index: list of (var, unit, start slot) of what runs on it
    on_node: dict[int, list[tuple[pulp.LpVariable, StartUnit, int]]] = defaultdict(list)
    # per job: start var -> (start slot, exact duration)
    job_vars: dict[str, dict[pulp.LpVariable, tuple[int, int]]] = defaultdict(dict)
    # per unit: list of (var, slot) whose sum is "unit starts at slot" (for pools)
    unit_starts: dict[int, list[tuple[pulp.LpVariable, int]]] = defaultdict(list)
    node_sets: list[tuple[StartUnit, int, pulp.LpVariable, list[pulp.LpVariable]]] = []

    for u in units:
        rng = start_range(u, grid, instance, caps, earliest)
        if len(rng) == 0:
            continue
        if u.node_group is None or u.nodes_needed > 1:
            nodes = [] if u.node_group is None else unit_nodes(instance, u, limits, reserved)
            if u.node_group is not None and len(nodes) < u.nodes_needed:
                continue
            for t in rng:
                z = prob.add_variable(f"z{u.index}_{t}", cat=pulp.LpBinary)
                starts[(u.index, -1, t)] = z
                unit_starts[u.index].append((z, t))
                for m in u.members:
                    job_vars[m.job.id][z] = (t, m.duration)
                if nodes:
                    ys: list[pulp.LpVariable] = []
                    for n in nodes:
                        y = prob.add_variable(f"y{u.index}_{n.index}_{t}", cat=pulp.LpBinary)
                        picks[(u.index, n.index, t)] = y
                        ys.append(y)
                        on_node[n.index].append((y, u, t))
                    node_sets.append((u, t, z, ys))
        else:
            for n in unit_nodes(instance, u, limits, reserved):
                for t in rng:
                    x = prob.add_variable(f"x{u.index}_{n.index}_{t}", cat=pulp.LpBinary)
                    starts[(u.index, n.index, t)] = x
                    unit_starts[u.index].append((x, t))
                    on_node[n.index].append((x, u, t))
                    for m in u.members:
                        job_vars[m.job.id][x] = (t, m.duration)

    return StartVars(starts, picks, on_node, job_vars, unit_starts, node_sets)
