"""`plan:SOLVER` on a preemptive trace with and without a forecast, beside `muri-s`.

    .venv/bin/python experiments/rolling_forecast.py PATH/TO/cluster_trace.csv \
        [--first N] [--solver auto] [--budget 1] [--windows 0,100000] [--repeats 1]
        [--follow] [--trust 0.2]

Imports the trace as experiments/simulate_fidelity.py does (8 nodes x 8 GPUs, time unit s,
Muri's restart costs, preemption on) and runs `muri-s`, then `plan:SOLVER` with each
forecast window (time units; 0: no phantoms, the plan holds the known jobs only) and
`--repeats` copies of the window ahead (planner/simulate/forecast.py); `--follow`: plan at
arrivals only and follow the plan at the completions between them; `--trust S`: keep the
planner's own online rule (`policy.REGROUP`) unless the plan beats that rule's engine start
by the share S (default: `rolling.DEFAULT_TRUST`). Every realized
schedule is checked by `planner.verify`; the last column says so.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planner.importers.muri import muri_to_instance
from planner.online import make_policy
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import Policy, simulate
from planner.simulate.output import result_to_schedule_dict, sim_metrics
from planner.solvers.rolling import DEFAULT_TRUST, RollingHorizon
from planner.verify import verify


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--first", type=int, default=None)
    ap.add_argument("--solver", default="auto")
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--windows", default="0,100000")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--follow", action="store_true")
    ap.add_argument("--trust", type=float, default=DEFAULT_TRUST)
    args = ap.parse_args()
    doc = muri_to_instance(
        args.trace, name=args.trace.stem, nodes=8, gpus_per_node=8, first=args.first,
        preemption=True,
    )  # fmt: skip
    inst = instance_from_dict(doc)
    print(f"{args.trace.name}: {len(inst.jobs)} jobs, 8 x 8 GPUs, budget {args.budget:g} s\n")
    cols = ["policy", "window", "avg JCT (s)", "makespan (s)", "decisions", "plans"]
    cols += ["policy s/decision"]
    cols += ["wall (s)", "violations"]
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * len(cols), flush=True)
    runs: list[tuple[str, str, Policy]] = [("muri-s", "-", make_policy("muri-s"))]
    for w in (int(x) for x in args.windows.split(",")):
        pol = RollingHorizon(
            args.solver,
            args.budget,
            window=w,
            repeats=args.repeats,
            follow=args.follow,
            trust=args.trust,
        )
        label = f"{w:,}" + (f" x {args.repeats}" if w and args.repeats > 1 else "")
        runs.append((f"plan:{args.solver}", label, pol))
    for name, window, pol in runs:
        t0 = time.perf_counter()
        res = simulate(inst, pol)
        wall = time.perf_counter() - t0
        m = sim_metrics(inst, res)
        bad = verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res)))
        n = res.info["decisions"]
        per = res.info["policy_seconds"] / n if n else 0.0
        cells = [name, window, f"{m['avg_jct']:,.0f}", f"{m['makespan']:,.0f}", str(n)]
        cells.append(str(getattr(pol, "plans", "-")))
        cells += [f"{per:.3f}", f"{wall:.0f}", str(len(bad))]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
