"""Planning with preemption (contract §8): the online Muri engine run with full knowledge,
then improved by a search over its job order (see `search.py`)."""

from planner.solvers.preempt.search import solve_preempt

__all__ = ["solve_preempt"]
