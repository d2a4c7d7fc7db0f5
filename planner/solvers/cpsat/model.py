"""The CP-SAT model of rules R1-R10 (contract §5), built in the order data -> variables
(`variables.py`) -> constraints (`constraints.py`); the objective is `objective.py`'s and
the solve loop `solve.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from ortools.sat.python import cp_model

import planner.solvers.cpsat.constraints as constraints
from planner.groups import CandidateGroup
from planner.instance import Instance
from planner.solvers.cpsat.variables import (
    CpsatModel,
    add_group_variables,
    add_job_variables,
    add_makespan_variable,
)


def build(
    instance: Instance,
    groups: Sequence[CandidateGroup],
    job_ub: dict[str, int],
    horizon: int,
    makespan: bool = False,
) -> CpsatModel:
    """The model without objective; `job_ub[j]` bounds the end of job j. With `makespan`,
    also the makespan variable (>= every end) and its tail interval."""
    cm = CpsatModel(cp_model.CpModel(), instance, horizon, {}, [], [], {}, [])
    add_job_variables(cm, groups, job_ub)
    if makespan:
        add_makespan_variable(cm)
    add_group_variables(cm, groups)
    constraints.add_one_option(cm)
    constraints.add_symmetry_breaking(cm)
    constraints.add_gpu_capacity(cm)
    constraints.add_node_capacity(cm)
    constraints.add_pool_capacity(cm)
    constraints.add_disjunctive_cliques(cm)
    constraints.add_precedence_and_priority(cm)
    return cm
