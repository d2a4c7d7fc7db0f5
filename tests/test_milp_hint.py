"""The MILP's warm start moved onto its grid (`milp.hint.grid_starts`) is the formula of its
docstring: s' = ceil_L(sigma), sigma_j = max(s_j, e_i + (sigma_i - s_i) + a_i over the jobs
i ending by s_j, sigma of the jobs starting earlier), a_i = (L - 1) + the rounding of i's
duration up to whole slots. The reference below applies it job by job."""

from __future__ import annotations

import math

from conftest import run_verified
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.generate import generate
from planner.read import instance_from_dict
from planner.schedule import Assignment, Schedule
from planner.solvers.milp.hint import grid_starts


def reference(sched: Schedule, length: int) -> dict[str, tuple[int, int]]:
    sigma: dict[str, float] = {}
    out: dict[str, tuple[int, int]] = {}
    jobs = sorted(sched.jobs, key=lambda a: (a.start, a.id))
    for j in jobs:
        need = float(j.start)
        for i in jobs:
            if i.start < j.start and i.end <= j.start:
                d = i.end - i.start
                allowance = (length - 1) + (math.ceil(d / length) * length - d)
                need = max(need, i.end + (sigma[i.id] - i.start) + allowance)
            if i.start < j.start:
                need = max(need, sigma[i.id])
        sigma[j.id] = need
        out[j.id] = (math.ceil(need / length - 1e-9), j.end - j.start)
    return out


def _schedule(times: list[tuple[int, int]]) -> Schedule:
    jobs = tuple(Assignment(f"j{k}", s, s + d) for k, (s, d) in enumerate(times))
    return Schedule("t", "test", "feasible", jobs)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 25)), max_size=25),
    st.integers(1, 12),
)
def test_grid_starts_is_its_formula(times: list[tuple[int, int]], length: int) -> None:
    sched = _schedule(times)
    assert grid_starts(sched, length) == reference(sched, length)


def test_slot_length_one_keeps_every_start() -> None:
    sched = _schedule([(0, 5), (0, 3), (3, 4), (5, 0), (7, 2)])
    assert grid_starts(sched, 1) == {a.id: (a.start, a.end - a.start) for a in sched.jobs}


def test_a_greedy_plan_of_many_jobs_moves_by_its_formula() -> None:
    """A real start: the greedy plan of 300 generated jobs, verified, on three grids."""
    inst = instance_from_dict(generate("dl", jobs=300, nodes=8, seed=3), "gen.json")
    sched = run_verified(inst, "greedy")
    for length in (1, 7, 60):
        assert grid_starts(sched, length) == reference(sched, length)
