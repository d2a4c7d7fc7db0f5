"""CP-SAT constraints for rules R1-R10 (contract §5), one function per family, over the
variables of `variables.py`.

GPUs per node are modelled per *GPU class*: the GPUs of a node covered by the same set of
GPU reservations. Within a class the GPUs are interchangeable for the whole horizon, so a
cumulative per class with the number of class GPUs each use takes is exact, and GPU
indices can always be assigned afterwards by sweeping over time (see `extract.assign_gpus`). A use
that takes part of a node on a node with several classes gets one integer per class
(summing to its GPU count). A reservation that admits nobody is a fixed interval holding
its whole class; one that admits some jobs gets, per class, a cumulative of capacity
|class| holding the reservation and the uses of jobs it does not admit, so those cannot
take that class's GPUs while it is active (admitted jobs can).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations

from ortools.sat.python import cp_model

from planner.instance import Instance, Job, Reservation, over
from planner.precedence import descendants
from planner.solvers.cpsat.variables import CpsatModel, JobVars, Use, capacity_scale
from planner.solvers.options import MAX_EXACT_POOL_RESERVATIONS
from planner.solvers.symmetry import interchangeable_nodes, job_positions


def add_one_option(cm: CpsatModel) -> None:
    """Every job with GPUs runs in exactly one of its options, at that option's duration."""
    for jv in cm.jobs.values():
        if jv.job.gpus == 0:
            continue
        cm.model.add_exactly_one([o.lit for o in jv.options])
        cm.model.add(jv.size == sum(o.duration * o.lit for o in jv.options))


def gpu_sets(instance: Instance, r: Reservation) -> dict[str, tuple[int, ...]]:
    """Node name -> reserved GPU indices of a GPU reservation."""
    out = {}
    for name in r.nodes:
        node = instance.node_by_name[name]
        idx = r.gpus if r.gpus is not None else tuple(range(node.gpus))
        out[name] = tuple(sorted(i for i in set(idx) if 0 <= i < node.gpus))
    return out


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of half-open time spans as disjoint sorted spans (empty ones dropped)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(x for x in spans if x[1] > x[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def add_symmetry_breaking(cm: CpsatModel) -> None:
    """Relabel interchangeable nodes by the smallest rank (instance order) of the jobs
    they run, ties by position. The node at position p then has p nodes before it whose
    smallest ranks are <= its own, and jobs of rank <= r occupy at most
    K(r) = sum of their node counts nodes, so a job of rank r only uses positions
    < K(r) (K counts 1 per single-node job, k for a k-node job or group)."""
    rank = job_positions(cm.instance)
    for cls in interchangeable_nodes(cm.instance):
        names = [n.name for n in cls]
        width: dict[str, int] = {}
        for jid, jv in cm.jobs.items():
            for o in jv.options:
                k = sum(1 for n in names if n in o.nodes)
                if k:
                    need = max(1, o.gpus // o.node_group.gpus)
                    width[jid] = max(width.get(jid, 1), need)
        users = sorted(width, key=lambda j: rank[j])
        limit, total = {}, 0
        for jid in users:
            total += width[jid]
            limit[jid] = total  # positions < limit are allowed
        for jid in users:
            for o in cm.jobs[jid].options:
                members = cm.groups[o.group].cand.jobs if o.group is not None else (jid,)
                lim = min(limit.get(j, len(names)) for j in members)
                for p, name in enumerate(names):
                    if p >= lim and name in o.nodes:
                        cm.model.add(o.nodes[name] == 0)


def add_gpu_capacity(cm: CpsatModel) -> None:
    m, inst = cm.model, cm.instance
    by_node: dict[str, list[Use]] = defaultdict(list)
    for u in cm.uses:
        if u.gpus:
            by_node[u.node.name].append(u)
    res_on: dict[str, list[tuple[Reservation, tuple[int, ...]]]] = defaultdict(list)
    for r in inst.reservations:
        if r.pool is None:
            for name, idx in gpu_sets(inst, r).items():
                if idx:
                    res_on[name].append((r, idx))
    for node in inst.nodes:
        cover: dict[int, frozenset[str]] = {
            g: frozenset(r.id for r, idx in res_on[node.name] if g in idx) for g in range(node.gpus)
        }
        keys = sorted(set(cover.values()), key=lambda s: sorted(s))
        classes = [tuple(g for g in range(node.gpus) if cover[g] == k) for k in keys]
        cm.classes[node.name] = classes
        uses = by_node.get(node.name, [])
        for u in uses:
            if len(classes) == 1:
                u.per_class = {0: u.gpus}
            elif u.gpus == node.gpus:
                u.per_class = {k: len(c) for k, c in enumerate(classes)}
            else:
                vs = {
                    k: m.new_int_var(0, min(u.gpus, len(c)), f"u_{id(u)}_{k}")
                    for k, c in enumerate(classes)
                }
                m.add(sum(vs.values()) == u.gpus)
                u.per_class = dict(vs)
        for k, c in enumerate(classes):
            ivs = [u.interval for u in uses]
            dem = [u.per_class[k] for u in uses]
            closed = [
                (r.start, r.end)
                for r, idx in res_on[node.name]
                if c[0] in idx and not (r.admits.tenants or r.admits.jobs)
            ]
            for a, b in merge_spans(closed):  # overlapping holds must not count twice
                ivs.append(m.new_interval_var(a, b - a, b, f"r_{node.name}_{k}_{a}"))
                dem.append(len(c))
            if uses:
                cm.cumulative(ivs, dem, len(c), fixed=len(ivs) > len(uses))
            for r, idx in res_on[node.name]:
                if c[0] not in idx or not (r.admits.tenants or r.admits.jobs):
                    continue
                outsiders = [
                    u for u in uses if not all(r.admits.admits(inst.job_by_id[j]) for j in u.jobs)
                ]
                if outsiders:
                    fixed = m.new_interval_var(r.start, r.end - r.start, r.end, f"r_{r.id}")
                    m.add_cumulative(
                        [fixed] + [_outside(cm, u, r) for u in outsiders],
                        [len(c)] + [u.per_class[k] for u in outsiders],
                        len(c),
                    )


def _outside(cm: CpsatModel, u: Use, r: Reservation) -> cp_model.IntervalVar:
    """How long `u` holds its GPUs for jobs `r` does not admit (R10 binds each member
    while it runs): a solo use, or a group whose members `r` admits alike, its whole
    interval; a group that `r` admits in part, only until its last member not admitted
    ends (`groups.split_by_reservation`: the admitted ones may run on under `r`)."""
    if u.group is None:
        return u.interval
    cand = cm.groups[u.group].cand
    out = [d for j, d in zip(cand.jobs, cand.durations, strict=True)
           if not r.admits.admits(cm.instance.job_by_id[j])]  # fmt: skip
    if len(out) == len(cand.jobs):
        return u.interval
    return cm.model.new_optional_fixed_size_interval_var(
        u.start, max(out), u.lit, f"zo_{u.group}_{u.node.name}_{r.id}"
    )


def _scale(cm: CpsatModel, values: list[float], what: str) -> int:
    """The scale of one capacity row (`variables.capacity_scale`). When it rounds the
    values, demands up and capacities down, the model is stricter than R7/R8: it is marked
    inexact, so its optimum, bound and infeasibility prove nothing (tests/test_cpsat.py)."""
    s, exact = capacity_scale(values)
    if cm.exact and not exact:
        cm.exact = False
        cm.notes.append(f"{what} rounded to thousandths: conservative model")
    return s


def add_node_capacity(cm: CpsatModel) -> None:
    """R7: CPUs and memory per node, scaled to integers (`_scale`)."""
    by_node: dict[str, list[Use]] = defaultdict(list)
    for u in cm.uses:
        by_node[u.node.name].append(u)
    for node in cm.instance.nodes:
        for cap, attr in ((node.group.cpus, "cpus"), (node.group.mem_gb, "mem")):
            if cap is None:
                continue
            uses = [u for u in by_node[node.name] if getattr(u, attr) > 0]
            if not uses or not over(sum(getattr(u, attr) for u in uses), cap):
                continue
            s = _scale(cm, [cap] + [getattr(u, attr) for u in uses], f"node {node.name}'s {attr}")
            cm.cumulative(
                [u.interval for u in uses],
                [math.ceil(getattr(u, attr) * s - 1e-9) for u in uses],
                math.floor(cap * s + 1e-9),
            )


def add_pool_capacity(cm: CpsatModel) -> None:
    """R8/R10 for pools: for every subset U of a pool's admitting reservations, the jobs
    admitted by none of U plus the amounts of U (and of every reservation admitting nobody)
    fit the capacity (the Hall-condition rule of the README section "What we chose where
    the contract is silent"). Subsets with the same job set as a
    larger one are skipped. Over MAX_EXACT_POOL_RESERVATIONS admitting reservations, one
    conservative cumulative holds every job and every reservation (admitted jobs may then
    not use reserved amounts), and the model is marked inexact."""
    m, inst = cm.model, cm.instance
    for pool, cap in inst.pools.items():
        users = [jv for jv in cm.jobs.values() if jv.job.demand.get(pool, 0) > 0]
        if not users:
            continue
        res = [r for r in inst.reservations if r.pool == pool]
        closed = [r for r in res if not (r.admits.tenants or r.admits.jobs)]
        open_ = [r for r in res if r.admits.tenants or r.admits.jobs]
        values = [cap] + [jv.job.demand[pool] for jv in users] + [r.amount for r in res]
        s = _scale(cm, values, f"pool {pool}'s amounts")
        cap_i = math.floor(cap * s + 1e-9)

        def dem(jv: JobVars, pool: str = pool, s: int = s) -> int:
            return math.ceil(jv.job.demand[pool] * s - 1e-9)

        def fixed(rs: Iterable[Reservation], s: int = s) -> tuple[list, list]:
            ivs, ds = [], []
            for r in rs:
                if r.end > r.start and r.amount > 0:
                    ivs.append(m.new_interval_var(r.start, r.end - r.start, r.end, f"p_{r.id}"))
                    ds.append(math.ceil(r.amount * s - 1e-9))
            return ivs, ds

        if len(open_) > MAX_EXACT_POOL_RESERVATIONS:
            cm.exact = False
            cm.notes.append(f"pool {pool}: {len(open_)} admitting reservations, conservative model")
            subsets: list[tuple[Reservation, ...]] = [tuple(open_)]
            member_sets = [users]
        else:
            subsets, member_sets = [], []
            for k in range(len(open_) + 1):
                for U in combinations(open_, k):
                    js = [jv for jv in users if not any(r.admits.admits(jv.job) for r in U)]
                    closure = [r for r in open_ if not any(r.admits.admits(jv.job) for jv in js)]
                    if js and len(closure) == len(U):
                        subsets.append(U)
                        member_sets.append(js)
        for U, js in zip(subsets, member_sets, strict=True):
            ivs, ds = fixed([*closed, *U])
            total = sum(dem(jv) for jv in js)
            if not ivs and total <= cap_i:
                continue
            if not ivs and all(2 * dem(jv) > cap_i for jv in js):
                # pairwise exclusive (a machine of a job shop): a disjunctive resource
                tail = [cm.tail] if cm.tail is not None else []
                m.add_no_overlap([jv.interval for jv in js] + tail)
                if all(dem(jv) <= cap_i for jv in js):
                    continue
            cm.cumulative(
                ivs + [jv.interval for jv in js],
                ds + [dem(jv) for jv in js],
                cap_i,
                fixed=bool(ivs),
            )


# Cliques help proofs on small models (PSPLIB j30, job shops); on bigger ones (j120:
# ~90 cliques of 120 jobs) they only slow the LNS that finds the improvements there
# (j120 sample, 10 s, 2 workers, sum of gaps on the 6 open instances over 4 seeds:
# 23.0% without, 25.3% with), and on j60/j90 they slow CP-SAT's default search (see
# `proving_size`).
MAX_CLIQUE_JOBS = 100


# Placement-free models get cliques (models with GPU placement always may) up to these
# sizes: any RCPSP up to PROVING_MAX_JOBS jobs, pure disjunctive ones (job shops) up to
# PROVING_MAX_DISJUNCTIVE. On PSPLIB j60 and j90 cliques slow the search
# (experiments/pyjobshop_compare.py; j6013_1 at 10 s, 2 workers, two full searches with
# cliques: 121; one full search and LNS without: 118). Two full searches run up to
# planner.solvers.cpsat.solve.LNS_MIN_JOBS jobs (its comment).
PROVING_MAX_JOBS = 40
# (Chosen, not tuned: the job shops compared above, la21-la40, have 150 to 300 operations.)
PROVING_MAX_DISJUNCTIVE = 100


def proving_size(instance: Instance) -> bool:
    """Whether a placement-free model is small enough for cliques (`add_disjunctive_cliques`)."""
    n = len(instance.jobs)
    return n <= PROVING_MAX_JOBS or (n <= PROVING_MAX_DISJUNCTIVE and instance.disjunctive)


def add_disjunctive_cliques(cm: CpsatModel) -> None:
    """Redundant no-overlaps: two jobs whose demands on some pool exceed its capacity, or
    that precedence orders (transitively), never run at the same time. Greedy maximal
    cliques of that graph (size >= 3) become no-overlap constraints, whose edge finding
    is stronger than the cumulative's (a known help on RCPSP). Up to MAX_CLIQUE_JOBS jobs
    with pool demand; the makespan tail interval joins every clique."""
    inst = cm.instance
    js = [j for j in inst.jobs if any(q > 0 for q in j.demand.values())]
    if len(js) < 3 or len(js) > MAX_CLIQUE_JOBS or (not cm.uses and not proving_size(inst)):
        return
    ids = [j.id for j in js]
    reach = descendants(inst)
    adj: dict[str, set[str]] = {i: set() for i in ids}
    for ja, jb in combinations(js, 2):
        clash = any(
            over(ja.demand.get(p, 0) + jb.demand.get(p, 0), cap) for p, cap in inst.pools.items()
        )
        if clash or jb.id in reach[ja.id] or ja.id in reach[jb.id]:
            adj[ja.id].add(jb.id)
            adj[jb.id].add(ja.id)
    seen: set[frozenset[str]] = set()
    for seed in sorted(ids, key=lambda i: -len(adj[i])):
        clique = [seed]
        for c in sorted(adj[seed], key=lambda i: -len(adj[i])):
            if all(c in adj[x] for x in clique):
                clique.append(c)
        key = frozenset(clique)
        if len(clique) < 3 or key in seen:
            continue
        seen.add(key)
        ivs = [cm.jobs[i].interval for i in clique]
        cm.model.add_no_overlap(ivs + ([cm.tail] if cm.tail is not None else []))


def add_precedence_and_priority(cm: CpsatModel) -> None:
    """Precedence (start_b >= end_a) and R9 strict priority, as the MILP's function of the
    same name (there they share variables)."""
    m, inst = cm.model, cm.instance
    for jv in cm.jobs.values():
        for a in jv.job.after:
            m.add(jv.start >= cm.jobs[a].end)
    if inst.priority_policy != "strict":
        return
    # R9 with one chain per priority level: X[q][i] >= start of every level-q job released
    # at or before the i-th release value of that level; then X <= start(b) for lower b.
    levels: dict[int, list[Job]] = defaultdict(list)
    for j in inst.jobs:
        levels[j.priority].append(j)
    if len(levels) < 2:
        return
    came = {j.id: inst.arrival(j) for j in inst.jobs}  # the releases R9 compares
    chains: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
    for q, js in levels.items():
        rels = sorted({came[j.id] for j in js})
        chain: list[tuple[int, cp_model.IntVar]] = []
        prev = None
        for rel in rels:
            x = m.new_int_var(0, cm.horizon, f"prio_{q}_{rel}")
            ids = [j.id for j in js if came[j.id] == rel]
            for jid in ids:
                m.add(x >= cm.jobs[jid].start)
            if prev is not None:
                m.add(x >= prev)
            cm.priority_vars.append((x, [j.id for j in js if came[j.id] <= rel]))
            chain.append((rel, x))
            prev = x
        chains[q] = chain
    for j in inst.jobs:
        for q, chain in chains.items():
            if q <= j.priority:
                continue
            best = None
            for rel, x in chain:
                if rel <= came[j.id]:
                    best = x
            if best is not None:
                m.add(best <= cm.jobs[j.id].start)
