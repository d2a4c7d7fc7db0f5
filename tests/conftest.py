"""Shared test machinery: a solve that always verifies, and the `solver` parametrisation.

A test that takes a `solver` argument runs once per solver spec in `SOLVERS` (or in
`pytest --solvers greedy:srsf,cpsat`). Specs are `plan solve --solver` names, except that
the MILP back end is part of the spec (`milp:cbc`, `milp:highs`). Every greedy rule is a
solver of its own: the rules share the engine, not their choices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers import GREEDY_RULES, SolveOptions, solve
from planner.verify import verify

GREEDY = tuple(f"greedy:{rule}" for rule in GREEDY_RULES)
EXACT = ("cpsat", "milp:cbc", "milp:highs")
# `greedy` (the engine's best rule, with kept groups on interleaving instances and the
# preemptive engine on preemptive ones) and `auto` (README, "Choosing a solver") are
# planners of their own, not aliases of the specs above.
COMPOSED = ("greedy", "auto")
SOLVERS = GREEDY + COMPOSED + EXACT
# Solvers that report a proved "infeasible". The MILP returns "unknown" when its model is
# infeasible: on a coarse grid, or with a conservative pool model, that proves nothing.
# `auto` hands a hand-sized instance to CP-SAT.
PROVES_INFEASIBILITY = ("cpsat", "auto")

# Exact solvers get enough time to prove the optimum of a hand-sized instance; a test
# that needs another setting passes it as a keyword.
EXACT_DEFAULTS: dict[str, Any] = {"time_limit": 20.0, "workers": 2, "seed": 1}

SolveVerified = Callable[..., Schedule]


def is_exact(spec: str) -> bool:
    return spec in EXACT


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--solvers",
        default=",".join(SOLVERS),
        help="comma-separated solver specs for tests taking `solver` (default: all)",
    )


def _parametrizes_solver_itself(metafunc: pytest.Metafunc) -> bool:
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "solver" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests taking `solver` run over `--solvers`, unless they list their own solvers."""
    if "solver" in metafunc.fixturenames and not _parametrizes_solver_itself(metafunc):
        chosen = [s.strip() for s in metafunc.config.getoption("solvers").split(",")]
        unknown = [s for s in chosen if s not in SOLVERS]
        if unknown:
            raise pytest.UsageError(f"--solvers: unknown {unknown}; use {', '.join(SOLVERS)}")
        metafunc.parametrize("solver", chosen)


def run_verified(instance: Instance, spec: str, **options: Any) -> Schedule:
    """Solve with `spec` and assert the verifier accepts the result. A schedule without jobs
    (infeasible, unknown) verifies clean, so the assertion holds for every outcome."""
    name, _, backend = spec.partition(":")
    settings = dict(EXACT_DEFAULTS) if is_exact(spec) or spec == "auto" else {}
    if name == "milp":
        name, settings["milp_backend"] = "milp", backend
    settings.update(options)
    schedule = solve(instance, spec if name != "milp" else name, SolveOptions(**settings))
    assert verify(instance, schedule) == [], (spec, schedule.status, schedule.info)
    return schedule


@pytest.fixture
def solve_verified() -> SolveVerified:
    """`solve_verified(inst, spec, **options) -> Schedule`, the schedule checked by
    `planner.verify`; options are `SolveOptions` fields."""
    return run_verified


@pytest.fixture(scope="session", autouse=True)
def _compiled_rcpsp_kernels() -> None:
    """Compile the RCPSP heuristic's kernels once before any test (a cached load after the
    first run): tests with a time limit of a second or two would otherwise spend it on the
    compilation (README, "What we chose where the contract is silent")."""
    from planner.solvers.rcpsp_kernels import warm

    warm()
