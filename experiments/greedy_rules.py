"""Average JCT and makespan of every greedy rule on one instance.

Usage: .venv/bin/python experiments/greedy_rules.py [instance.json]   (default:
instances/muri-testbed-100.json, the first 100 jobs of Muri's 64-GPU testbed trace)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planner.read import read_instance
from planner.solvers import SolveOptions
from planner.solvers.greedy import solve_greedy
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ROOT / "instances" / "muri-testbed-100.json"
    ap.add_argument("instance", nargs="?", type=Path, default=default, help="instance file")
    path = ap.parse_args().instance
    inst = read_instance(path)
    print(f"{inst.name}: {len(inst.jobs)} jobs, {sum(n.gpus for n in inst.nodes)} GPUs")
    rel = {j.id: j.release for j in inst.jobs}
    base = None
    for rule in ("fifo", "sjf", "srsf", "priority", "interleave"):
        t = time.perf_counter()
        s = solve_greedy(inst, rule, SolveOptions())
        dt = time.perf_counter() - t
        if s.status != "feasible":
            print(f"{rule:10s} {s.status}: {s.info.get('reason')}")
            continue
        bad = len(verify(inst, s))
        jct = sum(a.end - rel[a.id] for a in s.jobs) / len(s.jobs)
        mk = max(a.end for a in s.jobs)
        base = base or jct
        print(
            f"{rule:10s} avg_jct {jct:12.1f}  makespan {mk:9d}  groups {len(s.groups):3d}  "
            f"fifo/this {base / jct:.3f}  violations {bad}  {dt:.2f}s"
        )


if __name__ == "__main__":
    main()
