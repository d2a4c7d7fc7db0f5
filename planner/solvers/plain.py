"""Why an instance is plainly infeasible, for solvers that only say "no schedule found".

A job whose earliest possible end (`planner.bounds.earliest_ends`: release, predecessors,
shortest duration) lies after the horizon or its deadline can never be placed; naming it
and the constraint answers the operator's first question, as the greedy planner does when
it fails on such a job.
"""

from __future__ import annotations

import math

from planner.bounds import earliest_ends
from planner.instance import Instance


def plain_infeasibility(instance: Instance) -> str | None:
    """The first job that cannot meet the horizon or its deadline, or None."""
    ends = earliest_ends(instance)
    for job in instance.jobs:
        end = math.ceil(ends[job.id] - 1e-9)
        if instance.horizon is not None and end > instance.horizon:
            return f"job {job.id}: horizon {instance.horizon} passed (earliest end {end})"
        if job.deadline is not None and end > job.deadline:
            return f"job {job.id}: deadline {job.deadline} passed (earliest end {end})"
    return None
