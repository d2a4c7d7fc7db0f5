"""CP-SAT's search on placement-free models of up to `LNS_MIN_JOBS` jobs: one full search
plus LNS (CP-SAT's 2-worker default) against two full searches, with and without LP.

    .venv/bin/python experiments/cpsat_search_ab.py DATA_DIR [--sets j60,j90]
        [--shifts 0,2,5] [--seed 0] [--time-limit 10] [--workers 2]

DATA_DIR holds `psplib/{j60,j90}/*.sm` and `psplib/psplib_reference.csv` (best known
makespans, column `ref_ub`). Samples are fixed by rule (`pyjobshop_compare.sample`): per
set and shift s, the instances at positions `((2i + 1) n / 20 + s) mod n`, i = 0..9, in
natural order (shift 0 is `experiments/pyjobshop_compare.py`'s sample). Each instance is
solved by both searches one after the other (`planner.solvers.cpsat.solve._search` forced
to "default" or "prove"), and every schedule is checked with planner.verify. Per set and
shift: instances proved optimal, the sum of makespans and the mean gap to the best known,
per search.
The figures behind `LNS_MIN_JOBS`'s use in `planner/solvers/cpsat/solve.py: _search`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pyjobshop_compare import sample  # noqa: E402

import planner.solvers.cpsat.solve as cpsat_solve  # noqa: E402
from planner.importers.psplib import parse_sm  # noqa: E402
from planner.read import instance_from_dict  # noqa: E402
from planner.solvers import SolveOptions  # noqa: E402
from planner.solvers.cpsat import solve_cpsat  # noqa: E402
from planner.verify import verify  # noqa: E402

SEARCHES = ("default", "prove")


def run(path: Path, search: str, args: argparse.Namespace) -> tuple[int, bool]:
    """(makespan, proved optimal) of one solve with `search` forced."""
    inst = instance_from_dict(parse_sm(path.read_text()))
    keep = cpsat_solve._search
    cpsat_solve._search = lambda cm, hinted, stage: search  # type: ignore[assignment]
    try:
        options = SolveOptions(time_limit=args.time_limit, workers=args.workers, seed=args.seed)
        s = solve_cpsat(inst, options)
    finally:
        cpsat_solve._search = keep  # type: ignore[assignment]
    if not s.jobs or verify(inst, s):
        raise SystemExit(f"{path.stem}: {search} returned no valid schedule")
    return max(a.end for a in s.jobs), s.status == "optimal"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--sets", default="j60,j90")
    ap.add_argument("--shifts", default="0,2,5")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    print("| set | shift | search | proved | sum of makespans | mean gap |")
    print("| --- | --- | --- | --- | --- | --- |")
    for family in args.sets.split(","):
        for shift in (int(x) for x in args.shifts.split(",")):
            got: dict[str, list[tuple[int, bool, int]]] = {s: [] for s in SEARCHES}
            for k, (name, path, best) in enumerate(sample(args.data, family, 10, shift)):
                order = SEARCHES if k % 2 == 0 else SEARCHES[::-1]  # alternate who goes first
                for search in order:
                    t0 = time.monotonic()
                    ms, proved = run(path, search, args)
                    got[search].append((ms, proved, best))
                    print(
                        f"<!-- {name} {search} {ms}{'*' if proved else ''} "
                        f"{time.monotonic() - t0:.1f}s -->",
                        flush=True,
                    )
            for search in SEARCHES:
                rows = got[search]
                gap = sum((ms - r) / r for ms, _, r in rows) / len(rows)
                print(
                    f"| {family} | {shift} | {search} | {sum(p for _, p, _ in rows)} "
                    f"| {sum(ms for ms, _, _ in rows)} | {100 * gap:.2f}% |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
