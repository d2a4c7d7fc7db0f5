"""Per-job durations over the model's units, latest ends left for successors, and the
correction that turns a grid bound into a bound of the exact problem. (Objective values,
end caps and the semi-active horizon are planner.solvers.exact's; simple bounds are
planner.bounds'.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from planner.energy import extra_watts, idle_watts, kwh_per_watt_unit
from planner.instance import Instance
from planner.precedence import heads_tails
from planner.solvers.milp.variables import StartUnit


def min_durations(instance: Instance, units: Sequence[StartUnit]) -> dict[str, int]:
    """Each job's shortest duration over the units it belongs to."""
    out: dict[str, int] = {}
    for u in units:
        for m in u.members:
            out[m.job.id] = min(out.get(m.job.id, m.duration), m.duration)
    return out


def max_durations(units: Sequence[StartUnit]) -> dict[str, int]:
    """Each job's longest duration over the units it belongs to."""
    longest: dict[str, int] = {}
    for u in units:
        for m in u.members:
            longest[m.job.id] = max(longest.get(m.job.id, 0), m.duration)
    return longest


def tails(instance: Instance, units: Sequence[StartUnit]) -> dict[str, int]:
    """Shortest time from a job's end to the end of its last successor chain."""
    return heads_tails(instance, min_durations(instance, units))[1]


def tighten(caps: dict[str, int], horizon: int | None, tail: Mapping[str, int]) -> dict[str, int]:
    """A job must end early enough for its successors to end by their caps / the horizon."""
    out = dict(caps)
    for jid, t in tail.items():
        if horizon is not None:
            out[jid] = min(out.get(jid, horizon), horizon - t)
    return out


def rounding_allowance(units: Sequence[StartUnit], length: int, upper: float) -> float:
    """How much later than an exact schedule of makespan C <= `upper` a grid schedule can
    be forced to end (slot length `length`).

    Shift every job of an exact schedule to s' = ceil_L(s + D), where D grows along chains
    of jobs that follow one another in time by (L - 1) + (rounded-up - exact duration) per
    job, and is made non-decreasing in start order (keeps R9). Jobs that did not overlap
    still do not; jobs that run together in the grid pairwise overlapped in the exact
    schedule, so (intervals: Helly) they overlapped at one instant and fit. So the grid has
    a schedule ending by C + (allowance of the worst chain). A chain's exact durations sum
    to at most C <= upper: the worst chain is bounded by a fractional knapsack, which is
    what this returns. Valid without reservations and deadlines (the shift may move a job
    into a reserved window or past its deadline); the caller checks that.
    """
    items: dict[str, tuple[float, float]] = {}
    for u in units:
        for m in u.members:
            a = (length - 1) + (-(-m.duration // length) * length - m.duration)
            p, old = items.get(m.job.id, (float(m.duration), 0.0))
            items[m.job.id] = (min(p, m.duration), max(old, a))
    total = 0.0
    room = float(upper)
    for dur, allow in sorted(
        items.values(), key=lambda e: -(e[1] / e[0]) if e[0] > 0 else -math.inf
    ):
        if dur <= 0:
            total += allow
        elif dur <= room:
            total += allow
            room -= dur
        else:
            total += allow * room / dur
            break
    return total


def kwh_caps(instance: Instance, units: Sequence[StartUnit], value: float) -> dict[str, int]:
    """Latest end of every job in any schedule with energy_kwh <= `value` (the start's).

    energy_kwh >= idle watts x makespan + the least busy draw, in watt-time units, and the
    makespan is at least any job's end. The least busy draw: each job covered once, by a
    unit whose busy draw (extra watts x GPUs x hold) its members share equally, so the sum
    over jobs of their smallest share. No caps without idle draw."""
    idle = idle_watts(instance)
    if idle <= 0:
        return {}
    share: dict[str, float] = {}
    for u in units:
        ng = u.node_group
        draw = 0.0 if ng is None else extra_watts(ng) * u.gpus * u.hold
        for m in u.members:
            each = draw / len(u.members)
            share[m.job.id] = min(share.get(m.job.id, each), each)
    budget = value / kwh_per_watt_unit(instance) - sum(share.values())
    cap = math.floor(budget / idle + 1e-6)
    return {j.id: cap for j in instance.jobs}
