"""The planners, and `solve(instance, spec, options)` to run one by name.

Layering (a module may import only those below it):

- `options` (SolveOptions, Progress, shared limits) underlies everything;
- `greedy` (list scheduling) underlies `rcpsp_heuristic`, `cpsat` and `milp`, which share
  `exact` (start portfolio, horizon and end caps, the verified finish);
- `greedy` underlies `improve` (anytime improvement), which underlies `auto`
  (`auto` also calls `cpsat` directly);
- `preempt` (planning with preemption through `planner.simulate`'s engine, and Muri's
  grouping kept to the end without it) uses `greedy`; `auto` and `dispatch` call it, and
  `exact` runs its kept grouping as one of the exact solvers' starts;
- `dispatch` maps a spec string to one of them, importing the back end only when used;
- `rolling` (`plan simulate`'s `plan[:SOLVER]`) runs `dispatch.solve` at the engine's
  decisions.
"""

from planner.solvers.dispatch import GREEDY_RULES, parse_spec, solve
from planner.solvers.options import Progress, SolveOptions, objectives_of

__all__ = ["GREEDY_RULES", "Progress", "SolveOptions", "objectives_of", "parse_spec", "solve"]
