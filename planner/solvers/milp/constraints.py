"""Constraints of the time-indexed MILP, one function per family, over the start
variables of `variables.py`.

Every job is covered by exactly one start. Per node and slot: GPU counts (GPUs are symmetric
inside a node, so counts suffice; concrete indices are coloured after solving), with
reservations as Hall conditions, CPU and memory; pools per slot with the reservation subset
rule. Precedence and strict priority are start/end inequalities, in one function as they
share one choice of form and its cumulative variables. Symmetry between identical nodes is
broken in the variables themselves (`variables.symmetry_limits`). CP-SAT's model
(`planner/solvers/cpsat/constraints.py`) has the same families; its GPU and CPU/memory
capacities are two functions there, one here (one row set per node and slot).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import pulp

from planner.instance import Instance, Job, Reservation, over
from planner.solvers.milp.grid import Grid
from planner.solvers.milp.variables import StartUnit
from planner.solvers.options import MAX_EXACT_POOL_RESERVATIONS

# Disaggregated precedence adds ~3 * slots rows per job in an arc; above this it is dropped
# for the aggregated one-row form.
MAX_CUMULATIVE_ROWS = 60_000


def add_row(
    prob: pulp.LpProblem, terms: Mapping[pulp.LpVariable, float], sense: int, rhs: float, name: str
) -> None:
    if not terms:
        return
    prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(dict(terms)), sense, name, rhs))


def add_capacity_row(
    prob: pulp.LpProblem, terms: Mapping[pulp.LpVariable, float], cap: float, name: str
) -> None:
    """`sum(terms) <= cap` when the terms can pass the capacity by more than float rounding
    (`instance.over`, the verifier's test). A row whose largest value is under a thousandth
    is divided by it: coefficients of 1e-10 were below CBC's and HiGHS's tolerances, so a
    pool of 1e-10 held three jobs of 6e-11 (R8; tests/test_conformance.py), and an
    absolute 1e-9 had left that row out."""
    if not over(sum(terms.values()), cap):
        return
    top = max([abs(cap), *(abs(v) for v in terms.values())])
    if 0 < top < 1e-3:
        terms, cap = {v: c / top for v, c in terms.items()}, cap / top
    add_row(prob, terms, pulp.LpConstraintLE, cap, name)


def _active(r: Reservation, grid: Grid, s: int) -> bool:
    return r.start < grid.time(s + 1) and r.end > grid.time(s)


def _running(
    entries: Sequence[tuple[pulp.LpVariable, int, int, float]], slots: int
) -> list[dict[pulp.LpVariable, float]]:
    """Per slot, {var: coef} of entries (var, start slot, slots occupied, coef) running."""
    rows: list[dict[pulp.LpVariable, float]] = [defaultdict(float) for _ in range(slots)]
    for v, t, span, c in entries:
        for s in range(t, min(t + span, slots)):
            rows[s][v] += c
    return rows


def add_node_count(
    prob: pulp.LpProblem,
    node_sets: Sequence[tuple[StartUnit, int, pulp.LpVariable, list[pulp.LpVariable]]],
) -> None:
    """A multi-node unit started at a slot takes exactly its k nodes: sum_n y = k * z."""
    for u, t, z, ys in node_sets:
        terms: dict[pulp.LpVariable, float] = {z: -u.nodes_needed}
        for y in ys:
            terms[y] = 1
        add_row(prob, terms, pulp.LpConstraintEQ, 0, f"k{u.index}_{t}")


def add_one_start(
    prob: pulp.LpProblem,
    instance: Instance,
    job_vars: Mapping[str, Mapping[pulp.LpVariable, tuple[int, int]]],
) -> list[str]:
    """Exactly one start per job (rows named by job positions: ids may hold any
    characters); returns the jobs that have no start variable at all."""
    empty: list[str] = []
    for i, j in enumerate(instance.jobs):
        add_row(prob, {v: 1 for v in job_vars[j.id]}, pulp.LpConstraintEQ, 1, f"one_{i}")
        if not job_vars[j.id]:
            empty.append(j.id)
    return empty


def add_gpu_and_node_capacity(
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
                    add_row(prob, terms, pulp.LpConstraintLE, cap, f"g{ni}_{s}_{k}")
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
                add_capacity_row(prob, terms, cap_v, f"{attr[0]}{ni}_{s}")


def add_pool_capacity(
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
                add_capacity_row(prob, terms, rhs, f"p{pool_no}_{s}_{k}")
    return notes


def priority_pairs(instance: Instance) -> list[tuple[str, str]]:
    """R9 pairs (a, b): start(a) <= start(b), transitively reduced."""
    if instance.priority_policy != "strict":
        return []
    jobs = instance.jobs
    if len({j.priority for j in jobs}) < 2:
        return []
    came = {j.id: instance.arrival(j) for j in jobs}  # the releases R9 compares
    succ: dict[str, set[str]] = {
        a.id: {b.id for b in jobs if a.priority > b.priority and came[a.id] <= came[b.id]}
        for a in jobs
    }
    out = []
    for a, bs in succ.items():
        for b in bs:
            if not any(b in succ[c] for c in bs if c != b):
                out.append((a, b))
    return out


def add_precedence_and_priority(
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
            add_row(prob, terms, pulp.LpConstraintGE, 0, f"pre_{pos[a]}_{pos[b]}")
        for a, b in prio:
            terms = defaultdict(float)
            for v, (t, _d) in job_vars[b].items():
                terms[v] += t * L
            for v, (t, _d) in job_vars[a].items():
                terms[v] -= t * L
            add_row(prob, terms, pulp.LpConstraintGE, 0, f"pri_{pos[a]}_{pos[b]}")
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
        add_row(prob, terms, pulp.LpConstraintEQ, 0, f"c{name}_{t}")
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
    add_row(prob, terms, pulp.LpConstraintLE, 0, name)
