"""CP-SAT planner: hand-computed optima reached and proved, PSPLIB optima, never worse
than greedy, every schedule verified. Small time limits; no timing assertions."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import admits, make_instance, profile, reservation

from planner.importers.psplib import parse_sm
from planner.instance import Instance, Interleaving, Job, NodeGroup
from planner.metrics import objective_values as values_of
from planner.read import instance_from_dict
from planner.schedule import Schedule
from planner.solvers import SolveOptions
from planner.solvers.cpsat import solve_cpsat
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent
OPTS = SolveOptions(time_limit=10, workers=2, seed=1)


def solve(inst: Instance, **kw: object) -> Schedule:
    s = solve_cpsat(inst, SolveOptions(**{"time_limit": 10, "workers": 2, "seed": 1, **kw}))
    if s.jobs:
        assert verify(inst, s) == []
    return s


def one_gpu_node(gpus: int = 1, count: int = 1, **kw: object) -> NodeGroup:
    return NodeGroup("n", count, gpus, **kw)  # type: ignore[arg-type]


def end(s: Schedule, jid: str) -> int:
    return next(a.end for a in s.jobs if a.id == jid)


def test_interleaving_beats_sequential() -> None:
    # Data-heavy and GPU-heavy jobs on one GPU: alone 100 s each (200 s in a row). As a
    # pair the best ordering's slot cycle is 100 ms (TT2 gives 105), times the overhead
    # 1.33/1.015: 131.03 ms per iteration, so both end at ceil(131.03) = 132 s.
    profs = [profile("data", {1: (100, 90, 5, 5)}), profile("gpu", {1: (100, 5, 90, 5)})]
    jobs = [Job("a", 1, model="data", iterations=1000), Job("b", 1, model="gpu", iterations=1000)]
    inst = make_instance(
        jobs, [one_gpu_node()], profs, interleaving=Interleaving(True), objective=("makespan",)
    )
    s = solve(inst)
    assert s.status == "optimal"
    assert end(s, "a") == end(s, "b") == 132
    assert len(s.groups) == 1
    assert s.lower_bound == {"makespan": 132}


def test_reservation_delays_a_job() -> None:
    # GPU 0 is held for tenant x during [0, 10): y-jobs may not use it then.
    jobs = [
        Job("x1", 1, duration=5, tenant="x"),
        Job("y1", 1, duration=10, tenant="y"),
        Job("y2", 1, duration=5, tenant="y"),
    ]
    res = (reservation("hold", 0, 10, nodes=["n-0"], gpus=[0], for_=admits(["x"])),)
    inst = make_instance(jobs, [one_gpu_node(2)], reservations=res, objective=("makespan",))
    s = solve(inst)
    assert s.status == "optimal"
    assert values_of(inst, s, ("makespan",))["makespan"] == 15  # 10 without the hold
    for a in s.jobs:
        if a.id.startswith("y") and a.start < 10:
            assert 0 not in a.placement[0].gpus


def test_partial_hold_splits_gpu_classes() -> None:
    # GPUs 0-1 of a 4-GPU node are held for tenant x during [0, 10). The 3-GPU y job needs
    # a GPU of the held class, so it waits for 10 although 2 GPUs are free earlier.
    jobs = [
        Job("x1", 2, duration=10, tenant="x"),
        Job("y2", 2, duration=10, tenant="y"),
        Job("y3", 3, duration=5, tenant="y"),
    ]
    res = (reservation("hold", 0, 10, nodes=["n-0"], gpus=[0, 1], for_=admits(["x"])),)
    inst = make_instance(jobs, [one_gpu_node(4)], reservations=res, objective=("makespan",))
    s = solve(inst)
    assert s.status == "optimal" and values_of(inst, s, ("makespan",))["makespan"] == 15
    assert next(a for a in s.jobs if a.id == "y3").start == 10


def test_maintenance_blocks_a_node() -> None:
    jobs = [Job("a", 2, duration=5)]
    res = (reservation("maint", 0, 10, nodes=["n-0"]),)
    inst = make_instance(jobs, [one_gpu_node(2)], reservations=res, objective=("makespan",))
    s = solve(inst)
    assert s.status == "optimal" and end(s, "a") == 15


def test_overlapping_reservations_count_once() -> None:
    # Two holds of the same GPUs overlap in [5, 10): the job fits neither before 12.
    jobs = [Job("a", 2, duration=5)]
    res = (
        reservation("m1", 0, 10, nodes=["n-0"]),
        reservation("m2", 5, 12, nodes=["n-0"], gpus=[0, 1]),
    )
    inst = make_instance(jobs, [one_gpu_node(2)], reservations=res, objective=("makespan",))
    s = solve(inst)
    assert s.status == "optimal" and end(s, "a") == 17


def test_tardiness_without_due_dates_is_zero() -> None:
    jobs = [Job("a", 1, duration=3), Job("b", 1, duration=2)]
    inst = make_instance(jobs, [one_gpu_node()], objective=("total_weighted_tardiness",))
    s = solve(inst)
    assert s.status == "optimal" and s.lower_bound == {"total_weighted_tardiness": 0}


@pytest.mark.parametrize("policy,expected", [("strict", 21), ("none", 12)])
def test_strict_priority_changes_the_optimum(policy: str, expected: int) -> None:
    jobs = [Job("long", 1, duration=10, priority=1), Job("short", 1, duration=1)]
    inst = make_instance(jobs, [one_gpu_node()], priority_policy=policy)
    s = solve(inst)
    assert s.status == "optimal"
    assert values_of(inst, s, ("total_weighted_jct",))["total_weighted_jct"] == expected


def test_multi_node_job_takes_whole_nodes() -> None:
    jobs = [Job("big", 8, duration=10), Job("s1", 4, duration=10), Job("s2", 4, duration=10)]
    inst = make_instance(jobs, [NodeGroup("n", 2, 4)], objective=("makespan",))
    s = solve(inst)
    assert s.status == "optimal" and values_of(inst, s, ("makespan",))["makespan"] == 20
    big = next(a for a in s.jobs if a.id == "big")
    assert sorted(p.node for p in big.placement) == ["n-0", "n-1"]
    assert all(p.gpus == (0, 1, 2, 3) for p in big.placement)


def test_node_speed_picks_the_fast_node() -> None:
    prof = profile("m", {1: (100, 10, 80, 10)})
    jobs = [Job("a", 1, model="m", iterations=100)]
    inst = make_instance(
        jobs,
        [NodeGroup("slow", 1, 1), NodeGroup("fast", 1, 1, speed=2.0)],
        [prof],
        objective=("makespan",),
    )
    s = solve(inst)
    # 100 iterations of (100 - 80 + 40) ms = 6 s on the fast node, 10 s on the slow one
    assert s.status == "optimal" and end(s, "a") == 6
    assert s.jobs[0].placement[0].node == "fast-0"


def test_pool_and_precedence() -> None:
    jobs = [
        Job("a", 0, duration=4, demand={"p": 2}),
        Job("b", 0, duration=3, demand={"p": 2}),
        Job("c", 0, duration=2, demand={"p": 1}, after=("a",)),
    ]
    inst = make_instance(jobs, [one_gpu_node()], pools={"p": 3}, objective=("makespan",))
    s = solve(inst)
    assert s.status == "optimal" and values_of(inst, s, ("makespan",))["makespan"] == 7


def test_pool_reservation_admits_a_tenant() -> None:
    # 4 units, 3 held for tenant x during [0, 10): x may use them, y only the 4th.
    jobs = [
        Job("x1", 0, duration=10, demand={"p": 3}, tenant="x"),
        Job("y1", 0, duration=5, demand={"p": 2}, tenant="y"),
    ]
    res = (reservation("hold", 0, 10, pool="p", amount=3, for_=admits(["x"])),)
    inst = make_instance(
        jobs, [one_gpu_node()], pools={"p": 4}, reservations=res, objective=("makespan",)
    )
    s = solve(inst)
    assert s.status == "optimal" and values_of(inst, s, ("makespan",))["makespan"] == 15


def test_deadline_infeasibility_is_proved() -> None:
    jobs = [Job("a", 1, duration=6, deadline=10), Job("b", 1, duration=6, deadline=10)]
    inst = make_instance(jobs, [one_gpu_node()])
    s = solve(inst)
    assert s.status == "infeasible" and s.jobs == ()


def test_lexicographic_objectives() -> None:
    # Makespan 15 either way; among those, the two short jobs first give JCT 5+5+15.
    jobs = [Job("a", 2, duration=10), Job("b", 1, duration=5), Job("c", 1, duration=5)]
    inst = make_instance(jobs, [one_gpu_node(2)], objective=("makespan", "total_weighted_jct"))
    s = solve(inst)
    assert s.status == "optimal"
    vals = values_of(inst, s, inst.objective)
    assert vals == {"makespan": 15, "total_weighted_jct": 25}
    assert s.lower_bound == {"makespan": 15}


def test_tardiness_objective() -> None:
    jobs = [Job("a", 1, duration=4, due=4), Job("b", 1, duration=2, due=2, weight=3.0)]
    inst = make_instance(jobs, [one_gpu_node()], objective=("total_weighted_tardiness",))
    s = solve(inst)
    assert s.status == "optimal"
    assert values_of(inst, s, inst.objective)["total_weighted_tardiness"] == 2


@pytest.mark.parametrize("name,optimum", [("j301_1", 43), ("j303_5", 53), ("j3046_7", 59)])
def test_psplib_j30_optimum(name: str, optimum: int) -> None:
    text = (ROOT / "instances" / "psplib" / "j30" / f"{name}.sm").read_text()
    inst = instance_from_dict(parse_sm(text, name))
    s = solve(inst)
    assert s.status == "optimal"
    assert values_of(inst, s, ("makespan",))["makespan"] == optimum


def test_stop_returns_the_greedy_schedule() -> None:
    text = (ROOT / "instances" / "psplib" / "j30" / "j301_1.sm").read_text()
    inst = instance_from_dict(parse_sm(text))
    opts = SolveOptions(time_limit=10, workers=1)
    opts.stop.set()
    s = solve_cpsat(inst, opts)
    assert s.status == "feasible" and s.info.get("interrupted") is True
    assert verify(inst, s) == []


def test_never_worse_than_greedy_on_generated_instances() -> None:
    generate = pytest.importorskip("planner.generate").generate
    from planner.solvers.greedy import solve_greedy

    for seed in range(20):
        d = generate("mixed", jobs=12, nodes=3, seed=seed)
        inst = instance_from_dict(d)
        g = solve_greedy(inst, None, SolveOptions())
        s = solve(inst, time_limit=1.0)
        if g.status not in ("feasible", "optimal"):
            continue
        assert s.jobs, f"seed {seed}: greedy found a schedule, cpsat none"
        names = inst.objective
        assert tuple(values_of(inst, s, names).values()) <= tuple(
            values_of(inst, g, names).values()
        ), f"seed {seed}"
