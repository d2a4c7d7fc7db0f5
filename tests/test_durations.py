"""planner.durations against the contract's test vectors.

docs/interleave_vectors.json is the contract's file of test vectors (docs/CONTRACT.md §4:
"beside this file"), built from the stage times of Muri's trace2.csv (Apache-2.0; README,
"Data and credits").
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from builders import make_instance, profile, vanishing_cycle_instance

from planner.durations import (
    ceil_units,
    group_admissible,
    group_cycle,
    group_gpu_mem,
    group_member_durations,
    inadmissible_reason,
    member_elapsed_ms,
    raw_cycle,
    solo_duration,
)
from planner.groups import candidate_groups
from planner.instance import DEFAULT_OVERHEAD, Interleaving, Job, NodeGroup
from planner.solvers import SolveOptions, solve
from planner.verify import verify

VECTORS = json.loads(
    (Path(__file__).parent.parent / "docs" / "interleave_vectors.json").read_text()
)
REL = 1e-6


def test_overheads_match_defaults():
    for k, v in VECTORS["overhead"].items():
        assert DEFAULT_OVERHEAD[int(k)] == pytest.approx(v, rel=REL)


@pytest.mark.parametrize("vec", VECTORS["groups"], ids=lambda v: "+".join(v["models"]))
def test_group_vectors(vec):
    stages = [tuple(s) for s in vec["stages_ms"]]
    assert raw_cycle(stages) == pytest.approx(vec["raw_cycle_ms"], rel=REL)
    cyc = group_cycle(stages, DEFAULT_OVERHEAD)
    assert cyc == pytest.approx(vec["cycle_ms"], rel=REL)
    assert (cyc < sum(vec["solo_iteration_ms"])) == vec["admissible"]


@pytest.mark.parametrize("vec", VECTORS["groups"], ids=lambda v: "+".join(v["models"]))
def test_group_admissible_from_profiles(vec):
    inst, jobs = _vector_instance(
        vec["gpus"],
        vec["models"],
        vec["stages_ms"],
        vec["solo_iteration_ms"],
        [1] * len(vec["models"]),
        "ms",
    )
    assert group_admissible(inst, jobs) == vec["admissible"]


def _stage_table():
    """(model, gpus) -> (stages, solo) gathered from the group vectors."""
    table = {}
    for vec in VECTORS["groups"]:
        for m, st, solo in zip(
            vec["models"], vec["stages_ms"], vec["solo_iteration_ms"], strict=True
        ):
            table[(m, vec["gpus"])] = (st, solo)
    return table


def _vector_instance(gpus, models, stages, solos, iterations, unit):
    profs = [
        profile(f"{m}#{i}", {gpus: (solo, *st)})
        for i, (m, st, solo) in enumerate(zip(models, stages, solos, strict=True))
    ]
    jobs = [
        Job(f"j{i}", gpus, model=p.model, iterations=it)
        for i, (p, it) in enumerate(zip(profs, iterations, strict=True))
    ]
    inst = make_instance(
        jobs,
        [NodeGroup("n", 1, max(gpus, 1))],
        profs,
        time_unit=unit,
        interleaving=Interleaving(enabled=True),
    )
    return inst, jobs


@pytest.mark.parametrize("vec", VECTORS["phases"], ids=lambda v: "+".join(v["models"]))
def test_phase_vectors(vec):
    table = _stage_table()
    stages = [tuple(table[(m, vec["gpus"])][0]) for m in vec["models"]]
    solos = [table[(m, vec["gpus"])][1] for m in vec["models"]]
    ends = member_elapsed_ms(vec["iterations"], stages, solos, DEFAULT_OVERHEAD)
    assert ends == pytest.approx(vec["member_end_ms"], rel=REL)
    assert [ceil_units(e, 1000.0) for e in ends] == vec["member_end_s"]
    # The same through the instance-level function, in seconds and in milliseconds.
    for unit, want in (
        ("s", vec["member_end_s"]),
        ("ms", [math.ceil(e - 1e-6) for e in vec["member_end_ms"]]),
    ):
        inst, jobs = _vector_instance(
            vec["gpus"], vec["models"], stages, solos, vec["iterations"], unit
        )
        assert group_member_durations(inst, jobs) == want


def _solo_instance(unit):
    gpt2 = profile("gpt2", {8: (437.0, 0.6, 419.0, 49.0)})
    jobs = [Job("p", 8, model="gpt2", iterations=1000), Job("e", 8, duration=7)]
    return make_instance(jobs, [NodeGroup("n", 1, 8)], [gpt2], time_unit=unit), jobs


@pytest.mark.parametrize(
    ("unit", "speed", "want"),
    [
        ("ms", 1.0, 437_000),
        ("s", 1.0, 437),
        ("min", 1.0, 8),  # 437 s = 7.28 min -> 8
        # speed 2: 437 - 419 + 209.5 = 227.5 ms per iteration
        ("ms", 2.0, 227_500),
        ("s", 2.0, 228),
        ("min", 2.0, 4),  # 227.5 s = 3.79 min
        ("s", 0.5, 856),  # 437 - 419 + 838 = 856 ms
    ],
)
def test_solo_duration(unit, speed, want):
    inst, (p, e) = _solo_instance(unit)
    assert solo_duration(inst, p, speed) == want
    assert solo_duration(inst, e, speed) == 7  # explicit durations ignore speed and unit


def _unknown_memory_instance():
    """b and c need 20 GB each, a's profile gives no memory; one 32 GB GPU. The stages
    complement each other, so the group of all three would be the best plan if allowed."""
    profs = [
        profile("ma", {1: (12.0, 10.0, 1.0, 1.0)}),
        profile("mb", {1: (12.0, 1.0, 10.0, 1.0)}, gpu_mem_gb=20),
        profile("mc", {1: (12.0, 1.0, 1.0, 10.0)}, gpu_mem_gb=20),
    ]
    jobs = [Job(x, 1, model=f"m{x}", iterations=500) for x in "abc"]
    inst = make_instance(
        jobs,
        [NodeGroup("n", 1, 1, gpu_mem_gb=32)],
        profs,
        time_unit="ms",
        interleaving=Interleaving(enabled=True),
    )
    return inst, {j.id: j for j in jobs}


def test_unknown_memory_counts_zero_everywhere():
    inst, j = _unknown_memory_instance()
    abc = [j["a"], j["b"], j["c"]]
    assert group_gpu_mem(inst, abc) == 40
    why = inadmissible_reason(inst, abc, 1.0, 32)
    assert why is not None and "40 GB" in why
    assert not group_admissible(inst, abc, 1.0, 32)
    assert inadmissible_reason(inst, abc, 1.0, None) is None  # memory not asked
    assert group_admissible(inst, [j["a"], j["b"]], 1.0, 32)
    assert not group_admissible(inst, [j["b"], j["c"]], 1.0, 32)
    cands = candidate_groups(inst)
    assert {c.jobs for c in cands} == {("a", "b"), ("a", "c")}


@pytest.mark.parametrize("spec", ["greedy", "greedy:interleave", "cpsat", "milp"])
def test_planners_form_no_group_the_verifier_rejects(spec):
    inst, _ = _unknown_memory_instance()
    sched = solve(inst, spec, SolveOptions(time_limit=5))
    assert verify(inst, sched) == []
    # the exact solvers' own answer verified: they did not fall back to their start
    assert not {"cpsat_invalid", "milp_invalid"} & set(sched.info)
    assert [len(g.jobs) for g in sched.groups] == [2]


def test_a_positive_time_below_the_rounding_tolerance_takes_a_unit():
    # contract §4: an end is start + ceil(elapsed / unit); the ceiling of a positive time
    # is at least 1, and TOL only absorbs float noise above a whole number of units
    assert ceil_units(5e-10, 1.0) == 1
    assert ceil_units(0.0, 1.0) == 0
    assert ceil_units(437.00000000000006, 1.0) == 437
    inst = vanishing_cycle_instance()
    assert group_member_durations(inst, inst.jobs) == [1, 100]


@pytest.mark.parametrize("release", [0, 5])
@pytest.mark.parametrize("preemption", [False, True])
def test_every_solver_plans_a_vanishing_group_cycle(solver, solve_verified, release, preemption):
    # Before, a member's duration rounded to 0: the engine ended it at its start (R1, "broke
    # the rules") or, by an absolute 1e-9 ms margin, ended its co-runner with it (R3), so
    # the planners dropped the group and returned 1,600 ms of JCT where 101 is optimal.
    inst = vanishing_cycle_instance(release, preemption)
    sched = solve_verified(inst, solver)
    ends = {a.id: a.end - release for a in sched.jobs}
    if solver in ("greedy", "greedy:interleave", "cpsat", "auto"):
        assert ends == {"a": 1, "b": 100}, ends
        assert [g.jobs for g in sched.groups] == [("a", "b")]
