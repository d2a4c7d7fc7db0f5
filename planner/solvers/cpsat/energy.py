"""Energy objectives in CP-SAT (contract §12), as integer expressions.

The cluster draws `gpu_idle_w` on every GPU from 0 to the makespan, plus `gpu_busy_w -
gpu_idle_w` on each GPU while a solo job or a group holds it. Both objectives are sums of
those draws over time:
- `energy_kwh`: the idle part is the cluster's idle watts x the makespan; the busy part is
  linear in the option literals, each option's use holding its GPUs for a fixed length.
  Exact (watts scaled to integers, see `variables.scale_for`).
- `energy_cost`: the price integral `P(t)` (piecewise linear, breakpoints at the price
  changes) is evaluated at each job's start and end and each group's start and end by one
  literal per price piece; a job alone holds `W_j` extra watts over `[start, end)`, where
  `W_j` is the sum over its solo options of literal x GPUs x extra watts (0 when it runs in
  a group), so its term is the product `W_j x (P(end) - P(start))`; a group's term is its
  literal x its GPUs x extra watts x `P(end) - P(start)`; the idle part is the idle watts
  x `P(makespan)`. Exact when prices and watts have at most three decimals.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ortools.sat.python import cp_model

from planner.energy import extra_watts, idle_watts, kwh_per_watt_unit, price_curve
from planner.solvers.cpsat.variables import CpsatModel, scale_for, scaled_exactly


def _wattages(cm: CpsatModel) -> list[float]:
    return [x for g in cm.instance.node_groups for x in (g.gpu_idle_w, g.gpu_busy_w)]


def energy_exact(cm: CpsatModel, name: str) -> bool:
    """Whether the model's `name` (energy_kwh or energy_cost) is the objective itself:
    watts, and for energy_cost prices, of at most three decimals (else rounded)."""
    prices = [p.price for p in cm.instance.power_price] if name == "energy_cost" else []
    return scaled_exactly(_wattages(cm)) and scaled_exactly(prices)


def _watts(cm: CpsatModel) -> tuple[int, float]:
    """The integer scale of every wattage in the model, and the idle watts of the cluster."""
    return scale_for(_wattages(cm)), idle_watts(cm.instance)


def makespan_var(cm: CpsatModel) -> cp_model.IntVar:
    """The makespan, equal to the last end: the idle draw runs to it, and with a negative
    price a makespan only bounded below would be pushed past the last end to earn money
    the schedule does not earn."""
    if cm.makespan is None:
        lo = max((jv.earliest_end for jv in cm.jobs.values()), default=0)
        cm.makespan = cm.model.new_int_var(lo, max(lo, cm.horizon), "makespan")
        for jv in cm.jobs.values():
            cm.model.add(cm.makespan >= jv.end)
    if cm.jobs:
        cm.model.add_max_equality(cm.makespan, [jv.end for jv in cm.jobs.values()])
    return cm.makespan


def kwh_expr(cm: CpsatModel) -> tuple[Any, float]:
    """energy_kwh as (integer expression, scale: model value / kWh)."""
    s, idle = _watts(cm)
    expr = round(idle * s) * makespan_var(cm)
    for u in cm.uses:
        extra = round(extra_watts(u.node.group) * s)
        if u.gpus and extra:
            expr += extra * u.gpus * u.size * u.lit
    return expr, s / kwh_per_watt_unit(cm.instance)


# A price integral's bound beyond which CP-SAT's 64-bit domains (and the sums built on
# them) could overflow: a price of 10^12 over 10^7 s passed 2^63 and ortools raised a
# TypeError, exit 3 (tests/test_cpsat.py).
PRICE_MOST = 2**62


class _Price:
    """`P(t)` on the model: the price integral from 0 to t, prices scaled to integers."""

    def __init__(self, cm: CpsatModel):
        self.cm = cm
        self.curve = price_curve(cm.instance)
        self.scale = scale_for(p.price for p in cm.instance.power_price)
        self.points = self.curve.breakpoints()
        self.count = 0

    def at(self, t: cp_model.LinearExprT, lo: int, hi: int) -> Any:  # an integer expression
        """An expression equal to scale x P(t), for t within [lo, hi]."""
        cuts = [lo] + [b for b in self.points if lo < b <= hi] + [hi + 1]
        pieces = [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
        vals = {a: round(self.curve.upto(a) * self.scale) for a, _ in pieces}
        if len(pieces) == 1:  # one price over the whole range
            a = pieces[0][0]
            return vals[a] + round(self.curve.price_at(a) * self.scale) * (t - a)
        m = self.cm.model
        self.count += 1
        hi_v = max(abs(v) for v in vals.values()) + round(
            max(abs(p.price) for p in self.cm.instance.power_price) * self.scale * (hi - lo + 1)
        )
        if hi_v >= PRICE_MOST:  # CP-SAT's domains are 64-bit: `solve._build_model` says so
            raise OverflowError("its energy cost could pass 64-bit integers (prices x times)")
        pv = m.new_int_var(-hi_v, hi_v, f"price_{self.count}")
        lits = []
        for a, b in pieces:
            z = m.new_bool_var(f"piece_{self.count}_{a}")
            m.add(t >= a).only_enforce_if(z)
            m.add(t <= b - 1).only_enforce_if(z)
            rate = round(self.curve.price_at(a) * self.scale)
            m.add(pv == vals[a] + rate * (t - a)).only_enforce_if(z)
            lits.append(z)
        m.add_exactly_one(lits)
        return pv


def cost_expr(cm: CpsatModel) -> tuple[Any, float]:
    """energy_cost as (integer expression, scale: model value / price unit)."""
    m, s = cm.model, _watts(cm)[0]
    price = _Price(cm)
    ms = makespan_var(cm)
    expr = round(_watts(cm)[1] * s) * price.at(ms, 0, cm.horizon)
    for jid, jv in cm.jobs.items():
        solo = [o for o in jv.options if o.kind != "member"]
        w = {id(o): round(o.gpus * extra_watts(o.node_group) * s) for o in solo}
        if not any(w.values()):
            continue
        lo, hi = jv.earliest_start, jv.latest_end
        span = price.at(jv.end, lo, hi) - price.at(jv.start, lo, hi)
        expr += _product(m, sum(w[id(o)] * o.lit for o in solo), w.values(), span, jid)
    for gi, gv in enumerate(cm.groups):
        extra = round(gv.cand.gpus * extra_watts(gv.node_group) * s)
        if not extra:
            continue
        lo, hi = 0, cm.horizon + gv.cand.span
        span = price.at(gv.start + gv.cand.span, lo, hi) - price.at(gv.start, lo, hi)
        expr += _product(m, extra * gv.lit, [extra], span, f"g{gi}")
    return expr, s * price.scale / kwh_per_watt_unit(cm.instance)


def _product(
    m: cp_model.CpModel,
    watts: cp_model.LinearExprT,
    values: Iterable[int],
    span: cp_model.LinearExprT,
    tag: str,
) -> cp_model.IntVar:
    """A variable equal to `watts x span` (integer expressions; `watts` is 0 or one of
    `values`, which are < 0 where a GPU draws less busy than idle; `span` is < 0 under a
    negative price)."""
    lo, hi = min(0, *values), max(0, *values)
    big = 10**15 // max(1, hi, -lo)
    wv = m.new_int_var(lo, hi, f"w_{tag}")
    m.add(wv == watts)
    sv = m.new_int_var(-big, big, f"span_{tag}")
    m.add(sv == span)
    out = m.new_int_var(-(10**15), 10**15, f"cost_{tag}")
    m.add_multiplication_equality(out, [wv, sv])
    return out
