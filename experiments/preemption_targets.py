"""Interleaving that pays: our planners on Muri's traces, with and without preemption.

    .venv/bin/python experiments/preemption_targets.py DATA_DIR [--limit 120]
        [--window-limit 60] [--windows 4] [--heavy 1.3] [--heavy-only] [--skip-full]
        [--skip-windows]

DATA_DIR holds Muri's traces (cluster_trace.csv, trace1.csv ... trace4.csv; a missing
one is skipped). Every instance is imported as `plan import muri` does (8 nodes x 8 V100,
time unit s; `--preemption`: restart costs from the model catalogue), planned with
`planner.solvers.dispatch.solve` as `plan solve` does, and every schedule is checked by
`planner.verify` (the `ok` column). Rows:
1. cluster_trace.csv, all 400 jobs, with preemption (`auto`, `--limit` s) and without
   (`greedy:srsf`, `greedy:interleave`, `auto`);
2. all-at-zero windows of 60 jobs of trace1-trace4 (`--windows` per trace, rows 0-59,
   60-119, ...), with and without preemption: `greedy:sjf` against `auto` (`--window-limit`).
   Each window first gets a bound row: the average of the jobs' solo durations (no job ends
   sooner than alone: every member of a group runs slower than alone, contract §4, and a
   restart only adds time), and sjf / bound, the most any plan can gain over sjf. A window
   is *heavy* when sjf / bound >= `--heavy` (the queue, not the jobs' own lengths, makes
   most of sjf's JCT); `--heavy-only` plans only the heavy windows (the bound rows of all
   are printed either way).

Muri's own simulator on cluster_trace.csv, 8 x 8 (quoted, not recomputed): Muri-S 120,034 s
average JCT / 2,663,199 s makespan; SRSF 233,909 / 4,198,587.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planner.durations import solo_duration
from planner.importers.muri import muri_to_instance
from planner.instance import Instance
from planner.metrics import group_count, metrics
from planner.read import instance_from_dict
from planner.solvers.dispatch import solve
from planner.solvers.options import SolveOptions
from planner.verify import verify


def load(path: Path, preemption: bool, first: int | None = None, offset: int = 0) -> Instance:
    doc = muri_to_instance(
        path,
        name=path.stem,
        nodes=8,
        gpus_per_node=8,
        first=first,
        offset=offset,
        all_at_zero=first is not None,
        preemption=preemption,
    )
    return instance_from_dict(doc)


def row(label: str, inst: Instance, spec: str, limit: float) -> float:
    t0, c0 = time.perf_counter(), time.process_time()
    s = solve(inst, spec, SolveOptions(time_limit=limit))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    m = metrics(inst, s)
    kept = s.info.get("kept", {})
    returned = s.solver + (f" ({kept['solver']})" if kept.get("returned") else "")
    found = s.info.get("preempt", {}).get("found_by")
    returned += f" [{found}]" if found else ""
    ok = "yes" if s.jobs and not verify(inst, s) else "NO"
    print(
        f"| {label} | {spec} | {returned} | {m['avg_jct']:,.0f} | {m['makespan']:,.0f} "
        f"| {group_count(s)} | {ok} | {wall:.1f} | {cpu:.1f} |",
        flush=True,
    )
    return float(m["avg_jct"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--window-limit", type=float, default=60.0)
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--heavy", type=float, default=1.3)
    ap.add_argument("--heavy-only", action="store_true")
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--skip-windows", action="store_true")
    args = ap.parse_args()
    print(
        "| instance | solver spec | returned | avg JCT (s) | makespan (s) | groups | ok |", end=""
    )
    print(" wall (s) | CPU (s) |")
    print("|" + " --- |" * 9)
    full = args.data / "cluster_trace.csv"
    if not args.skip_full and full.exists():
        inst = load(full, True)
        row("cluster_trace, preemption", inst, "auto", args.limit)
        inst = load(full, False)
        for spec in ("greedy:srsf", "greedy:interleave", "auto"):
            row("cluster_trace, no preemption", inst, spec, args.limit)
    if args.skip_windows:
        return
    for t in ("trace1", "trace2", "trace3", "trace4"):
        path = args.data / f"{t}.csv"
        if not path.exists():
            continue
        for w in range(args.windows):
            window(path, t, w, args)


def window(path: Path, t: str, w: int, args: argparse.Namespace) -> None:
    """The bound row of one window, then sjf against auto with and without preemption."""
    name = f"{t} jobs {60 * w}-{60 * w + 59}"
    inst = load(path, False, first=60, offset=60 * w)
    bound = sum(solo_duration(inst, j) for j in inst.jobs) / len(inst.jobs)
    base = metrics(inst, solve(inst, "greedy:sjf", SolveOptions()))["avg_jct"]
    heavy = base / bound >= args.heavy
    print(
        f"| {name} | bound: avg solo duration | sjf / bound {base / bound:.3f} "
        f"({'heavy' if heavy else 'light'}) | {bound:,.0f} | | | | | |",
        flush=True,
    )
    if args.heavy_only and not heavy:
        return
    for pre in (True, False):
        inst = load(path, pre, first=60, offset=60 * w)
        label = f"{name}, {'preemption' if pre else 'none'}"
        sjf = row(label, inst, "greedy:sjf", args.window_limit)
        ours = row(label, inst, "auto", args.window_limit)
        print(f"| {label} | ratio sjf / auto | {sjf / ours:.3f} | | | | | | |", flush=True)


if __name__ == "__main__":
    main()
