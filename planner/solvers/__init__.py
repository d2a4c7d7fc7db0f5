"""Solver dispatch: a solver spec string (`greedy:sjf`, `cpsat`, `milp`, `auto`) to a
schedule. Back ends live in their own subpackages and are imported only when used, so
that OR-Tools or PuLP load only for the solver that needs them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.errors import UsageError
from planner.instance import Instance
from planner.schedule import Schedule

GREEDY_RULES = ("fifo", "sjf", "srsf", "priority", "interleave")


@dataclass(frozen=True)
class Progress:
    """One line of the live display: incumbent and bound of the first objective."""

    elapsed_s: float
    incumbent: float | None
    bound: float | None
    message: str = ""


@dataclass(frozen=True)
class SolveOptions:
    time_limit: float | None = None  # seconds; None: the solver's own default
    seed: int = 0
    workers: int = 2
    objective: tuple[str, ...] | None = None  # overrides the instance's objective
    # Called now and then by anytime solvers; must be cheap. None: silent.
    progress: Callable[[Progress], None] | None = None
    # Set by the CLI on Ctrl-C: solvers stop and return the best schedule they have.
    stop: threading.Event = field(default_factory=threading.Event)
    milp_backend: str = "cbc"  # "cbc" | "highs"
    slots: int = 200  # MILP: at most this many time slots over the horizon
    slot: int | None = None  # MILP: explicit slot length in time units


def objectives_of(instance: Instance, options: SolveOptions) -> tuple[str, ...]:
    return options.objective or instance.objective


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`greedy:sjf` -> ("greedy", "sjf"); checks the name and rule."""
    name, _, rule = spec.partition(":")
    if name not in ("auto", "greedy", "cpsat", "milp"):
        raise UsageError(f"unknown solver {spec!r}: use auto, cpsat, milp or greedy[:RULE]")
    if name == "greedy":
        if rule and rule not in GREEDY_RULES:
            raise UsageError(f"unknown greedy rule {rule!r}: use one of {', '.join(GREEDY_RULES)}")
        return name, rule or None
    if rule:
        raise UsageError(f"solver {name!r} takes no rule")
    return name, None


def solve(instance: Instance, spec: str, options: SolveOptions | None = None) -> Schedule:
    """Plan `instance` with the solver named by `spec`; the result is not yet verified."""
    options = options or SolveOptions()
    name, rule = parse_spec(spec)
    if not instance.jobs:  # nothing to plan: the empty plan is optimal for every objective
        return Schedule(instance.name, spec, "optimal", info={"reason": "the instance has no jobs"})
    sched = _dispatch(instance, name, rule, options)
    if not sched.jobs and "reason" not in sched.info:
        from planner.solvers.plain import plain_infeasibility

        reason = plain_infeasibility(instance)
        if reason is not None:
            sched = sched.with_(info={**sched.info, "reason": reason})
    return sched


def _dispatch(instance: Instance, name: str, rule: str | None, options: SolveOptions) -> Schedule:
    if name == "greedy":
        from planner.solvers.greedy import solve_greedy

        return solve_greedy(instance, rule, options)
    if name == "cpsat":
        from planner.solvers.cpsat import solve_cpsat

        return solve_cpsat(instance, options)
    if name == "milp":
        from planner.solvers.milp import solve_milp

        return solve_milp(instance, options)
    from planner.solvers.auto import solve_auto

    return solve_auto(instance, options)
