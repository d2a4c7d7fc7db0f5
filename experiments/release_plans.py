"""Release plans on instances whose jobs arrive over time, without preemption: `auto`
(the release plan of `planner/solvers/preempt/batch.py` as CP-SAT's start) beside the
release plan alone and the greedy planner.

    .venv/bin/python experiments/release_plans.py [INSTANCE ...] [--time-limit 60]
        [--runs 3] [--workers 2]

Default instance: instances/muri-testbed-100.json. Per instance: `greedy` once; then per
run the release plan alone (`batch.batch_plan` as `auto` makes it: with `--workers` 2 on
two cores one seed per lane, `planner/solvers/lanes.py`, annealing for
RELEASE_SHARE_TWO_LANES of the limit, else one seed for RELEASE_SHARE; the seed kept is
printed) and `auto` with the limit, as `plan solve` runs it. Printed: the average JCT,
groups, and for `auto` the bound `plan solve` reports and the gap. Every schedule is
checked with planner.verify. The figures behind `batch.RELEASE_SHARE`,
`RELEASE_SHARE_TWO_LANES` and docs/PREEMPTION.md's "Releases known in advance, no preemption".
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planner.instance import Instance
from planner.metrics import metrics
from planner.read import read_instance
from planner.schedule import Schedule
from planner.solvers.dispatch import solve
from planner.solvers.options import SolveOptions
from planner.solvers.preempt.batch import batch_plan, is_release_batch
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent


def row(name: str, what: str, inst: Instance, s: Schedule, wall: float) -> None:
    if verify(inst, s):
        raise SystemExit(f"{name}: {what} does not verify")
    m = metrics(inst, s)
    lb = (s.lower_bound or {}).get("total_weighted_jct")
    total = m["avg_jct"] * len(inst.jobs)
    gap = f"{100 * (total - lb) / total:.1f}%" if lb and not inst.objective[1:] else ""
    bound = f"{lb / len(inst.jobs):,.0f}" if lb else ""
    print(
        f"| {name} | {what} | {m['avg_jct']:,.0f} | {len(s.groups)} | {bound} | {gap} "
        f"| {wall:.1f} |",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="*", type=Path)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    paths = args.instances or [ROOT / "instances" / "muri-testbed-100.json"]
    print("| instance | planner | avg JCT (s) | groups | bound (s) | gap | wall (s) |")
    print("|" + " --- |" * 7)
    for path in paths:
        inst = read_instance(path)
        if not is_release_batch(inst):
            print(f"| {path.stem} | not a release batch (batch.is_release_batch) | | | | | |")
            continue
        t = time.perf_counter()
        greedy = solve(inst, "greedy", SolveOptions())
        row(path.stem, "greedy", inst, greedy, time.perf_counter() - t)
        opts = SolveOptions(time_limit=args.time_limit, workers=args.workers)
        for k in range(args.runs):
            t = time.perf_counter()
            alone = batch_plan(inst, opts)
            assert alone is not None
            what = f"release plan, run {k + 1} ({alone.solver})"
            row(path.stem, what, inst, alone, time.perf_counter() - t)
        for k in range(args.runs):
            t = time.perf_counter()
            s = solve(inst, "auto", opts)
            row(path.stem, f"auto, run {k + 1}", inst, s, time.perf_counter() - t)


if __name__ == "__main__":
    main()
