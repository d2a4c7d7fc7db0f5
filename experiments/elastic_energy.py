"""Elastic GPU counts and energy prices (contract §12): what choosing counts and pricing
energy buys.

Usage: .venv/bin/python experiments/elastic_energy.py MURI_DIR [--solver S] [--time-limit T]
       [--windows N] [--png out/elastic_energy.png]

1. Fixed counts vs elastic. Windows of 60 consecutive jobs of the Muri traces on 8 x 8
   GPUs, all released at 0 (heavy load) and as submitted (the trace's arrivals); each
   imported twice by `planner.importers.muri`: with the trace's counts, and elastic
   (`elastic=True`: the counts of the job's profile between half and twice its trace
   count). Both planned by the same solver; the table gives average JCTs and their ratio
   (fixed / elastic: above 1, elastic is better).
2. Energy cost vs JCT. A generated `dl` instance (60 jobs, 8 nodes, elastic) arriving in
   the first two hours, with a day/night price curve (time 0 is 16:00; day 0.30, night
   22:00-06:00 0.15 per kWh, over three days) and every deadline a day after the job's
   release. The plans: the objective
   lists total_weighted_jct and energy_cost alone and in both lexicographic orders (with the
   solver), and every greedy variant (count choice x hold-back instant of
   `planner.elastic`) scored by weighted sums `a * JCT / JCT_0 + (1 - a) * cost / cost_0`;
   the Pareto points of all of them are the trade-off. The PNG shows both parts.
Every schedule is checked by `planner.verify`.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from planner.elastic import count_choices, fixed_counts, held_back, hold_backs
from planner.generate import generate
from planner.importers.muri import muri_to_instance
from planner.instance import Instance
from planner.metrics import metrics
from planner.read import instance_from_dict
from planner.schedule import Schedule
from planner.solvers import SolveOptions, solve
from planner.solvers.greedy import solve_greedy
from planner.verify import verify

TRACES = ("trace1.csv", "trace2.csv", "trace4.csv")
DAY = 86400
# time 0 = 16:00: day (0.30 per kWh) until 22:00, night (half price) until 06:00, for 3 days
PRICES = [(0, 21600, 0.30)] + [
    span
    for d in range(3)
    for span in (
        (21600 + d * DAY, 50400 + d * DAY, 0.15),
        (50400 + d * DAY, 108000 + d * DAY, 0.30),
    )
]
ARRIVALS = 7200  # the energy instance's jobs arrive within the first two hours


def planned(inst: Instance, solver: str, limit: float, objective: tuple[str, ...] = ()) -> Schedule:
    s = solve(inst, solver, SolveOptions(time_limit=limit, objective=objective or None))
    bad = verify(inst, s)
    assert s.status in ("optimal", "feasible") and not bad, (inst.name, solver, bad[:3])
    return s


def counts_table(data: Path, solver: str, limit: float, windows: int) -> list[dict[str, Any]]:
    rows = []
    for f in TRACES:
        for k in range(windows):
            for zero in (True, False):
                got = {}
                for el in (False, True):
                    d = muri_to_instance(
                        data / f, name=f"{f}-{k * 120}", nodes=8, gpus_per_node=8, first=60,
                        offset=k * 120, all_at_zero=zero, elastic=el,
                    )  # fmt: skip
                    inst = instance_from_dict(d)
                    got[el] = metrics(inst, planned(inst, solver, limit))["avg_jct"]
                row = {"window": f"{f}@{k * 120}", "arrivals": "zero" if zero else "trace"}
                row.update(fixed=got[False], elastic=got[True], ratio=got[False] / got[True])
                rows.append(row)
                print(
                    f"{row['window']:16s} {row['arrivals']:5s} fixed {row['fixed']:12,.0f}  "
                    f"elastic {row['elastic']:12,.0f}  ratio {row['ratio']:.3f}",
                    flush=True,
                )
    return rows


def energy_instance() -> Instance:
    """The generated `dl` instance (60 jobs, 8 nodes, elastic), its arrivals squeezed into
    the first ARRIVALS time units (late afternoon), prices PRICES, deadlines a day out."""
    doc = generate("dl", 60, 8, seed=1, elastic=True)
    doc["name"] = "dl-60-8-daynight"
    doc["cluster"]["power_price"] = [{"start": a, "end": b, "price": p} for a, b, p in PRICES]
    last = max(j["release"] for j in doc["jobs"]) or 1
    for j in doc["jobs"]:
        j["release"] = j["release"] * ARRIVALS // last
        j["deadline"] = j["release"] + DAY
    return instance_from_dict(doc)


def greedy_variants(inst: Instance) -> list[tuple[str, Schedule]]:
    """Every greedy plan of `planner.elastic`'s count choices x hold-backs."""
    out = []
    names = ("energy_cost",)
    for name, counts in count_choices(inst):
        fixed = fixed_counts(inst, counts)
        for hold, starts in [("no hold", {}), *hold_backs(inst, names)]:
            s = solve_greedy(held_back(fixed, starts), None, SolveOptions())
            if s.status == "feasible" and not verify(inst, s):
                out.append((f"greedy {name}, {hold}", s))
    return out


def energy_table(solver: str, limit: float) -> list[dict[str, Any]]:
    inst = energy_instance()
    plans: list[tuple[str, Schedule]] = []
    for obj in (
        ("total_weighted_jct",),
        ("energy_cost",),
        ("total_weighted_jct", "energy_cost"),
        ("energy_cost", "total_weighted_jct"),
    ):
        plans.append((f"{solver} {','.join(obj)}", planned(inst, solver, limit, obj)))
    variants = greedy_variants(inst)
    plans += variants
    vals = {label: metrics(inst, s) for label, s in plans}
    base = vals[f"{solver} total_weighted_jct"]
    for a in (0.01, 0.03, 0.1, 0.5):
        label, _ = min(
            variants,
            key=lambda v: (
                a * vals[v[0]]["total_weighted_jct"] / base["total_weighted_jct"]
                + (1 - a) * vals[v[0]]["energy_cost"] / base["energy_cost"]
            ),
        )
        plans.append((f"weighted a={a}: {label}", dict(plans)[label]))
        vals[plans[-1][0]] = vals[label]
    rows = []
    for label, s in plans:
        m = vals[label]
        late = sum(a.end > inst.job_by_id[a.id].deadline for a in s.jobs)  # type: ignore[operator]
        rows.append(
            {
                "plan": label,
                "avg_jct": m["avg_jct"],
                "energy_cost": m["energy_cost"],
                "cost_ratio": m["energy_cost"] / base["energy_cost"],
                "late": late,
            }
        )
    front = pareto([(r["avg_jct"], r["energy_cost"]) for r in rows])
    for r in rows:
        r["pareto"] = (r["avg_jct"], r["energy_cost"]) in front
        print(
            f"{r['plan']:45s} avg JCT {r['avg_jct']:10,.0f}  cost {r['energy_cost']:8.2f}  "
            f"x{r['cost_ratio']:.3f}  late {r['late']}  {'pareto' if r['pareto'] else ''}",
            flush=True,
        )
    return rows


def pareto(points: list[tuple[float, float]]) -> set[tuple[float, float]]:
    return {p for p in points if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in points)}


def picture(counts: list[dict[str, Any]], energy: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    for arr, mark in (("zero", "o"), ("trace", "s")):
        pts = [r for r in counts if r["arrivals"] == arr]
        a.scatter([r["fixed"] for r in pts], [r["elastic"] for r in pts], marker=mark, label=arr)
    hi = max(max(r["fixed"], r["elastic"]) for r in counts)
    a.plot([0, hi], [0, hi], "k--", lw=0.8)
    a.set(xscale="log", yscale="log", xlabel="avg JCT, trace counts (s)",
          ylabel="avg JCT, elastic (s)", title="Muri windows, 60 jobs on 8x8")  # fmt: skip
    a.legend(title="releases")
    for r in energy:
        colour = "tab:red" if r["pareto"] else "tab:grey"
        b.scatter(r["avg_jct"], r["energy_cost"], color=colour, s=18)
        if not r["plan"].startswith(("greedy", "weighted")):
            b.annotate(r["plan"], (r["avg_jct"], r["energy_cost"]), fontsize=6)
    b.set(xlabel="avg JCT (s)", ylabel="energy cost", title="day/night prices (red: Pareto)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("muri_dir", type=Path, help="folder with the Muri trace files")
    ap.add_argument("--solver", default="auto")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--windows", type=int, default=3, help="windows per trace")
    ap.add_argument("--png", type=Path, default=Path("out/elastic_energy.png"))
    args = ap.parse_args()
    counts = counts_table(args.muri_dir, args.solver, args.time_limit, args.windows)
    for arr in ("zero", "trace"):
        rs = [r for r in counts if r["arrivals"] == arr]
        ratios = [r["ratio"] for r in rs]
        pooled = sum(r["fixed"] for r in rs) / sum(r["elastic"] for r in rs)
        print(
            f"{arr}: ratio mean {statistics.mean(ratios):.3f}, geometric mean "
            f"{statistics.geometric_mean(ratios):.3f}, min {min(ratios):.3f}, "
            f"pooled (sum of avg JCTs) {pooled:.3f}"
        )
    energy = energy_table(args.solver, args.time_limit)
    picture(counts, energy, args.png)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
