"""Per-solver aggregates of benchmark rows, and ratios to a reference per instance.

Only verified rows count towards metrics and ratios. Repeats of one (instance, solver) are
averaged first; a ratio is then formed per instance and the ratios are averaged
(arithmetic mean) over the instances where both the solver and the reference have a
verified schedule.

Ratio direction: reference / solver for quantities where lower is better (average JCT,
makespan), so a ratio > 1 means the solver is better than the reference.
The references are the baseline solver (`--baseline`, default greedy:fifo) and the best
plain rule: per instance and per metric, the minimum over greedy:sjf and greedy:srsf
(those of them that were run).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

PLAIN_RULES = ("greedy:sjf", "greedy:srsf")
MEANS = ("avg_jct", "makespan", "gpu_utilization", "energy_kwh", "wall_s")
RATIOS = ("avg_jct", "makespan")
DIRECTION = "reference / solver (> 1: better than the reference)"


def _per_instance(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """solver -> instance -> metric -> mean over verified repeats."""
    acc: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if not r.get("verified"):
            continue
        for m in RATIOS:
            v = r.get(m)
            if v is not None:
                acc[(r["solver"], r["instance"])][m].append(float(v))
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for (solver, inst), vals in acc.items():
        out[solver][inst] = {m: fmean(v) for m, v in vals.items() if v}
    return out


def _mean_ratio(
    mine: Mapping[str, Mapping[str, float]], ref: Mapping[str, Mapping[str, float]], metric: str
) -> tuple[float | None, int]:
    ratios = []
    for inst, vals in mine.items():
        r = ref.get(inst, {}).get(metric)
        v = vals.get(metric)
        if r is not None and v is not None and v > 0:
            ratios.append(r / v)
    return (fmean(ratios) if ratios else None), len(ratios)


def best_rule(
    per: Mapping[str, Mapping[str, Mapping[str, float]]], rules: Sequence[str]
) -> dict[str, dict[str, float]]:
    """instance -> metric -> min over the plain rules present."""
    best: dict[str, dict[str, float]] = defaultdict(dict)
    for rule in rules:
        for inst, vals in per.get(rule, {}).items():
            for m, v in vals.items():
                best[inst][m] = min(v, best[inst].get(m, v))
    return best


def summarize(
    rows: Sequence[Mapping[str, Any]],
    baseline: str | None = "greedy:fifo",
    solvers: Sequence[str] | None = None,
    plain_rules: Sequence[str] = PLAIN_RULES,
) -> dict[str, Any]:
    """The summary as plain data (what `--json` prints)."""
    order = list(solvers) if solvers else list(dict.fromkeys(r["solver"] for r in rows))
    per = _per_instance(rows)
    rules = [r for r in plain_rules if r in order]
    best = best_rule(per, rules)
    ref_base = per.get(baseline, {}) if baseline else {}
    out_solvers = []
    for solver in order:
        mine = [r for r in rows if r["solver"] == solver]
        ok = [r for r in mine if r.get("verified")]
        statuses: dict[str, int] = defaultdict(int)
        for r in mine:
            statuses[str(r["status"])] += 1
        entry: dict[str, Any] = {
            "solver": solver,
            "runs": len(mine),
            "instances": len({r["instance"] for r in mine}),
            "verified": len(ok),
            "verified_share": len(ok) / len(mine) if mine else None,
            "statuses": dict(statuses),
        }
        for m in MEANS:
            vals = [float(r[m]) for r in ok if r.get(m) is not None]
            entry[f"mean_{m}"] = fmean(vals) if vals else None
        for ref_name, ref in (("baseline", ref_base), ("best_rule", best)):
            for m in RATIOS:
                value, n = _mean_ratio(per.get(solver, {}), ref, m) if ref else (None, 0)
                entry[f"{m}_ratio_{ref_name}"] = value
                entry[f"n_{ref_name}"] = max(n, entry.get(f"n_{ref_name}", 0))
        out_solvers.append(entry)
    return {
        "baseline": baseline,
        "best_rule_of": rules,
        "ratio": DIRECTION,
        "runs": len(rows),
        "instances": len({r["instance"] for r in rows}),
        "solvers": out_solvers,
    }
