"""Pass 1 of reading an instance, per item: the parsers of one job and one reservation, and
the `Parsed` record that the structural pass fills.

Separate from `planner.structure` (the top level, the cluster, interleaving, policy and
objective) so that each module holds one responsibility: this one reads the items that
come in arrays and keeps each under its JSON path; `planner.changes` parses the jobs of a
changes file with `parse_job` too. The choices where the contract is silent are listed in
`planner.structure`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from planner.checker import Checker, join
from planner.instance import (
    Admits,
    Interleaving,
    Job,
    NodeGroup,
    Preemption,
    PriceInterval,
    Profile,
    Reservation,
)
from planner.limits import MAX_WEIGHT
from planner.live.state import STATE_FIELDS, parse_live

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
    *STATE_FIELDS,
)
RESERVATION_FIELDS = ("id", "start", "end", "nodes", "gpus", "pool", "amount", "for")
FOR_FIELDS = ("tenants", "jobs")


@dataclass
class Parsed:
    """What the structural pass could build, with the JSON path of every item."""

    name: str = "instance"
    time_unit: str = "s"
    horizon: int | None = None
    now: int = 0
    node_groups: list[tuple[str, NodeGroup]] = field(default_factory=list)
    pools: dict[str, float] = field(default_factory=dict)
    interleaving: Interleaving = field(default_factory=Interleaving)
    priority_policy: str = "strict"
    preemption: Preemption = field(default_factory=Preemption)
    objective: tuple[str, ...] = ("total_weighted_jct",)
    profiles: dict[str, Profile] = field(default_factory=dict)
    power_price: list[PriceInterval] = field(default_factory=list)
    jobs: list[tuple[str, Job]] = field(default_factory=list)
    reservations: list[tuple[str, Reservation]] = field(default_factory=list)
    # Raw ids / names seen even on items with problems, to avoid cascading messages.
    job_ids: list[tuple[str, str]] = field(default_factory=list)  # (path, id)
    group_names: list[tuple[str, str]] = field(default_factory=list)
    reservation_ids: list[tuple[str, str]] = field(default_factory=list)
    profile_names: set[str] = field(default_factory=set)  # inline, even if broken
    pool_names: set[str] = field(default_factory=set)
    cluster_ok: bool = True  # no structural problem under `cluster`
    now_ok: bool = True  # `now` absent or sound: the live state's times are checked against it
    raw: dict[str, dict[str, Any]] = field(default_factory=dict)  # item path -> its JSON


def _job_gpus(
    d: dict[str, Any], path: str, ck: Checker, profiled: bool | None
) -> tuple[Any, tuple[int, ...]]:
    """`gpus`: one count, or for a profiled job a list of allowed counts (contract §12).
    Returns the default count (the first listed) and the allowed counts (() when bad).
    `profiled` None: the job has a model and a duration, so which kind was meant is
    unknown and neither kind's own rule applies (no minimum of 1, a list allowed)."""
    raw = d.get("gpus")
    if not isinstance(raw, list):
        gpus = ck.integer(d, "gpus", path, minimum=1 if profiled else 0)
        return gpus, (gpus,) if gpus is not None else ()
    gp = join(path, "gpus")
    if profiled is False:
        ck.add(gp, "a list of GPU counts needs a model (a job with a duration has one count)")
        return None, ()
    if not raw:
        ck.add(gp, "expected a non-empty array of GPU counts")
        return None, ()
    counts = [ck.int_value(x, f"{gp}[{i}]", minimum=1) for i, x in enumerate(raw)]
    if any(c is None for c in counts):
        return None, ()
    once = tuple(dict.fromkeys(c for c in counts if c is not None))
    if len(once) != len(counts):
        # not fatal: the counts, each once, are still checked against the profile and the
        # nodes, so every problem is told at once (contract §2)
        ck.add(gp, "a GPU count is listed twice", fatal=False)
    return counts[0], once


def parse_job(v: Any, path: str, ck: Checker, out: Parsed) -> None:
    before = ck.fatal
    d = ck.obj(v, path, JOB_FIELDS)
    if d is None:
        return
    out.raw[path] = d
    jid = ck.string(d, "id", path)
    if jid is not None:
        out.job_ids.append((path, jid))
    model = ck.string(d, "model", path, default=None, nullable=True)
    profiled = "model" in d and d["model"] is not None
    # which of the two was meant is unknown: the rules of neither are applied; a null
    # duration is not given, as a null model is
    both = profiled and d.get("duration") is not None
    gpus, counts = _job_gpus(d, path, ck, None if both else profiled)
    if both:
        ck.add(
            join(path, "duration"), "a job has either model + iterations or a duration, not both"
        )
        iterations = duration = None
    elif profiled:
        iterations = ck.integer(d, "iterations", path, minimum=1)
        duration = None
    else:
        iterations = None
        if "iterations" in d:
            ck.add(join(path, "iterations"), "iterations needs a model")
        if d.get("duration") is None:  # a null duration is not given (as a null model)
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
    demand = _demand(d, path, ck)
    live = parse_live(d, path, ck)
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
                    live=live,
                    gpu_counts=counts,
                ),
            )
        )


def _demand(d: dict[str, Any], path: str, ck: Checker) -> dict[str, float]:
    demand: dict[str, float] = {}
    if "demand" in d:
        dm = ck.mapping(d["demand"], join(path, "demand"))
        if dm is not None:
            for k, x in dm.items():
                a = ck.num_value(x, f"{join(path, 'demand')}.{k}")
                if a is not None:
                    demand[k] = a
    return demand


def parse_reservation(v: Any, path: str, ck: Checker, out: Parsed) -> None:
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
    for k, name in enumerate(nodes or ()):
        if name in (nodes or [])[:k]:
            ck.add(f"{join(path, 'nodes')}[{k}]", f"node '{name}' is listed twice")
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
