"""planner.verify: a valid schedule of a small instance, then each rule broken alone."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from builders import (
    admits,
    assign,
    make_instance,
    make_schedule,
    place,
    reservation,
    small_assignments,
    small_instance,
    small_schedule,
)

from planner.instance import Interleaving, Job, NodeGroup
from planner.online import make_policy
from planner.read import instance_from_dict
from planner.schedule import Group, schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.verify import Violation, rules, verify


def only(rule: str, vs: list[Violation]) -> list[Violation]:
    """Assert that every violation is of `rule` (and there is one); return them."""
    assert vs, "expected a violation"
    assert rules(vs) == {rule}, [str(v) for v in vs]
    return vs


def one(rule: str, vs: list[Violation]) -> Violation:
    only(rule, vs)
    assert len(vs) == 1, [str(v) for v in vs]
    return vs[0]


def test_valid_schedule_verifies():
    assert verify(small_instance(), small_schedule()) == []


def test_violation_str_names_everything():
    v = Violation("R6", "clash", "p_lo", "a-0", 1, 700)
    assert str(v) == "R6 job p_lo, node a-0, GPU 1, t=700: clash"
    assert str(Violation("R1", "group g listed twice")) == "R1 group g listed twice"


def test_empty_infeasible_schedule_is_not_checked():
    inst = small_instance()
    assert verify(inst, make_schedule([], status="infeasible")) == []
    assert verify(inst, make_schedule([], status="unknown")) == []
    assert len(only("R1", verify(inst, make_schedule([], status="feasible")))) == 8


# --- R1 ----------------------------------------------------------------------------


def test_r1_missing_job():
    jobs = small_assignments()
    del jobs["t2"]
    v = one("R1", verify(small_instance(), make_schedule(jobs.values())))
    assert v.job == "t2" and "missing" in v.message


def test_r1_duplicate_and_unknown_job():
    jobs = list(small_assignments().values())
    jobs += [assign("p_lo", 20, 50, place("a-1", 1)), assign("ghost", 0, 5)]
    vs = only("R1", verify(small_instance(), make_schedule(jobs)))
    assert {(v.job, "more than once" in v.message) for v in vs} == {
        ("p_lo", True),
        ("ghost", False),
    }


@pytest.mark.parametrize(("start", "end"), [(10, 5), (10, 10)])
def test_r1_bad_times(start, end):
    v = one("R1", verify(small_instance(), small_schedule(t2=assign("t2", start, end))))
    assert v.job == "t2"


def test_r1_zero_length_job_may_have_start_equal_end():
    inst = small_instance()
    inst = dataclasses.replace(inst, jobs=inst.jobs + (Job("z", 0, duration=0),))
    jobs = list(small_assignments().values()) + [assign("z", 3, 3)]
    assert verify(inst, make_schedule(jobs)) == []


def test_r1_group_not_listed():
    vs = only("R1", verify(small_instance(), make_schedule(small_assignments().values(), {})))
    assert {v.job for v in vs} == {"d1", "g1"}


def test_r1_group_list_disagrees_with_jobs():
    s = make_schedule(small_assignments().values(), {"G": ["d1", "g1", "s1"]})
    v = one("R1", verify(small_instance(), s))
    assert v.job == "s1"
    s = dataclasses.replace(s, groups=(Group("G", ("d1", "g1")), Group("G", ("d1", "g1"))))
    assert "more than once" in one("R1", verify(small_instance(), s)).message


def test_r1_a_listed_group_without_jobs():
    # no job carries its label, so no other rule sees it: a group that never ran
    s = make_schedule(small_assignments().values(), {"G": ["d1", "g1"], "H": []})
    assert one("R1", verify(small_instance(), s)).message == "group H lists no job"


# --- R2 ----------------------------------------------------------------------------


def test_r2_before_release():
    v = one(
        "R2", verify(small_instance(), small_schedule(s1=assign("s1", 5, 233, place("b-1", 0, 1))))
    )
    assert (v.job, v.time) == ("s1", 5)


def test_r2_deadline_and_horizon():
    full = place("a-0", 0, 1, 2, 3), place("a-1", 0, 1, 2, 3)
    v = one("R2", verify(small_instance(), small_schedule(big=assign("big", 1660, 1710, *full))))
    assert (v.job, v.time) == ("big", 1710) and "deadline" in v.message
    vs = only("R2", verify(small_instance(), small_schedule(big=assign("big", 1990, 2040, *full))))
    assert len(vs) == 2 and any("horizon" in v.message for v in vs)


# --- R3 ----------------------------------------------------------------------------


def test_r3_group_member_with_wrong_duration():
    g1 = assign("g1", 0, 1510, place("a-0", 0, 1), group="G")
    v = one("R3", verify(small_instance(), small_schedule(g1=g1)))
    assert (v.job, v.time) == ("g1", 0) and "1499" in v.message


def test_r3_profiled_jobs_may_be_one_unit_off_explicit_not():
    g1 = assign("g1", 0, 1500, place("a-0", 0, 1), group="G")
    d1 = assign("d1", 0, 624, place("a-0", 0, 1), group="G")
    assert verify(small_instance(), small_schedule(g1=g1, d1=d1)) == []
    v = one(
        "R3", verify(small_instance(), small_schedule(p_lo=assign("p_lo", 20, 51, place("a-1", 1))))
    )
    assert v.job == "p_lo"


def test_r3_duration_depends_on_node_speed():
    # s1 needs 228 s on a speed-2 b node but 437 s on an a node.
    v = one(
        "R3", verify(small_instance(), small_schedule(s1=assign("s1", 10, 238, place("a-1", 2, 3))))
    )
    assert v.job == "s1" and "437" in v.message
    assert (
        verify(small_instance(), small_schedule(s1=assign("s1", 10, 447, place("a-1", 2, 3)))) == []
    )


def test_r3_group_without_interleaving():
    inst = small_instance(interleaving=Interleaving(enabled=False))
    v = one("R3", verify(inst, small_schedule()))
    assert v.job == "d1" and "not admissible" in v.message


def test_r3_group_whose_cycle_is_no_gain():
    # Two GPU-bound gpt2 jobs: interleaving them is slower than running them one by one.
    inst = small_instance()
    inst = dataclasses.replace(
        inst,
        jobs=tuple(dataclasses.replace(j, model="gpt2") if j.id == "d1" else j for j in inst.jobs),
    )
    v = one("R3", verify(inst, small_schedule()))
    assert v.job == "d1" and "cycle" in v.message


# --- R4 ----------------------------------------------------------------------------


def test_r4_precedence():
    v = one(
        "R4", verify(small_instance(), small_schedule(p_lo=assign("p_lo", 10, 40, place("a-1", 1))))
    )
    assert (v.job, v.time) == ("p_lo", 10) and "p_hi" in v.message


# --- R5 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("job", "assignment", "node", "gpu"),
    [
        ("s1", assign("s1", 10, 238, place("b-1", 0, 2)), "b-1", 2),  # no GPU 2 on b nodes
        ("s1", assign("s1", 10, 238, place("b-1", 0, 0)), "b-1", None),  # a GPU twice
        ("t1", assign("t1", 0, 10, place("a-1", 3)), None, None),  # 0 GPUs but placed
        ("p_lo", assign("p_lo", 20, 50, place("b-0", 1)), "b-0", None),  # node_types a only
        ("big", assign("big", 1600, 1650, place("a-0", 0, 1, 2, 3)), None, None),  # 1 node of 2
        (
            "big",
            assign("big", 1600, 1650, place("a-0", 0, 1, 2, 3), place("a-1", 0, 1, 2)),
            "a-1",
            None,
        ),  # not a whole node
        ("p_hi", assign("p_hi", 0, 20, place("c-0", 0)), "c-0", None),  # unknown node
        ("p_hi", assign("p_hi", 0, 20), None, None),  # no placement
    ],
)
def test_r5_placement(job, assignment, node, gpu):
    v = one("R5", verify(small_instance(), small_schedule(**{job: assignment})))
    assert (v.job, v.node, v.gpu) == (job, node, gpu)


# --- R6 ----------------------------------------------------------------------------


def test_r6_group_holds_gpus_after_a_member_finished():
    # d1 ends at 625, but the group holds a-0 GPUs 0-1 until g1 ends at 1499.
    v = one(
        "R6",
        verify(small_instance(), small_schedule(p_lo=assign("p_lo", 700, 730, place("a-0", 1)))),
    )
    assert (v.job, v.node, v.gpu, v.time) == ("p_lo", "a-0", 1, 700)
    assert "group G" in v.message


def test_r6_two_solo_jobs_and_half_open_intervals():
    # p_lo on p_hi's GPU right after it ends is fine; overlapping by one unit is not.
    ok = small_schedule(p_lo=assign("p_lo", 20, 50, place("a-1", 0)))
    assert verify(small_instance(), ok) == []
    bad = small_schedule(
        p_lo=assign("p_lo", 20, 50, place("a-1", 0)), p_hi=assign("p_hi", 1, 21, place("a-1", 0))
    )
    vs = verify(small_instance(), bad)
    r6 = [v for v in vs if v.rule == "R6"]
    assert [(v.job, v.node, v.gpu, v.time) for v in r6] == [("p_lo", "a-1", 0, 20)]
    assert rules(vs) == {"R6", "R4", "R9"}  # p_hi now also starts late and ends late


def test_r6_members_with_different_placement_or_start():
    g1 = assign("g1", 0, 1499, place("a-0", 2, 3), group="G")
    v = one("R6", verify(small_instance(), small_schedule(g1=g1)))
    assert v.job == "g1" and "placement" in v.message
    g1 = assign("g1", 1, 1500, place("a-0", 0, 1), group="G")
    v = one("R6", verify(small_instance(), small_schedule(g1=g1)))
    assert v.job == "g1" and "starts" in v.message


# --- R7 ----------------------------------------------------------------------------


def test_r7_node_memory():
    # d1 + g1 use 2 x 2 x 12 = 48 GB of a-0's 64; p_hi adds 20.
    v = one(
        "R7", verify(small_instance(), small_schedule(p_hi=assign("p_hi", 0, 20, place("a-0", 2))))
    )
    assert (v.node, v.time) == ("a-0", 0) and "68" in v.message


def test_r7_members_count_only_while_they_run():
    # After d1 ends at 625, g1 uses 24 GB of a-0 and p_hi's 20 GB fit (p_lo moves along).
    s = small_schedule(
        p_hi=assign("p_hi", 700, 720, place("a-1", 2)),
        p_lo=assign("p_lo", 720, 750, place("a-1", 1)),
    )
    assert rules(verify(small_instance(), s)) == {"R9"}  # p_hi now starts after d1 etc.
    s = small_schedule(p_hi=assign("p_hi", 0, 20, place("a-0", 2)))
    inst = small_instance(priority_policy="none")
    assert rules(verify(inst, s)) == {"R7"}


def test_r7_gpu_memory_of_a_group_is_the_sum():
    inst = small_instance()
    a = dataclasses.replace(inst.node_groups[0], gpu_mem_gb=14)  # dqn 4 + gpt2 12 = 16
    inst = small_instance(priority_policy="strict")
    inst = make_instance(
        inst.jobs,
        (a, inst.node_groups[1]),
        inst.profiles.values(),
        name="small",
        pools=inst.pools,
        reservations=inst.reservations,
        horizon=inst.horizon,
        interleaving=inst.interleaving,
    )
    v = one("R7", verify(inst, small_schedule()))
    assert (v.job, v.node, v.gpu) == ("d1", "a-0", 0) and "16" in v.message


# --- R8 ----------------------------------------------------------------------------


def test_r8_pool_under_reservation():
    # power 5, 2 held by power-cap during [0, 20): t1 (3) and t2 (2) may not overlap there.
    v = one("R8", verify(small_instance(), small_schedule(t2=assign("t2", 5, 10))))
    assert (v.job, v.time) == ("t2", 5)


def _subset_case(c_demand: float):
    """Two overlapping pool reservations admitting different tenants (the subset rule of the
    README section "What we chose where the contract is silent")."""
    jobs = [
        Job("ja", 0, duration=10, tenant="A", demand={"lic": 3}),
        Job("jb", 0, duration=10, tenant="B", demand={"lic": 3}),
        Job("jc", 0, duration=10, demand={"lic": c_demand}),
    ]
    res = [
        reservation("ra", 0, 100, pool="lic", amount=4, for_=admits(tenants=["A"])),
        reservation("rb", 0, 100, pool="lic", amount=4, for_=admits(tenants=["B"])),
    ]
    inst = make_instance(jobs, [NodeGroup("n", 1, 1)], pools={"lic": 10}, reservations=tuple(res))
    return inst, make_schedule([assign(j.id, 0, 10) for j in jobs])


def test_r8_subset_rule():
    # Total 8 <= 10 and each reservation alone leaves room (6 <= 6), but together they
    # hold 8 of 10 and jc, admitted by neither, needs 3 > 2.
    assert verify(*_subset_case(2)) == []
    v = one("R8", verify(*_subset_case(3)))
    assert v.time == 0 and "ra, rb" in v.message


def test_r8_admitted_job_may_use_the_reserved_amount():
    jobs = [
        Job("ja", 0, duration=10, tenant="A", demand={"lic": 9}),
        Job("x", 0, duration=10, demand={"lic": 1}),
    ]
    res = [reservation("ra", 0, 100, pool="lic", amount=8, for_=admits(jobs=["ja"]))]
    inst = make_instance(jobs, [NodeGroup("n", 1, 1)], pools={"lic": 10}, reservations=tuple(res))
    assert verify(inst, make_schedule([assign("ja", 0, 10), assign("x", 0, 10)])) == []
    inst = dataclasses.replace(
        inst, jobs=(jobs[0], dataclasses.replace(jobs[1], demand={"lic": 3}))
    )
    v = one("R8", verify(inst, make_schedule([assign("ja", 0, 10), assign("x", 5, 15)])))
    assert (v.job, v.time) == ("x", 5)  # x (3) may use only 10 - 8 = 2; R10 stays silent


def test_r8_reservation_starting_later():
    jobs = [Job("j", 0, duration=10, demand={"lic": 5})]
    res = [reservation("r", 5, 8, pool="lic", amount=6)]
    inst = make_instance(jobs, [NodeGroup("n", 1, 1)], pools={"lic": 10}, reservations=tuple(res))
    v = one("R8", verify(inst, make_schedule([assign("j", 0, 10)])))
    assert v.time == 5


# --- R9 ----------------------------------------------------------------------------


def _late_p_hi():
    return small_schedule(
        p_hi=assign("p_hi", 5, 25, place("a-1", 0)), p_lo=assign("p_lo", 25, 55, place("a-1", 1))
    )


def test_r9_strict_priority():
    vs = only("R9", verify(small_instance(), _late_p_hi()))
    # Everything released at 0 with a lower priority started before p_hi; s1 (10) did not.
    assert {v.job for v in vs} == {"d1", "g1", "t1"}
    assert all("p_hi" in v.message for v in vs)


def test_r9_off_with_policy_none():
    assert verify(small_instance(priority_policy="none"), _late_p_hi()) == []


def test_r9_later_release_is_no_violation():
    inst = small_instance()
    inst = dataclasses.replace(
        inst,
        jobs=tuple(dataclasses.replace(j, release=5) if j.id == "p_hi" else j for j in inst.jobs),
    )
    assert verify(inst, _late_p_hi()) == []


# --- R10 ---------------------------------------------------------------------------


def test_r10_gpu_reservation():
    v = one(
        "R10", verify(small_instance(), small_schedule(p_hi=assign("p_hi", 0, 20, place("b-0", 0))))
    )
    assert (v.job, v.node, v.gpu, v.time) == ("p_hi", "b-0", 0, 0) and "maint" in v.message
    # GPU 1 of b-0 is not reserved.
    assert (
        verify(small_instance(), small_schedule(p_hi=assign("p_hi", 0, 20, place("b-0", 1)))) == []
    )


def test_r10_overlapping_reservations_need_every_admission():
    inst = small_instance()
    extra = reservation("rl-only", 200, 400, nodes=["b-1"], for_=admits(tenants=["rl"]))
    inst = dataclasses.replace(inst, reservations=inst.reservations + (extra,))
    v = one("R10", verify(inst, small_schedule()))
    assert (v.job, v.node, v.gpu, v.time) == ("s1", "b-1", 0, 200) and "rl-only" in v.message


# --- size ----------------------------------------------------------------------------


def test_many_jobs_verify():
    """3,000 jobs on 8 GPUs in chains: checks the sweeps, not their speed."""
    n = 3000
    jobs = [Job(f"j{i}", 1, duration=2, priority=-(i // 8)) for i in range(n)]
    inst = make_instance(jobs, [NodeGroup("n", 2, 4, cpus=4, mem_gb=8)])
    sched = make_schedule(
        [
            assign(f"j{i}", 2 * (i // 8), 2 * (i // 8) + 2, place(f"n-{i % 8 // 4}", i % 4))
            for i in range(n)
        ]
    )
    assert verify(inst, sched) == []
    sched = make_schedule(list(sched.jobs[:-1]) + [assign(f"j{n - 1}", 0, 2, place("n-1", 3))])
    assert rules(verify(inst, sched)) == {"R6", "R9"}


# --- the same instance read from JSON (planner.read) ---------------------------------


SMALL_JSON = {
    "version": 1,
    "name": "small",
    "time_unit": "s",
    "horizon": 2000,
    "cluster": {
        "nodes": [
            {
                "name": "a",
                "count": 2,
                "gpus": 4,
                "gpu_mem_gb": 32,
                "cpus": 16,
                "mem_gb": 64,
                "speed": 1.0,
                "gpu_idle_w": 50,
                "gpu_busy_w": 250,
            },
            {
                "name": "b",
                "count": 2,
                "gpus": 2,
                "gpu_mem_gb": 16,
                "cpus": 8,
                "mem_gb": 32,
                "speed": 2.0,
                "gpu_idle_w": 30,
                "gpu_busy_w": 200,
            },
        ],
        "pools": {"power": 5},
    },
    "interleaving": {"enabled": True},
    "profiles": {
        "dqn": {
            "model": "dqn",
            "gpu_mem_gb": 4,
            "by_gpus": {
                "2": {"iteration_ms": 509, "stages_ms": {"data": 435, "gpu": 8, "net": 0.5}}
            },
        },
        "gpt2": {
            "model": "gpt2",
            "gpu_mem_gb": 12,
            "by_gpus": {
                "2": {"iteration_ms": 437, "stages_ms": {"data": 0.6, "gpu": 419, "net": 49}}
            },
        },
    },
    "jobs": [
        {
            "id": "d1",
            "model": "dqn",
            "gpus": 2,
            "iterations": 1000,
            "priority": 1,
            "tenant": "rl",
            "cpus_per_gpu": 2,
            "mem_gb_per_gpu": 12,
        },
        {
            "id": "g1",
            "model": "gpt2",
            "gpus": 2,
            "iterations": 3000,
            "cpus_per_gpu": 2,
            "mem_gb_per_gpu": 12,
        },
        {
            "id": "s1",
            "model": "gpt2",
            "gpus": 2,
            "iterations": 1000,
            "release": 10,
            "tenant": "nlp",
            "due": 200,
        },
        {
            "id": "big",
            "gpus": 8,
            "duration": 50,
            "node_types": ["a"],
            "after": ["g1"],
            "deadline": 1700,
            "weight": 2.0,
        },
        {"id": "p_hi", "gpus": 1, "duration": 20, "priority": 5, "mem_gb_per_gpu": 20, "due": 100},
        {"id": "p_lo", "gpus": 1, "duration": 30, "node_types": ["a"], "after": ["p_hi"]},
        {"id": "t1", "gpus": 0, "duration": 10, "demand": {"power": 3}},
        {"id": "t2", "gpus": 0, "duration": 5, "demand": {"power": 2}, "tenant": "ops"},
    ],
    "reservations": [
        {
            "id": "nlp-hold",
            "start": 0,
            "end": 300,
            "nodes": ["b-1"],
            "gpus": [0],
            "for": {"tenants": ["nlp"]},
        },
        {"id": "maint", "start": 0, "end": 100, "nodes": ["b-0"], "gpus": [0], "for": None},
        {"id": "power-cap", "start": 0, "end": 20, "pool": "power", "amount": 2, "for": None},
    ],
}


def test_small_instance_from_json_matches_the_builder():
    from planner.read import instance_from_dict

    inst = instance_from_dict(SMALL_JSON, catalogue={})
    built = small_instance()
    for f in (
        "jobs",
        "node_groups",
        "nodes",
        "profiles",
        "pools",
        "reservations",
        "interleaving",
        "horizon",
        "priority_policy",
    ):
        assert getattr(inst, f) == getattr(built, f), f
    assert verify(inst, small_schedule()) == []
    v = one("R8", verify(inst, small_schedule(t2=assign("t2", 5, 10))))
    assert (v.job, v.time) == ("t2", 5)


def _capacity_case(kind: str, cap: float, needs: tuple[float, ...]) -> Any:
    """Jobs of 10 units with these needs of a pool, or of a node's CPUs, all at 0."""
    from planner.read import instance_from_dict

    node: dict[str, Any] = {"name": "n", "gpus": len(needs)}
    jobs: list[dict[str, Any]] = []
    for k, need in enumerate(needs):
        if kind == "pool":
            jobs.append({"id": f"j{k}", "duration": 10, "gpus": 0, "demand": {"p": need}})
        else:
            jobs.append({"id": f"j{k}", "duration": 10, "gpus": 1, "cpus_per_gpu": need})
    if kind == "cpus":
        node["cpus"] = cap
    cluster = {"nodes": [node], **({"pools": {"p": cap}} if kind == "pool" else {})}
    return instance_from_dict({"version": 1, "cluster": cluster, "objective": "makespan",
                               "jobs": jobs})  # fmt: skip


def _all_at_zero(inst: Any) -> Any:
    from planner.schedule import Assignment, Placement, Schedule

    jobs = tuple(
        Assignment(j.id, 0, 10, (Placement("n-0", (k,)),) if j.gpus else ())
        for k, j in enumerate(inst.jobs)
    )
    return Schedule(inst.name, "hand", "feasible", jobs)


@pytest.mark.parametrize("kind", ["pool", "cpus"])
@pytest.mark.parametrize(
    "cap, needs, fits",
    [
        (1e-10, (1e-10, 1e-10), False),  # twice the capacity passed an absolute 1e-9 slack
        (20000000.4, (20000000.3, 0.1), True),  # exactly the capacity was refused: R7/R8
        (0.3, (0.1, 0.2), True),  # 0.30000000000000004
        (300000000000.3, (100000000000.1,) * 3, True),
    ],
)
def test_capacities_allow_float_rounding_relatively(
    kind: str, cap: float, needs: tuple[float, ...], fits: bool, solver: str, solve_verified: Any
) -> None:
    inst = _capacity_case(kind, cap, needs)
    rule = "R8" if kind == "pool" else "R7"
    assert rules(verify(inst, _all_at_zero(inst))) == (set() if fits else {rule})
    s = solve_verified(inst, solver, time_limit=3.0)
    assert max(a.end for a in s.jobs) == (10 if fits else 10 * len(needs))


def test_a_long_job_preempted_near_its_end_may_resume():
    # a (10^12 s) stops 500 s before its end for b (1 s) and resumes: 500 s are 5 x 10^-10
    # of its work, which the verifier once took as nothing left (R3, "starts after its
    # job's work is done"), so srtf and srsf-p stopped at exit 3 and `auto` kept a whole.
    doc = {
        "version": 1,
        "name": "long",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1}]},
        "policy": {"preemption": {"enabled": True, "restart": 0}},
        "jobs": [
            {"id": "a", "duration": 10**12, "gpus": 1},
            {"id": "b", "duration": 1, "gpus": 1, "release": 10**12 - 500},
        ],
    }
    inst = instance_from_dict(doc, file="<test>")
    on = [{"node": "n-0", "gpus": [0]}]
    seg = [
        {"start": 0, "end": 10**12 - 500, "placement": on, "group": None},
        {"start": 10**12 - 499, "end": 10**12 + 1, "placement": on, "group": None},
    ]
    hand = {
        "jobs": [
            {"id": "a", "start": 0, "end": 10**12 + 1, "placement": on, "segments": seg},
            {"id": "b", "start": 10**12 - 500, "end": 10**12 - 499, "placement": on},
        ]
    }
    assert verify(inst, schedule_from_dict(hand)) == []
    for policy in ("srtf", "srsf-p"):
        res = simulate(inst, make_policy(policy))
        assert verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res))) == []
        assert [(s.start, s.end) for s in res.segments["a"]] == [
            (0, 10**12 - 500),
            (10**12 - 499, 10**12 + 1),
        ]
