"""`auto` on small instances with and without CP-SAT's probe (`auto.PROBE_MAX_OPTIONS`,
`auto.PROBE_SHARE`): CP-SAT alone first, for a share of the limit, before the batch or
release plans.

    .venv/bin/python experiments/auto_probe.py [--time-limit 10] [--seeds 2]

Generates `plan generate --family dl|mixed --jobs J --nodes N --seed S` for J, N from 6 on
one node to 20 on two, solves each with `auto` twice (probe off, then on), verifies both
schedules and prints the model's options, each run's status, wall time and first
objective; then, for the instances the probe applies to (at most PROBE_MAX_OPTIONS
options, and the batch or release plans would run: `batch.batch_planned`), how many plans
changed and the median wall time of each. Each run reads the instance anew (an
`Instance` keeps what it has worked out, which would speed up the second run).
"""

from __future__ import annotations

import argparse
import statistics
import time

import planner.solvers.auto as auto
from planner.generate import generate
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import SolveOptions, objectives_of, solve
from planner.solvers.preempt.batch import batch_planned
from planner.verify import verify

SIZES = ((6, 1), (8, 1), (10, 1), (12, 1), (8, 2), (10, 2), (12, 2), (14, 2), (16, 2), (20, 2))


def run(doc: dict, probe: bool, limit: float) -> tuple[str, float, float]:
    instance = instance_from_dict(doc, doc["name"] + ".json")
    saved = auto.PROBE_MAX_OPTIONS
    auto.PROBE_MAX_OPTIONS = saved if probe else -1
    try:
        options = SolveOptions(time_limit=limit)
        t0 = time.perf_counter()
        s = solve(instance, "auto", options)
        wall = time.perf_counter() - t0
    finally:
        auto.PROBE_MAX_OPTIONS = saved
    assert verify(instance, s) == [], f"{instance.name}: the schedule breaks the rules"
    name = objectives_of(instance, options)[0]
    return s.status, wall, objective_values(instance, s, [name])[name]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    print("| instance | options | without probe | with probe |")
    print("| --- | --- | --- | --- |")
    changed = better = 0
    walls: tuple[list[float], list[float]] = ([], [])
    for family in ("dl", "mixed"):
        for jobs, nodes in SIZES:
            for seed in range(args.seeds):
                name = f"{family}-{jobs}-{nodes}-{seed}"
                doc = {**generate(family, jobs, nodes, seed), "name": name}
                inst = instance_from_dict(doc, name + ".json")
                size = auto.choose(inst, args.time_limit, objectives_of(inst, SolveOptions())[0])[2]
                off = run(doc, False, args.time_limit)
                on = run(doc, True, args.time_limit)
                cells = [f"{st} {obj:,.6g} in {wall:.2f} s" for st, wall, obj in (off, on)]
                print(f"| {name} | {size} | {cells[0]} | {cells[1]} |", flush=True)
                if size <= auto.PROBE_MAX_OPTIONS and batch_planned(inst):
                    changed += on[2] != off[2]
                    better += on[2] < off[2]
                    walls[0].append(off[1])
                    walls[1].append(on[1])
    if walls[0]:
        print(
            f"\nprobed (up to {auto.PROBE_MAX_OPTIONS} options, batch or release plans; "
            f"{len(walls[0])} instances): "
            f"{changed} plans changed ({better} better); median wall "
            f"{statistics.median(walls[0]):.2f} s without the probe, "
            f"{statistics.median(walls[1]):.2f} s with it"
        )


if __name__ == "__main__":
    main()
