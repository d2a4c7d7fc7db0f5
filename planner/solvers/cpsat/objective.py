"""Objectives as integer expressions, and their values on a finished schedule.

Weights are floats; CP-SAT needs integers, so every weighted objective is multiplied by
`scale` (the smallest power of ten up to 1000 making all weights integral, see
`model.scale_for`). With weights of at most three decimals the scaled objective is exact;
otherwise weights are rounded to 1/1000 and `exact` is False (the schedule's true value is
still computed from the schedule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ortools.sat.python import cp_model

from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers.cpsat.model import Model, scale_for


@dataclass
class Objective:
    name: str
    expr: cp_model.LinearExprT
    scale: int  # model value = true value * scale
    exact: bool
    aux: dict[str, cp_model.IntVar]  # job -> tardiness var; "makespan" -> makespan var


def weights(instance: Instance) -> tuple[dict[str, int], int, bool]:
    s = scale_for(j.weight for j in instance.jobs)
    w = {j.id: round(j.weight * s) for j in instance.jobs}
    exact = all(abs(j.weight * s - w[j.id]) < 1e-9 for j in instance.jobs)
    return w, s, exact


def add_objective(M: Model, name: str) -> Objective:
    m, inst = M.model, M.instance
    if name == "makespan":
        if M.makespan is None:
            lo = max((jv.earliest_end for jv in M.jobs.values()), default=0)
            M.makespan = m.new_int_var(lo, max(lo, M.horizon), "makespan")
            for jv in M.jobs.values():
                m.add(M.makespan >= jv.end)
        return Objective(name, M.makespan, 1, True, {"makespan": M.makespan})
    w, s, exact = weights(inst)
    if name == "total_weighted_jct":
        expr = sum(w[j] * jv.end for j, jv in M.jobs.items() if w[j]) - sum(
            w[j.id] * j.release for j in inst.jobs
        )
        return Objective(name, expr, s, exact, {})
    if name == "total_weighted_tardiness":
        aux: dict[str, cp_model.IntVar] = {}
        for j in inst.jobs:
            if j.due is None or not w[j.id]:
                continue
            t = m.new_int_var(0, max(0, M.horizon - j.due), f"t_{j.id}")
            m.add(t >= M.jobs[j.id].end - j.due)
            aux[j.id] = t
        expr = sum(w[j] * t for j, t in aux.items())
        return Objective(name, expr, s, exact, aux)
    raise ValueError(f"unknown objective {name!r}")


def value_of(instance: Instance, schedule: Schedule, name: str) -> float:
    """The objective on a schedule, with the instance's float weights (contract §6)."""
    jobs = instance.job_by_id
    ends = {a.id: a.end for a in schedule.jobs}
    if name == "makespan":
        return float(max(ends.values(), default=0))
    if name == "total_weighted_jct":
        return sum(jobs[j].weight * (e - jobs[j].release) for j, e in ends.items())
    if name == "total_weighted_tardiness":
        return sum(
            jobs[j].weight * max(0, e - (jobs[j].due or 0))
            for j, e in ends.items()
            if jobs[j].due is not None
        )
    raise ValueError(f"unknown objective {name!r}")


def values_of(
    instance: Instance, schedule: Schedule, names: tuple[str, ...]
) -> Mapping[str, float]:
    return {n: value_of(instance, schedule, n) for n in names}


def scaled_value(instance: Instance, schedule: Schedule, name: str) -> int:
    """The model's integer objective value for a schedule (for bounds and comparison)."""
    if name == "makespan":
        return int(value_of(instance, schedule, name))
    w, _s, _ = weights(instance)
    jobs = instance.job_by_id
    total = 0
    for a in schedule.jobs:
        j = jobs[a.id]
        if name == "total_weighted_jct":
            total += w[j.id] * (a.end - j.release)
        elif j.due is not None:
            total += w[j.id] * max(0, a.end - j.due)
    return total
