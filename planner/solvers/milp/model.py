"""Variables and constraints of the time-indexed MILP.

A *unit* is one way to run one or more jobs together: a job solo at one of its GPU counts
(contract §12) on a node group, or an interleaving candidate group (planner.groups) on a
node group. Its binaries say where and
when it starts:

- single-node units (GPUs fit on one node): x[u, n, t] = 1 if u starts on node n at slot t;
- multi-node units (whole nodes of one group): z[u, t] for the start and y[u, n, t] for the
  nodes it takes, sum_n y[u, n, t] = k * z[u, t];
- units without GPUs (explicit jobs with gpus 0, e.g. PSPLIB activities): z[u, t] only.

Every job is covered by exactly one start. Per node and slot: GPU counts (GPUs are symmetric
inside a node, so counts suffice; concrete indices are coloured after solving), with
reservations as Hall conditions, CPU and memory; pools per slot with the reservation subset
rule. Precedence and strict priority are start/end inequalities.

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
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, NamedTuple

import pulp

from planner import precedence
from planner.durations import solo_duration
from planner.instance import ENERGY_OBJECTIVES, Instance, Job, Node, NodeGroup, Reservation
from planner.solvers.milp.grid import Grid
from planner.solvers.options import MAX_EXACT_POOL_RESERVATIONS

# Above these the grid is coarsened (solve.py): a model this size already takes CBC most
# of a 30 s budget to read and to solve its root LP.
MAX_BINARIES = 60_000
MAX_NONZEROS = 1_200_000
# Disaggregated precedence adds ~3 * slots rows per job in an arc; above this it is dropped
# for the aggregated one-row form.
MAX_CUMULATIVE_ROWS = 60_000


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


def gpu_reserved_nodes(instance: Instance) -> set[str]:
    return {n for r in instance.reservations if r.pool is None for n in r.nodes}


def symmetry_limits(instance: Instance, units: Sequence[StartUnit]) -> dict[tuple[int, str], int]:
    """(unit, node group) -> how many of the group's identical nodes the unit may use.

    Identical nodes are a group's nodes named by no GPU reservation, in instance order.
    Job i (in instance order, among jobs eligible for the group) may use the first K_i,
    K_i = sum of nodes needed by the eligible jobs 0..i; a group unit, the smallest K of its
    members (they share a node, whose first user is at most the earliest member).
    """
    order = {j.id: i for i, j in enumerate(instance.jobs)}
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
    # objective -> metric value per model unit (the energy objectives are built in watts)
    scales: dict[str, float] = field(default_factory=dict)
    # makespan as price pieces (planner.solvers.milp.energy): (on, offset, from, to)
    pieces: list[tuple[pulp.LpVariable, pulp.LpVariable, int, int]] = field(default_factory=list)
    # jobs without successors: the latest end is one of theirs (the `cmax_*` rows)
    sinks: list[str] = field(default_factory=list)
    # Cmax pinned to the latest end (planner.solvers.milp.energy): (binary, job) per sink
    last: list[tuple[pulp.LpVariable, str]] = field(default_factory=list)


def _add(
    prob: pulp.LpProblem, terms: Mapping[pulp.LpVariable, float], sense: int, rhs: float, name: str
) -> None:
    if not terms:
        return
    prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(dict(terms)), sense, name, rhs))


def _active(r: Reservation, grid: Grid, s: int) -> bool:
    return r.start < grid.time(s + 1) and r.end > grid.time(s)


class _StartVars(NamedTuple):
    starts: dict[tuple[int, int, int], pulp.LpVariable]  # (unit, node or -1, slot)
    picks: dict[tuple[int, int, int], pulp.LpVariable]  # (unit, node, slot) of node sets
    # per node index: list of (var, unit, start slot) of what runs on it
    on_node: dict[int, list[tuple[pulp.LpVariable, StartUnit, int]]]
    # per job: start var -> (start slot, exact duration)
    job_vars: dict[str, dict[pulp.LpVariable, tuple[int, int]]]
    # per unit: list of (var, slot) whose sum is "unit starts at slot" (for pools)
    unit_starts: dict[int, list[tuple[pulp.LpVariable, int]]]


def _start_variables(
    prob: pulp.LpProblem,
    instance: Instance,
    units: list[StartUnit],
    grid: Grid,
    caps: Mapping[str, int],
    earliest: Mapping[str, int] | None,
) -> _StartVars:
    """The binaries: a unit starting on a node at a slot (x), or a unit starting at a slot
    (z) with the nodes it picks (y) for multi-node units."""
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
                    terms: dict[pulp.LpVariable, float] = {z: -u.nodes_needed}
                    for n in nodes:
                        y = prob.add_variable(f"y{u.index}_{n.index}_{t}", cat=pulp.LpBinary)
                        picks[(u.index, n.index, t)] = y
                        terms[y] = 1
                        on_node[n.index].append((y, u, t))
                    _add(prob, terms, pulp.LpConstraintEQ, 0, f"k{u.index}_{t}")
        else:
            for n in unit_nodes(instance, u, limits, reserved):
                for t in rng:
                    x = prob.add_variable(f"x{u.index}_{n.index}_{t}", cat=pulp.LpBinary)
                    starts[(u.index, n.index, t)] = x
                    unit_starts[u.index].append((x, t))
                    on_node[n.index].append((x, u, t))
                    for m in u.members:
                        job_vars[m.job.id][x] = (t, m.duration)

    return _StartVars(starts, picks, on_node, job_vars, unit_starts)


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
    MAX_CUMULATIVE_ROWS rows).
    """
    prob = pulp.LpProblem("plan", pulp.LpMinimize)
    L = grid.length
    sv = _start_variables(prob, instance, units, grid, caps, earliest)
    starts, picks, on_node, job_vars, unit_starts = sv
    notes_empty: list[str] = []
    # exactly one start per job (names use job positions: ids may hold any characters)
    for i, j in enumerate(instance.jobs):
        _add(prob, {v: 1 for v in job_vars[j.id]}, pulp.LpConstraintEQ, 1, f"one_{i}")
        if not job_vars[j.id]:
            notes_empty.append(j.id)

    notes: dict[str, Any] = {}
    if notes_empty:
        notes["no_start"] = notes_empty
    _node_rows(instance, grid, prob, on_node)
    notes.update(_pool_rows(instance, grid, prob, units, unit_starts))
    cumulative: list[tuple[pulp.LpVariable, pulp.LpVariable | None, list[pulp.LpVariable]]] = []
    notes["precedence"] = _order_rows(instance, grid, prob, job_vars, precedence, cumulative)

    ends = {jid: {v: float(t * L + d) for v, (t, d) in vs.items()} for jid, vs in job_vars.items()}
    objs, cmax = _objectives(instance, prob, ends, objectives, cmax_floor)

    sizes = {
        "binaries": len(starts) + len(picks),
        "variables": prob.numVariables(),
        "rows": prob.numConstraints(),
    }
    return Built(
        prob, grid, units, starts, picks, ends, objs, cmax, cumulative, sizes, notes,
        dict(unit_starts), sinks=sink_jobs(instance, ends),
    )  # fmt: skip


def sink_jobs(instance: Instance, ends: Mapping[str, Mapping[pulp.LpVariable, float]]) -> list[str]:
    """The jobs (with start variables) no other job waits for: the latest end is theirs."""
    has_succ = {a for j in instance.jobs for a in j.after}
    return [j.id for j in instance.jobs if j.id not in has_succ and ends.get(j.id)]


def _objectives(
    instance: Instance,
    prob: pulp.LpProblem,
    ends: Mapping[str, Mapping[pulp.LpVariable, float]],
    objectives: Sequence[str],
    cmax_floor: float,
) -> tuple[dict[str, pulp.LpAffineExpression], pulp.LpVariable | None]:
    """Each objective as a linear expression over the start variables (`ends`: job ->
    start var -> end time); makespan through a Cmax variable bounded below by `cmax_floor`."""
    objs: dict[str, pulp.LpAffineExpression] = {}
    cmax = None
    if any(n in ("makespan", *ENERGY_OBJECTIVES) for n in objectives):
        # the energy objectives draw idle power up to the makespan (planner.milp.energy)
        cmax = prob.add_variable("cmax", lowBound=cmax_floor)
        for i, jid in enumerate(sink_jobs(instance, ends)):
            terms = dict(ends[jid])
            terms[cmax] = -1.0
            _add(prob, terms, pulp.LpConstraintLE, 0, f"cmax_{i}")
    for name in objectives:
        if name in ENERGY_OBJECTIVES:
            continue  # added by planner.solvers.milp.energy, which needs the whole model
        if name == "makespan":
            assert cmax is not None
            objs[name] = pulp.LpAffineExpression({cmax: 1.0})
        elif name == "total_weighted_jct":
            acc: dict[pulp.LpVariable, float] = defaultdict(float)
            for j in instance.jobs:
                for v, e in ends.get(j.id, {}).items():
                    acc[v] += j.weight * (e - j.release)
            objs[name] = pulp.LpAffineExpression({v: c for v, c in acc.items() if c})
        elif name == "total_weighted_tardiness":
            acc = defaultdict(float)
            for j in instance.jobs:
                if j.due is None:
                    continue
                for v, e in ends.get(j.id, {}).items():
                    if e > j.due:
                        acc[v] += j.weight * (e - j.due)
            objs[name] = pulp.LpAffineExpression({v: c for v, c in acc.items() if c})
        else:
            raise ValueError(f"unknown objective {name!r}")
    return objs, cmax


def _running(
    entries: Sequence[tuple[pulp.LpVariable, int, int, float]], slots: int
) -> list[dict[pulp.LpVariable, float]]:
    """Per slot, {var: coef} of entries (var, start slot, slots occupied, coef) running."""
    rows: list[dict[pulp.LpVariable, float]] = [defaultdict(float) for _ in range(slots)]
    for v, t, span, c in entries:
        for s in range(t, min(t + span, slots)):
            rows[s][v] += c
    return rows


def _node_rows(
    instance: Instance,
    grid: Grid,
    prob: pulp.LpProblem,
    on_node: Mapping[int, list[tuple[pulp.LpVariable, StartUnit, int]]],
) -> None:
    """GPU (with reservations as Hall conditions), CPU and memory capacity per node, slot."""
    res_by_node: dict[str, list[Reservation]] = defaultdict(list)
    for r in instance.reservations:
        if r.pool is None:
            for n in r.nodes:
                res_by_node[n].append(r)
    for ni, entries in on_node.items():
        node = instance.nodes[ni]
        # which entries run in each slot, for the reservation-aware rows
        at_slot: list[list[tuple[pulp.LpVariable, StartUnit]]] = [[] for _ in range(grid.slots)]
        for v, u, t in entries:
            for s in range(t, min(t + grid.span(u.hold), grid.slots)):
                at_slot[s].append((v, u))
        all_gpus = frozenset(range(node.gpus))
        for s in range(grid.slots):
            if not at_slot[s]:
                continue
            active = [r for r in res_by_node[node.name] if _active(r, grid, s)]
            blocked: dict[int, frozenset[int]] = {}
            for _v, u in at_slot[s]:
                b: set[int] = set()
                for r in active:
                    if not all(r.admits.admits(m.job) for m in u.members):
                        b |= set(r.gpus) if r.gpus is not None else all_gpus
                blocked[u.index] = frozenset(b & all_gpus)
            # Hall: every intersection F of blocked sets; units whose blocked set contains
            # F can only use the other gpus - |F| GPUs.
            family: set[frozenset[int]] = {frozenset()}
            frontier = {b for b in blocked.values() if b}
            while frontier:
                family |= frontier
                frontier = {a & b for a in family for b in blocked.values() if b} - family
            for k, fset in enumerate(sorted(family, key=lambda f: (len(f), sorted(f)))):
                terms = {
                    v: float(u.gpus_per_node) for v, u in at_slot[s] if blocked[u.index] >= fset
                }
                cap = node.gpus - len(fset)
                total = sum(terms.values())
                if total > cap:
                    _add(prob, terms, pulp.LpConstraintLE, cap, f"g{ni}_{s}_{k}")
        for attr, per in (("cpus", "cpus_per_gpu"), ("mem_gb", "mem_gb_per_gpu")):
            cap_v = getattr(node.group, attr)
            if cap_v is None:
                continue
            ent = [
                (v, t, grid.span(m.duration), u.gpus_per_node * getattr(m.job, per))
                for v, u, t in entries
                for m in u.members
                if getattr(m.job, per) > 0
            ]
            for s, terms in enumerate(_running(ent, grid.slots)):
                if sum(terms.values()) > cap_v + 1e-9:
                    _add(prob, terms, pulp.LpConstraintLE, cap_v, f"{attr[0]}{ni}_{s}")


def _pool_rows(
    instance: Instance,
    grid: Grid,
    prob: pulp.LpProblem,
    units: Sequence[StartUnit],
    unit_starts: Mapping[int, list[tuple[pulp.LpVariable, int]]],
) -> dict[str, Any]:
    """Pool capacity per slot, with the subset rule for pool reservations (README, "What we
    chose where the contract is silent")."""
    notes: dict[str, Any] = {}
    for pool_no, (pool, cap) in enumerate(instance.pools.items()):
        res = [r for r in instance.reservations if r.pool == pool]
        ent: list[tuple[pulp.LpVariable, int, int, float, Job]] = []
        for u in units:
            for m in u.members:
                d = m.job.demand.get(pool, 0.0)
                if d > 0:
                    span = grid.span(m.duration)
                    ent.extend((v, t, span, d, m.job) for v, t in unit_starts[u.index])
        if not ent:
            continue
        at_slot: list[list[tuple[pulp.LpVariable, float, Job]]] = [[] for _ in range(grid.slots)]
        for v, t, span, d, job in ent:
            for s in range(t, min(t + span, grid.slots)):
                at_slot[s].append((v, d, job))
        for s in range(grid.slots):
            if not at_slot[s]:
                continue
            active = [r for r in res if _active(r, grid, s)]
            if len(active) > MAX_EXACT_POOL_RESERVATIONS:
                # conservative: nobody admitted; may cut off schedules (noted, no "optimal")
                subsets: list[tuple[Reservation, ...]] = [tuple(active)]
                notes["pool_conservative"] = True
                admitted_rule = False
            else:
                subsets = [c for k in range(len(active) + 1) for c in combinations(active, k)]
                admitted_rule = True
            for k, sub in enumerate(subsets):
                terms: dict[pulp.LpVariable, float] = defaultdict(float)
                for v, d, job in at_slot[s]:
                    if admitted_rule and any(r.admits.admits(job) for r in sub):
                        continue
                    terms[v] += d
                rhs = cap - sum(r.amount for r in sub)
                if sum(terms.values()) > rhs + 1e-9:
                    _add(prob, terms, pulp.LpConstraintLE, rhs, f"p{pool_no}_{s}_{k}")
    return notes


def priority_pairs(instance: Instance) -> list[tuple[str, str]]:
    """R9 pairs (a, b): start(a) <= start(b), transitively reduced."""
    if instance.priority_policy != "strict":
        return []
    jobs = instance.jobs
    if len({j.priority for j in jobs}) < 2:
        return []
    succ: dict[str, set[str]] = {
        a.id: {b.id for b in jobs if a.priority > b.priority and a.release <= b.release}
        for a in jobs
    }
    out = []
    for a, bs in succ.items():
        for b in bs:
            if not any(b in succ[c] for c in bs if c != b):
                out.append((a, b))
    return out


def _order_rows(
    instance: Instance,
    grid: Grid,
    prob: pulp.LpProblem,
    job_vars: Mapping[str, Mapping[pulp.LpVariable, tuple[int, int]]],
    mode: str,
    record: list[Any],
) -> str:
    """Precedence (start_b >= end_a) and R9 priority (start_a <= start_b) rows."""
    L = grid.length
    pos = {j.id: i for i, j in enumerate(instance.jobs)}
    arcs = [(a, j.id) for j in instance.jobs for a in j.after]
    prio = priority_pairs(instance)
    if not arcs and not prio:
        return "none"
    involved = {x for arc in arcs + prio for x in arc}
    extra = 2 * grid.slots * len(involved) + grid.slots * (len(arcs) + len(prio))
    if mode == "auto":
        mode = "disaggregated" if extra <= MAX_CUMULATIVE_ROWS and grid.slots > 1 else "aggregated"
    if mode == "aggregated":
        for a, b in arcs:
            terms: dict[pulp.LpVariable, float] = defaultdict(float)
            for v, (t, _d) in job_vars[b].items():
                terms[v] += t * L
            for v, (t, d) in job_vars[a].items():
                terms[v] -= t * L + d
            _add(prob, terms, pulp.LpConstraintGE, 0, f"pre_{pos[a]}_{pos[b]}")
        for a, b in prio:
            terms = defaultdict(float)
            for v, (t, _d) in job_vars[b].items():
                terms[v] += t * L
            for v, (t, _d) in job_vars[a].items():
                terms[v] -= t * L
            _add(prob, terms, pulp.LpConstraintGE, 0, f"pri_{pos[a]}_{pos[b]}")
        return mode
    # Cumulative variables: S[j][t] = started by slot t, E[j][t] = ended by time t*L.
    T = grid.slots
    S: dict[str, list[pulp.LpAffineExpression | pulp.LpVariable]] = {}
    E: dict[str, list[pulp.LpAffineExpression | pulp.LpVariable]] = {}
    for jid in sorted(involved):
        by_start: list[list[pulp.LpVariable]] = [[] for _ in range(T + 1)]
        by_end: list[list[pulp.LpVariable]] = [[] for _ in range(T + 1)]
        for v, (t, d) in job_vars[jid].items():
            by_start[t].append(v)
            by_end[min(T, t + grid.span(d))].append(v)
        S[jid] = _cumulate(prob, f"S{pos[jid]}", by_start, record)
        E[jid] = _cumulate(prob, f"E{pos[jid]}", by_end, record)
    for a, b in arcs:
        for t in range(T + 1):
            _le(prob, S[b][t], E[a][t], f"pre_{pos[a]}_{pos[b]}_{t}")
    for a, b in prio:
        for t in range(T + 1):
            _le(prob, S[b][t], S[a][t], f"pri_{pos[a]}_{pos[b]}_{t}")
    return mode


def _cumulate(
    prob: pulp.LpProblem, name: str, per_slot: list[list[pulp.LpVariable]], record: list[Any]
) -> list[pulp.LpAffineExpression | pulp.LpVariable]:
    """C[t] = sum of per_slot[0..t] as continuous variables with C[t] = C[t-1] + sum."""
    out: list[pulp.LpAffineExpression | pulp.LpVariable] = []
    prev: pulp.LpVariable | None = None
    for t, vs in enumerate(per_slot):
        if prev is None and not vs:
            out.append(pulp.LpAffineExpression())
            continue
        if prev is not None and not vs:
            out.append(prev)
            continue
        c = prob.add_variable(f"{name}_{t}", lowBound=0, upBound=1)
        terms: dict[pulp.LpVariable, float] = {v: -1.0 for v in vs}
        terms[c] = 1.0
        if prev is not None:
            terms[prev] = -1.0
        _add(prob, terms, pulp.LpConstraintEQ, 0, f"c{name}_{t}")
        record.append((c, prev, vs))
        out.append(c)
        prev = c
    return out


def _le(prob: pulp.LpProblem, lhs: Any, rhs: Any, name: str) -> None:
    terms: dict[pulp.LpVariable, float] = defaultdict(float)
    for v, c in pulp.LpAffineExpression(lhs).items():
        terms[v] += c
    for v, c in pulp.LpAffineExpression(rhs).items():
        terms[v] -= c
    if not terms or lhs is rhs:
        return
    if not pulp.LpAffineExpression(lhs):
        return  # 0 <= something non-negative
    _add(prob, terms, pulp.LpConstraintLE, 0, name)
