"""Time-indexed MILP planner (`--solver milp`) on PuLP: bundled CBC, or HiGHS on request.

grid.py chooses the slot length, model.py builds variables and constraints, objective.py
holds objective values, bounds and end caps, hint.py sets the start as the warm start,
backends.py runs CBC/HiGHS (status, bound, warm start, Ctrl-C), extract.py reads the
schedule back (gpus.py colours GPU indices), solve.py ties them together; cpsat/ has the
same files for CP-SAT.
"""

from planner.solvers.milp.solve import solve_milp

__all__ = ["solve_milp"]
