"""What every solver takes: `SolveOptions`, the `Progress` it reports, and the limits the
exact solvers (CP-SAT and MILP) share. Imports nothing from the solvers themselves, so
any of them can depend on it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from planner.bounds.lp import lp_iterations
from planner.instance import Instance
from planner.schedule import Schedule

# Seconds an exact solver (and `auto`) runs when `--time-limit` is not given.
DEFAULT_TIME_LIMIT = 30.0
# Pool reservations admitting jobs at one time beyond which the CP-SAT and MILP models
# drop the exact subset rule (2^k constraints) for a conservative "nobody is admitted" one.
MAX_EXACT_POOL_RESERVATIONS = 4


@dataclass(frozen=True)
class Progress:
    """One line of the live display: incumbent and bound of the first objective (the
    display keeps its own clock)."""

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
    slots: int = 200  # MILP: slots over the horizon (sets the length; the grid may grow)
    slot: int | None = None  # MILP: explicit slot length in time units
    # Simplex iterations each bound LP gets; None: `bounds.lp.lp_iterations` of the time
    # limit. Fixed once per solve (`pinned`), so that parts given less of the limit reuse
    # the bound already computed instead of computing a weaker one again.
    bound_lp_iterations: int | None = None
    # A plan another planner made (auto's kept plan): the exact solvers start from it when
    # it beats their own start (`exact.best_start`), its groups among their candidates.
    start: Schedule | None = None

    @property
    def limit(self) -> float:
        """The time limit in seconds, DEFAULT_TIME_LIMIT when none was given."""
        return DEFAULT_TIME_LIMIT if self.time_limit is None else self.time_limit

    @property
    def bound_iterations(self) -> int:
        """Simplex iterations each of the bounds' LPs gets in this solve."""
        if self.bound_lp_iterations is not None:
            return self.bound_lp_iterations
        return lp_iterations(self.limit)

    def pinned(self) -> SolveOptions:
        """These options with `bound_lp_iterations` fixed from the present time limit."""
        return replace(self, bound_lp_iterations=self.bound_iterations)

    def spent_since(self, since: float) -> SolveOptions:
        """These options with what is left of the time limit after the time since `since`
        (a `time.perf_counter()` reading)."""
        left = self.limit - (time.perf_counter() - since)
        return replace(self, time_limit=max(0.0, left))


def objectives_of(instance: Instance, options: SolveOptions) -> tuple[str, ...]:
    """The objectives to optimise, lexicographically: the options' or the instance's."""
    return options.objective or instance.objective
