"""Exact solvers with every admissible group against the pruned candidates alone.

    .venv/bin/python experiments/all_groups.py [--solver cpsat|milp] [--seeds 12]
        [--jobs 6,8,10,12] [--time-limit 10] [--most 60]

On `plan generate --family dl` instances (2 nodes; one per jobs count and seed) with at
most `--most` admissible groups, the solver runs twice: with the candidates each job
keeps (`planner.groups.candidate_groups`) and with every admissible group added
(`planner.groups.exact_candidates`; the solver's ALL_GROUPS_MAX set to 0, then `--most`).
Per instance: the admissible and candidate counts, whether the candidates were complete,
and each run's total weighted JCT, status and wall time (and the MILP's slot length);
every schedule is checked by `planner.verify`. The constants it measures:
`ALL_GROUPS_MAX` in `planner/solvers/cpsat/solve.py` and `planner/solvers/milp/solve.py`.
"""

from __future__ import annotations

import argparse
import time

import planner.groups as groups
import planner.solvers.cpsat.solve as cpsat_solve
import planner.solvers.milp.solve as milp_solve
from planner.generate import generate
from planner.instance import Instance
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import SolveOptions, solve
from planner.verify import verify


def run(inst: Instance, solver: str, most: int, limit: float) -> tuple[float, str, str]:
    """(total weighted JCT, status, wall time and the MILP's slot, as text)."""
    (cpsat_solve if solver == "cpsat" else milp_solve).ALL_GROUPS_MAX = most
    t0 = time.perf_counter()
    s = solve(inst, solver, SolveOptions(time_limit=limit, workers=2, seed=1))
    wall = f"{time.perf_counter() - t0:5.1f}"
    if solver == "milp":
        wall += f" slot {s.info.get('slot')}"
    assert not verify(inst, s), s.info
    value = objective_values(inst, s, ["total_weighted_jct"])["total_weighted_jct"]
    return value, s.status, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", choices=["cpsat", "milp"], default="cpsat")
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--jobs", default="6,8,10,12")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--most", type=int, default=60)
    a = ap.parse_args()
    print("jobs seed admissible candidates complete | pruned: value status s | all: value status s")
    better = worse = proved_pruned = proved_all = rows = 0
    for n in (int(x) for x in a.jobs.split(",")):
        for seed in range(a.seeds):
            inst = instance_from_dict(generate("dl", n, 2, seed))
            found = groups._admissible_sets(inst)
            if not found or len(found) > a.most:
                continue
            cands = groups.candidate_groups(inst)
            complete = groups.exact_candidates(inst, 4, 0, None)[1]  # the pruned ones alone
            pv, ps, pw = run(inst, a.solver, 0, a.time_limit)
            av, as_, aw = run(inst, a.solver, a.most, a.time_limit)
            rows += 1
            better += av < pv - 1e-9
            worse += av > pv + 1e-9
            proved_pruned += ps == "optimal"
            proved_all += as_ == "optimal"
            print(
                f"{n:4d} {seed:4d} {len(found):10d} {len(cands):10d} {str(complete):8s} | "
                f"{pv:12,.0f} {ps:8s} {pw} | {av:12,.0f} {as_:8s} {aw}"
            )
    print(
        f"{rows} instances: every group better on {better}, worse on {worse}; optimal "
        f"{proved_pruned}"
        f" (pruned) against {proved_all} (every group)"
    )


if __name__ == "__main__":
    main()
