"""What the bounds' LPs cost: iterations and seconds of the interval and configuration LPs.

    .venv/bin/python experiments/bound_lps.py [DATA_DIR] [--windows 4] [--cut-rounds N]

Runs `planner.bounds.named_lower_bounds` (total weighted JCT) on
`instances/muri-testbed-100.json` and, when DATA_DIR (Muri's traces) is given, on
cluster_trace.csv (400 jobs) and the all-at-zero windows of 60 jobs of trace1-trace4 that
`experiments/preemption_targets.py` plans (8 x 8 V100). Per instance: the bound as an
average JCT, the ingredient that gives it, the wall time of the whole bound, and the
largest LP HiGHS solved (simplex iterations, seconds, status; an LP stopped by
`planner.bounds.lp.LP_ITERATIONS` is skipped by the bound). The figures behind
`LP_ITERATIONS` and `CUT_ROUNDS` (planner/bounds/lp.py); `--cut-rounds N` sets the latter
(0: no slot cuts).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import highspy

sys.path.insert(0, str(Path(__file__).resolve().parent))

from preemption_targets import load  # noqa: E402

from planner.bounds import lp, named_lower_bounds  # noqa: E402
from planner.instance import Instance  # noqa: E402
from planner.read import read_instance  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOLVES: list[tuple[int, float, str]] = []
_RUN = highspy.Highs.run


def _timed_run(self: Any) -> Any:
    t0 = time.perf_counter()
    out = _RUN(self)
    status = self.modelStatusToString(self.getModelStatus())
    SOLVES.append((self.getInfo().simplex_iteration_count, time.perf_counter() - t0, status))
    return out


def row(label: str, inst: Instance) -> None:
    SOLVES.clear()
    t0 = time.perf_counter()
    value, word = named_lower_bounds(inst, ["total_weighted_jct"])["total_weighted_jct"]
    wall = time.perf_counter() - t0
    its, secs, status = max(SOLVES, default=(0, 0.0, "none"))
    avg = value / max(1, len(inst.jobs))
    print(f"| {label} | {avg:,.0f} | {word} | {wall:.1f} | {its:,} | {secs:.1f} | {status} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, nargs="?")
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--cut-rounds", type=int)
    args = ap.parse_args()
    if args.cut_rounds is not None:
        lp.CUT_ROUNDS = args.cut_rounds
    highspy.Highs.run = _timed_run  # type: ignore[method-assign]
    print("| instance | bound (avg JCT, s) | by | bound wall (s) |", end="")
    print(" largest LP: iterations | its seconds | its status |")
    print("|" + " --- |" * 7)
    row("muri-testbed-100", read_instance(ROOT / "instances" / "muri-testbed-100.json"))
    if args.data is None:
        return
    full = args.data / "cluster_trace.csv"
    if full.exists():
        row("cluster_trace (400 jobs)", load(full, False))
    for t in ("trace1", "trace2", "trace3", "trace4"):
        path = args.data / f"{t}.csv"
        for w in range(args.windows if path.exists() else 0):
            inst = load(path, False, first=60, offset=60 * w)
            row(f"{t} jobs {60 * w}-{60 * w + 59}, all at 0", inst)


if __name__ == "__main__":
    main()
