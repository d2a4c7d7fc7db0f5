"""CP-SAT planner (`--solver cpsat`): an exact model of rules R1-R10 solved by OR-Tools
CP-SAT, started from the best greedy schedule and never returning anything worse.

Modules: `model` (variables, constraints), `objective`, `hint` (greedy schedule as a
hint), `extract` (solution to schedule, GPU indices), `solve` (the solve loop).
"""

from planner.solvers.cpsat.solve import solve_cpsat

__all__ = ["solve_cpsat"]
