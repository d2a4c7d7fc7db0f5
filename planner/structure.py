"""Pass 1 of reading an instance (contract §2): its structure, refusing bad input.

`planner.read` runs two passes, both collecting every problem rather than stopping at the
first:
1. structure (this module): JSON types, unknown / missing fields, value ranges, defaults;
   each problem carries a JSON path such as `jobs[3].gpus`; the result is a `Parsed`
   (the record and the parsers of one job and one reservation are in
   `planner.structure_items`);
2. cross-references (`planner.validate`): models, jobs, pools, nodes, cycles, fit.

An item (job, reservation, node group) with a structural problem is left out of the second
pass, but its id still counts as known so that one typo does not cascade into many
"unknown job" problems.

Semantics chosen where the contract is silent (see also the README section "What we
chose where the contract is silent"):
- `name` defaults to the file's stem (`"instance"` for a dict); `version`, when given, is 1.
- Integer fields reject floats, including 3.0; booleans are never numbers.
- `interleaving` absent: disabled; present without `enabled`: enabled.
- `gpus` is required for every job; an explicit job has `duration` (>= 0) and no `model`.
- `iterations` >= 1; `priority` may be negative; `weight` >= 0; duplicate `after` entries
  are merged.
- A top-level `description` string is accepted and ignored (importers record provenance).
- `"for"` absent on a reservation means null: nobody may use the reserved resource.
- At most MAX_NODES (100,000) nodes after expansion, MAX_GPUS_PER_NODE (1,024) GPUs on a
  node and MAX_GPUS (1,000,000) in all.
"""

from __future__ import annotations

import json
from typing import Any

from planner.checker import Checker, join, kind
from planner.errors import Problem
from planner.instance import (
    DEFAULT_OVERHEAD,
    OBJECTIVES,
    UNIT_MS,
    Interleaving,
    NodeGroup,
    Preemption,
    PriceInterval,
)
from planner.limits import MAX_GPUS, MAX_GPUS_PER_NODE, MAX_NODES
from planner.profiles import parse_profile
from planner.schedule import FORMAT
from planner.structure_items import Parsed, parse_job, parse_reservation

TOP_FIELDS = (
    "version",
    "name",
    "description",
    "time_unit",
    "horizon",
    "now",
    "cluster",
    "interleaving",
    "policy",
    "objective",
    "profiles",
    "jobs",
    "reservations",
)
CLUSTER_FIELDS = ("nodes", "pools", "power_price")
PRICE_FIELDS = ("start", "end", "price")
NODE_FIELDS = (
    "name",
    "count",
    "gpus",
    "gpu_type",
    "gpu_mem_gb",
    "cpus",
    "mem_gb",
    "speed",
    "gpu_idle_w",
    "gpu_busy_w",
)
INTERLEAVING_FIELDS = ("enabled", "max_group", "overhead")
POLICY_FIELDS = ("priority", "preemption")
PREEMPTION_FIELDS = ("enabled", "restart")


def _node_group(v: Any, path: str, ck: Checker, out: Parsed) -> None:
    before = ck.fatal
    d = ck.obj(v, path, NODE_FIELDS)
    if d is None:
        return
    name = ck.string(d, "name", path)
    if name is not None:
        out.group_names.append((path, name))
    count = ck.integer(d, "count", path, default=1, minimum=1)
    if count is not None and count > MAX_NODES:
        ck.add(join(path, "count"), f"{count} nodes is more than the {MAX_NODES} supported")
        count = None
    gpus = ck.integer(d, "gpus", path, minimum=1)
    if gpus is not None and gpus > MAX_GPUS_PER_NODE:
        msg = f"{gpus} GPUs on a node is more than the {MAX_GPUS_PER_NODE} supported"
        ck.add(join(path, "gpus"), msg)
        gpus = None
    gpu_type = ck.string(d, "gpu_type", path, default=None, nullable=True)
    gpu_mem = ck.number(d, "gpu_mem_gb", path, default=None, positive=True, nullable=True)
    cpus = ck.number(d, "cpus", path, default=None, nullable=True)
    mem = ck.number(d, "mem_gb", path, default=None, nullable=True)
    speed = ck.number(d, "speed", path, default=1.0, positive=True)
    idle = ck.number(d, "gpu_idle_w", path, default=0.0)
    busy = ck.number(d, "gpu_busy_w", path, default=0.0)
    if ck.fatal == before:
        out.node_groups.append(
            (
                path,
                NodeGroup(
                    name=name,
                    count=count,
                    gpus=gpus,
                    gpu_type=gpu_type,
                    gpu_mem_gb=gpu_mem,
                    cpus=cpus,
                    mem_gb=mem,
                    speed=float(speed),
                    gpu_idle_w=float(idle),
                    gpu_busy_w=float(busy),
                ),
            )
        )


def _cluster(v: Any, ck: Checker, out: Parsed) -> None:
    d = ck.obj(v, "cluster", CLUSTER_FIELDS)
    if d is None:
        return
    if "nodes" not in d:
        ck.add("cluster.nodes", "required field is missing")
    elif not isinstance(d["nodes"], list):
        # An empty list is fine: a project of pool-only jobs (PSPLIB, job-shop) has no GPUs;
        # a job that needs GPUs then fails the fit check with its own path.
        ck.add("cluster.nodes", f"expected an array of node groups, got {kind(d['nodes'])}")
    else:
        for i, g in enumerate(d["nodes"]):
            _node_group(g, f"cluster.nodes[{i}]", ck, out)
        total = sum(g.count for _, g in out.node_groups)
        gpus = sum(g.count * g.gpus for _, g in out.node_groups)
        if total > MAX_NODES:
            ck.add("cluster.nodes", f"{total} nodes in all is more than the {MAX_NODES} supported")
            out.node_groups.clear()
        elif gpus > MAX_GPUS:
            ck.add("cluster.nodes", f"{gpus} GPUs in all is more than the {MAX_GPUS} supported")
            out.node_groups.clear()
    if "power_price" in d:
        out.power_price = _power_price(d["power_price"], ck)
    if "pools" in d:
        pools = ck.mapping(d["pools"], "cluster.pools")
        if pools is not None:
            out.pool_names.update(pools)
            for k, cap in pools.items():
                c = ck.num_value(cap, f"cluster.pools.{k}")
                if c is not None:
                    out.pools[k] = c


def _power_price(v: Any, ck: Checker) -> list[PriceInterval]:
    """`cluster.power_price` (contract §12): half-open intervals with a price per kWh, which
    must not overlap (a price at an instant would be ambiguous); returned sorted by start.
    Prices may be negative (markets have them); a gap between intervals is priced 0."""
    if not isinstance(v, list):
        ck.add("cluster.power_price", f"expected an array of price intervals, got {kind(v)}")
        return []
    out: list[tuple[str, PriceInterval]] = []
    for i, e in enumerate(v):
        path = f"cluster.power_price[{i}]"
        before = ck.fatal
        d = ck.obj(e, path, PRICE_FIELDS)
        if d is None:
            continue
        start = ck.integer(d, "start", path)
        end = ck.integer(d, "end", path)
        price = ck.number(d, "price", path, minimum=None)
        if start is not None and end is not None and end <= start:
            ck.add(join(path, "end"), f"end {end} is not after start {start}")
        if ck.fatal == before:
            out.append((path, PriceInterval(start, end, float(price))))
    out.sort(key=lambda x: x[1].start)
    for (_, a), (path, b) in zip(out, out[1:], strict=False):
        if b.start < a.end:
            ck.add(path, f"[{b.start}, {b.end}) overlaps [{a.start}, {a.end})")
    return [p for _, p in out]


def _interleaving(v: Any, ck: Checker) -> Interleaving:
    d = ck.obj(v, "interleaving", INTERLEAVING_FIELDS)
    if d is None:
        return Interleaving()
    enabled = d.get("enabled", True)
    if not isinstance(enabled, bool):
        ck.add("interleaving.enabled", f"expected true or false, got {kind(enabled)}")
        enabled = False
    max_group = ck.integer(d, "max_group", "interleaving", default=4, minimum=2)
    if max_group is not None and max_group > 4:
        ck.add("interleaving.max_group", f"{max_group} is more than 4 (contract §4: 2 to 4)")
        max_group = None
    overhead = dict(DEFAULT_OVERHEAD)
    if "overhead" in d:
        o = ck.mapping(d["overhead"], "interleaving.overhead")
        if o is not None:
            for k, x in o.items():
                p = f"interleaving.overhead.{k}"
                if k not in ("2", "3", "4"):
                    ck.add(p, f'\'{k}\' is not a group size ("2", "3" or "4")')
                    continue
                val = ck.num_value(x, p, positive=True)
                if val is not None:
                    overhead[int(k)] = val
    return Interleaving(enabled=bool(enabled), max_group=max_group or 4, overhead=overhead)


def _preemption(v: Any, ck: Checker) -> Preemption:
    """`policy.preemption` (contract §8); absent `enabled` means disabled, as the contract's
    default shows."""
    d = ck.obj(v, "policy.preemption", PREEMPTION_FIELDS)
    if d is None:
        return Preemption()
    enabled = d.get("enabled", False)
    if not isinstance(enabled, bool):
        ck.add("policy.preemption.enabled", f"expected true or false, got {kind(enabled)}")
        enabled = False
    restart = ck.integer(d, "restart", "policy.preemption", default=0)
    return Preemption(enabled=enabled, restart=restart or 0)


def objective_list(names: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """An objective list given outside an instance (`plan solve --objective`) checked by
    the instance's own rules (known names, none twice): the names and what is wrong with
    them (each problem once)."""
    ck = Checker()
    parsed = _objective(names, ck)
    return parsed or (), list(dict.fromkeys(p.message for p in ck.problems))


def _objective(v: Any, ck: Checker) -> tuple[str, ...] | None:
    names = [v] if isinstance(v, str) else v
    if not isinstance(names, list) or not names:
        ck.add(
            "objective",
            f"expected an objective name or a non-empty array of them, "
            f"got {kind(v) if not isinstance(v, list) else 'an empty array'}",
        )
        return None
    out = []
    for i, n in enumerate(names):
        p = "objective" if isinstance(v, str) else f"objective[{i}]"
        s = ck.str_value(n, p, OBJECTIVES)
        if s is not None:
            if s in out:
                ck.add(p, f"'{s}' is listed twice")
            out.append(s)
    return tuple(out) if len(out) == len(names) else None


def parse_structure(d: Any, default_name: str) -> tuple[Parsed, list[Problem]]:
    """Pass 1: types, fields and ranges, with defaults filled in."""
    ck = Checker()
    out = Parsed(name=default_name)
    if isinstance(d, dict) and d.get("format") == FORMAT and "cluster" not in d:
        # arguments swapped: one line, not one per job
        return out, [Problem("$", f"this is a schedule (format '{FORMAT}'), not an instance")]
    top = ck.obj(d, "$", TOP_FIELDS)
    if top is None:
        return out, ck.problems
    if "version" in top and (type(top["version"]) is not int or top["version"] != 1):
        ck.add("version", f"unsupported version {json.dumps(top['version'])} (this is version 1)")
    out.name = ck.string(top, "name", "$", default=default_name) or default_name
    ck.string(top, "description", "$", default=None)
    out.time_unit = ck.string(top, "time_unit", "$", default="s", choices=tuple(UNIT_MS)) or "s"
    out.horizon = ck.integer(top, "horizon", "$", default=None, nullable=True)
    n = ck.fatal
    out.now = ck.integer(top, "now", "$", default=0) or 0
    out.now_ok = ck.fatal == n
    if "cluster" in top:
        n = ck.fatal
        _cluster(top["cluster"], ck, out)
        out.cluster_ok = ck.fatal == n
    else:
        ck.add("cluster", "required field is missing")
        out.cluster_ok = False
    if "interleaving" in top and top["interleaving"] is not None:
        out.interleaving = _interleaving(top["interleaving"], ck)
    if "policy" in top:
        pol = ck.obj(top["policy"], "policy", POLICY_FIELDS)
        if pol is not None:
            out.priority_policy = (
                ck.string(pol, "priority", "policy", default="strict", choices=("strict", "none"))
                or "strict"
            )
            if "preemption" in pol:
                out.preemption = _preemption(pol["preemption"], ck)
    if "objective" in top:
        out.objective = _objective(top["objective"], ck) or out.objective
    if "profiles" in top:
        profs = top["profiles"]
        if not isinstance(profs, dict):
            ck.add("profiles", f"expected an object, got {kind(profs)}")
        else:
            for name, pv in profs.items():
                out.profile_names.add(name)
                prof = parse_profile(pv, f"profiles.{name}", ck, name=name)
                if prof is not None:
                    out.profiles[name] = prof
    if "jobs" not in top:
        ck.add("jobs", "required field is missing")
    elif not isinstance(top["jobs"], list):
        ck.add("jobs", f"expected an array of jobs, got {kind(top['jobs'])}")
    else:
        for i, j in enumerate(top["jobs"]):
            parse_job(j, f"jobs[{i}]", ck, out)
    if "reservations" in top:
        rs = top["reservations"]
        if not isinstance(rs, list):
            ck.add("reservations", f"expected an array, got {kind(rs)}")
        else:
            for i, r in enumerate(rs):
                parse_reservation(r, f"reservations[{i}]", ck, out)
    return out, ck.problems
