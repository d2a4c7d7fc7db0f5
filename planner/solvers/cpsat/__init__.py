"""CP-SAT planner (`--solver cpsat`): an exact model of rules R1-R10 solved by OR-Tools
CP-SAT, started from the best greedy schedule and never returning anything worse.

Modules, mirroring milp/ file for file: `model` (builds variables -> constraints),
`variables` (job, option and group variables), `constraints` (one function per rule
family), `objective`, `energy` (the energy objectives), `horizon` (the horizon and each
job's latest end), `hint` (the start schedule as a hint), `extract` (solution to
schedule, GPU indices), `solve` (the solve loop). The MILP's own files have no
counterpart here: `grid` (CP-SAT's times are exact), `backends` (one solver), `gpus`
(extract.py assigns CP-SAT's GPU indices itself).
"""

from planner.solvers.cpsat.solve import solve_cpsat

__all__ = ["solve_cpsat"]
