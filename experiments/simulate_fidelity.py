"""Fidelity of `planner.simulate` against Muri's own simulator on Muri's testbed trace.

    .venv/bin/python experiments/simulate_fidelity.py PATH/TO/cluster_trace.csv \
        [--policies muri-s,srsf-p,srtf,tiresias,muri-l] [--first N]

Imports the trace as `plan import muri` does (8 nodes x 8 GPUs, time unit s), runs each
policy with Muri's measured restart costs and prints avg JCT / makespan beside the
figures Muri's simulator gives on the same trace and cluster (quoted, not recomputed; shown
only for the whole of cluster_trace.csv on 8 x 8 GPUs).

Restart costs: the instance is imported with `--preemption`, so every job pays its catalogue
profile's `restart_ms` (Muri's measured `overhead_dict`, models/README.md). Every realized
schedule is checked by `planner.verify` (R1-R11); the last column says so.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from muri_figures import MURI  # a module beside this script

from planner.importers.muri import muri_to_instance
from planner.online import make_policy
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import simulate
from planner.simulate.output import result_to_schedule_dict, sim_metrics
from planner.verify import verify


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--policies", default="muri-s,srsf-p,srtf,tiresias,muri-l")
    ap.add_argument("--first", type=int, default=None)
    ap.add_argument("--nodes", type=int, default=8)
    args = ap.parse_args()
    doc = muri_to_instance(
        args.trace,
        name=args.trace.stem,
        nodes=args.nodes,
        gpus_per_node=8,
        first=args.first,
        preemption=True,
    )
    inst = instance_from_dict(doc)
    print(f"{args.trace.name}: {len(inst.jobs)} jobs, {args.nodes} x 8 GPUs")
    cols = ["policy", "avg JCT (s)", "Muri sim", "ratio", "makespan (s)", "Muri sim", "ratio"]
    cols += ["decisions", "preemptions", "groups", "wall (s)", "violations"]
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * 12)
    for name in args.policies.split(","):
        t0 = time.perf_counter()
        res = simulate(inst, make_policy(name))
        wall = time.perf_counter() - t0
        m = sim_metrics(inst, res)
        bad = verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res)))
        same = args.trace.name == "cluster_trace.csv" and args.first is None and args.nodes == 8
        ref = MURI.get(name) if same else None
        groups = len({s.group for segs in res.segments.values() for s in segs if s.group})
        r1 = f"{m['avg_jct'] / ref[0]:.3f}" if ref else "-"
        r2 = f"{m['makespan'] / ref[1]:.3f}" if ref else "-"
        print(
            f"| {name} | {m['avg_jct']:,.0f} | {ref[0] if ref else 0:,} | {r1} "
            f"| {m['makespan']:,.0f} | {ref[1] if ref else 0:,} | {r2} "
            f"| {res.info['decisions']} | {res.info['preemptions']} | {groups} | {wall:.1f} "
            f"| {len(bad)} |"
        )


if __name__ == "__main__":
    main()
