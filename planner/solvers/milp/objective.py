"""The MILP's objectives as linear expressions over its start variables (the energy
objectives are `energy.py`'s, which needs the whole model)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import pulp

from planner.instance import ENERGY_OBJECTIVES, Instance
from planner.solvers.milp.constraints import add_row


def sink_jobs(instance: Instance, ends: Mapping[str, Mapping[pulp.LpVariable, float]]) -> list[str]:
    """The jobs (with start variables) no other job waits for: the latest end is theirs."""
    has_succ = {a for j in instance.jobs for a in j.after}
    return [j.id for j in instance.jobs if j.id not in has_succ and ends.get(j.id)]


WEIGHTED = ("total_weighted_jct", "total_weighted_tardiness")
# Weights are valid down to 10^-310: past this scale the coefficients stay small, and the
# shaved bound (`solve.SOLVER_ABS_TOL`) keeps the model's claims true.
WEIGHT_SCALE_MOST = 1e15


def weight_scale(instance: Instance) -> float:
    """The power of ten the weighted objectives are multiplied by in the model, so that the
    largest weight is at least 1: CBC's and HiGHS's tolerances are absolute, and with
    weights of 10^-6 HiGHS called a plan 1% above the optimum optimal, its bound above
    the optimum (tests/test_bounds.py)."""
    most = max((j.weight for j in instance.jobs), default=0.0)
    if not 0.0 < most < 1.0:
        return 1.0
    return min(WEIGHT_SCALE_MOST, 10.0 ** min(300, math.ceil(-math.log10(most))))


def add_objectives(
    instance: Instance,
    prob: pulp.LpProblem,
    ends: Mapping[str, Mapping[pulp.LpVariable, float]],
    sinks: Sequence[str],
    objectives: Sequence[str],
    cmax_floor: float,
    k: float = 1.0,
) -> tuple[dict[str, pulp.LpAffineExpression], pulp.LpVariable | None]:
    """Each objective as a linear expression over the start variables (`ends`: job ->
    start var -> end time); makespan through a Cmax variable bounded below by `cmax_floor`
    and by the end of each of `sinks` (`sink_jobs`). The weighted ones are multiplied by
    `k` (`weight_scale`)."""
    objs: dict[str, pulp.LpAffineExpression] = {}
    cmax = None
    if any(n in ("makespan", *ENERGY_OBJECTIVES) for n in objectives):
        # the energy objectives draw idle power up to the makespan (planner.solvers.milp.energy)
        cmax = prob.add_variable("cmax", lowBound=cmax_floor)
        for i, jid in enumerate(sinks):
            terms = dict(ends[jid])
            terms[cmax] = -1.0
            add_row(prob, terms, pulp.LpConstraintLE, 0, f"cmax_{i}")
    for name in objectives:
        if name in ENERGY_OBJECTIVES:
            continue  # added by planner.solvers.milp.energy, which needs the whole model
        if name == "makespan":
            assert cmax is not None
            objs[name] = pulp.LpAffineExpression({cmax: 1.0})
        elif name == "total_weighted_jct":
            acc: dict[pulp.LpVariable, float] = defaultdict(float)
            for j in instance.jobs:
                for v, e in ends.get(j.id, {}).items():
                    acc[v] += k * j.weight * (e - j.release)
            objs[name] = pulp.LpAffineExpression({v: c for v, c in acc.items() if c})
        elif name == "total_weighted_tardiness":
            acc = defaultdict(float)
            for j in instance.jobs:
                if j.due is None:
                    continue
                for v, e in ends.get(j.id, {}).items():
                    if e > j.due:
                        acc[v] += k * j.weight * (e - j.due)
            objs[name] = pulp.LpAffineExpression({v: c for v, c in acc.items() if c})
        else:
            raise ValueError(f"unknown objective {name!r}")
    return objs, cmax
