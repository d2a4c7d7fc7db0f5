"""The CP-SAT model's horizon and each job's latest end.

Some optimal schedule is semi-active, so every job ends
by exact.semi_active_horizon (plus the time group holds may outlast their members): a
safe bound for every objective. It is tightened by the instance horizon and deadlines,
and, for the first objective, by the start's value: makespan <= the start's makespan;
for the sum objectives exact.end_caps (a job's own term may use at most the start's
value less the other jobs' lower bounds). None of these cuts off a schedule at least as
good as the start, so "optimal" and the bound stay proofs.
"""

from __future__ import annotations

from planner.groups import CandidateGroup
from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers.cpsat.variables import option_durations
from planner.solvers.exact import (
    MAX_GROUPS_PER_JOB,
    end_caps,
    price_wait,
    semi_active_horizon,
    values,
)


def max_per_job(instance: Instance) -> int:
    """Candidate groups kept per job (planner.groups keeps each job's most efficient ones,
    partners of similar length): fewer on big instances to keep the model small (the
    150 and 400 jobs were chosen, not tuned)."""
    n = len(instance.jobs)
    return MAX_GROUPS_PER_JOB if n <= 150 else 3 if n <= 400 else 2


def horizon_and_end_caps(
    instance: Instance,
    names: tuple[str, ...],
    start: Schedule | None,
    groups: list[CandidateGroup],
) -> tuple[int, dict[str, int]]:
    """The model's horizon and each job's latest end (planner.solvers.exact's rules, with
    the instance horizon and deadlines, and the start's makespan for makespan first)."""
    durations = {j.id: option_durations(instance, j, groups) for j in instance.jobs}
    longest = {jid: max(d) for jid, d in durations.items()}
    spans = sum(c.span for c in groups)  # a group's hold may outlast its members
    # waiting for a cheaper price may pay: room for it, and still a proof (`price_wait`)
    horizon = semi_active_horizon(instance, longest, spans) + price_wait(instance, names)
    if instance.horizon is not None:
        horizon = min(horizon, instance.horizon)
    first = names[0]
    if start is not None and first == "makespan":
        horizon = min(horizon, max((a.end for a in start.jobs), default=0))
    ub = {j.id: horizon if j.deadline is None else min(horizon, j.deadline) for j in instance.jobs}
    if start is not None and first != "makespan":
        pmin = {jid: min(d) for jid, d in durations.items()}
        value = values(instance, start, (first,))[0]
        for jid, cap in end_caps(instance, pmin, first, value).items():
            ub[jid] = min(ub[jid], cap)
    return horizon, ub
