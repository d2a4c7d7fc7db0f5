"""Scale benchmark of the greedy planner and the improvement search.

    .venv/bin/python experiments/scale_bench.py [--sizes 1000,10000,100000] [--rules all|srsf,...]
        [--improve 10,30] [--quality-max 10000] [--seed 1] [-o out/scale_bench.csv]
    .venv/bin/python experiments/scale_bench.py --auto [--time-limit 10]   (CP-SAT vs improvement)

Instances: the generated `dl` family (planner.generate, Muri-shaped, load ~1.2) with
1,000 jobs on 16 nodes, 10,000 on 128 and 100,000 on 1,024 (8 GPUs each). Every run is
a fresh subprocess so that its peak RSS (resource.getrusage, ru_maxrss) is its own; the
peak includes generating and reading the instance. Per run: time to plan (solve_greedy,
which includes planner.bounds' lower bounds), peak memory, the objective, its gap to the
lower bound, and planner.verify's verdict (violations must be 0). Up to --quality-max jobs
the improvement search also runs for each --improve time limit, starting from the greedy
plan of the default rule. `--auto` compares CP-SAT with greedy + improvement at equal time
limits on small dl and mixed instances: the measurement behind planner.solvers.auto.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NODES = {1000: 16, 10000: 128, 100000: 1024}
RULES = ("fifo", "sjf", "srsf", "priority", "interleave")


def child(args: argparse.Namespace) -> None:
    from planner.bounds import gap
    from planner.generate import generate
    from planner.metrics import objective_values
    from planner.read import instance_from_dict
    from planner.solvers import SolveOptions
    from planner.solvers.greedy import solve_greedy
    from planner.verify import verify

    t = time.perf_counter()
    inst = instance_from_dict(generate(args.family, args.jobs, args.nodes, args.seed))
    t_read = time.perf_counter() - t
    rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    names = list(inst.objective)
    t = time.perf_counter()
    if args.improve_s:
        from planner.solvers.improve import improve

        start = solve_greedy(inst, args.rule, SolveOptions())
        s = improve(inst, SolveOptions(time_limit=args.improve_s, seed=args.seed), start=start)
    else:
        s = solve_greedy(inst, args.rule, SolveOptions())
    t_solve = time.perf_counter() - t
    row: dict[str, Any] = {
        "status": s.status,
        "plan_s": round(t_solve, 2),
        "read_s": round(t_read, 2),
        "rss_read_mb": round(rss_read),
    }
    if s.status == "feasible":
        t = time.perf_counter()
        row["violations"] = len(verify(inst, s))
        row["verify_s"] = round(time.perf_counter() - t, 2)
        value = objective_values(inst, s, names)[names[0]]
        bound = (s.lower_bound or {}).get(names[0])
        g = gap(value, bound)
        row.update(
            objective=value,
            bound=bound,
            gap=None if g is None else round(g, 4),
            groups=len(s.groups),
            engine=s.info.get("engine", ""),
        )
        if "improve" in s.info:
            row["samples"] = s.info["improve"]["samples"]
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(row))


def run_child(
    family: str, jobs: int, nodes: int, rule: str, improve_s: float, seed: int
) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--family",
        family,
        "--jobs",
        str(jobs),
        "--nodes",
        str(nodes),
        "--rule",
        rule,
        "--improve-s",
        str(improve_s),
        "--seed",
        str(seed),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        return {"status": "error", "error": p.stderr.strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


COLUMNS = (
    "jobs",
    "nodes",
    "rule",
    "improve_s",
    "status",
    "plan_s",
    "peak_rss_mb",
    "objective",
    "bound",
    "gap",
    "groups",
    "violations",
    "engine",
    "samples",
)


def main_scale(args: argparse.Namespace) -> None:
    sizes = [int(x) for x in args.sizes.split(",")]
    rules = RULES if args.rules == "all" else tuple(args.rules.split(","))
    improves = [float(x) for x in args.improve.split(",") if x]
    rows: list[dict[str, Any]] = []
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(" ".join(f"{c:>12s}" for c in COLUMNS), flush=True)
    for n in sizes:
        nodes = NODES.get(n, max(1, n // 80))
        plan = [(r, 0.0) for r in rules]
        if n <= args.quality_max:
            plan += [("interleave", s) for s in improves]
        for rule, imp in plan:
            row = {
                "jobs": n,
                "nodes": nodes,
                "rule": rule,
                "improve_s": imp,
                **run_child("dl", n, nodes, rule, imp, args.seed),
            }
            rows.append(row)
            print(" ".join(f"{str(row.get(c, '')):>12s}" for c in COLUMNS), flush=True)
            with open(out, "w", newline="") as fh:
                w = csv.DictWriter(
                    fh,
                    fieldnames=list(COLUMNS) + ["read_s", "rss_read_mb", "verify_s", "error"],
                    extrasaction="ignore",
                )
                w.writeheader()
                w.writerows(rows)
    print(f"wrote {out}")


def main_auto(args: argparse.Namespace) -> None:
    from planner.generate import generate
    from planner.metrics import objective_values
    from planner.read import instance_from_dict
    from planner.solvers import SolveOptions
    from planner.solvers.auto import model_size
    from planner.solvers.cpsat import solve_cpsat
    from planner.solvers.improve import improve
    from planner.verify import verify

    print("family jobs nodes options cpsat improve cpsat/improve", flush=True)
    for fam in ("dl", "mixed"):
        for n in (30, 60, 120, 250, 500):
            nodes = max(2, n // 10)
            inst = instance_from_dict(generate(fam, n, nodes, 3))
            names = list(inst.objective)
            vals = []
            for name in ("cpsat", "improve"):
                o = SolveOptions(time_limit=args.time_limit, workers=2)
                s = solve_cpsat(inst, o) if name == "cpsat" else improve(inst, o)
                ok = s.status in ("feasible", "optimal") and not verify(inst, s)
                vals.append(objective_values(inst, s, names)[names[0]] if ok else None)
            ratio = vals[0] / vals[1] if vals[0] and vals[1] else None
            print(
                fam,
                n,
                nodes,
                model_size(inst),
                *vals,
                "" if ratio is None else f"{ratio:.3f}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--rules", default="all")
    ap.add_argument("--improve", default="10,30")
    ap.add_argument("--quality-max", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default=str(ROOT / "out" / "scale_bench.csv"))
    ap.add_argument("--auto", action="store_true")
    ap.add_argument("--time-limit", type=float, default=10.0)
    # Internal: one measurement in this process.
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--family", default="dl", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--nodes", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--rule", default="srsf", help=argparse.SUPPRESS)
    ap.add_argument("--improve-s", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
    elif args.auto:
        main_auto(args)
    else:
        main_scale(args)


if __name__ == "__main__":
    main()
