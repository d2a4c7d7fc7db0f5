"""`--solver auto`: choose a planner by the size of the exact model.

The rule (documented in the README): CP-SAT when its model is small enough to solve
well within the time limit, else greedy. The schedule records what was chosen and why.
"""

from __future__ import annotations

from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers import SolveOptions

# Beyond this many (job, placement) options CP-SAT spends its time on propagation
# rather than search and the greedy planner is the better answer.
MAX_CPSAT_OPTIONS = 20_000


def cpsat_size(instance: Instance) -> int:
    """Solo options of the CP-SAT model: one per job and eligible node (or node set)."""
    size = 0
    for job in instance.jobs:
        groups = instance.eligible_groups(job)
        size += max(1, sum(g.count for g in groups))
    return size


def choose(instance: Instance) -> tuple[str, str]:
    size = cpsat_size(instance)
    if size <= MAX_CPSAT_OPTIONS:
        return "cpsat", f"CP-SAT model of {size:,} placement options (limit {MAX_CPSAT_OPTIONS:,})"
    return "greedy", f"{size:,} placement options exceed the CP-SAT limit {MAX_CPSAT_OPTIONS:,}"


def solve_auto(instance: Instance, options: SolveOptions) -> Schedule:
    from planner.solvers import solve

    name, why = choose(instance)
    try:
        sched = solve(instance, name, options)
    except ImportError as e:  # a back end that is not installed
        name, why = "greedy", f"{name} unavailable ({e}); greedy"
        sched = solve(instance, name, options)
    return sched.with_(info={**sched.info, "auto": {"chose": name, "why": why}})
