"""Anytime improvement of a greedy plan for instances too big for the exact models.

`improve(instance, options)` starts from the greedy plan and, until `options.time_limit`,
`options.stop` or `max_samples`, plans the instance again with the event-driven engine
(`planner.solvers.greedy.events`) under other list orders, keeping the best plan on the
objectives (lexicographic). Every plan it returns or reports was produced by the engine,
which only starts a job when every rule holds, so every incumbent is feasible; the start
plan is the first incumbent, so the result is never worse.

Orders tried (`sampling.py`), each without groups, with groups formed by form.py's cost
rule, or with eager groups (any admissible group that fits is taken: more throughput when
the cluster is overloaded; on dl-1000 srsf with eager groups is 3% better than the cost
rule), when interleaving is enabled:
1. the static rules (srsf, sjf, fifo, priority);
2. then, half and half, (a) random rules `gpus^a * solo^b / weight` with a in [0, 1.5] and
   b in [0.5, 1.5] (srsf is a = b = 1, sjf a = 0), and (b) biased random sampling around
   the incumbent's list: each position shifted by Gaussian noise of 0.05% to 1% of the job
   count (measured on dl-2000: wider noise loses more than it finds; perturbing the
   incumbent's start order instead of its list lost ~1%). Under strict priority the
   effective-priority classes stay in order. Seeded by `options.seed`: the sequence of
   orders is deterministic, so with `max_samples` (and no time limit hit) so is the
   result.

Why not forward-backward improvement (justification): the backward pass schedules from
the makespan on a mirrored timeline, which is valid for precedence and capacities but not
for release times, strict priority (R9 is not symmetric in time), reservations that admit
only some jobs, or interleaving groups whose members end at different times. Re-planning
from the incumbent's start order captures the forward half of it for every feature.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from planner.groups import CandidateGroup, candidate_groups
from planner.instance import Instance
from planner.metrics import objective_values
from planner.schedule import Schedule
from planner.solvers import Progress, SolveOptions, objectives_of
from planner.solvers.greedy import RULES, plan_order, rule_ranks, solve_greedy, with_bounds
from planner.solvers.greedy.order import default_rule, effective_priorities
from planner.solvers.improve.sampling import keyed, perturbed

# Rules whose static orders are tried first, in RULES' order (interleave's order is srsf's).
_RULES = tuple(r for r in RULES if r != "interleave")


def improve(
    instance: Instance,
    options: SolveOptions,
    start: Schedule | None = None,
    rule: str | None = None,
    max_samples: int | None = None,
    on_incumbent: Callable[[Schedule], None] | None = None,
) -> Schedule:
    """The best plan found from `start` (default: the greedy plan with `rule`) within
    `options.time_limit` seconds (None: only `max_samples` limits; one of them is needed)."""
    t0 = time.perf_counter()
    if options.time_limit is None and max_samples is None:
        raise ValueError("improve needs a time limit or a sample count")
    names = list(objectives_of(instance, options))
    rule = rule or default_rule(instance)
    if start is None:
        start = solve_greedy(instance, rule, options)
    deadline = None if options.time_limit is None else t0 + options.time_limit
    if start.status != "feasible":
        return start  # nothing to improve from (the greedy plan failed)

    def value(s: Schedule) -> list[float]:
        ov = objective_values(instance, s, names)
        return [ov[n] for n in names]

    best, best_val = start, value(start)
    if on_incumbent is not None:
        on_incumbent(best)
    interleave = instance.interleaving.enabled
    strict = instance.priority_policy == "strict"
    classes = effective_priorities(instance) if strict else None
    cands: Sequence[CandidateGroup] | None = None
    rng = random.Random(options.seed)
    samples = improved = 0
    found_by = "start"
    lb = start.lower_bound

    def out_of_time() -> bool:
        if options.stop.is_set():
            return True
        if max_samples is not None and samples >= max_samples:
            return True
        return deadline is not None and time.perf_counter() >= deadline

    def report(msg: str) -> None:
        if options.progress is not None:
            options.progress(
                Progress(time.perf_counter() - t0, best_val[0], (lb or {}).get(names[0]), msg)
            )

    best_ranks = rule_ranks(instance, rule)

    def attempts() -> Any:
        for r in _RULES:
            yield r, rule_ranks(instance, r), ""
            if interleave:
                yield r, rule_ranks(instance, r), "groups"
                yield r, rule_ranks(instance, r), "eager groups"
        while True:
            grouping = rng.choice(("", "groups", "eager groups")) if interleave else ""
            if rng.random() < 0.5:
                a, b = rng.uniform(0.0, 1.5), rng.uniform(0.5, 1.5)
                yield "keys", keyed(instance, a, b, classes), grouping
            else:
                width = rng.choice((0.0005, 0.002, 0.01))
                yield "shift", perturbed(instance, best_ranks, width, rng, classes), grouping

    report("greedy start")
    for label, ranks, grouping in attempts():
        if out_of_time():
            break
        if grouping and cands is None:
            cands = candidate_groups(instance)
        baseline = {a.id: a.end for a in best.jobs} if grouping else None
        s = plan_order(
            instance,
            rule,
            names,
            ranks,
            bool(grouping),
            baseline,
            cands,
            eager=grouping == "eager groups",
        )
        samples += 1
        if s.status != "feasible":
            continue
        v = value(s)
        if v < best_val:
            best, best_val, best_ranks = s, v, ranks
            improved += 1
            found_by = (label if label in ("keys", "shift") else f"rule {label}") + (
                f" with {grouping}" if grouping else ""
            )
            if on_incumbent is not None:
                on_incumbent(best)
            report(f"improved ({found_by})")
    info = {
        **start.info,
        "improve": {
            "samples": samples,
            "improvements": improved,
            "found_by": found_by,
            "start_objective": value(start)[0],
            "time_s": round(time.perf_counter() - t0, 3),
            "stopped": "interrupted" if options.stop.is_set() else "limit",
        },
    }
    solver = start.solver if best is start else f"greedy:{rule}+improve"
    out = best.with_(solver=solver, info=info, wall_s=time.perf_counter() - t0)
    return with_bounds(instance, out, names) if lb is None else out.with_(lower_bound=lb)
