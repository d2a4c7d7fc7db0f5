"""`plan replan` with preemption: the residual alone against the engine run from the present.

    .venv/bin/python experiments/replan_present.py PATH/TO/cluster_trace.csv \
        [--limit 15] [--nows 300000,800000,1500000,2200000] [--solver auto]

Imports the trace as experiments/rolling_forecast.py does (8 nodes x 8 GPUs, time unit s,
Muri's restart costs, preemption on), plans it with `muri-s` (`plan simulate`) and replans
that plan at each `now` as `plan replan` does (`planner.replan.live_instance`, the plan as
`SolveOptions.start`), with nothing changed and with v100-3 down for 500,000 s and v100-5
down for good. Two rows per case, each with `--limit` seconds:
- residual: the waiting jobs planned around the running ones, which keep their segments
  to their §8 ends, with the whole limit (`planner.solvers.dispatch._from_the_present`
  switched off here, `RESIDUAL_SHARE` 1);
- present: as `plan replan` plans now (half the limit for the residual, then the
  preemptive planner from the present, which may stop running jobs at `now`).
Both are never worse than the plan in force when it still holds. Every plan is checked
by `planner.verify` against the live state (the last column).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import planner.solvers.dispatch as dispatch
from planner.changes import Changes
from planner.importers.muri import muri_to_instance
from planner.metrics import metrics
from planner.online import make_policy
from planner.read import instance_from_dict
from planner.replan import live_instance
from planner.schedule import schedule_from_dict
from planner.simulate import simulate
from planner.simulate.output import result_to_schedule_dict
from planner.solvers.options import SolveOptions
from planner.verify import verify


def _residual_only(instance: Any, merged: Any, options: Any, search: bool) -> Any:
    return merged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--limit", type=float, default=15.0)
    ap.add_argument("--nows", default="300000,800000,1500000,2200000")
    ap.add_argument("--solver", default="auto")
    args = ap.parse_args()
    doc = muri_to_instance(args.trace, name=args.trace.stem, nodes=8, gpus_per_node=8,
                           preemption=True)  # fmt: skip
    inst = instance_from_dict(doc)
    plan = schedule_from_dict(result_to_schedule_dict(inst, simulate(inst, make_policy("muri-s"))))
    print(f"{args.trace.name}: muri-s plan, avg JCT {metrics(inst, plan)['avg_jct']:,.0f} s; "
          f"replans with {args.solver}, {args.limit:g} s\n")  # fmt: skip
    cols = ["now", "changes", "planner", "solver", "avg JCT (s)", "plan in force", "wall (s)"]
    print("| " + " | ".join(cols + ["violations"]) + " |")
    print("|" + " --- |" * (len(cols) + 1), flush=True)
    present, share = dispatch._from_the_present, dispatch.RESIDUAL_SHARE
    for now in (int(x) for x in args.nows.split(",")):
        down = (("v100-3", now + 500_000), ("v100-5", None))
        for label, changes in (("none", Changes()), ("2 nodes down", Changes(nodes_down=down))):
            live = live_instance(inst, plan, now, changes)
            for name, fn, part in (("residual", _residual_only, 1.0), ("present", present, share)):
                dispatch._from_the_present = fn  # type: ignore[assignment]
                dispatch.RESIDUAL_SHARE = part
                t0 = time.perf_counter()
                s = dispatch.solve(
                    live, args.solver, SolveOptions(time_limit=args.limit, start=plan)
                )
                wall = time.perf_counter() - t0
                kept = s.info.get("kept", {})
                force = "returned" if kept.get("returned") else "not kept" if kept else "-"
                row = [f"{now:,}", label, name, s.solver, f"{metrics(live, s)['avg_jct']:,.0f}",
                       force, f"{wall:.1f}", str(len(verify(live, s)))]  # fmt: skip
                print("| " + " | ".join(row) + " |", flush=True)
    dispatch._from_the_present, dispatch.RESIDUAL_SHARE = present, share


if __name__ == "__main__":
    main()
