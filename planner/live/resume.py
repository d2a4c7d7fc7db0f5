"""Running jobs that must stop and resume later (contract §8-9, preemption on).

A running job whose GPUs a reservation for others takes before its segment would end (a
node that failed at `now`, a maintenance hold to come) cannot keep its segment. With
preemption enabled its segment ends when the first such reservation begins (`now` at the
earliest: a node down) and the rest of its work runs later as a second segment that begins
with its restart cost. Running on until then keeps the work it does meanwhile, as the
preemptive simulation policies do; a plan that stops it at `now` instead frees its GPUs
sooner, which `planner.solvers.dispatch` tries too (`stop_times(..., at_now=True)`).
A co-member that no reservation stops (it ends before the hold begins, or the hold admits
it) runs on without it at the smaller group's rates (§8, `running.runs_until`), or
stops with it (`with_group`): `planner.live.residual.stop_choices` gives the solvers both.
`planner.live.residual` plans the rest as a waiting job of its own (`resume_job`), same id,
released when the segment ends, whose solo duration on any node is exactly what §8 gives
for the second segment: restart plus the work left at the node's speed. For
a profiled job that is a one-iteration profile of its own whose GPU stage is the work
left's GPU stage (so node speed scales it as §4 does) and whose other stages lump the rest
together with the restart. Such a group would not run as §8 says (the job's iterations
are not interleaved one by one), so the profile is marked `alone` and no planner groups
it (`durations.inadmissible_reason`); `planner.solvers.dispatch` still falls back to a
plan without groups if one ever did.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from planner.durations import restart_units
from planner.instance import GpuProfile, Instance, Job, Profile, Reservation, Stages
from planner.live.running import fixed_assignments
from planner.schedule import Assignment

RESUME = "~resume:"  # model name prefix of a resumed job's own profile


def stop_times(inst: Instance, at_now: bool = False, with_group: bool = False) -> dict[str, int]:
    """Running jobs that must stop (`must_stop`), each with the time its segment ends, on
    the ends that their stops leave the others: a co-member that runs on without a stopped
    job runs at the smaller group's rates (`running.runs_until`), which may be slower
    and meet a reservation it missed before, so this repeats until no job is added. With
    `with_group` a stopped job's running co-members stop with it (when the first member
    of their group stops), unless they end before. Empty when preemption is disabled."""
    stops: dict[str, int] = {}
    while inst.preemption.enabled:
        fixed = fixed_assignments(inst, stops)
        more = {k: t for k, t in must_stop(inst, fixed, at_now).items() if k not in stops}
        if with_group:
            more.update(_with_group(inst, fixed, {**stops, **more}))
        if not more:
            break
        stops.update(more)
    return stops


def _with_group(
    inst: Instance, fixed: Mapping[str, Assignment], stops: Mapping[str, int]
) -> dict[str, int]:
    """The running co-members of jobs in `stops` that end after their group's first stop,
    and not in `stops` themselves, each stopped then."""
    first: dict[str, int] = {}
    for jid, t in stops.items():
        label = fixed[jid].group
        if label is not None:
            first[label] = min(t, first.get(label, t))
    out = {}
    for jid, a in fixed.items():
        at = first.get(a.group) if a.group is not None else None
        running = inst.job_by_id[jid].state == "running"
        if at is not None and jid not in stops and running and a.end > at:
            out[jid] = at
    return out


def must_stop(
    inst: Instance, fixed: Mapping[str, Assignment], at_now: bool = False
) -> dict[str, int]:
    """Running jobs whose GPUs a reservation that does not admit them takes before they end
    in `fixed`, each with the time its segment ends: when the first such reservation
    begins, or `now` with `at_now`. Empty when preemption is disabled."""
    if not inst.preemption.enabled:
        return {}
    out: dict[str, int] = {}
    for jid, a in fixed.items():
        j = inst.job_by_id[jid]
        if not (j.state == "running" and a.start < inst.now < a.end):
            continue
        starts = [max(r.start, inst.now) for r in inst.reservations if _blocks(r, j, a, inst.now)]
        if starts:
            out[jid] = inst.now if at_now else min(starts)
    return out


def _blocks(r: Reservation, j: Job, a: Assignment, now: int) -> bool:
    if r.pool is not None or r.admits.admits(j) or r.end <= now or r.start >= a.end:
        return False
    return any(
        p.node in r.nodes and (r.gpus is None or set(r.gpus) & set(p.gpus)) for p in a.placement
    )


def resume_job(inst: Instance, j: Job, done: float, at: int) -> tuple[Job, Profile | None]:
    """The rest of `j` after `done` work, as a waiting job released at `at` (and its own
    profile). An elastic job may resume at any of its counts (contract §12: the restart
    cost and the iteration time are the profile's at the new count), so its profile has
    each of them."""
    base = replace(j, live=None, release=at, after=())
    if not j.profiled:
        left = max(0, math.ceil((j.duration or 0) - done - 1e-9))
        return replace(base, duration=restart_units(inst, j) + left), None
    left_it = max(0.0, (j.iterations or 0) - done)
    prof = inst.profiles[j.model or ""]
    own = {c: _rest(inst, j.at_count(c), left_it) for c in j.gpu_counts}
    name = RESUME + j.id
    profile = Profile(name, own, prof.gpu_mem_gb, prof.batch_size, alone=True)
    return replace(base, model=name, iterations=1), profile


def _rest(inst: Instance, j: Job, left_it: float) -> GpuProfile:
    """The rest of profiled `j` at its count `j.gpus` as one "iteration" (module docstring)."""
    gp = inst.gpu_profile(j)
    total = restart_units(inst, j) * inst.unit_ms + left_it * gp.iteration_ms
    gpu = left_it * gp.stages.gpu
    # a later stop and restart of the rest costs what the job's own restart costs (§8)
    return GpuProfile(total, Stages(total - gpu, gpu, 0.0), gp.restart_ms)
