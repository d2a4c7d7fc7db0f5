"""Ordering rules of the greedy planner: which ready job is placed next.

Every rule gives a static sort key per job. The serial engine (`serial.py`) picks, among
the jobs whose predecessors are placed, the one with the smallest key; the event-driven
engine (`events.py`) and the improvement search use the keys' order as list positions
(`solve.rule_ranks`). Under `policy.priority = "strict"` the key starts with the job's
*effective* priority (descending): its own priority raised to the highest priority of any
job that (transitively) depends on it, so that a low-priority predecessor of an important
job is placed before the jobs the important one must not wait behind. The rule's own key
follows, then the job id, so that ties are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from planner.durations import solo_duration
from planner.instance import Instance, Job
from planner.precedence import effective_priorities

# The only list of the rules. Its order is the order in which the improvement search tries
# the static ones (interleave's order is srsf's): the default first.
RULES = ("srsf", "sjf", "fifo", "priority", "interleave")

Key = tuple[float | int | str, ...]


def default_rule(instance: Instance) -> str:
    return "interleave" if instance.interleaving.enabled else "srsf"


def best_solo_duration(instance: Instance, job: Job) -> int:
    """Shortest solo duration over the node groups the job may use."""
    if job.duration is not None or job.gpus == 0:
        return solo_duration(instance, job)
    groups = instance.eligible_groups(job)
    if not groups:
        return solo_duration(instance, job)
    return min(solo_duration(instance, job, g.speed) for g in groups)


def rule_key(rule: str, solo: Mapping[str, int], instance: Instance) -> Callable[[Job], Key]:
    """The rule's own part of the sort key (without priority class and id). A job's
    arrival is `Instance.order_arrival` (its release, or in a live state's residual the
    release it had before `now`: queued jobs keep their arrival order there) and the
    `priority` rule's priority `Instance.order_priority` (a stopped job's own)."""
    came, prio = instance.order_arrival, instance.order_priority
    if rule == "fifo":
        return lambda j: (came(j),)
    if rule == "sjf":
        return lambda j: (solo[j.id], came(j))
    if rule in ("srsf", "interleave"):
        # Smallest GPU-time first; GPU-less jobs count as one GPU so that they still sort
        # by length among themselves.
        return lambda j: (max(j.gpus, 1) * solo[j.id], solo[j.id], came(j))
    if rule == "priority":
        inf = float("inf")
        return lambda j: (-prio(j), j.due if j.due is not None else inf, came(j))
    raise ValueError(f"unknown greedy rule {rule!r}")


def sort_keys(instance: Instance, rule: str, solo: Mapping[str, int]) -> dict[str, Key]:
    """Full static key per job: (effective priority desc under strict, rule key, id)."""
    own = rule_key(rule, solo, instance)
    strict = instance.priority_policy == "strict"
    eff = effective_priorities(instance) if strict else {}
    return {j.id: ((-eff[j.id],) if strict else ()) + own(j) + (j.id,) for j in instance.jobs}
