"""CP-SAT planner benchmark: PSPLIB j30/j120, classic job-shop, the Muri testbed.

    .venv/bin/python experiments/cpsat_bench.py [--time-limit 10] [--workers 2] [--pyjobshop]
                                          [--only psplib,jobshop,muri] [--sets j30,j120]
                                          [-o out/cpsat_bench.csv]

Instances are the copies in instances/psplib (every 24th j30 and every 60th j120 file in
natural order) and instances/jobshop. Every schedule is checked with planner.verify.
With --pyjobshop (PyJobShop 0.0.9 importable, the `bench` extra) the PSPLIB and job-shop
instances are also solved by PyJobShop's OR-Tools back end with the same limits.
The `greedy` column is CP-SAT's start: the best greedy schedule or, on plain RCPSP, the
RCPSP heuristic's (planner/solvers/rcpsp_heuristic.py). `--sets j120` runs one PSPLIB set.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from pathlib import Path
from typing import Any

from planner.importers.jobshop import parse_jss
from planner.importers.psplib import parse_sm
from planner.metrics import metrics
from planner.read import instance_from_dict, read_instance
from planner.solvers import SolveOptions
from planner.solvers.cpsat import solve_cpsat
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent


def natural(p: Path) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", p.stem)]


def reference() -> dict[str, dict[str, str]]:
    with open(ROOT / "instances" / "psplib" / "reference.csv") as fh:
        return {r["instance"]: r for r in csv.DictReader(fh)}


def jobshop_optima() -> dict[str, int]:
    with open(ROOT / "instances" / "jobshop" / "optimum.csv") as fh:
        return {r["instance"]: int(r["optimum"]) for r in csv.DictReader(fh)}


def run_cpsat(d: dict[str, Any], limit: float, workers: int) -> dict[str, Any]:
    inst = instance_from_dict(d)
    t = time.monotonic()
    s = solve_cpsat(inst, SolveOptions(time_limit=limit, workers=workers, seed=0))
    wall = time.monotonic() - t
    bad = verify(inst, s) if s.jobs else []
    ms = max((a.end for a in s.jobs), default=None)
    lb = (s.lower_bound or {}).get("makespan")
    return {
        "status": s.status,
        "makespan": ms,
        "bound": lb,
        "wall_s": round(wall, 2),
        "greedy": (s.info.get("greedy_objective") or {}).get("makespan"),
        "violations": len(bad),
    }


def run_pyjobshop(d: dict[str, Any], limit: float, workers: int) -> dict[str, Any]:
    from pyjobshop import Model

    m = Model()
    res = {
        p: (m.add_machine(name=p) if cap == 1 else m.add_renewable(int(cap), name=p))
        for p, cap in d["cluster"]["pools"].items()
    }
    tasks = {}
    for j in d["jobs"]:
        t = m.add_task(name=j["id"])
        tasks[j["id"]] = t
        used = [p for p, q in j.get("demand", {}).items() if q]
        unary = all(d["cluster"]["pools"][p] == 1 for p in used)  # machines take no demand
        m.add_mode(
            t,
            [res[p] for p in used],
            j["duration"],
            None if unary else [int(j["demand"][p]) for p in used],
        )
    for j in d["jobs"]:
        for a in j.get("after", []):
            m.add_end_before_start(tasks[a], tasks[j["id"]])
    m.set_objective(weight_makespan=1)
    t0 = time.monotonic()
    r = m.solve("ortools", time_limit=limit, display=False, num_workers=workers)
    return {
        "status": r.status.name.lower(),
        "makespan": int(round(r.objective)),
        "wall_s": round(time.monotonic() - t0, 2),
    }


def psplib_rows(
    limit: float, workers: int, pjs: bool, sets: tuple[str, ...] = ("j30", "j120")
) -> list[dict[str, Any]]:
    ref = reference()
    rows = []
    for family in sets:
        for f in sorted((ROOT / "instances" / "psplib" / family).glob("*.sm"), key=natural):
            d = parse_sm(f.read_text(), f.stem)
            r = {"set": family, "instance": f.stem, **run_cpsat(d, limit, workers)}
            r["ref_lb"], r["ref_ub"] = int(ref[f.stem]["ref_lb"]), int(ref[f.stem]["ref_ub"])
            if pjs:
                r.update(pyjobshop_columns(d, limit, workers))
            rows.append(r)
            print(_line(r), flush=True)
    return rows


def pyjobshop_columns(d: dict[str, Any], limit: float, workers: int) -> dict[str, Any]:
    p = run_pyjobshop(d, limit, workers)
    return {"pjs_status": p["status"], "pjs_makespan": p["makespan"], "pjs_wall_s": p["wall_s"]}


def jobshop_rows(limit: float, workers: int, pjs: bool) -> list[dict[str, Any]]:
    opt = jobshop_optima()
    rows = []
    for name in ("ft06", "la01", "la02", "la03", "la04", "la05", "ft10"):
        d = parse_jss((ROOT / "instances" / "jobshop" / f"{name}.jss").read_text(), name)
        r = {
            "set": "jobshop",
            "instance": name,
            **run_cpsat(d, limit, workers),
            "ref_lb": opt[name],
            "ref_ub": opt[name],
        }
        if pjs:
            r.update(pyjobshop_columns(d, limit, workers))
        rows.append(r)
        print(_line(r), flush=True)
    return rows


def muri_row(limit: float, workers: int) -> dict[str, Any]:
    inst = read_instance(ROOT / "instances" / "muri-testbed-100.json")
    t = time.monotonic()
    s = solve_cpsat(inst, SolveOptions(time_limit=limit, workers=workers, seed=0))
    wall = time.monotonic() - t
    obj = inst.objective[0]
    met = metrics(inst, s)
    n = len(inst.jobs)
    greedy_obj = (s.info.get("greedy_objective") or {}).get(obj)
    model_bound = (s.info.get("model_bound") or {}).get(obj)
    proved = (s.lower_bound or {}).get(obj)
    r = {
        "set": "muri",
        "instance": "muri-testbed-100",
        "status": s.status,
        "wall_s": round(wall, 2),
        "violations": len(verify(inst, s)),
        "objective": obj,
        "cpsat_value": met[obj],
        "greedy_value": greedy_obj,
        "cpsat_avg_jct": round(met["avg_jct"], 1),
        "model_bound": model_bound,
        "bound": proved,
        "groups_complete": s.info.get("groups_complete"),
    }
    if obj == "total_weighted_jct" and all(j.weight == 1.0 for j in inst.jobs):
        r["greedy_avg_jct"] = round(greedy_obj / n, 1) if greedy_obj is not None else None
        r["avg_jct_bound"] = round(model_bound / n, 1) if model_bound is not None else None
    print(r, flush=True)
    return r


def _line(r: dict[str, Any]) -> str:
    extra = f"  pyjobshop {r['pjs_makespan']} {r['pjs_status']}" if "pjs_makespan" in r else ""
    gap = 100 * (r["makespan"] - r["ref_ub"]) / r["ref_ub"]
    return (
        f"{r['set']:8} {r['instance']:10} {r['status']:9} makespan {r['makespan']:>5} "
        f"(start {r['greedy']}, ref {r['ref_lb']}-{r['ref_ub']}, gap {gap:5.2f}%) "
        f"{r['wall_s']:6.2f}s"
        f"{'' if not r['violations'] else ' INVALID'}{extra}"
    )


def summary(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| set | n | reached best known | proved optimal | total s | mean gap to ref_ub |"
        + " pyjobshop reached / proved, gap |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("j30", "j120", "jobshop"):
        rs = [r for r in rows if r["set"] == name]
        if not rs:
            continue
        reached = sum(r["makespan"] is not None and r["makespan"] <= r["ref_ub"] for r in rs)
        proved = sum(r["status"] == "optimal" for r in rs)
        gap = sum((r["makespan"] - r["ref_ub"]) / r["ref_ub"] for r in rs) / len(rs)
        total = sum(r["wall_s"] for r in rs)
        pj = "-"
        if "pjs_makespan" in rs[0]:
            pgap = sum((r["pjs_makespan"] - r["ref_ub"]) / r["ref_ub"] for r in rs) / len(rs)
            pj = (
                f"{sum(r['pjs_makespan'] <= r['ref_ub'] for r in rs)} / "
                f"{sum(r['pjs_status'] == 'optimal' for r in rs)}, gap {100 * pgap:.2f}%"
            )
        out.append(
            f"| {name} | {len(rs)} | {reached} | {proved} | {total:.1f} | {100 * gap:.2f}% | {pj} |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--pyjobshop", action="store_true")
    ap.add_argument("--only", default="psplib,jobshop,muri")
    ap.add_argument(
        "--sets", default="j30,j120", help="PSPLIB sets to run with psplib, e.g. --sets j120"
    )
    ap.add_argument("-o", "--output", default=str(ROOT / "out" / "cpsat_bench.csv"))
    a = ap.parse_args(argv)
    parts = a.only.split(",")
    if a.pyjobshop:
        try:
            import pyjobshop  # noqa: F401
        except ImportError:
            print("pyjobshop is not importable; skipping the comparison", file=sys.stderr)
            a.pyjobshop = False
    rows: list[dict[str, Any]] = []
    if "psplib" in parts:
        sets = tuple(x for x in a.sets.split(",") if x)
        rows += psplib_rows(a.time_limit, a.workers, a.pyjobshop, sets)
    if "jobshop" in parts:
        rows += jobshop_rows(a.time_limit, a.workers, a.pyjobshop)
    muri = muri_row(a.time_limit, a.workers) if "muri" in parts else None
    print()
    print("\n".join(summary(rows)))
    ft10 = next((r for r in rows if r["instance"] == "ft10"), None)
    if ft10:
        print(f"ft10: {ft10['makespan']} ({100 * (ft10['makespan'] - 930) / 930:.2f}% above 930)")
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    for r in rows + ([muri] if muri else []):
        keys += [k for k in r if k not in keys]
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows + ([muri] if muri else []):
            w.writerow(r)
    print(f"wrote {out}")
    bad = sum(r.get("violations", 0) for r in rows + ([muri] if muri else []))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
