"""Energy objectives of the time-indexed MILP (contract §12), linear in its variables.

Every GPU draws `gpu_idle_w` from 0 to the makespan, plus `gpu_busy_w - gpu_idle_w`
while a solo job or a group holds it. In the model a unit holds `unit.gpus` GPUs for
exactly `unit.hold` time units from its start `t * L` (starts lie on the grid, durations
are exact), and no GPU is held twice at once, so:
- `energy_kwh` = idle watts of the cluster x Cmax + sum over start variables of the
  unit's extra watts x GPUs x hold. Exact: the minimisation drives Cmax to the latest end.
- `energy_cost` = idle watts x P(Cmax) + sum over start variables of extra watts x GPUs x
  (P(t L + hold) - P(t L)), P the price integral (planner.energy). The busy part is
  precomputed per start slot, so exact. P(Cmax) is piecewise linear between the price
  breakpoints: one binary per piece picks the piece Cmax lies in and a continuous offset
  places it inside, so P(Cmax) is exact too. With a negative price and idle draw a later
  Cmax costs less, so Cmax is also held down to the latest end: one binary per job
  without successors picks the last one, and Cmax <= its end (`_pin_makespan`).
Both are built in watt-time units (and x price); `Built.scales` converts to the metric.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import pulp

from planner.energy import extra_watts, idle_watts, kwh_per_watt_unit, price_curve
from planner.instance import ENERGY_OBJECTIVES, Instance
from planner.solvers.milp.model import Built


def add_energy(instance: Instance, built: Built, names: Sequence[str]) -> None:
    """Add the energy objectives among `names` to `built` (its Cmax exists for them)."""
    wanted = [n for n in names if n in ENERGY_OBJECTIVES]
    if not wanted:
        return
    assert built.cmax is not None
    idle = idle_watts(instance)
    to_kwh = kwh_per_watt_unit(instance)
    if "energy_kwh" in wanted:
        busy = _busy_terms(built, lambda t, hold: float(hold))
        busy[built.cmax] += idle
        built.objectives["energy_kwh"] = _expr(busy)
        built.scales["energy_kwh"] = to_kwh
    if "energy_cost" in wanted:
        curve = price_curve(instance)
        L = built.grid.length
        busy = _busy_terms(built, lambda t, hold: curve.integral(t * L, t * L + hold))
        expr = _expr(busy) + idle * _priced_makespan(instance, built)
        built.objectives["energy_cost"] = expr
        built.scales["energy_cost"] = to_kwh
        if idle > 0 and any(p.price < 0 for p in instance.power_price):
            _pin_makespan(built)
    built.sizes["variables"] = built.prob.numVariables()
    built.sizes["rows"] = built.prob.numConstraints()
    built.sizes["binaries"] += len(built.pieces) if len(built.pieces) > 1 else 0


def _expr(terms: dict[pulp.LpVariable, float]) -> pulp.LpAffineExpression:
    return pulp.LpAffineExpression({v: c for v, c in terms.items() if c})


def _busy_terms(built: Built, span_of: Callable[[int, int], float]) -> dict[pulp.LpVariable, float]:
    """Start variable -> extra watts x GPUs x span_of(start slot, hold)."""
    out: dict[pulp.LpVariable, float] = defaultdict(float)
    for u in built.units:
        if u.node_group is None or not u.gpus:
            continue
        extra = extra_watts(u.node_group) * u.gpus
        if not extra:
            continue
        for v, t in built.unit_starts.get(u.index, []):
            out[v] += extra * span_of(t, u.hold)
    return out


def _pin_makespan(built: Built) -> None:
    """Cmax <= end of the job picked as last (big M: the grid's horizon), one job picked;
    with Cmax >= every end (the model's `cmax_*` rows) Cmax is the latest end."""
    assert built.cmax is not None
    big = float(built.grid.horizon)
    prob, one = built.prob, {}
    for k, job in enumerate(built.sinks):
        last = prob.add_variable(f"last{k}", cat=pulp.LpBinary)
        terms = {v: -e for v, e in built.ends[job].items()}
        terms[built.cmax] = 1.0
        terms[last] = big
        prob.addConstraint(
            pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintLE, f"pin{k}", big)
        )
        one[last] = 1.0
        built.last.append((last, job))
    prob.addConstraint(
        pulp.LpConstraint(pulp.LpAffineExpression(one), pulp.LpConstraintEQ, "onelast", 1)
    )
    built.sizes["binaries"] += len(built.last)


def _priced_makespan(instance: Instance, built: Built) -> pulp.LpAffineExpression:
    """P(Cmax) as a linear expression: Cmax = sum over pieces [a, b) of a x on + offset,
    0 <= offset <= (b - a) x on, exactly one piece on."""
    assert built.cmax is not None
    curve = price_curve(instance)
    top = built.grid.horizon
    cuts = [0] + [b for b in curve.breakpoints() if 0 < b < top] + [top]
    prob = built.prob
    if len(cuts) == 2:  # one price over the whole grid
        return curve.price_at(0) * built.cmax
    placed: dict[pulp.LpVariable, float] = {built.cmax: -1.0}
    one: dict[pulp.LpVariable, float] = {}
    out: dict[pulp.LpVariable, float] = {}
    for k, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
        on = prob.add_variable(f"piece{k}", cat=pulp.LpBinary)
        off = prob.add_variable(f"offset{k}", lowBound=0, upBound=b - a)
        prob.addConstraint(
            pulp.LpConstraint(off - (b - a) * on, pulp.LpConstraintLE, f"inpiece{k}", 0)
        )
        placed[on], placed[off], one[on] = float(a), 1.0, 1.0
        out[on] = curve.integral(0, a)
        out[off] = curve.price_at(a)
        built.pieces.append((on, off, a, b))
    prob.addConstraint(
        pulp.LpConstraint(pulp.LpAffineExpression(placed), pulp.LpConstraintEQ, "cmaxpiece", 0)
    )
    prob.addConstraint(
        pulp.LpConstraint(pulp.LpAffineExpression(one), pulp.LpConstraintEQ, "onepiece", 1)
    )
    return _expr(out)


def complete_pieces(built: Built) -> None:
    """Piece and last-job values implied by Cmax's value (for a warm start)."""
    if built.cmax is None:
        return
    c = built.cmax.varValue or 0.0
    picked = False
    for last, job in built.last:
        end = sum(e for v, e in built.ends[job].items() if (v.varValue or 0) > 0.5)
        last.varValue = 1.0 if not picked and end >= c - 1e-9 else 0.0
        picked = picked or last.varValue == 1.0
    if not built.pieces:
        return
    last = len(built.pieces) - 1
    for k, (on, off, a, b) in enumerate(built.pieces):
        inside = a <= c < b or (k == last and c >= a)
        on.varValue = 1.0 if inside else 0.0
        off.varValue = min(c - a, b - a) if inside else 0.0
