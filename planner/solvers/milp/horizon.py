"""The MILP model's horizon and each job's latest end (`horizon_and_end_caps`, as
`planner.solvers.cpsat.horizon` for CP-SAT), from per-job durations over the model's
units and the latest ends left for successors; and the correction that turns a grid
bound into a bound of the exact problem. (Objective values, end caps and the semi-active
horizon are planner.solvers.exact's; simple bounds are planner.bounds'.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planner.energy import extra_watts, idle_watts, kwh_per_watt_unit
from planner.instance import Instance
from planner.precedence import heads_tails
from planner.schedule import Schedule
from planner.solvers.exact import end_caps, price_wait, semi_active_horizon
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


# For sum objectives the valid end caps can reach far beyond the greedy makespan; the grid
# stops at this multiple of it (and then cannot claim optimality). Chosen, not tuned.
SUM_HORIZON_FACTOR = 2.0


@dataclass(frozen=True)
class Horizon:
    length: int  # the horizon before gridding
    exact: bool  # cuts off no optimal schedule
    caps: dict[str, int]  # valid latest ends


def horizon_and_end_caps(
    instance: Instance,
    units: Sequence[StartUnit],
    names: Sequence[str],
    start: Schedule | None,
    gvals: dict[str, float] | None,
) -> Horizon:
    """The horizon, whether it is exact, and the valid end caps (planner.solvers.exact:
    the semi-active horizon plus `price_wait` holds some optimal schedule); on an exact
    horizon the caps also leave each job's successors room (tails)."""
    first = names[0]
    semi = semi_active_horizon(instance, max_durations(units))
    last = price_wait(instance, names)
    exact = True
    caps: dict[str, int] = {}
    horizon = last + semi  # valid for every objective (above, and semi_active_horizon)
    if start is not None and gvals is not None:
        caps = end_caps(instance, min_durations(instance, units), first, gvals[first])
        if first == "energy_kwh":
            caps = kwh_caps(instance, units, gvals[first])
        start_end = max((a.end for a in start.jobs), default=0)
        if first == "makespan":
            horizon = start_end
        else:
            need = last + semi
            if len(caps) == len(instance.jobs):
                need = min(need, max(caps.values(), default=0))
            reach = SUM_HORIZON_FACTOR * max(start_end, last)
            horizon = int(max(start_end, min(need, reach)))
            exact = need <= horizon
    if instance.horizon is not None:
        if horizon >= instance.horizon:
            exact = True  # the instance's own horizon is the true limit
        horizon = min(horizon, instance.horizon)
    horizon = max(horizon, 1)
    if exact:
        caps = tighten(caps, horizon, tails(instance, units))
    return Horizon(horizon, exact, caps)
