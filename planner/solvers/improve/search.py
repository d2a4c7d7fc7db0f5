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
from collections.abc import Callable, Iterator, Sequence

from planner.bounds import with_bounds
from planner.elastic import counts_of, fixed_counts
from planner.groups import CandidateGroup, candidate_groups
from planner.instance import Instance
from planner.metrics import objective_vector, strictly_better
from planner.precedence import effective_priorities
from planner.schedule import Schedule
from planner.solvers.greedy import RULES, plan_order, rule_ranks, solve_greedy
from planner.solvers.greedy.order import default_rule
from planner.solvers.improve.sampling import keyed, perturbed
from planner.solvers.options import Progress, SolveOptions, objectives_of

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
    rule = rule or default_rule(instance)
    if start is None:
        start = solve_greedy(instance, rule, options)
    if start.status != "feasible":
        return start  # nothing to improve from (the greedy plan failed)
    if start.lower_bound is None:
        names = list(objectives_of(instance, options))
        start = with_bounds(instance, start, names, options.bound_iterations)
    # An elastic instance is searched at the counts the start chose (contract §12): every
    # plan of that instance is valid for this one, and the bounds stay this one's.
    plan_on = fixed_counts(instance, counts_of(instance, start)) if instance.elastic else instance
    search = _Search(plan_on, options, start, rule, max_samples, on_incumbent, t0)
    return search.run()


class _Search:
    """The state of one improvement search: the incumbent, its list order, the counters."""

    def __init__(
        self,
        instance: Instance,
        options: SolveOptions,
        start: Schedule,
        rule: str,
        max_samples: int | None,
        on_incumbent: Callable[[Schedule], None] | None,
        t0: float,
    ):
        self.instance, self.options, self.start, self.rule = instance, options, start, rule
        self.max_samples, self.on_incumbent, self.t0 = max_samples, on_incumbent, t0
        self.names = list(objectives_of(instance, options))
        self.deadline = None if options.time_limit is None else t0 + options.time_limit
        self.best, self.best_val = start, self.value(start)
        self.best_ranks = rule_ranks(instance, rule)
        self.interleave = instance.interleaving.enabled
        strict = instance.priority_policy == "strict"
        self.classes = effective_priorities(instance) if strict else None
        self.cands: Sequence[CandidateGroup] | None = None
        self.rng = random.Random(options.seed)
        self.samples = self.improved = 0
        self.found_by = "start"

    def value(self, s: Schedule) -> list[float]:
        return objective_vector(self.instance, s, self.names)

    def out_of_time(self) -> bool:
        if self.options.stop.is_set():
            return True
        if self.max_samples is not None and self.samples >= self.max_samples:
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def report(self, msg: str) -> None:
        if self.options.progress is not None:
            lb = (self.start.lower_bound or {}).get(self.names[0])
            self.options.progress(Progress(self.best_val[0], lb, msg))

    def attempts(self) -> Iterator[tuple[str, list[int], str]]:
        """(label, list order, grouping) to try, in order (see the module docstring)."""
        instance, rng = self.instance, self.rng
        for r in _RULES:
            yield r, rule_ranks(instance, r), ""
            if self.interleave:
                yield r, rule_ranks(instance, r), "groups"
                yield r, rule_ranks(instance, r), "eager groups"
        while True:
            grouping = rng.choice(("", "groups", "eager groups")) if self.interleave else ""
            if rng.random() < 0.5:
                a, b = rng.uniform(0.0, 1.5), rng.uniform(0.5, 1.5)
                yield "keys", keyed(instance, a, b, self.classes), grouping
            else:
                width = rng.choice((0.0005, 0.002, 0.01))
                ranks = perturbed(instance, self.best_ranks, width, rng, self.classes)
                yield "shift", ranks, grouping

    def run(self) -> Schedule:
        if self.on_incumbent is not None:
            self.on_incumbent(self.best)
        self.report("greedy start")
        for label, ranks, grouping in self.attempts():
            if self.out_of_time():
                break
            self.try_order(label, ranks, grouping)
        return self.result()

    def try_order(self, label: str, ranks: list[int], grouping: str) -> None:
        """Plan with one list order; keep it if it beats the incumbent."""
        instance = self.instance
        if grouping and self.cands is None:
            self.cands = candidate_groups(instance)
        baseline = {a.id: a.end for a in self.best.jobs} if grouping else None
        eager = grouping == "eager groups"
        # An attempt still running at the deadline ends there with no plan: on `plan
        # generate --family mixed --jobs 10000 --nodes 128 --seed 1` one lasts about 5 s,
        # and `auto --time-limit 30` took 34.1 s when the last one ran to its end.
        s = plan_order(
            instance,
            self.rule,
            self.names,
            ranks,
            bool(grouping),
            baseline,
            self.cands,
            eager,
            stop=self.options.stop,
            deadline=self.deadline,
        )
        self.samples += 1
        if s.status != "feasible":
            return
        v = self.value(s)
        if strictly_better(v, self.best_val):  # ties: the plan held
            self.best, self.best_val, self.best_ranks = s, v, ranks
            self.improved += 1
            self.found_by = (label if label in ("keys", "shift") else f"rule {label}") + (
                f" with {grouping}" if grouping else ""
            )
            if self.on_incumbent is not None:
                self.on_incumbent(self.best)
            self.report(f"improved ({self.found_by})")

    def result(self) -> Schedule:
        start, lb = self.start, self.start.lower_bound
        info = {
            **start.info,
            "improve": {
                "samples": self.samples,
                "improvements": self.improved,
                "found_by": self.found_by,
                "start_objective": self.value(start)[0],
                "time_s": round(time.perf_counter() - self.t0, 3),
                "stopped": "interrupted" if self.options.stop.is_set() else "limit",
            },
        }
        solver = start.solver if self.best is start else f"greedy:{self.rule}+improve"
        out = self.best.with_(solver=solver, info=info, wall_s=time.perf_counter() - self.t0)
        if lb is None:
            return with_bounds(self.instance, out, self.names, self.options.bound_iterations)
        return out.with_(lower_bound=lb)
