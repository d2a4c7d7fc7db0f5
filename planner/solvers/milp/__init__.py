"""Time-indexed MILP planner (`--solver milp`) on PuLP: bundled CBC, or HiGHS on request.

grid.py chooses the slot length, model.py builds variables and constraints, objective.py
holds objective values, bounds and end caps, backends.py runs CBC/HiGHS (status, bound,
warm start, Ctrl-C), gpus.py colours GPU indices, solve.py ties them together.
"""

from planner.solvers.milp.solve import solve_milp

__all__ = ["solve_milp"]
