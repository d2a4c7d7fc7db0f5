"""Live states in which the planners stop a running job at `now` and resume it (strict
priority, preemption): every planner's plan, the bound, and whether a proof holds.

    .venv/bin/python experiments/stopped_live_states.py [--seeds 40-200] [--later]
        [--limit 3] [--specs greedy,cpsat] [--out FILE]
    .venv/bin/python experiments/stopped_live_states.py --compare OLD.json NEW.json

Per seed s, `plan generate --family mixed` with 4-8 jobs on 1-2 nodes, preemption on,
strict priority with priorities 0-2, interleaving on in 30% of the seeds; the plan in force
is `greedy:fifo`'s, and at a `now` just after one of its starts or ends the nodes of the
running jobs (all of them in 70% of the seeds, else one) go down until a later time, so
that the jobs running there stop at `now` and resume (`planner.live.residual.residual`); with
`--later` the nodes are instead held for nobody from a time after `now` (a maintenance
hold to come, 1-30 units later, 1-200 long), which the jobs running there meet. Each
planner (`--specs`, default all six below) runs 3 s (`--limit`) with one worker; every
plan is verified, and a bound above a verified plan or an "optimal" plan worse than
another verified one is printed as BAD (must be 0).
`--out` writes the objective values per seed and planner; `--compare` gives each
planner's geometric mean of NEW / OLD and how often it is better or worse. To compare
two versions, run the script with each on the path (`git archive REV | tar -x -C DIR`,
then `PYTHONPATH=DIR`). The README's note on stopped jobs quotes one such comparison.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from planner.bounds import lower_bounds
from planner.changes import changes_from_dict
from planner.checker import Checker
from planner.generate import generate
from planner.instance import Instance, Reservation
from planner.live.residual import residual
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.replan import live_instance
from planner.solvers import SolveOptions, solve
from planner.verify import verify

SPECS = ("greedy", "greedy:srsf", "greedy:fifo", "cpsat", "milp", "auto")


def live_state(seed: int, later: bool = False) -> Instance | None:
    """The seed's live state with a stopped job, or None (no plan, or no job runs at `now`,
    or, `later`, none meets the hold)."""
    rng = random.Random(seed)
    doc = generate("mixed", rng.randint(4, 8), rng.choice([1, 2]), seed, preemption=True)
    doc["interleaving"] = {"enabled": rng.random() < 0.3}
    doc.setdefault("policy", {})["priority"] = "strict"
    for j in doc["jobs"]:
        j["priority"] = rng.randrange(0, 3)
        if rng.random() < 0.3:
            j["weight"] = rng.choice([1, 10, 100])
    inst = instance_from_dict(doc)
    plan = solve(inst, "greedy:fifo", SolveOptions(time_limit=2, workers=1))
    if not plan.jobs:
        return None
    times = sorted({a.start for a in plan.jobs} | {a.end for a in plan.jobs})
    now = rng.choice(times) + rng.randrange(1, 4)
    running = sorted({p.node for a in plan.jobs if a.start < now < a.end for p in a.placement})
    if not running:
        return None
    down = running if rng.random() < 0.7 else [rng.choice(running)]
    ck = Checker()
    if later:
        live = live_instance(inst, plan, now, changes_from_dict({}, ck))
        start = now + rng.randrange(1, 31)
        holds = tuple(
            Reservation(f"hold-{n}", start, start + rng.randrange(1, 200), nodes=(n,)) for n in down
        )
        live = replace(live, reservations=live.reservations + holds)
    else:
        until = [{"node": n, "until": now + rng.randrange(1, 200)} for n in down]
        live = live_instance(inst, plan, now, changes_from_dict({"nodes_down": until}, ck))
    return live if residual(live).stopped else None


def run_seed(
    seed: int, later: bool = False, limit: float = 3.0, specs: tuple[str, ...] = SPECS
) -> dict[str, Any] | None:
    live = live_state(seed, later)
    if live is None:
        return None
    obj = live.objective[0]
    row: dict[str, Any] = {"seed": seed, "plans": {}, "bad": []}
    for spec in specs:
        s = solve(live, spec, SolveOptions(time_limit=limit, workers=1, seed=0))
        value = None
        if s.jobs:
            problems = verify(live, s)
            if problems:
                row["bad"].append(f"{spec} breaks {problems[0].rule}")
            else:
                value = objective_values(live, s, [obj])[obj]
        row["plans"][spec] = (s.status, value, (s.lower_bound or {}).get(obj))
    values = [v for _, v, _ in row["plans"].values() if v is not None]
    best = min(values, default=math.inf)
    slack = 1e-6 * max(1.0, abs(best))
    for spec, (status, value, bound) in row["plans"].items():
        if bound is not None and bound > best + slack:
            row["bad"].append(f"{spec}'s bound {bound} above a verified {best}")
        if status == "optimal" and (value is None or value > best + slack):
            row["bad"].append(f"{spec} calls {value} optimal beside a verified {best}")
    lb = lower_bounds(live, [obj]).get(obj)
    if lb is not None and lb > best + slack:
        row["bad"].append(f"lower_bounds {lb} above a verified {best}")
    return row


def compare(old_path: str, new_path: str) -> None:
    old, new = (
        {r["seed"]: r for r in json.loads(Path(p).read_text())} for p in (old_path, new_path)
    )
    seeds = sorted(old.keys() & new.keys())
    print(f"{len(seeds)} live states in both")
    specs = [x for x in SPECS if seeds and all(x in r[seeds[0]]["plans"] for r in (old, new))]
    for spec in specs:
        ratios = []
        for s in seeds:
            a, b = old[s]["plans"][spec][1], new[s]["plans"][spec][1]
            if a and b:
                ratios.append(b / a)
        if not ratios:
            continue
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        better = sum(r < 1 - 1e-9 for r in ratios)
        worse = sum(r > 1 + 1e-9 for r in ratios)
        print(
            f"{spec:12} new/old {geo:.4f}  better {better}  worse {worse}  worst {max(ratios):.3f}"
        )
    cpsat = [s for s in seeds if "cpsat" in specs]
    pairs = [(old[s]["plans"]["cpsat"][2], new[s]["plans"]["cpsat"][2]) for s in cpsat]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    print(f"cpsat's bound: higher in {sum(b > a + 1e-6 for a, b in pairs)}, lower in "
          f"{sum(b < a - 1e-6 for a, b in pairs)} of {len(pairs)} with one in both")  # fmt: skip
    for label, rows in (("old", old), ("new", new)):
        proved = sum(p[0] == "optimal" for s in seeds for p in rows[s]["plans"].values())
        print(f"{label}: {proved} optimal statuses")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="40-200", help="a range lo-hi (hi excluded)")
    ap.add_argument("--later", action="store_true", help="holds that begin after now")
    ap.add_argument("--limit", type=float, default=3.0, help="seconds per plan")
    ap.add_argument("--specs", default=",".join(SPECS), help="the planners, comma-separated")
    ap.add_argument("--out", help="write the rows as JSON")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    lo, hi = (int(x) for x in args.seeds.split("-"))
    specs = tuple(args.specs.split(","))
    rows = [
        r for s in range(lo, hi) if (r := run_seed(s, args.later, args.limit, specs)) is not None
    ]
    for r in rows:
        for b in r["bad"]:
            print(f"BAD seed {r['seed']}: {b}")
    proved = sum(p[0] == "optimal" for r in rows for p in r["plans"].values())
    bad = sum(len(r["bad"]) for r in rows)
    print(f"{len(rows)} live states with a stopped job, {proved} optimal statuses, {bad} bad")
    if args.out:
        Path(args.out).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
