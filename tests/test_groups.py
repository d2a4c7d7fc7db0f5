"""Candidate interleaving groups (planner.groups)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import EXACT, SolveVerified

import planner.solvers.cpsat.solve as cpsat_solve
import planner.solvers.milp.solve as milp_solve
from planner.durations import group_admissible, group_member_durations
from planner.generate import generate
from planner.groups import candidate_groups
from planner.metrics import objective_values
from planner.read import instance_from_dict, read_instance
from planner.schedule import schedule_from_dict
from planner.verify import verify


@pytest.fixture(scope="module")
def dl():
    return instance_from_dict(generate("dl", 60, 4, seed=3))


@pytest.fixture(scope="module")
def mixed():
    return instance_from_dict(generate("mixed", 40, 4, seed=5))


def test_candidates_are_admissible(dl, mixed):
    for inst in (dl, mixed):
        cands = candidate_groups(inst)
        assert cands, inst.name
        for c in cands:
            jobs = [inst.job_by_id[i] for i in c.jobs]
            ng = inst.group_by_name[c.node_group]
            assert list(c.jobs) == sorted(c.jobs)
            assert 2 <= len(jobs) <= inst.interleaving.max_group
            assert all(j.profiled and j.gpus == c.gpus for j in jobs)
            assert all(ng in inst.eligible_groups(j) for j in jobs)
            assert group_admissible(inst, jobs, ng.speed, ng.gpu_mem_gb)
            assert list(c.durations) == group_member_durations(inst, jobs, ng.speed)
            assert c.span == max(c.durations)
            assert c.efficiency > 1.0


@pytest.mark.parametrize("limit", [1, 2, 4])
def test_each_job_in_at_most_max_per_job(dl, limit):
    cands = candidate_groups(dl, max_per_job=limit)
    assert cands
    count: dict[str, int] = {}
    for c in cands:
        for i in c.jobs:
            count[i] = count.get(i, 0) + 1
    assert max(count.values()) <= limit
    assert len({(c.node_group, c.jobs) for c in cands}) == len(cands)  # no duplicates


def test_sorted_most_efficient_first_and_deterministic(dl):
    a = candidate_groups(dl)
    assert a == candidate_groups(dl)
    effs = [c.efficiency for c in a]
    assert effs == sorted(effs, reverse=True)


def test_no_groups_when_interleaving_disabled(dl):
    off = replace(dl, interleaving=replace(dl.interleaving, enabled=False))
    assert candidate_groups(off) == []


def test_jobs_argument_restricts_members(dl):
    some = dl.jobs[:20]
    ids = {j.id for j in some}
    for c in candidate_groups(dl, jobs=some):
        assert set(c.jobs) <= ids


def test_explicit_duration_jobs_never_grouped(mixed):
    explicit = {j.id for j in mixed.jobs if not j.profiled}
    assert explicit
    for c in candidate_groups(mixed):
        assert not explicit & set(c.jobs)


def test_max_group_two_gives_pairs(dl):
    pairs = replace(dl, interleaving=replace(dl.interleaving, max_group=2))
    cands = candidate_groups(pairs)
    assert cands and all(len(c.jobs) == 2 for c in cands)


PRUNED_PAIR = Path(__file__).resolve().parent / "data" / "pruned-pair.json"


@pytest.mark.parametrize("solver", EXACT)
def test_an_exact_optimum_sees_every_group_of_a_small_instance(
    solver: str, solve_verified: SolveVerified
) -> None:
    # the only optimum (21, found by a brute-force enumeration) runs the pair (j1, j3),
    # which no job keeps among its candidates; CBC proved 23 "optimal" without it
    inst = read_instance(PRUNED_PAIR)
    assert ("j1", "j3") not in {c.jobs for c in candidate_groups(inst)}
    s = solve_verified(inst, solver)
    assert (s.status, objective_values(inst, s, ["total_weighted_jct"])) == (
        "optimal",
        {"total_weighted_jct": 21.0},
    ), s.info
    assert s.info["groups_complete"] is True


@pytest.mark.parametrize("solver", EXACT)
def test_pruned_candidate_groups_prove_nothing(
    solver: str, solve_verified: SolveVerified, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with the pruned candidates alone the models' optimum is 23: neither it nor their
    # bound may be called a proof
    module = cpsat_solve if solver == "cpsat" else milp_solve
    monkeypatch.setattr(module, "ALL_GROUPS_MAX", 0)
    inst = read_instance(PRUNED_PAIR)
    s = solve_verified(inst, solver)
    assert s.status == "feasible" and s.info["groups_complete"] is False, s.info
    assert s.lower_bound is not None and s.lower_bound["total_weighted_jct"] <= 21.0


@pytest.mark.parametrize("solver", EXACT)
def test_a_reservation_admitting_part_of_a_group(
    solver: str, solve_verified: SolveVerified
) -> None:
    # R10 binds each member while it runs: the pair from 0 (short ends at 3, long runs on
    # into the reservation that admits it) is valid, total JCT 3 + 6 = 9; the models kept
    # the group off the reserved GPU for its whole span and called 14 optimal (bound 14).
    # CP-SAT now holds it off only while short runs, and proves 9; the MILP, still
    # stricter, proves nothing
    inst = read_instance(Path(__file__).resolve().parent / "data" / "split-reservation.json")
    pair = schedule_from_dict(
        {
            "jobs": [
                {"id": "long", "start": 0, "end": 6, "group": "g0",
                 "placement": [{"node": "n-0", "gpus": [0]}]},
                {"id": "short", "start": 0, "end": 3, "group": "g0",
                 "placement": [{"node": "n-0", "gpus": [0]}]},
            ],
            "groups": [{"id": "g0", "jobs": ["long", "short"]}],
        }
    )  # fmt: skip
    assert verify(inst, pair) == []
    best = objective_values(inst, pair, ["total_weighted_jct"])["total_weighted_jct"]
    assert best == 9.0
    s = solve_verified(inst, solver)
    if solver == "cpsat":
        value = objective_values(inst, s, ["total_weighted_jct"])["total_weighted_jct"]
        assert (s.status, value) == ("optimal", best), s.info
    else:
        assert s.status == "feasible" and s.info["groups_split"] is True, s.info
    assert s.lower_bound is not None and s.lower_bound["total_weighted_jct"] <= best


@pytest.mark.parametrize("preemption", [False, True])
def test_an_overhead_near_zero_leaves_every_solver_a_plan(
    solver: str, preemption: bool, solve_verified: SolveVerified
) -> None:
    # interleaving.overhead 1e-300 is valid input (any factor > 0); the pair's efficiency
    # (sum of solo iterations / cycle) near 1e300 made the weights of Muri's matching
    # infinite, or integers past 64 bits, and every solver exit 3
    # (planner/simulate/matching.py, MAX_WEIGHT)
    stages = ({"data": 3, "gpu": 5, "net": 2}, {"data": 6, "gpu": 1, "net": 1})
    doc = {
        "version": 1,
        "time_unit": "ms",
        "cluster": {"nodes": [{"name": "n", "gpus": 1}]},
        "interleaving": {"enabled": True, "overhead": {"2": 1e-300}},
        "policy": {"preemption": {"enabled": preemption}},
        "profiles": {
            m: {"by_gpus": {"1": {"iteration_ms": 10, "stages_ms": st}}}
            for m, st in zip(("m", "k"), stages, strict=True)
        },
        "jobs": [
            {"id": "a", "model": "m", "gpus": 1, "iterations": 50},
            {"id": "b", "model": "k", "gpus": 1, "iterations": 60},
        ],
    }
    s = solve_verified(instance_from_dict(doc), solver, time_limit=2.0)
    assert s.status in ("optimal", "feasible") and len(s.jobs) == 2
