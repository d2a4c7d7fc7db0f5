"""Greedy list-scheduling planner (see `solve.py` for the two engines and how `auto`
chooses between them). Layout:

- `solve.py`: `solve_greedy`, `plan_order` (one event-driven run with a given list order,
  the improvement search's building block), `rule_ranks`, `with_bounds`;
- `order.py`: the rules (`RULES`, the only list of them) and their sort keys;
- `serial.py` + `place.py` + `timeline.py`: the serial engine (backfilling);
- `events.py` + `trees.py`: the event-driven engine;
- `fit.py`: the fit rules and group cost both engines share; `form.py`: group forming.
"""

from planner.bounds import with_bounds
from planner.solvers.greedy.order import RULES
from planner.solvers.greedy.solve import plan_order, rule_ranks, solve_greedy

__all__ = ["RULES", "plan_order", "rule_ranks", "solve_greedy", "with_bounds"]
