"""Objective values, valid simple lower bounds, objective cuts on end times, and the
correction that turns a grid bound into a bound of the exact problem.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from planner.instance import Instance
from planner.precedence import heads_tails
from planner.schedule import Schedule
from planner.solvers.milp.model import Unit

_TOL = 1e-6


def values(instance: Instance, schedule: Schedule, names: Sequence[str]) -> tuple[float, ...]:
    from planner.metrics import objective_values

    v = objective_values(instance, schedule, names)
    return tuple(float(v[n]) for n in names)


def better(a: Sequence[float], b: Sequence[float]) -> bool:
    """Lexicographically strictly smaller, with a small tolerance."""
    for x, y in zip(a, b, strict=True):
        if x < y - _TOL * max(1.0, abs(y)):
            return True
        if x > y + _TOL * max(1.0, abs(y)):
            return False
    return False


def min_durations(instance: Instance, units: Sequence[Unit]) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in units:
        for m in u.members:
            out[m.job.id] = min(out.get(m.job.id, m.duration), m.duration)
    return out


def earliest_starts(instance: Instance, pmin: Mapping[str, int]) -> dict[str, int]:
    """Release and precedence only (a valid earliest start of every job)."""
    return heads_tails(instance, pmin)[0]


def simple_bounds(
    instance: Instance, units: Sequence[Unit], names: Sequence[str]
) -> dict[str, float]:
    """Bounds valid for every schedule, whatever the grid.

    makespan: the longest release + precedence chain with shortest durations, and per pool
    (and per cluster GPUs when nothing can interleave) the energy bound work / capacity.
    total_weighted_jct / tardiness: each job ends no earlier than its chain bound.
    """
    pmin = min_durations(instance, units)
    es = earliest_starts(instance, pmin)
    out: dict[str, float] = {}
    for name in names:
        if name == "makespan":
            lb = max((es[j.id] + pmin.get(j.id, 0) for j in instance.jobs), default=0)
            for pool, cap in instance.pools.items():
                work = sum(j.demand.get(pool, 0.0) * pmin.get(j.id, 0) for j in instance.jobs)
                if cap > 0:
                    lb = max(lb, math.ceil(work / cap - 1e-9))
            if not any(u.group for u in units):
                gpus = sum(n.gpus for n in instance.nodes)
                work = sum(j.gpus * pmin.get(j.id, 0) for j in instance.jobs)
                if gpus > 0:
                    lb = max(lb, math.ceil(work / gpus - 1e-9))
            out[name] = float(lb)
        elif name == "total_weighted_jct":
            out[name] = sum(
                j.weight * (es[j.id] + pmin.get(j.id, 0) - j.release) for j in instance.jobs
            )
        elif name == "total_weighted_tardiness":
            out[name] = sum(
                j.weight * max(0, es[j.id] + pmin.get(j.id, 0) - j.due)
                for j in instance.jobs
                if j.due is not None
            )
    return out


def end_caps(instance: Instance, units: Sequence[Unit], name: str, value: float) -> dict[str, int]:
    """Latest end of each job in ANY schedule whose `name` objective is <= `value` (the
    greedy's). So the caps cut off no optimal schedule; jobs absent are not capped.

    makespan: end <= value. Weighted JCT: w_j (end_j - r_j) <= value - sum over the other
    jobs of their lower bounds. Weighted tardiness: the same with tardiness terms.
    """
    pmin = min_durations(instance, units)
    es = earliest_starts(instance, pmin)
    caps: dict[str, int] = {}
    if name == "makespan":
        return {j.id: math.floor(value + 1e-9) for j in instance.jobs}
    if name == "total_weighted_jct":
        lbs = {j.id: j.weight * (es[j.id] + pmin.get(j.id, 0) - j.release) for j in instance.jobs}
        total = sum(lbs.values())
        for j in instance.jobs:
            if j.weight > 0:
                slack = value - (total - lbs[j.id])
                caps[j.id] = j.release + math.floor(slack / j.weight + 1e-9)
        return caps
    if name == "total_weighted_tardiness":
        lbs = {
            j.id: j.weight * max(0, es[j.id] + pmin.get(j.id, 0) - j.due)
            for j in instance.jobs
            if j.due is not None
        }
        total = sum(lbs.values())
        for j in instance.jobs:
            if j.due is not None and j.weight > 0:
                slack = value - (total - lbs[j.id])
                caps[j.id] = j.due + math.floor(slack / j.weight + 1e-9)
        return caps
    return caps


def tails(instance: Instance, units: Sequence[Unit]) -> dict[str, int]:
    """Shortest time from a job's end to the end of its last successor chain."""
    return heads_tails(instance, min_durations(instance, units))[1]


def tighten(caps: dict[str, int], horizon: int | None, tail: Mapping[str, int]) -> dict[str, int]:
    """A job must end early enough for its successors to end by their caps / the horizon."""
    out = dict(caps)
    for jid, t in tail.items():
        if horizon is not None:
            out[jid] = min(out.get(jid, horizon), horizon - t)
    return out


def semi_active_horizon(instance: Instance, units: Sequence[Unit]) -> int:
    """A time by which every job ends in SOME optimal schedule, for any regular objective.

    Left-shifting jobs one unit at a time never raises makespan, JCT or tardiness and keeps
    every rule, so some optimal schedule is semi-active: each start is a release, the end
    of a job or reservation, or (R9) another job's start. Chaining those, no job ends after
    the last release or reservation end plus the sum of every job's longest duration.
    """
    longest: dict[str, int] = {}
    for u in units:
        for m in u.members:
            longest[m.job.id] = max(longest.get(m.job.id, 0), m.duration)
    origin = max([j.release for j in instance.jobs] + [r.end for r in instance.reservations] + [0])
    return origin + sum(longest.values())


def rounding_allowance(units: Sequence[Unit], length: int, upper: float) -> float:
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
