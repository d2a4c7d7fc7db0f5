"""`auto` on small preemptive instances: the preemptive search alone, or followed by CP-SAT
without preemption in a share of the limit (`auto.SMALL_PREEMPTIVE_CPSAT_SHARE`).

    .venv/bin/python experiments/auto_preemptive_small.py [--time-limit 5] [--seeds 6]

Generates `plan generate --family mixed|dl --jobs 8|16|24 --nodes 2 --seed S --preemption`
instances, solves each with `auto` twice (share 0, then the module's share), verifies both
schedules and prints the first objective of each, the lower bound, and how many times the
share won, lost or tied.
"""

from __future__ import annotations

import argparse

import planner.solvers.auto as auto
from planner.generate import generate
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import SolveOptions, objectives_of, solve
from planner.verify import verify


def run(instance, share: float, limit: float) -> tuple[float, float | None]:
    saved = auto.SMALL_PREEMPTIVE_CPSAT_SHARE
    auto.SMALL_PREEMPTIVE_CPSAT_SHARE = share
    try:
        options = SolveOptions(time_limit=limit)
        s = solve(instance, "auto", options)
    finally:
        auto.SMALL_PREEMPTIVE_CPSAT_SHARE = saved
    assert verify(instance, s) == [], f"{instance.name}: the schedule breaks the rules"
    name = objectives_of(instance, options)[0]
    bound = (s.lower_bound or {}).get(name)
    return objective_values(instance, s, [name])[name], bound


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--seeds", type=int, default=6)
    args = ap.parse_args()
    share = auto.SMALL_PREEMPTIVE_CPSAT_SHARE
    print(f"| instance | search alone | search + CP-SAT ({share:.0%}) | bound |")
    print("| --- | --- | --- | --- |")
    won = lost = 0
    total = 0
    for family in ("mixed", "dl"):
        for jobs in (8, 16, 24):
            for seed in range(1, args.seeds + 1):
                doc = generate(family, jobs, 2, seed, preemption=True)
                name = f"{family}-{jobs}-{seed}"
                inst = instance_from_dict(doc, name + ".json")
                alone, _ = run(inst, 0.0, args.time_limit)
                both, bound = run(inst, share, args.time_limit)
                won += both < alone - 1e-9
                lost += both > alone + 1e-9
                total += 1
                shown = "-" if bound is None else f"{bound:,.6g}"
                print(f"| {name} | {alone:,.6g} | {both:,.6g} | {shown} |")
    print(f"\nwith CP-SAT's share: better on {won}, worse on {lost}, equal on {total - won - lost}")


if __name__ == "__main__":
    main()
