"""Pass 2 of reading an instance: cross-references between its parts.

Runs on what the structural pass (`planner.structure`) could build; ids and names of items that
had structural problems still count as known, so one typo is reported once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from planner.checker import join, suggest
from planner.durations import solo_iteration_ms
from planner.errors import Problem, gpus_phrase
from planner.instance import Instance, Job, Profile, Reservation, over
from planner.limits import MAX_DURATION
from planner.live.state import check_live_input, ends_before_now
from planner.precedence import cycles
from planner.structure_items import Parsed


def cross_check(p: Parsed, instance: Instance, available: Mapping[str, Profile]) -> list[Problem]:
    out: list[Problem] = []
    _duplicates(p, instance, out)
    job_ids = {jid for _, jid in p.job_ids}
    group_names = {g for _, g in p.group_names}
    for path, job in p.jobs:
        _check_job_refs(p, instance, available, path, job, job_ids, group_names, out)
    _unbuilt_after(p, job_ids, out)
    out += after_cycles(p)
    out += check_live_input(p.jobs, instance, p.now_ok, p.cluster_ok)
    if not out and instance.is_live and p.cluster_ok:  # it runs the placed jobs on
        out += ends_before_now(p.jobs, instance)
    for path, r in p.reservations:
        raw = p.raw[path]
        for k, name in enumerate(r.nodes):
            node = instance.node_by_name.get(name)
            if node is None:
                if p.cluster_ok:
                    out.append(
                        Problem(
                            f"{path}.nodes[{k}]",
                            f"unknown node '{name}'{suggest(name, instance.node_by_name)}",
                        )
                    )
                continue
            for i, g in enumerate(r.gpus or ()):
                if g >= node.gpus:
                    out.append(
                        Problem(
                            f"{path}.gpus[{i}]",
                            f"GPU {g} is outside node {name} (GPUs 0-{node.gpus - 1})",
                        )
                    )
        if r.pool is not None and p.cluster_ok:  # a bad cluster: its pools are unknown
            if r.pool not in p.pool_names:
                out.append(
                    Problem(
                        f"{path}.pool", f"unknown pool '{r.pool}'{suggest(r.pool, p.pool_names)}"
                    )
                )
            elif r.pool in p.pools and over(r.amount, p.pools[r.pool]):
                out.append(
                    Problem(
                        f"{path}.amount",
                        f"{r.amount:g} is more than the pool's capacity {p.pools[r.pool]:g}",
                    )
                )
            elif r.pool in p.pools:
                out += _overbooked(p, path, r)
        admits: Any = raw.get("for") or {}
        for k, jid in enumerate(admits.get("jobs", [])):
            if jid not in job_ids:
                out.append(
                    Problem(f"{path}.for.jobs[{k}]", f"unknown job '{jid}'{suggest(jid, job_ids)}")
                )
    return out


def idle_tenants(instance: Instance) -> list[str]:
    """Notes on reservations that admit a tenant no job has: valid (a tenant is a label,
    not a reference, and a team's GPUs may be held before its jobs arrive), but such a
    name holds its GPUs for nobody of this instance, and may be a typo (README)."""
    tenants = {j.tenant for j in instance.jobs if j.tenant is not None}
    notes = []
    for k, r in enumerate(instance.reservations):
        for t in sorted(r.admits.tenants - tenants):
            notes.append(
                f"reservations[{k}] ('{r.id}'): no job has tenant '{t}'{suggest(t, tenants)}; "
                "it admits none of this instance's jobs under that name"
            )
    return notes


def _overbooked(p: Parsed, path: str, r: Reservation) -> list[Problem]:
    """Reservations of one pool that together hold more than its capacity when `r` starts
    (R8 asks every job's demand to fit in capacity minus what they hold: no schedule
    could run anything then). Reported at the one that starts last, once."""
    assert r.pool is not None
    if r.end <= r.start:
        return []  # holds nothing
    here = [
        (q_path, q)
        for q_path, q in p.reservations
        if q.pool == r.pool and q.start <= r.start < q.end
    ]
    if any((q.start, q_path) > (r.start, path) for q_path, q in here):
        return []  # reported at the later one
    held = sum(q.amount for _, q in here)
    cap = p.pools[r.pool]
    if not over(held, cap):
        return []
    others = ", ".join(q.id for q_path, q in here if q_path != path)
    return [
        Problem(
            f"{path}.amount",
            f"with {others} it holds {held:g} of pool '{r.pool}' (capacity {cap:g}) at "
            f"time {r.start}",
        )
    ]


def _duplicates(p: Parsed, instance: Instance, out: list[Problem]) -> None:
    for what, items in (
        ("job id", p.job_ids),
        ("node group", p.group_names),
        ("reservation id", p.reservation_ids),
    ):
        first: dict[str, str] = {}
        for path, name in items:
            if name in first:
                out.append(Problem(path, f"duplicate {what} '{name}' (also at {first[name]})"))
            else:
                first[name] = path
    seen: set[str] = set()
    for node in instance.nodes:
        if node.name in seen and node.name not in {g for _, g in p.group_names}:
            out.append(Problem("cluster.nodes", f"two node groups expand to node '{node.name}'"))
        seen.add(node.name)


def _check_job_refs(
    p: Parsed,
    instance: Instance,
    available: Mapping[str, Profile],
    path: str,
    job: Job,
    job_ids: set[str],
    group_names: set[str],
    out: list[Problem],
) -> None:
    raw = p.raw[path]
    runnable = True  # profile resolved, so Instance.misfit may be asked
    if job.model is not None:
        prof = available.get(job.model)
        if prof is None:
            runnable = False
            if job.model not in p.profile_names:  # a broken inline profile is reported already
                out.append(
                    Problem(
                        f"{path}.model",
                        f"unknown model '{job.model}': not in "
                        f"profiles nor in the model catalogue (`plan models` lists it)"
                        f"{suggest(job.model, available)}",
                    )
                )
        else:
            runnable = counts_profiled(path, job, prof, out)
    _after_refs(raw, path, job_ids, out)
    out += job_limits(instance, path, job, group_names, p.pool_names, p.pools, p.cluster_ok)
    if job.gpus > 0 and runnable and p.cluster_ok:
        out += job_fit(instance, path, job)


def _after_refs(raw: dict[str, Any], path: str, job_ids: set[str], out: list[Problem]) -> None:
    for k, dep in enumerate(raw.get("after", [])):
        if isinstance(dep, str) and dep not in job_ids:  # not a string: told already
            out.append(Problem(f"{path}.after[{k}]", f"unknown job '{dep}'{suggest(dep, job_ids)}"))


def _unbuilt_after(p: Parsed, job_ids: set[str], out: list[Problem]) -> None:
    """The `after` references of jobs that a field's problem kept from being built, so
    that every problem is told at once (README: `plan validate` lists every problem)."""
    built = {path for path, _ in p.jobs}
    for path, raw in p.raw.items():
        if not path.startswith("jobs[") or path in built or not isinstance(raw.get("after"), list):
            continue
        _after_refs(raw, path, job_ids, out)


def job_limits(
    instance: Instance,
    path: str,
    job: Job,
    group_names: set[str],
    pool_names: set[str],
    pools: Mapping[str, float],
    cluster_ok: bool = True,
) -> list[Problem]:
    """The job's node groups and pools are known and the pools hold its demand (unless the
    cluster, which names them, has problems of its own: then they are not known); its
    deadline and the horizon come no sooner than its release (`plan replan` asks this of
    the jobs it adds)."""
    out = []
    node_types, demand = (job.node_types or (), job.demand) if cluster_ok else ((), {})
    for k, g in enumerate(node_types):
        if g not in group_names:
            out.append(
                Problem(
                    f"{path}.node_types[{k}]", f"unknown node group '{g}'{suggest(g, group_names)}"
                )
            )
    for pool, amount in demand.items():
        if pool not in pool_names:
            out.append(
                Problem(
                    f"{path}.demand.{pool}", f"unknown pool '{pool}'{suggest(pool, pool_names)}"
                )
            )
        elif pool in pools and over(amount, pools[pool]):
            out.append(
                Problem(
                    f"{path}.demand.{pool}",
                    f"demand {amount:g} exceeds the pool's capacity {pools[pool]:g}",
                )
            )
    if job.deadline is not None and job.release > job.deadline:
        out.append(
            Problem(f"{path}.deadline", f"deadline {job.deadline} is before release {job.release}")
        )
    if instance.horizon is not None and job.release > instance.horizon:
        out.append(
            Problem(
                f"{path}.release", f"release {job.release} is after the horizon {instance.horizon}"
            )
        )
    return out


def job_fit(instance: Instance, path: str, job: Job) -> list[Problem]:
    """The job fits some node group it may use at each of its GPU counts (asked once its
    profile resolved, `counts_profiled`)."""
    out: list[Problem] = []
    for k, c in enumerate(job.gpu_counts):
        where = f"{path}.gpus[{k}]" if job.elastic else path
        _check_fit(instance, where, job.at_count(c), out)
    return out


def counts_profiled(path: str, job: Job, prof: Profile, out: list[Problem]) -> bool:
    """Every GPU count the job may run at is in its profile (contract §3, §12)."""
    ok = True
    for k, c in enumerate(job.gpu_counts):
        if c not in prof.by_gpus:
            ok = False
            counts = ", ".join(str(g) for g in prof.by_gpus)
            where = f"{path}.gpus[{k}]" if job.elastic else f"{path}.gpus"
            msg = f"{job.model} has no profile for {gpus_phrase(c)} (it runs at {counts})"
            out.append(Problem(where, msg))
    return ok


def _check_fit(instance: Instance, path: str, job: Job, out: list[Problem]) -> None:
    """The job fits some node group it may use (only asked once its profile resolved)."""
    allowed = [
        g for g in instance.node_groups if job.node_types is None or g.name in job.node_types
    ]
    if not instance.node_groups:
        out.append(Problem(path, f"job '{job.id}' fits no node (the cluster has no nodes)"))
        return
    if not allowed or _too_long(instance, job, allowed, path, out):
        return  # only unknown node types (reported above), or a length out of bounds
    reasons = [(g.name, instance.misfit(job, g)) for g in allowed]
    if all(r is not None for _, r in reasons):
        why = "; ".join(f"{name}: {r}" for name, r in reasons)
        out.append(Problem(path, f"job '{job.id}' fits no node ({why})"))


def after_cycles(p: Parsed) -> list[Problem]:
    """One problem per cycle in `after`, naming its jobs in order, each waiting for the next."""
    order = {j.id: i for i, (_, j) in enumerate(p.jobs)}
    path_of = {j.id: path for path, j in p.jobs}
    edges = {j.id: list(j.after) for _, j in p.jobs}
    found = []
    for cyc in cycles(edges):  # each cycle from its job first in the instance
        start = min(range(len(cyc)), key=lambda k: order[cyc[k]])
        found.append(cyc[start:] + cyc[:start])
    problems = []
    seen: set[tuple[str, ...]] = set()
    for cyc in found:
        if tuple(cyc) in seen:
            continue
        seen.add(tuple(cyc))
        text = " -> ".join(cyc + [cyc[0]])
        problems.append(
            Problem(
                join(path_of[cyc[0]], "after"),
                f"cycle in after (each job waits for the next): {text}",
            )
        )
    return problems


def _too_long(instance: Instance, job: Job, groups: Any, path: str, out: list[Problem]) -> bool:
    """A profiled job whose duration on its slowest allowed node exceeds MAX_DURATION
    (a huge iteration count or a tiny node speed) is refused before any arithmetic
    overflows. A vanishing iteration time is not refused: its duration is a unit, as
    contract §4's ceiling gives (`durations.ceil_units`)."""
    if job.iterations is None:
        return False
    gp = instance.gpu_profile(job)
    times = [job.iterations * solo_iteration_ms(gp, g.speed) for g in groups]
    if all(math.isfinite(ms) and ms / instance.unit_ms <= MAX_DURATION for ms in times):
        return False
    why = f"would run longer than the limit {MAX_DURATION:g} time units"
    out.append(Problem(path, f"job '{job.id}' {why}"))
    return True
