"""The MILP's model build against its hand-over to the back end, per solve.

`planner/solvers/milp/solve.py` sizes its grid to what it can build and hand over in the
time left: HANDOVER is the hand-over's time as a share of the build's (CBC: PuLP writes
an MPS file; HiGHS: PuLP builds HiGHS's own model). This script runs `plan solve`'s
solver on a generated mixed instance with each back end and times the three pieces by
wrapping them, then prints the shares and the whole run's wall time against the limit.

    .venv/bin/python experiments/milp_handover.py [--jobs 300] [--nodes 8] [--seed 1]
                                                  [--time-limit 10] [--repeat 1]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pulp.apis.highs_api as highs_api  # noqa: E402

from planner.generate import generate  # noqa: E402
from planner.read import instance_from_dict  # noqa: E402
from planner.solvers import SolveOptions, solve  # noqa: E402
from planner.solvers.milp import backends  # noqa: E402
from planner.solvers.milp import solve as milp_solve  # noqa: E402
from planner.verify import verify  # noqa: E402

SECONDS: dict[str, float] = {}


def timed(owner: Any, name: str, key: str) -> None:
    """Wrap `owner.name` so that its calls add their seconds to SECONDS[key]."""
    real: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args: Any, **kw: Any) -> Any:
        t0 = time.monotonic()
        try:
            return real(*args, **kw)
        finally:
            SECONDS[key] = SECONDS.get(key, 0.0) + time.monotonic() - t0

    setattr(owner, name, wrapper)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    inst = instance_from_dict(generate("mixed", a.jobs, a.nodes, a.seed), file="generated")
    timed(milp_solve.milp_model, "build", "build")
    timed(backends, "_write_model", "cbc hand-over")
    timed(highs_api.HiGHS, "buildSolverModel", "highs hand-over")
    print("| back end | build (s) | hand-over (s) | hand-over / build | wall (s) | limit (s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for _ in range(a.repeat):
        for backend in ("cbc", "highs"):
            SECONDS.clear()
            options = SolveOptions(time_limit=a.time_limit, milp_backend=backend)
            t0 = time.monotonic()
            sched = solve(inst, f"milp:{backend}", options)
            wall = time.monotonic() - t0
            assert not verify(inst, sched), "the MILP's plan broke the rules"
            build, hand = SECONDS.get("build", 0.0), SECONDS.get(f"{backend} hand-over", 0.0)
            share = f"{hand / build:.2f}" if build else "-"
            cells = [
                backend,
                f"{build:.2f}",
                f"{hand:.2f}",
                share,
                f"{wall:.1f}",
                f"{a.time_limit:g}",
            ]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
