"""Benchmark of the MILP planner (CBC and HiGHS) beside CP-SAT.

1. PSPLIB j30: the 20 instances of the CP-SAT benchmark (every 24th file of j30 in natural
   order: j301_1, j303_5, ..., j3046_7), makespan, MILP at --time-limit s per instance and
   back end, CP-SAT at --cpsat-limit s: instances proved optimal, mean gap to the known
   optimum, median wall time.
2. Muri testbed (instances/muri-testbed-100.json), first --muri-jobs jobs, its own
   objective: objective value and lower bound of each solver.

Prints a table and writes one CSV row per (instance, solver) to --out.

    .venv/bin/python experiments/milp_bench.py                      # the full run (~30 min)
    .venv/bin/python experiments/milp_bench.py --limit 2 --time-limit 5 --cpsat-limit 2  # smoke
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.importers.psplib import parse_sm  # noqa: E402
from planner.instance import Instance  # noqa: E402
from planner.metrics import objective_values  # noqa: E402
from planner.read import instance_from_dict, read_instance  # noqa: E402
from planner.schedule import Schedule  # noqa: E402
from planner.solvers import SolveOptions  # noqa: E402
from planner.verify import verify  # noqa: E402

LOCAL = ROOT / "instances" / "psplib"
SHARED = ROOT.parent / "shared" / "datasets" / "psplib"


def natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def psplib_files() -> tuple[list[Path], dict[str, int]]:
    """The 20 benchmark files (local copies when present) and their known optima."""
    base = LOCAL if (LOCAL / "j30").is_dir() else SHARED
    every = sorted(
        (SHARED / "j30").glob("*.sm") if (SHARED / "j30").is_dir() else (base / "j30").glob("*.sm"),
        key=lambda p: natural(p.name),
    )
    chosen = [base / "j30" / p.name for p in every[::24]]
    optima: dict[str, int] = {}
    ref = LOCAL / "reference.csv"
    if ref.exists():
        for row in csv.DictReader(ref.open()):
            if row.get("optimal_known") == "1":
                optima[row["instance"]] = int(row["ref_ub"])
    else:
        for row in csv.DictReader((SHARED / "j30_optimum.csv").open()):
            key = next(k for k in row if "instance" in k or k == "name")
            optima[row[key]] = int(float(next(v for k, v in row.items() if k != key)))
    return chosen, optima


def run(solver: str, inst: Instance, limit: float, workers: int) -> tuple[Schedule, float]:
    t = time.monotonic()
    if solver == "cpsat":
        from planner.solvers.cpsat import solve_cpsat

        s = solve_cpsat(inst, SolveOptions(time_limit=limit, workers=workers))
    else:
        from planner.solvers.milp import solve_milp

        backend = solver.split(":")[1]
        s = solve_milp(inst, SolveOptions(time_limit=limit, workers=workers, milp_backend=backend))
    return s, time.monotonic() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, default=30.0, help="MILP seconds per instance")
    ap.add_argument("--cpsat-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=20, help="how many PSPLIB instances")
    ap.add_argument("--muri-jobs", type=int, default=30)
    ap.add_argument("--no-cpsat", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "out" / "milp_bench.csv"))
    args = ap.parse_args()

    solvers = ["milp:cbc", "milp:highs"]
    try:
        import planner.solvers.cpsat  # noqa: F401

        if not args.no_cpsat:
            solvers.append("cpsat")
    except ImportError:
        pass
    rows: list[dict[str, object]] = []
    files, optima = psplib_files()
    for path in files[: args.limit]:
        name = path.stem
        inst = instance_from_dict(parse_sm(path.read_text(), name=name), str(path))
        inst = replace(inst, objective=("makespan",))
        for solver in solvers:
            limit = args.cpsat_limit if solver == "cpsat" else args.time_limit
            s, wall = run(solver, inst, limit, args.workers)
            ok = verify(inst, s) == [] and len(s.jobs) == len(inst.jobs)
            mk = objective_values(inst, s, ["makespan"])["makespan"] if s.jobs else None
            opt = optima.get(name)
            row = {
                "set": "psplib-j30",
                "instance": name,
                "solver": solver,
                "limit_s": limit,
                "status": s.status,
                "valid": ok,
                "objective": mk,
                "lower_bound": (s.lower_bound or {}).get("makespan"),
                "optimum": opt,
                "gap_pct": (100.0 * (mk - opt) / opt) if mk is not None and opt else None,
                "wall_s": round(wall, 2),
                "returned": s.info.get("returned", ""),
                "slot": s.info.get("slot", ""),
            }
            rows.append(row)
            print(
                f"{name:10} {solver:11} {s.status:9} mk={mk} opt={opt} "
                f"lb={row['lower_bound']} {wall:.1f}s",
                flush=True,
            )

    muri = ROOT / "instances" / "muri-testbed-100.json"
    if muri.exists() and args.muri_jobs > 0:
        full = read_instance(muri)
        inst = replace(full, jobs=full.jobs[: args.muri_jobs], name=f"muri-{args.muri_jobs}")
        obj = inst.objective[0]
        for solver in solvers:
            limit = args.cpsat_limit if solver == "cpsat" else args.time_limit
            s, wall = run(solver, inst, limit, args.workers)
            ok = verify(inst, s) == [] and len(s.jobs) == len(inst.jobs)
            v = objective_values(inst, s, [obj])[obj] if s.jobs else None
            rows.append(
                {
                    "set": "muri-testbed",
                    "instance": inst.name,
                    "solver": solver,
                    "limit_s": limit,
                    "status": s.status,
                    "valid": ok,
                    "objective": v,
                    "lower_bound": (s.lower_bound or {}).get(obj),
                    "optimum": None,
                    "gap_pct": None,
                    "wall_s": round(wall, 2),
                    "returned": s.info.get("returned", ""),
                    "slot": s.info.get("slot", ""),
                }
            )
            print(
                f"{inst.name:10} {solver:11} {s.status:9} {obj}={v} "
                f"lb={rows[-1]['lower_bound']} {wall:.1f}s",
                flush=True,
            )

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    print()
    print(f"PSPLIB j30, {min(args.limit, len(files))} instances (makespan)")
    print(
        f"{'solver':12} {'limit':>6} {'proved':>7} {'mean gap %':>11} {'median s':>9} {'valid':>6}"
    )
    for solver in solvers:
        rs = [r for r in rows if r["set"] == "psplib-j30" and r["solver"] == solver]
        if not rs:
            continue
        gaps = [float(r["gap_pct"]) for r in rs if r["gap_pct"] is not None]  # type: ignore[arg-type]
        proved = sum(r["status"] == "optimal" for r in rs)
        print(
            f"{solver:12} {rs[0]['limit_s']:>6} {proved:>4}/{len(rs):<2} "
            f"{statistics.mean(gaps) if gaps else float('nan'):>11.2f} "
            f"{statistics.median(float(r['wall_s']) for r in rs):>9.1f} "  # type: ignore[arg-type]
            f"{sum(bool(r['valid']) for r in rs):>4}/{len(rs)}"
        )
    mr = [r for r in rows if r["set"] == "muri-testbed"]
    if mr:
        print()
        print(f"Muri testbed, first {args.muri_jobs} jobs ({mr[0]['instance']})")
        print(
            f"{'solver':12} {'limit':>6} {'status':>9} {'objective':>12} {'bound':>12} "
            f"{'returned':>9} {'slot':>6}"
        )
        for r in mr:
            print(
                f"{r['solver']:12} {r['limit_s']:>6} {r['status']:>9} {r['objective']!s:>12} "
                f"{r['lower_bound']!s:>12} {r['returned']!s:>9} {r['slot']!s:>6}"
            )
    print(f"\nCSV: {out}")


if __name__ == "__main__":
    main()
