"""Fidelity of `planner.simulate` against Muri's own simulator on Muri's testbed trace.

    .venv/bin/python experiments/simulate_fidelity.py PATH/TO/cluster_trace.csv \
        [--policies muri-s,srsf-p,srtf,tiresias,muri-l] [--first N]

Imports the trace as `plan import muri` does (8 nodes x 8 GPUs, time unit s), runs each
policy with Muri's measured restart costs and prints avg JCT / makespan beside the
figures Muri's simulator gives on the same trace and cluster (quoted, not recomputed; shown
only for the whole of cluster_trace.csv on 8 x 8 GPUs).

Restart costs: Muri's simulator charges per model and GPU count the seconds below (its
`overhead_dict`, Apache-2.0, SIGCOMM 2022 artifact); the models/ catalogue is to carry the
same figures as `by_gpus.N.restart_ms`, after which this table is no longer needed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planner.durations import ceil_units
from planner.importers.muri import muri_to_instance
from planner.instance import Instance, Job
from planner.read import instance_from_dict
from planner.simulate import make_policy, simulate
from planner.simulate.output import sim_metrics

RESTART_S = {
    "vgg16": (7, 7, 8, 9, 9, 10),
    "vgg19": (7, 7, 8, 9, 10, 10),
    "resnet18": (4, 5, 5, 7, 7, 7),
    "shufflenet_v2_x1_0": (4, 4, 5, 5, 7, 8),
    "bert": (10, 10, 10, 10, 10, 10),
    "gpt2": (10, 10, 10, 10, 10, 10),
    "a2c": (38, 39, 39, 46, 46, 46),
    "dqn": (5, 5, 6, 6, 8, 8),
}
GPU_COUNTS = (1, 2, 4, 8, 16, 32)

# Muri's simulator on cluster_trace.csv, 8 x 8 GPUs: (avg JCT s, makespan s).
MURI = {
    "srsf-p": (233_909, 4_198_587),
    "srtf": (247_453, 4_066_820),
    "tiresias": (328_737, 3_991_729),
    "muri-s": (120_034, 2_663_199),
    "muri-l": (127_846, 2_671_191),
}


def restart_cost(instance: Instance):
    def cost(job: Job, gpus: int) -> int:
        secs = RESTART_S.get(job.model or "")
        if secs is None or gpus not in GPU_COUNTS:
            return 0
        return ceil_units(secs[GPU_COUNTS.index(gpus)] * 1000.0, instance.unit_ms)

    return cost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--policies", default="muri-s,srsf-p,srtf,tiresias,muri-l")
    ap.add_argument("--first", type=int, default=None)
    ap.add_argument("--nodes", type=int, default=8)
    args = ap.parse_args()
    doc = muri_to_instance(
        args.trace, name=args.trace.stem, nodes=args.nodes, gpus_per_node=8, first=args.first
    )
    inst = instance_from_dict(doc)
    print(f"{args.trace.name}: {len(inst.jobs)} jobs, {args.nodes} x 8 GPUs")
    cols = ["policy", "avg JCT (s)", "Muri sim", "ratio", "makespan (s)", "Muri sim", "ratio"]
    cols += ["decisions", "preemptions", "groups", "wall (s)"]
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * 11)
    for name in args.policies.split(","):
        t0 = time.perf_counter()
        res = simulate(inst, make_policy(name), restart_cost=restart_cost(inst))
        wall = time.perf_counter() - t0
        m = sim_metrics(inst, res)
        same = args.trace.name == "cluster_trace.csv" and args.first is None and args.nodes == 8
        ref = MURI.get(name) if same else None
        groups = len({s.group for segs in res.segments.values() for s in segs if s.group})
        r1 = f"{m['avg_jct'] / ref[0]:.3f}" if ref else "-"
        r2 = f"{m['makespan'] / ref[1]:.3f}" if ref else "-"
        print(
            f"| {name} | {m['avg_jct']:,.0f} | {ref[0] if ref else 0:,} | {r1} "
            f"| {m['makespan']:,.0f} | {ref[1] if ref else 0:,} | {r2} "
            f"| {res.info['decisions']} | {res.info['preemptions']} | {groups} | {wall:.1f} |"
        )


if __name__ == "__main__":
    main()
