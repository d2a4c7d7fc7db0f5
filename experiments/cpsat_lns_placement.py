"""CP-SAT's default search against LNS only on models with placement choices.

    .venv/bin/python experiments/cpsat_lns_placement.py [--time-limit 30] [--rounds 2]

On instances/bench's GPU instances of 50 jobs or more, runs the `cpsat` solver twice per
instance and round, back to back: once with `solve.LNS_PLACEMENT_MIN_JOBS` as it is (LNS
only on such models) and once with it out of reach (CP-SAT's default search); the order
alternates between instances and is swapped in every other round, so a machine shared with
other work slows both alike. Prints each pair's average JCT and default / LNS (above 1: LNS
only is better). Every schedule is checked with planner.verify. The figures behind
`LNS_PLACEMENT_MIN_JOBS` (planner/solvers/cpsat/solve.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import planner.solvers.cpsat.solve as cpsat_solve
from planner.metrics import metrics
from planner.read import read_instance
from planner.solvers import SolveOptions
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent


def instances() -> list[Path]:
    """instances/bench's files with GPU jobs and at least LNS_PLACEMENT_MIN_JOBS jobs."""
    out = []
    for f in sorted((ROOT / "instances" / "bench").glob("*.json")):
        inst = read_instance(f)
        gpu = any(j.gpus > 0 for j in inst.jobs)
        if gpu and len(inst.jobs) >= cpsat_solve.LNS_PLACEMENT_MIN_JOBS:
            out.append(f)
    return out


def run(path: Path, lns: bool, limit: float) -> float:
    inst = read_instance(path)
    keep = cpsat_solve.LNS_PLACEMENT_MIN_JOBS
    cpsat_solve.LNS_PLACEMENT_MIN_JOBS = keep if lns else 10**9
    try:
        s = cpsat_solve.solve_cpsat(inst, SolveOptions(time_limit=limit))
    finally:
        cpsat_solve.LNS_PLACEMENT_MIN_JOBS = keep
    assert not verify(inst, s), f"{path.name}: the schedule does not verify"
    return float(metrics(inst, s)["avg_jct"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    print("| round | instance | default avg JCT | LNS only avg JCT | default / LNS |")
    print("|" + " --- |" * 5)
    for r in range(a.rounds):
        for k, path in enumerate(instances()):
            first_lns = (k + r) % 2 == 0
            got = {}
            for lns in (first_lns, not first_lns):
                got[lns] = run(path, lns, a.time_limit)
            ratio = got[False] / got[True]
            print(f"| {r + 1} | {path.stem} | {got[False]:,.0f} | {got[True]:,.0f} | {ratio:.4f} |")


if __name__ == "__main__":
    main()
