"""CP-SAT planner beside PyJobShop 0.0.9 on PSPLIB j30/j60/j90/j120 and classic job shops.

    .venv/bin/python experiments/pyjobshop_compare.py DATA_DIR [--time-limit 10] [--workers 2]
                     [--per-set 10] [--sets j30,j60,j90,j120,jobshop,ft]
                     [-o out/pyjobshop_compare.csv]

DATA_DIR holds `psplib/{j30,j60,j90,j120}/*.sm` with `psplib/psplib_reference.csv` (best
known bounds, column `ref_ub`) and `jobshop/*.jss` with `jobshop/optimum_kobe.csv`.
PyJobShop is the `bench` extra (`.venv/bin/pip install -e '.[bench]'` from the clone).

Samples are fixed by rule, never chosen by result: per PSPLIB set, the instances in natural
order and the middle one of each tenth (positions `(2i + 1) * n // (2 * per_set)`); job shop:
la04, la08, ..., la40; ft: ft06, ft10, ft20. Both solvers run on each instance one after the
other, alternating which goes first, so a machine shared with other work slows both alike.
Per set it prints the mean gap to the best known makespan, the proved counts and on how
many instances each side is strictly better. Every planner schedule is checked with
planner.verify.

One run at 10 s, 2 workers, on an otherwise idle machine (2026-12-01, after the RCPSP
heuristic's genetic search, planner/solvers/rcpsp_heuristic.py, and two full searches on
job shops up to 250 operations, cpsat/solve.py's LNS_MIN_DISJUNCTIVE):

| set | n | plan gap | PyJobShop gap | plan proved | PyJobShop proved | plan better / worse |
| --- | --- | --- | --- | --- | --- | --- |
| j30 | 10 | 0.00% | 0.00% | 10 | 10 | 0 / 0 |
| j60 | 10 | 0.27% | 0.27% | 9 | 9 | 0 / 0 |
| j90 | 10 | 0.70% | 1.03% | 8 | 7 | 2 / 0 |
| j120 | 10 | 1.25% | 3.24% | 3 | 3 | 7 / 0 |
| jobshop | 10 | 0.00% | 0.04% | 9 | 7 | 1 / 0 |
| ft | 3 | 0.00% | 0.00% | 3 | 2 | 0 / 0 |

The run before the job-shop change (genetic search only): j60 0.27% / 0.45%, j90 0.70% /
1.42%, j120 1.35% / 3.09% (6 / 0), job shops 0.24% / 0.14% (0 / 2: la28 1,222 and la40
1,240 against 1,216 and 1,234) and 0.07% / 0.19% in a run of job shops alone straight
after. Before the genetic search (the same day): j60 0.27% / 0.27%, j90 1.49% / 1.35%,
j120 2.60% / 3.21%, and j120 alone again 3.16% / 3.18%.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpsat_bench import natural, run_pyjobshop  # noqa: E402

from planner.importers.jobshop import parse_jss  # noqa: E402
from planner.importers.psplib import parse_sm  # noqa: E402
from planner.read import instance_from_dict  # noqa: E402
from planner.solvers import SolveOptions  # noqa: E402
from planner.solvers.cpsat import solve_cpsat  # noqa: E402
from planner.verify import verify  # noqa: E402

PSPLIB_SETS = ("j30", "j60", "j90", "j120")


def sample(data: Path, family: str, per_set: int, shift: int = 0) -> list[tuple[str, Path, int]]:
    """(name, file, best known makespan) of the family's fixed sample (PSPLIB: each
    position moved on by `shift`, modulo the set's size)."""
    if family in PSPLIB_SETS:
        with open(data / "psplib" / "psplib_reference.csv") as fh:
            ref = {r["instance"]: int(r["ref_ub"]) for r in csv.DictReader(fh)}
        files = sorted((data / "psplib" / family).glob("*.sm"), key=natural)
        n = len(files)
        first = ((2 * i + 1) * n // (2 * per_set) for i in range(min(per_set, n)))
        picks = sorted({(k + shift) % n for k in first})
        return [(files[k].stem, files[k], ref[files[k].stem]) for k in picks]
    with open(data / "jobshop" / "optimum_kobe.csv") as fh:
        opt = {r["problem"].removesuffix(".jss"): int(r["optimum"]) for r in csv.DictReader(fh)}
    names = (
        [f"la{k:02d}" for k in range(4, 41, 4)] if family == "jobshop" else ["ft06", "ft10", "ft20"]
    )
    return [(nm, data / "jobshop" / f"{nm}.jss", opt[nm]) for nm in names]


def instance_data(family: str, name: str, path: Path) -> dict[str, Any]:
    """The instance document of a sample's file (PSPLIB .sm or job-shop .jss)."""
    text = path.read_text()
    return parse_sm(text, name) if family in PSPLIB_SETS else parse_jss(text, name)


def run_plan(d: dict[str, Any], limit: float, workers: int) -> dict[str, Any]:
    inst = instance_from_dict(d)
    t = time.monotonic()
    s = solve_cpsat(inst, SolveOptions(time_limit=limit, workers=workers, seed=0))
    wall = time.monotonic() - t
    return {
        "status": s.status,
        "makespan": max((a.end for a in s.jobs), default=None),
        "wall_s": round(wall, 2),
        "violations": len(verify(inst, s)) if s.jobs else 0,
    }


def run_pair(d: dict[str, Any], limit: float, workers: int, plan_first: bool) -> dict[str, Any]:
    if plan_first:
        p = run_plan(d, limit, workers)
        q = run_pyjobshop(d, limit, workers)
    else:
        q = run_pyjobshop(d, limit, workers)
        p = run_plan(d, limit, workers)
    return {
        **p,
        "pjs_status": q["status"],
        "pjs_makespan": q["makespan"],
        "pjs_wall_s": q["wall_s"],
    }


def table(rows: list[dict[str, Any]], families: list[str]) -> list[str]:
    out = [
        "| set | n | plan gap | PyJobShop gap | plan proved | PyJobShop proved"
        " | plan better / worse |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for fam in families:
        rs = [r for r in rows if r["set"] == fam]
        if not rs:
            continue
        gap = 100 * sum(r["gap"] for r in rs) / len(rs)
        pgap = 100 * sum(r["pjs_gap"] for r in rs) / len(rs)
        better = sum(r["makespan"] < r["pjs_makespan"] for r in rs)
        worse = sum(r["makespan"] > r["pjs_makespan"] for r in rs)
        proved = sum(r["status"] == "optimal" for r in rs)
        pproved = sum(r["pjs_status"] == "optimal" for r in rs)
        out.append(
            f"| {fam} | {len(rs)} | {gap:.2f}% | {pgap:.2f}% | {proved} | {pproved} "
            f"| {better} / {worse} |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="folder with psplib/ and jobshop/")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--per-set", type=int, default=10)
    ap.add_argument("--sets", default="j30,j60,j90,j120,jobshop,ft")
    ap.add_argument("-o", "--output", default="out/pyjobshop_compare.csv")
    a = ap.parse_args(argv)
    try:
        import pyjobshop  # noqa: F401
    except ImportError:
        raise SystemExit(
            "this comparison needs PyJobShop: .venv/bin/pip install -e '.[bench]'"
        ) from None
    families = [f for f in a.sets.split(",") if f]
    rows: list[dict[str, Any]] = []
    k = 0
    for fam in families:
        for name, path, best in sample(a.data, fam, a.per_set):
            d = instance_data(fam, name, path)
            r = {"set": fam, "instance": name, "best": best}
            r.update(run_pair(d, a.time_limit, a.workers, plan_first=k % 2 == 0))
            k += 1
            r["gap"] = (r["makespan"] - best) / best
            r["pjs_gap"] = (r["pjs_makespan"] - best) / best
            rows.append(r)
            print(
                f"{fam:8} {name:9} best {best:5}  plan {r['makespan']:5} {r['status']:8}"
                f"  pyjobshop {r['pjs_makespan']:5} {r['pjs_status']:8}"
                f"{'  INVALID' if r['violations'] else ''}",
                flush=True,
            )
    print()
    print("\n".join(table(rows, families)))
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["set"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out}")
    return 1 if any(r["violations"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
