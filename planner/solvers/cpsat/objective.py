"""Objectives as integer expressions (values on a schedule: planner.metrics).

Weights are floats; CP-SAT needs integers, so every weighted objective is multiplied by
`scale` (the smallest power of ten up to 1000 making all weights integral, see
`variables.scale_for`, raised while the smallest weight would keep fewer than two digits:
`weights`). When the scaled weights are whole the objective is exact;
otherwise they are rounded and `exact` is False (the schedule's true value is still
computed from the schedule).
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from planner.bounds.delivery import below_rounding
from planner.instance import Instance
from planner.solvers.cpsat.energy import cost_expr, energy_exact, kwh_expr
from planner.solvers.cpsat.variables import CpsatModel, scale_for


@dataclass
class Objective:
    name: str
    expr: cp_model.LinearExprT
    scale: float  # model value = true value * scale
    exact: bool
    aux: dict[str, cp_model.IntVar]  # job -> tardiness var; "makespan" -> makespan var
    constant: float = 0.0  # the model's constant term (weighted releases), model units

    def bound_of(self, model_bound: float) -> float:
        """CP-SAT's bound in true units, below the rounding of its float arithmetic, which
        adds the constant to sums as large (tests/test_bounds.py)."""
        return below_rounding(model_bound, abs(model_bound) + 2 * self.constant) / self.scale


# Weights below a thousandth: the scale grows (up to a millionth, or up to SCALE_MOST while
# the largest scaled weight stays within WEIGHT_SCALE_MAX) until the smallest positive
# weight keeps two significant digits; at 1000, weights 0.0001 and 0.0004 both became 0 and
# CP-SAT ordered the jobs at random (0.0009 where 0.0006 is optimal, tests/test_cpsat.py),
# and at a millionth weights 1.23e-6 and 1.27e-6 both became 1 (tests/test_bounds.py).
# A scale that overflows is refused like any (`solve._why_invalid`).
WEIGHT_SCALE_MAX = 10**6
# Weights of 10^-310 are valid input: a scale past 10^300 overflowed the float product.
# At 10^15, weights of 10^-17 all rounded to 0 and CP-SAT returned its start unimproved
# (tests/test_cpsat.py).
SCALE_MOST = 10**300


def weights(instance: Instance) -> tuple[dict[str, int], int, bool]:
    s = scale_for(j.weight for j in instance.jobs)
    least = min((j.weight for j in instance.jobs if j.weight > 0), default=1.0)
    most = max((j.weight for j in instance.jobs), default=0.0)
    while least * s < 10 and (
        s < WEIGHT_SCALE_MAX or (s < SCALE_MOST and most * s * 10 <= WEIGHT_SCALE_MAX)
    ):
        s *= 10
    w = {j.id: round(j.weight * s) for j in instance.jobs}
    # exact: every scaled weight whole, and no positive weight rounded away to 0
    exact = all(
        abs(j.weight * s - w[j.id]) < 1e-9 and (w[j.id] > 0 or j.weight == 0) for j in instance.jobs
    )
    return w, s, exact


def add_objective(cm: CpsatModel, name: str) -> Objective:
    m, inst = cm.model, cm.instance
    if name == "makespan":
        if cm.makespan is None:
            lo = max((jv.earliest_end for jv in cm.jobs.values()), default=0)
            cm.makespan = m.new_int_var(lo, max(lo, cm.horizon), "makespan")
            for jv in cm.jobs.values():
                m.add(cm.makespan >= jv.end)
        return Objective(name, cm.makespan, 1, True, {"makespan": cm.makespan})
    w, s, exact = weights(inst)
    if name == "total_weighted_jct":
        constant = sum(w[j.id] * j.release for j in inst.jobs)
        expr = sum(w[j] * jv.end for j, jv in cm.jobs.items() if w[j]) - constant
        return Objective(name, expr, s, exact, {}, float(constant))
    if name == "total_weighted_tardiness":
        aux: dict[str, cp_model.IntVar] = {}
        for j in inst.jobs:
            if j.due is None or not w[j.id]:
                continue
            t = m.new_int_var(0, max(0, cm.horizon - j.due), f"t_{j.id}")
            m.add(t >= cm.jobs[j.id].end - j.due)
            aux[j.id] = t
        expr = sum(w[j] * t for j, t in aux.items())
        return Objective(name, expr, s, exact, aux)
    if name in ("energy_kwh", "energy_cost"):
        expr, scale = kwh_expr(cm) if name == "energy_kwh" else cost_expr(cm)
        return Objective(name, expr, scale, energy_exact(cm, name), {})
    raise ValueError(f"unknown objective {name!r}")
