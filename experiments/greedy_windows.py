"""Average JCT of srsf, sjf, fifo and interleave over windows of the Muri traces.

Usage: .venv/bin/python experiments/greedy_windows.py MURI_DIR [--evenness 0.25,0.5]
MURI_DIR holds the Muri trace files (cluster_trace.csv, trace1.csv, trace2.csv, trace4.csv);
the windows are 100 consecutive jobs of each trace on 8 x 8 GPUs, as submitted and all at 0.
`--evenness`: interleave once per value of `planner.solvers.greedy.form.MIN_EVENNESS`
(columns `interleave@VALUE`), in the same run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import planner.solvers.greedy.form as form
from planner.importers.muri import muri_to_instance
from planner.read import instance_from_dict
from planner.solvers import SolveOptions
from planner.solvers.greedy import solve_greedy

WINDOWS = [("cluster_trace.csv", o) for o in (0, 100, 200, 300)] + [
    (f, o) for f in ("trace1.csv", "trace2.csv", "trace4.csv") for o in (0, 500, 1000)
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("muri_dir", type=Path, help="folder with the Muri trace files")
    ap.add_argument("--evenness", help="comma-separated MIN_EVENNESS values for interleave")
    args = ap.parse_args()
    data = args.muri_dir
    values = [float(x) for x in args.evenness.split(",")] if args.evenness else []
    rules: tuple[str, ...] = ("fifo", "sjf", "srsf", "interleave")
    if values:
        rules = ("fifo", "sjf", "srsf", *(f"interleave@{v:g}" for v in values))
    tot = {r: 0.0 for r in rules}
    for f, off in WINDOWS:
        for zero in (False, True):
            d = muri_to_instance(
                data / f,
                name=f"{f}-{off}",
                nodes=8,
                gpus_per_node=8,
                first=100,
                offset=off,
                all_at_zero=zero,
            )
            inst = instance_from_dict(d)
            rel = {j.id: j.release for j in inst.jobs}
            row = {}
            for r in rules:
                rule, _, value = r.partition("@")
                if value:
                    form.MIN_EVENNESS = float(value)
                s = solve_greedy(inst, rule, SolveOptions())
                row[r] = sum(a.end - rel[a.id] for a in s.jobs) / len(s.jobs)
            for r in rules:
                tot[r] += row[r] / row["srsf"]
            print(
                f"{f:18s}{off:5d} {'zero' if zero else 'trace'}  "
                + "  ".join(f"{r} {row[r] / row['srsf']:.3f}" for r in rules)
            )
    n = 2 * len(WINDOWS)
    print("mean ratio to srsf: " + "  ".join(f"{r} {tot[r] / n:.3f}" for r in rules))


if __name__ == "__main__":
    main()
