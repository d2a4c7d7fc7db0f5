"""Why an instance is plainly infeasible, for solvers that only say "no schedule found".

A job whose earliest possible end (`planner.bounds.earliest_ends`: release, predecessors,
shortest duration) lies after the horizon or its deadline can never be placed; naming it
and the constraint answers the operator's first question, as the greedy planner does when
it fails on such a job. So can a job that strict priority (R9) makes start no later than
one of its predecessors (`priority_after_conflict`), and one for which too few nodes are
left once those a reservation not admitting it holds whole from its release to the horizon
are taken away (`reserved_out`: a node down for good, contract §9).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from planner.bounds import earliest_ends
from planner.instance import Instance, Job
from planner.precedence import ancestors


def plain_infeasibility(instance: Instance) -> str | None:
    """The first job that cannot meet the horizon or its deadline, or that strict priority
    and `after` put in contradiction; None if there is none."""
    return priority_after_conflict(instance) or missed_limit(instance) or reserved_out(instance)


def missed_limit(
    instance: Instance,
    skip: frozenset[str] = frozenset(),
    ends: Mapping[str, float] | None = None,
) -> str | None:
    """The first job (not in `skip`) whose earliest end (`ends`, else `earliest_ends`) lies
    after the horizon or its deadline, or None."""
    ends = earliest_ends(instance) if ends is None else ends
    for job in instance.jobs:
        if job.id in skip:
            continue
        end = math.ceil(ends[job.id] - 1e-9)
        if instance.horizon is not None and end > instance.horizon:
            return f"job {job.id}: horizon {instance.horizon} passed (earliest end {end})"
        if job.deadline is not None and end > job.deadline:
            return f"job {job.id}: deadline {job.deadline} passed (earliest end {end})"
    return None


def priority_after_conflict(instance: Instance) -> str | None:
    """A job `a` of higher priority than a predecessor `b` (transitively, contract R4)
    released no earlier than it: with `policy.priority` strict, R9 wants `a` to start no
    later than `b`, and `after` wants it to start once `b` has ended, so when `b` takes
    time no schedule exists. The first such pair in instance order, or None."""
    if instance.priority_policy != "strict" or not any(j.after for j in instance.jobs):
        return None
    if len({j.priority for j in instance.jobs}) < 2:
        return None
    before = ancestors(instance)
    index = {j.id: k for k, j in enumerate(instance.jobs)}
    for a in instance.jobs:
        preds = sorted((instance.job_by_id[x] for x in before[a.id]), key=lambda b: index[b.id])
        for b in preds:
            if b.live is not None or a.live is not None:  # started: R9 is not checked
                continue  # between a fixed job and others (README, live state)
            early = instance.arrival(a) <= instance.arrival(b)  # R9's releases
            if a.priority > b.priority and early and not _zero_length(b):
                return (
                    f"job {a.id}: strict priority (R9) has it start no later than {b.id} "
                    f"(lower priority, released no earlier), but it must wait for {b.id} "
                    "to end (after)"
                )
    return None


def _zero_length(job: Job) -> bool:
    return job.duration == 0 if job.duration is not None else not job.iterations


def reserved_out(
    instance: Instance, skip: frozenset[str] = frozenset(), derived: tuple[str, ...] = ()
) -> str | None:
    """The first job (not in `skip`) with too few nodes left on every node group it may
    use, at every GPU count it may run at, once the nodes are taken away whose every GPU
    one reservation not admitting it holds from the job's release to the horizon; None if
    there is none. Reservations whose id starts with one of `derived` are not counted."""
    if instance.horizon is None or not instance.reservations:
        return None
    horizon = instance.horizon
    for base in instance.jobs:
        if base.gpus == 0 or base.id in skip:
            continue
        held = {
            name
            for r in instance.reservations
            if r.nodes
            and not r.id.startswith(derived)
            and r.start <= base.release
            and r.end >= horizon
            and not r.admits.admits(base)
            for name in r.nodes
            if r.gpus is None or len(set(r.gpus)) >= instance.node_by_name[name].gpus
        }
        if not held:
            continue
        if not any(_room(instance, base.at_count(c), held) for c in base.gpu_counts):
            names = ", ".join(sorted(held))
            return (
                f"job {base.id}: too few nodes left for it, {names} reserved until the "
                f"horizon {horizon}"
            )
    return None


def _room(instance: Instance, job: Job, held: set[str]) -> bool:
    """Whether some node group the job may use has the nodes it needs outside `held`."""
    for g in instance.eligible_groups(job):
        need = 1 if job.gpus <= g.gpus else job.gpus // g.gpus
        free = sum(1 for n in instance.nodes if n.group.name == g.name and n.name not in held)
        if free >= need:
            return True
    return False
