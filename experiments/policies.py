"""Every online policy, the offline plan and Muri's published figures on Muri's traces.

    .venv/bin/python experiments/policies.py DATA_FOLDER [--window 200] [--budget 1]
        [--traces cluster_trace,trace1,trace2,trace4] [--policies ...] [--offline-limit 60]

DATA_FOLDER holds Muri's trace CSVs (cluster_trace.csv, trace1.csv, ...). Each trace is
imported as `plan import muri --preemption` does (8 nodes x 8 GPUs, time unit s, Muri's
restart costs from the model catalogue); cluster_trace.csv is taken whole (400 jobs), the
others as a window of their first `--window` jobs. Per instance: every policy of
`plan simulate` (contract §10), `plan:auto` with `--budget` seconds per plan, and the
offline plan (`plan solve`, auto, `--offline-limit` seconds), which knows every job from
time 0 on (its releases too) and never preempts. Every schedule is checked by
`planner.verify`. Muri's figures (its own simulator on the same trace and cluster, run by
the author of the comparison; quoted, not recomputed) appear for cluster_trace only.

Prints one Markdown table per instance: avg JCT, makespan, policy seconds per decision,
wall seconds, preemptions, interleaving groups, violations.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from muri_figures import MURI  # a module beside this script

from planner.importers.muri import muri_to_instance
from planner.instance import Instance
from planner.metrics import metrics
from planner.online import POLICIES, make_policy
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.solvers import SolveOptions, solve
from planner.verify import verify

COLUMNS = ["run", "avg JCT (s)", "Muri sim", "makespan (s)", "Muri sim", "policy s/decision"]
COLUMNS += ["wall (s)", "preemptions", "groups", "violations"]


def load(folder: Path, trace: str, window: int | None) -> Instance:
    first = None if trace == "cluster_trace" else window
    doc = muri_to_instance(
        folder / f"{trace}.csv",
        name=trace if first is None else f"{trace}[:{first}]",
        nodes=8,
        gpus_per_node=8,
        first=first,
        preemption=True,
    )
    return instance_from_dict(doc)


def run_policy(inst: Instance, name: str, budget: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    res = simulate(inst, make_policy(name, budget=budget))
    wall = time.perf_counter() - t0
    doc = result_to_schedule_dict(inst, res, wall)
    info = res.info
    per = info["policy_seconds"] / info["decisions"] if info["decisions"] else 0.0
    return {
        "metrics": doc["metrics"],
        "per": per,
        "wall": wall,
        "preemptions": info["preemptions"],
        "groups": len(doc["groups"]),
        "violations": len(verify(inst, schedule_from_dict(doc))),
    }


def run_offline(inst: Instance, limit: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    sched = solve(inst, "auto", SolveOptions(time_limit=limit, workers=1))
    wall = time.perf_counter() - t0
    return {
        "metrics": metrics(inst, sched),
        "per": None,
        "wall": wall,
        "preemptions": 0,
        "groups": len(sched.groups),
        "violations": len(verify(inst, sched)),
    }


def row(name: str, r: dict[str, Any], ref: tuple[int, int] | None) -> str:
    m = r["metrics"]
    cells = [
        name,
        f"{m['avg_jct']:,.0f}",
        f"{ref[0]:,}" if ref else "-",
        f"{m['makespan']:,.0f}",
        f"{ref[1]:,}" if ref else "-",
        "-" if r["per"] is None else f"{r['per']:.3f}",
        f"{r['wall']:.1f}",
        str(r["preemptions"]),
        str(r["groups"]),
        str(r["violations"]),
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="folder with Muri's trace CSVs")
    ap.add_argument("--traces", default="cluster_trace,trace1,trace2,trace4")
    ap.add_argument("--window", type=int, default=200, help="jobs of trace1..4 (from the first)")
    ap.add_argument("--policies", default=",".join([*POLICIES, "plan:auto"]))
    ap.add_argument("--budget", type=float, default=1.0, help="plan:SOLVER seconds per plan")
    ap.add_argument("--offline-limit", type=float, default=60.0, help="0: no offline plan")
    args = ap.parse_args()
    for trace in args.traces.split(","):
        inst = load(args.data, trace, args.window)
        whole = trace == "cluster_trace"
        print(f"\n{inst.name}: {len(inst.jobs)} jobs, 8 x 8 GPUs\n", flush=True)
        print("| " + " | ".join(COLUMNS) + " |")
        print("|" + " --- |" * len(COLUMNS), flush=True)
        for name in args.policies.split(","):
            ref = MURI.get(name) if whole else None
            print(row(name, run_policy(inst, name, args.budget), ref), flush=True)
        if args.offline_limit > 0:
            print(row("offline plan (auto)", run_offline(inst, args.offline_limit), None))


if __name__ == "__main__":
    main()
