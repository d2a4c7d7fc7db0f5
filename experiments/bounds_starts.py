"""Which rule makes the gap on mixed instances: CP-SAT optima against the bounds with and
without the earliest starts of `planner.bounds` ingredients 2a (reservations) and 2b
(strict priority), rule by rule.

    .venv/bin/python experiments/bounds_starts.py [--seeds 1-10] [--time-limit 30]

Per seed s, `plan generate --family mixed --jobs 12 + 6 (s mod 3) --nodes 2 + s mod 3
--seed s` without interleaving (CP-SAT's model is then exact: an OPTIMAL status is the
optimum), and variants with one rule switched off: strict priority (`policy.priority`
none), the pool (no pools, demands or pool reservations), reservations, `after`, dues and
deadlines, and both priority and `after`. Each variant is solved with CP-SAT and the plan
verified; the table gives, over the variants whose optimum was proved, the mean gap of the
bound without 2a and 2b, with 2b only, with 2a only and with both. Bounds above a
verified plan are counted (must be 0).
"""

from __future__ import annotations

import argparse
import copy
from collections import defaultdict
from typing import Any

from planner import bounds
from planner.bounds import starts
from planner.generate import generate
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import SolveOptions, solve
from planner.verify import verify

NAME = "total_weighted_jct"


def variants(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The instance without interleaving, and with one rule switched off each."""
    base = copy.deepcopy(doc)
    base["interleaving"] = {"enabled": False}
    out = {"all rules": base}

    def edit(name: str, fn: Any) -> None:
        v = copy.deepcopy(base)
        fn(v)
        out[name] = v

    def no_prio(v: dict[str, Any]) -> None:
        v["policy"] = {**v.get("policy", {}), "priority": "none"}

    def no_pool(v: dict[str, Any]) -> None:
        v["cluster"].pop("pools", None)
        v["reservations"] = [r for r in v.get("reservations", []) if "pool" not in r]
        for j in v["jobs"]:
            j.pop("demand", None)

    def no_res(v: dict[str, Any]) -> None:
        v["reservations"] = []

    def no_after(v: dict[str, Any]) -> None:
        for j in v["jobs"]:
            j.pop("after", None)

    def no_due(v: dict[str, Any]) -> None:
        v.pop("horizon", None)
        for j in v["jobs"]:
            j.pop("due", None)
            j.pop("deadline", None)

    edit("priority none", no_prio)
    edit("no pool", no_pool)
    edit("no reservations", no_res)
    edit("no after", no_after)
    edit("no dues, deadlines", no_due)
    edit("priority none, no after", lambda v: (no_prio(v), no_after(v)))
    return out


def bound(inst: Any, r9: bool, alone: bool) -> float:
    keep = starts.r9_applies, starts.alone_applies
    try:
        if not r9:
            starts.r9_applies = lambda _: False  # type: ignore[assignment]
        if not alone:
            starts.alone_applies = lambda _: False  # type: ignore[assignment]
        bounds._RECENT.clear()
        return bounds.lower_bounds(inst, [NAME])[NAME]
    finally:
        starts.r9_applies, starts.alone_applies = keep
        bounds._RECENT.clear()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--time-limit", type=float, default=30.0)
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split("-"))
    gaps: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    above = 0
    for seed in range(lo, hi + 1):
        doc = generate("mixed", jobs=12 + 6 * (seed % 3), nodes=2 + seed % 3, seed=seed)
        for name, v in variants(doc).items():
            inst = instance_from_dict(v)
            s = solve(inst, "cpsat", SolveOptions(time_limit=a.time_limit, workers=2))
            if not s.jobs or verify(inst, s):
                continue
            opt = objective_values(inst, s, [NAME])[NAME]
            got = [bound(inst, r9, alone) for r9, alone in ((0, 0), (1, 0), (0, 1), (1, 1))]
            above += sum(b > opt + 1e-6 for b in got)
            if s.status == "optimal" and opt > 0:
                gaps[name].append((opt, *((opt - b) / opt * 100 for b in got)))
    print("| variant | proved | mean optimum | gap without 2a, 2b | 2b only | 2a only | both |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, rows in gaps.items():
        m = [sum(r[k] for r in rows) / len(rows) for k in range(5)]
        print(
            f"| {name} | {len(rows)} | {m[0]:,.0f} | {m[1]:.1f}% | {m[2]:.1f}% | {m[3]:.1f}% | "
            f"{m[4]:.1f}% |"
        )
    print(f"bounds above a verified plan: {above}")


if __name__ == "__main__":
    main()
