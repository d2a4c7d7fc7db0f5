"""The CP-SAT model's hint (`cpsat.hint.add_hint`, written straight into the model's proto
by `set_hints`) is the start plan itself: with every variable fixed to its hinted value,
CP-SAT finds exactly that plan's objective, on generated instances with interleaving
groups (their Boolean literals are hinted too) and with elastic GPU counts."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from planner.generate import generate
from planner.groups import exact_candidates
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import SolveOptions
from planner.solvers.cpsat.extract import extract
from planner.solvers.cpsat.hint import add_hint, set_hints
from planner.solvers.cpsat.horizon import horizon_and_end_caps, max_per_job
from planner.solvers.cpsat.model import build
from planner.solvers.cpsat.objective import add_objective
from planner.solvers.greedy.solve import solve_greedy
from planner.verify import verify


@pytest.mark.parametrize(
    "family,jobs,nodes,seed,elastic,grouped",
    [("dl", 16, 1, 5, False, 6), ("mixed", 12, 2, 2, False, 0), ("dl", 12, 2, 3, True, 0)],
)
def test_fixed_to_the_hint_cpsat_finds_the_start(
    family: str, jobs: int, nodes: int, seed: int, elastic: bool, grouped: int
) -> None:
    inst = instance_from_dict(generate(family, jobs, nodes, seed, elastic=elastic))
    names = inst.objective
    start = solve_greedy(inst, "interleave", SolveOptions(time_limit=5))
    assert not verify(inst, start)
    assert sum(a.group is not None for a in start.jobs) == grouped
    groups, _ = exact_candidates(inst, max_per_job(inst), 400, start)
    horizon, ub = horizon_and_end_caps(inst, names, start, groups)
    cm = build(inst, groups, ub, horizon, makespan="makespan" in names)
    objs = [add_objective(cm, n) for n in names]
    assert add_hint(cm, objs, start) == len(cm.model.proto.solution_hint.vars) > 0
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 20
    assert solver.solve(cm.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    got = extract(cm, solver.value)
    assert not verify(inst, got)
    assert objective_values(inst, got, names) == objective_values(inst, start, names)


def test_negated_literal_hints_its_variable() -> None:
    m = cp_model.CpModel()
    x, b, c = m.new_int_var(0, 10, "x"), m.new_bool_var("b"), m.new_bool_var("c")
    set_hints(m, [x.index, (~b).index, c.index], [7, 1, 1])
    hint = m.proto.solution_hint
    assert list(zip(hint.vars, hint.values, strict=True)) == [(0, 7), (1, 0), (2, 1)]
