"""Time-indexed MILP planner (`--solver milp`) on PuLP: bundled CBC, or HiGHS on request.

grid.py chooses the slot length; model.py builds the model in the order variables.py
(the start binaries) -> constraints.py (one function per rule family) -> objectives
(energy.py adds the energy ones); objective.py builds the objectives, horizon.py the
horizon and each job's latest end (from per-job durations, tails and energy caps) and
the grid-bound correction, hint.py sets the
start as the warm start, backends.py runs CBC/HiGHS (status, bound, warm start, Ctrl-C),
extract.py reads the schedule back (gpus.py colours GPU indices), solve.py ties them
together; cpsat/ has the same model, variables, constraints, objective, energy,
horizon, hint, extract and solve files for CP-SAT.
"""

from planner.solvers.milp.solve import solve_milp

__all__ = ["solve_milp"]
