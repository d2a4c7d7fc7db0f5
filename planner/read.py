"""Read an instance (contract §2) into `planner.instance.Instance`, refusing bad input.

Two passes, both collecting every problem rather than stopping at the first:
1. structure (this module): JSON types, unknown / missing fields, value ranges, defaults,
   node-group expansion; each problem carries a JSON path such as `jobs[3].gpus`;
2. cross-references (`planner.validate`): models, jobs, pools, nodes, cycles, fit.

An item (job, reservation, node group) with a structural problem is left out of the second
pass, but its id still counts as known so that one typo does not cascade into many
"unknown job" problems.

Semantics chosen where the contract is silent (see also the team brief):
- `name` defaults to the file's stem (`"instance"` for a dict); `version`, when given, is 1.
- Integer fields reject floats, including 3.0; booleans are never numbers.
- `interleaving` absent: disabled; present without `enabled`: enabled.
- `gpus` is required for every job; an explicit job has `duration` (>= 0) and no `model`.
- `iterations` >= 1; `priority` may be negative; `weight` >= 0; duplicate `after` entries
  are merged.
- A top-level `description` string is accepted and ignored (importers record provenance).
- `"for"` absent on a reservation means null: nobody may use the reserved resource.
- At most MAX_NODES (100,000) nodes after expansion.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.errors import InputError, Problem
from planner.instance import (
    DEFAULT_OVERHEAD,
    OBJECTIVES,
    UNIT_MS,
    Admits,
    GpuProfile,
    Instance,
    Interleaving,
    Job,
    Node,
    NodeGroup,
    Profile,
    Reservation,
    Stages,
)
from planner.limits import MAX_NUMBER, MAX_WEIGHT

# Node groups are expanded into Node objects; a typo like count 10**9 must not hang the reader.
MAX_NODES = 100_000

_REQUIRED: Any = object()  # marks a required field in the getters below

TOP_FIELDS = (
    "version",
    "name",
    "description",
    "time_unit",
    "horizon",
    "cluster",
    "interleaving",
    "policy",
    "objective",
    "profiles",
    "jobs",
    "reservations",
)
CLUSTER_FIELDS = ("nodes", "pools")
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
POLICY_FIELDS = ("priority",)
JOB_FIELDS = (
    "id",
    "model",
    "gpus",
    "iterations",
    "duration",
    "release",
    "priority",
    "weight",
    "due",
    "deadline",
    "after",
    "cpus_per_gpu",
    "mem_gb_per_gpu",
    "tenant",
    "node_types",
    "demand",
)
RESERVATION_FIELDS = ("id", "start", "end", "nodes", "gpus", "pool", "amount", "for")
FOR_FIELDS = ("tenants", "jobs")
PROFILE_FIELDS = ("model", "batch_size", "gpu_mem_gb", "by_gpus")
GPU_PROFILE_FIELDS = ("iteration_ms", "stages_ms")
STAGE_FIELDS = ("data", "gpu", "net")


def kind(v: Any) -> str:
    """The JSON type name of a Python value, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def join(path: str, key: str) -> str:
    return key if path == "$" else f"{path}.{key}"


def suggest(word: str, choices: Collection[str]) -> str:
    """` (did you mean 'x'?)` when a close name exists, else an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Checker:
    """Collects problems; the getters return the value (or default), or None when bad."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.fatal = 0  # problems that leave a value unusable (not unknown fields)

    def add(self, path: str, message: str, fatal: bool = True) -> None:
        self.problems.append(Problem(path, message))
        self.fatal += fatal

    def obj(self, v: Any, path: str, allowed: Collection[str]) -> dict[str, Any] | None:
        if not isinstance(v, dict):
            self.add(path, f"expected an object, got {kind(v)}")
            return None
        for k in v:
            if k not in allowed:
                self.add(join(path, k), f"unknown field '{k}'{suggest(k, allowed)}", fatal=False)
        return v

    def mapping(self, v: Any, path: str) -> dict[str, Any] | None:
        """An object whose keys are names (pools, GPU counts), not fields."""
        if not isinstance(v, dict):
            self.add(path, f"expected an object, got {kind(v)}")
            return None
        return v

    def _get(self, d: dict[str, Any], key: str, path: str, default: Any) -> tuple[bool, Any]:
        """(present, value); records a missing required field."""
        if key not in d:
            if default is _REQUIRED:
                self.add(join(path, key), "required field is missing")
            return False, None if default is _REQUIRED else default
        return True, d[key]

    def integer(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = _REQUIRED,
        minimum: int | None = 0,
        nullable: bool = False,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        return self.int_value(v, join(path, key), minimum)

    def int_value(self, v: Any, path: str, minimum: int | None = 0) -> int | None:
        if isinstance(v, bool) or not isinstance(v, int):
            self.add(path, f"expected an integer, got {kind(v)} {json.dumps(v)}")
            return None
        if minimum is not None and v < minimum:
            what = "negative" if minimum == 0 else f"less than {minimum}"
            self.add(path, f"{v} is {what}" + (" (times are non-negative)" if minimum == 0 else ""))
            return None
        return v if self.bounded(v, path) else None

    def bounded(self, v: float, path: str, limit: float = MAX_NUMBER) -> bool:
        """False (and a problem) when |v| exceeds the documented limit."""
        if abs(v) > limit:
            self.add(path, f"{v:g} is larger than the limit {limit:g}")
            return False
        return True

    def number(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = _REQUIRED,
        minimum: float | None = 0.0,
        positive: bool = False,
        nullable: bool = False,
        maximum: float = MAX_NUMBER,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        return self.num_value(v, join(path, key), minimum, positive, maximum)

    def num_value(
        self,
        v: Any,
        path: str,
        minimum: float | None = 0.0,
        positive: bool = False,
        maximum: float = MAX_NUMBER,
    ) -> float | None:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            self.add(path, f"expected a number, got {kind(v)} {json.dumps(v)}")
            return None
        if positive and v <= 0:
            self.add(path, f"{v} must be > 0")
            return None
        if minimum is not None and v < minimum:
            self.add(path, f"{v} must be >= {minimum:g}")
            return None
        return float(v) if self.bounded(v, path, maximum) else None

    def string(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = _REQUIRED,
        nullable: bool = False,
        choices: Collection[str] | None = None,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        return self.str_value(v, join(path, key), choices)

    def str_value(self, v: Any, path: str, choices: Collection[str] | None = None) -> str | None:
        if not isinstance(v, str) or not v:
            self.add(path, f"expected a non-empty string, got {kind(v)} {json.dumps(v)}")
            return None
        if choices is not None and v not in choices:
            options = ", ".join(choices)
            self.add(path, f"'{v}' is not one of {options}{suggest(v, choices)}")
            return None
        return v

    def str_list(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = _REQUIRED,
        nullable: bool = False,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        p = join(path, key)
        if not isinstance(v, list):
            self.add(p, f"expected an array of strings, got {kind(v)}")
            return None
        out = [self.str_value(x, f"{p}[{i}]") for i, x in enumerate(v)]
        return None if any(x is None for x in out) else out


# ---------------------------------------------------------------- profiles (contract §3)


def parse_profile(v: Any, path: str, ck: Checker, name: str | None = None) -> Profile | None:
    """One model profile; `name` is the expected model name (dict key or file stem)."""
    before = ck.fatal
    d = ck.obj(v, path, PROFILE_FIELDS)
    if d is None:
        return None
    model = ck.string(d, "model", path, default=name if name is not None else _REQUIRED)
    if name is not None and model is not None and model != name:
        ck.add(join(path, "model"), f"'{model}' differs from its name '{name}'")
    batch = ck.integer(d, "batch_size", path, default=None, minimum=1, nullable=True)
    mem = ck.number(d, "gpu_mem_gb", path, default=None, positive=True, nullable=True)
    by_gpus: dict[int, GpuProfile] = {}
    bp = join(path, "by_gpus")
    raw = ck.mapping(d["by_gpus"], bp) if "by_gpus" in d else None
    if "by_gpus" not in d:
        ck.add(bp, "required field is missing")
    if raw is not None:
        if not raw:
            ck.add(bp, "needs at least one GPU count")
        for key, entry in raw.items():
            ep = f"{bp}.{key}"
            if not key.isdigit() or int(key) < 1:
                ck.add(ep, f"'{key}' is not a GPU count (a positive integer as a string)")
                continue
            e = ck.obj(entry, ep, GPU_PROFILE_FIELDS)
            if e is None:
                continue
            it = ck.number(e, "iteration_ms", ep, positive=True)
            sp = join(ep, "stages_ms")
            s = ck.obj(e["stages_ms"], sp, STAGE_FIELDS) if "stages_ms" in e else None
            if "stages_ms" not in e:
                ck.add(sp, "required field is missing")
            if s is None or it is None:
                continue
            st = [ck.number(s, k, sp) for k in STAGE_FIELDS]
            if all(x is not None for x in st):
                by_gpus[int(key)] = GpuProfile(it, Stages(*st))
    if ck.fatal != before or model is None:
        return None
    return Profile(
        model=model, by_gpus=dict(sorted(by_gpus.items())), gpu_mem_gb=mem, batch_size=batch
    )


# ---------------------------------------------------------------- the instance


@dataclass
class Parsed:
    """What the structural pass could build, with the JSON path of every item."""

    name: str = "instance"
    time_unit: str = "s"
    horizon: int | None = None
    node_groups: list[tuple[str, NodeGroup]] = field(default_factory=list)
    pools: dict[str, float] = field(default_factory=dict)
    interleaving: Interleaving = field(default_factory=Interleaving)
    priority_policy: str = "strict"
    objective: tuple[str, ...] = ("total_weighted_jct",)
    profiles: dict[str, Profile] = field(default_factory=dict)
    jobs: list[tuple[str, Job]] = field(default_factory=list)
    reservations: list[tuple[str, Reservation]] = field(default_factory=list)
    # Raw ids / names seen even on items with problems, to avoid cascading messages.
    job_ids: list[tuple[str, str]] = field(default_factory=list)  # (path, id)
    group_names: list[tuple[str, str]] = field(default_factory=list)
    reservation_ids: list[tuple[str, str]] = field(default_factory=list)
    tenants: set[str] = field(default_factory=set)
    profile_names: set[str] = field(default_factory=set)  # inline, even if broken
    pool_names: set[str] = field(default_factory=set)
    cluster_ok: bool = True  # no structural problem under `cluster`
    raw: dict[str, dict[str, Any]] = field(default_factory=dict)  # item path -> its JSON


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
        if total > MAX_NODES:
            ck.add("cluster.nodes", f"{total} nodes in all is more than the {MAX_NODES} supported")
            out.node_groups.clear()
    if "pools" in d:
        pools = ck.mapping(d["pools"], "cluster.pools")
        if pools is not None:
            out.pool_names.update(pools)
            for k, cap in pools.items():
                c = ck.num_value(cap, f"cluster.pools.{k}")
                if c is not None:
                    out.pools[k] = c


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


def _job(v: Any, path: str, ck: Checker, out: Parsed) -> None:
    before = ck.fatal
    d = ck.obj(v, path, JOB_FIELDS)
    if d is None:
        return
    out.raw[path] = d
    jid = ck.string(d, "id", path)
    if jid is not None:
        out.job_ids.append((path, jid))
    if isinstance(d.get("tenant"), str):
        out.tenants.add(d["tenant"])
    model = ck.string(d, "model", path, default=None, nullable=True)
    profiled = "model" in d and d["model"] is not None
    if profiled:
        gpus = ck.integer(d, "gpus", path, minimum=1)
        iterations = ck.integer(d, "iterations", path, minimum=1)
        if "duration" in d:
            ck.add(
                join(path, "duration"),
                "a job has either model + iterations or a duration, not both",
            )
        duration = None
    else:
        gpus = ck.integer(d, "gpus", path, minimum=0)
        iterations = None
        if "iterations" in d:
            ck.add(join(path, "iterations"), "iterations needs a model")
        if "duration" not in d:
            ck.add(
                join(path, "duration"),
                "required field is missing (a job has either "
                "model + iterations + gpus, or duration + gpus)",
            )
            duration = None
        else:
            duration = ck.integer(d, "duration", path)
    release = ck.integer(d, "release", path, default=0)
    priority = ck.integer(d, "priority", path, default=0, minimum=None)
    weight = ck.number(d, "weight", path, default=1.0, maximum=MAX_WEIGHT)
    due = ck.integer(d, "due", path, default=None, nullable=True)
    deadline = ck.integer(d, "deadline", path, default=None, nullable=True)
    after = ck.str_list(d, "after", path, default=[])
    cpus = ck.number(d, "cpus_per_gpu", path, default=0.0)
    mem = ck.number(d, "mem_gb_per_gpu", path, default=0.0)
    tenant = ck.string(d, "tenant", path, default=None, nullable=True)
    node_types = ck.str_list(d, "node_types", path, default=None, nullable=True)
    if node_types == []:
        ck.add(join(path, "node_types"), "an empty list allows no node group (use null for any)")
    demand: dict[str, float] = {}
    if "demand" in d:
        dm = ck.mapping(d["demand"], join(path, "demand"))
        if dm is not None:
            for k, x in dm.items():
                a = ck.num_value(x, f"{join(path, 'demand')}.{k}")
                if a is not None:
                    demand[k] = a
    if ck.fatal == before:
        out.jobs.append(
            (
                path,
                Job(
                    id=jid,
                    gpus=gpus,
                    model=model,
                    iterations=iterations,
                    duration=duration,
                    release=release,
                    priority=priority,
                    weight=float(weight),
                    due=due,
                    deadline=deadline,
                    after=tuple(dict.fromkeys(after)),
                    cpus_per_gpu=float(cpus),
                    mem_gb_per_gpu=float(mem),
                    tenant=tenant,
                    node_types=tuple(node_types) if node_types is not None else None,
                    demand=demand,
                ),
            )
        )


def _reservation(v: Any, path: str, ck: Checker, out: Parsed) -> None:
    before = ck.fatal
    d = ck.obj(v, path, RESERVATION_FIELDS)
    if d is None:
        return
    out.raw[path] = d
    rid = ck.string(d, "id", path)
    if rid is not None:
        out.reservation_ids.append((path, rid))
    start = ck.integer(d, "start", path)
    end = ck.integer(d, "end", path)
    if start is not None and end is not None and end <= start:
        ck.add(join(path, "end"), f"end {end} is not after start {start}")
    nodes = ck.str_list(d, "nodes", path, default=None)
    gpus = None
    if "gpus" in d:
        gp = join(path, "gpus")
        if not isinstance(d["gpus"], list) or not d["gpus"]:
            ck.add(gp, "expected a non-empty array of GPU indices")
        else:
            gpus = [ck.int_value(x, f"{gp}[{i}]") for i, x in enumerate(d["gpus"])]
            if len(set(gpus)) != len(gpus):
                ck.add(gp, "a GPU index is listed twice")
        if "nodes" not in d:
            ck.add(gp, "gpus needs nodes")
    pool = ck.string(d, "pool", path, default=None)
    amount = 0.0
    if "pool" in d:
        amount = ck.number(d, "amount", path, positive=True)
    elif "amount" in d:
        ck.add(join(path, "amount"), "amount needs a pool")
    if "nodes" in d and "pool" in d:
        ck.add(path, "a reservation holds either nodes or a pool, not both")
    elif "nodes" not in d and "pool" not in d:
        ck.add(path, "a reservation needs nodes or a pool")
    if nodes == []:
        ck.add(join(path, "nodes"), "an empty list reserves nothing")
    admits = Admits()
    fv = d.get("for")
    if fv is not None:
        fp = join(path, "for")
        f = ck.obj(fv, fp, FOR_FIELDS)
        if f is not None:
            tenants = ck.str_list(f, "tenants", fp, default=[])
            jobs = ck.str_list(f, "jobs", fp, default=[])
            admits = Admits(frozenset(tenants or ()), frozenset(jobs or ()))
    if ck.fatal == before:
        out.reservations.append(
            (
                path,
                Reservation(
                    id=rid,
                    start=start,
                    end=end,
                    admits=admits,
                    nodes=tuple(nodes or ()),
                    gpus=tuple(g for g in gpus if g is not None) if gpus is not None else None,
                    pool=pool,
                    amount=float(amount or 0.0),
                ),
            )
        )


def parse_structure(d: Any, default_name: str) -> tuple[Parsed, list[Problem]]:
    """Pass 1: types, fields and ranges, with defaults filled in."""
    ck = Checker()
    out = Parsed(name=default_name)
    top = ck.obj(d, "$", TOP_FIELDS)
    if top is None:
        return out, ck.problems
    if "version" in top and (isinstance(top["version"], bool) or top["version"] != 1):
        ck.add("version", f"unsupported version {json.dumps(top['version'])} (this is version 1)")
    out.name = ck.string(top, "name", "$", default=default_name) or default_name
    ck.string(top, "description", "$", default=None)
    out.time_unit = ck.string(top, "time_unit", "$", default="s", choices=tuple(UNIT_MS)) or "s"
    out.horizon = ck.integer(top, "horizon", "$", default=None, nullable=True)
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
            _job(j, f"jobs[{i}]", ck, out)
    if "reservations" in top:
        rs = top["reservations"]
        if not isinstance(rs, list):
            ck.add("reservations", f"expected an array, got {kind(rs)}")
        else:
            for i, r in enumerate(rs):
                _reservation(r, f"reservations[{i}]", ck, out)
    return out, ck.problems


def build_instance(p: Parsed, profiles: Mapping[str, Profile]) -> Instance:
    groups = tuple(g for _, g in p.node_groups)
    nodes: list[Node] = []
    for g in groups:
        for i in range(g.count):
            nodes.append(Node(name=f"{g.name}-{i}", group=g, index=len(nodes)))
    return Instance(
        name=p.name,
        jobs=tuple(j for _, j in p.jobs),
        node_groups=groups,
        nodes=tuple(nodes),
        profiles=dict(profiles),
        pools=dict(p.pools),
        reservations=tuple(r for _, r in p.reservations),
        time_unit=p.time_unit,
        horizon=p.horizon,
        interleaving=p.interleaving,
        priority_policy=p.priority_policy,
        objective=p.objective,
    )


def instance_from_dict(
    d: Any, file: str = "<dict>", catalogue: Mapping[str, Profile] | None = None
) -> Instance:
    """Validate an instance dict and build the Instance; InputError lists every problem.

    `catalogue` (default: `planner.catalogue.load_catalogue()`, loaded only when a job names
    a model that is not inline) resolves model names; inline `profiles` take precedence.
    Only the profiles of models that jobs use end up in `Instance.profiles`.
    """
    from planner.validate import cross_check  # validate imports this module

    default_name = Path(file).stem if file != "<dict>" else "instance"
    parsed, problems = parse_structure(d, default_name)
    used = sorted({j.model for _, j in parsed.jobs if j.model is not None})
    missing = [m for m in used if m not in parsed.profile_names]
    if missing and catalogue is None:
        from planner.catalogue import load_catalogue

        catalogue = load_catalogue()
    available: dict[str, Profile] = dict(catalogue or {})
    available.update(parsed.profiles)
    profiles = {m: available[m] for m in used if m in available}
    instance = build_instance(parsed, profiles)
    problems += cross_check(parsed, instance, available)
    if problems:
        raise InputError(file, sorted(problems, key=_document_order))
    return instance


def _document_order(p: Problem) -> tuple[int, int]:
    """Sort key: top-level section in contract order, then item index (the sort is stable,
    so one item's structural problems stay before its cross-reference problems)."""
    head = p.path.split(".")[0]
    name, _, rest = head.partition("[")
    rank = TOP_FIELDS.index(name) if name in TOP_FIELDS else (-1 if name == "$" else 99)
    if name == "cluster" and "[" in p.path:
        rest = p.path.split("[", 1)[1]
    index = int(rest.split("]")[0]) if rest[:1].isdigit() else -1
    return rank, index


def read_instance(path: str | Path, catalogue: Mapping[str, Profile] | None = None) -> Instance:
    """Read and validate an instance file (contract §2)."""
    from planner.jsonio import read_json

    return instance_from_dict(read_json(path), file=str(path), catalogue=catalogue)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
