"""Earliest starts under reservations and strict priority (planner.bounds, ingredients 2a and
2b; planner.bounds.starts): hand-computed optima each ingredient reaches, CP-SAT optima on
generated mixed instances, and every verified greedy and CP-SAT schedule of random mixed
instances (with and without preemption) at least the bound."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import bounds
from planner.bounds import lower_bounds, named_lower_bounds, starts
from planner.generate import generate
from planner.instance import OBJECTIVES, Instance, Job, NodeGroup, Preemption
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.schedule import Assignment, Placement, Schedule
from planner.solvers import SolveOptions, solve
from planner.verify import verify
from tests.builders import admits, make_instance, reservation


def _without_starts(inst: Instance, monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    """The bounds with neither 2a nor 2b (what they were before them)."""
    with monkeypatch.context() as m:
        m.setattr(starts, "r9_applies", lambda _: False)
        m.setattr(starts, "alone_applies", lambda _: False)
        bounds._RECENT.clear()
        out = lower_bounds(inst, OBJECTIVES)
    bounds._RECENT.clear()
    return out


def _value(inst: Instance, s: Schedule) -> float:
    assert verify(inst, s) == []
    return objective_values(inst, s, ["total_weighted_jct"])["total_weighted_jct"]


# ---- hand-computed: each ingredient reaches the optimum ------------------------------


def _priority_chain() -> Instance:
    """`h` (priority 1, released at 0) is `after` `c`, released at 50 and 10 long; `low`
    (priority 0, released at 0) may start only once `h` has (R9). One node of 4 GPUs, so
    nothing else delays anyone: c 50-60, h 60-65, low 60-70, total JCT 10 + 65 + 70 = 145.
    Without R9 `low` could run at 0-10: 85."""
    jobs = [
        Job("c", 1, duration=10, release=50, priority=1),
        Job("h", 1, duration=5, release=0, priority=1, after=("c",)),
        Job("low", 1, duration=10, release=0, priority=0),
    ]
    return make_instance(jobs, [NodeGroup("n", 1, 4)], priority_policy="strict")


def _optimal_chain(inst: Instance) -> Schedule:
    def at(jid: str, s: int, e: int, gpu: int) -> Assignment:
        return Assignment(jid, s, e, (Placement("n-0", (gpu,)),))

    jobs = (at("c", 50, 60, 0), at("h", 60, 65, 0), at("low", 60, 70, 1))
    return Schedule(inst.name, "hand", "feasible", jobs=jobs)


def test_strict_priority_holds_back_a_lower_job_behind_a_delayed_higher_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = _priority_chain()
    assert _value(inst, _optimal_chain(inst)) == 145
    assert lower_bounds(inst)["total_weighted_jct"] == 145  # on main: 85
    assert named_lower_bounds(inst)["total_weighted_jct"] == (145, "path")
    assert _without_starts(inst, monkeypatch)["total_weighted_jct"] == 85
    # R9 binds only with strict priority, and only a job released no earlier
    loose = dataclasses.replace(inst, priority_policy="none")
    assert lower_bounds(loose)["total_weighted_jct"] == 85
    later = dataclasses.replace(
        inst, jobs=(*inst.jobs[:2], dataclasses.replace(inst.jobs[2], release=0, priority=2))
    )
    assert lower_bounds(later)["total_weighted_jct"] == 85


def test_strict_priority_is_used_with_preemption_on_first_starts() -> None:

    inst = dataclasses.replace(_priority_chain(), preemption=Preemption(True, 0))
    assert lower_bounds(inst)["total_weighted_jct"] == 145


def _held() -> Instance:
    """One node of 4 GPUs, two of them held for tenant x over [0, 100); a power pool of 4
    of which 2 are held for tenant x over [10, 50). `big` (tenant y, all 4 GPUs, 20 long)
    fits only from 100: JCT 120. `p` (tenant y, no GPU, 3 kW for 15) fits in no window
    touching [10, 50), and before 10 it has no 15: from 50, JCT 65. Total 185."""
    jobs = [
        Job("big", 4, duration=20, tenant="y"),
        Job("p", 0, duration=15, tenant="y", demand={"power": 3.0}),
    ]
    res = (
        reservation("hold", 0, 100, nodes=["n-0"], gpus=[0, 1], for_=admits(tenants=["x"])),
        reservation("cap", 10, 50, pool="power", amount=2.0, for_=admits(tenants=["x"])),
    )
    return make_instance(
        jobs,
        [NodeGroup("n", 1, 4)],
        pools={"power": 4.0},
        reservations=res,
        priority_policy="none",
    )


def test_a_job_starts_no_earlier_than_the_reservations_leave_it_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = _held()
    plan = Schedule(
        inst.name,
        "hand",
        "feasible",
        jobs=(
            Assignment("big", 100, 120, (Placement("n-0", (0, 1, 2, 3)),)),
            Assignment("p", 50, 65, ()),
        ),
    )
    assert _value(inst, plan) == 185
    assert lower_bounds(inst)["total_weighted_jct"] == 185
    assert _without_starts(inst, monkeypatch)["total_weighted_jct"] < 185
    # a reservation that admits the job holds nothing back from it
    mine = dataclasses.replace(
        inst, jobs=tuple(dataclasses.replace(j, tenant="x") for j in inst.jobs)
    )
    assert lower_bounds(mine)["total_weighted_jct"] == 20 + 15
    # a job that may stop can run around a reservation (contract §8): 2a is not used

    pre = dataclasses.replace(inst, preemption=Preemption(True, 0))
    assert lower_bounds(pre)["total_weighted_jct"] < 185


def test_reservations_and_strict_priority_together() -> None:
    """`big` (priority 1) waits for the hold until 100 (2a); `low` (priority 0, released
    at 0, one GPU, 10 long) could run at once on a free GPU, but R9 holds it until `big`
    starts (2b), and `big` takes all 4 GPUs over [100, 120): optimum 120 + 130, and the
    heads alone give 120 + 110."""
    inst = _held()
    jobs = (
        dataclasses.replace(inst.jobs[0], priority=1),
        Job("low", 1, duration=10, tenant="y", priority=0),
    )
    inst = dataclasses.replace(inst, jobs=jobs, pools={}, reservations=inst.reservations[:1])
    inst = dataclasses.replace(inst, priority_policy="strict")
    b = lower_bounds(inst)["total_weighted_jct"]
    assert b >= 120 + 110
    s = solve(inst, "cpsat", SolveOptions(time_limit=5, workers=1))
    assert s.status == "optimal"
    assert b <= _value(inst, s) == 120 + 130


# ---- CP-SAT optima on generated mixed instances --------------------------------------


@pytest.mark.parametrize("seed", [1, 3, 4, 7, 9])
def test_bounds_never_exceed_cpsat_optima_on_mixed_instances(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without interleaving CP-SAT's model is exact: an OPTIMAL status is the optimum.
    Seeds where 2a and 2b lift the bound a lot (12-18 jobs, 2-3 nodes)."""
    doc = generate("mixed", jobs=12 + (seed % 2) * 6, nodes=2 + seed % 2, seed=seed)
    doc["interleaving"] = {"enabled": False}
    inst = instance_from_dict(doc)
    s = solve(inst, "cpsat", SolveOptions(time_limit=20, workers=1))
    assert s.status == "optimal" and s.info.get("groups_complete") is not False
    opt = _value(inst, s)
    lb = lower_bounds(inst)["total_weighted_jct"]
    before = _without_starts(inst, monkeypatch)["total_weighted_jct"]
    assert before <= lb <= opt + 1e-6, (before, lb, opt)
    assert (opt - lb) / opt < 0.11  # before 2a and 2b: 13-63% (bounds.py, 2b)


# ---- property: every verified schedule of random mixed instances is at least the bound --


def _mixed(seed: int, preemption: bool) -> dict[str, Any]:
    rng = random.Random(seed)
    doc = generate(
        "mixed", jobs=rng.randint(4, 12), nodes=rng.choice([2, 3]), seed=seed, preemption=preemption
    )
    if rng.random() < 0.5:
        doc["interleaving"] = {"enabled": False}
    if rng.random() < 0.3:  # a reservation now and then that admits some jobs only
        for r in doc.get("reservations", []):
            r["start"] = rng.randint(0, 500)
            r["end"] = r["start"] + rng.randint(1, 3000)
    return doc


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), preemption=st.booleans())
def test_bounds_never_exceed_any_verified_schedule_of_mixed_instances(
    seed: int, preemption: bool
) -> None:
    inst = instance_from_dict(_mixed(seed, preemption))
    lb = lower_bounds(inst, OBJECTIVES)
    specs = ["greedy", "greedy:priority", "greedy:fifo"]
    if len(inst.jobs) <= 8:
        specs.append("cpsat")
    for spec in specs:
        s = solve(inst, spec, SolveOptions(time_limit=2, workers=1))
        if s.status not in ("optimal", "feasible"):
            continue
        assert verify(inst, s) == []
        vals = objective_values(inst, s, OBJECTIVES)
        for name in OBJECTIVES:
            assert lb[name] <= vals[name] + 1e-6, (spec, name, lb[name], vals[name])


# ---- live states: R9 only where the residual's is the state's own --------------------


def _live(preemption: bool) -> Instance:
    """At now 10, `r` (priority 0, released 0) has run since 0 and ends at 100 if it goes
    on; `w` then `a` (priority 1, released 0 and 5) wait. The live state's R9 does not bind
    `r` (it started before `a`, contract §9), so keeping it running is a plan: r 0-100,
    w 10-60, a 60-65: 100 + 60 + 60 = 220. A relaxation that made `r` wait from now
    behind `a` (R9 on moved releases) would say at least 60 + 90 + 60 + 60 = 270."""
    doc: dict[str, Any] = {
        "name": "live",
        "now": 10,
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 4}]},
        "policy": {"priority": "strict", "preemption": {"enabled": preemption, "restart": 0}},
        "jobs": [
            {"id": "r", "duration": 100, "gpus": 1, "release": 0, "priority": 0,
             "state": "running", "started": 0, "placement": [{"node": "n-0", "gpus": [0]}]},
            {"id": "w", "duration": 50, "gpus": 1, "release": 0, "priority": 1},
            {"id": "a", "duration": 5, "gpus": 1, "release": 5, "priority": 1, "after": ["w"]},
        ],
    }  # fmt: skip
    return instance_from_dict(doc)


@pytest.mark.parametrize("preemption", [False, True])
def test_a_live_state_is_bounded_without_binding_a_running_job_by_r9(preemption: bool) -> None:
    inst = _live(preemption)
    lb = lower_bounds(inst)["total_weighted_jct"]
    s = solve(inst, "greedy", SolveOptions(time_limit=2, workers=1))
    assert s.status in ("optimal", "feasible")
    assert lb <= _value(inst, s) <= 220


def test_a_stopped_job_is_not_held_back_by_r9_in_the_bound_a_plan_reports() -> None:
    """At now 2, `h` (priority 1, weight 100) has run on GPU 0 since 0, which `r` takes
    from now (a GPU down): with preemption it stops at now and resumes. `w` (priority 3,
    50 units) then `x` (priority 2, after w) wait, released at 0. The residual runs h's
    rest as a waiting job, which R9 held behind `x` there (start >= 52, total 15105); in
    the live state h's start is history (contract §9) and it resumes at 2 on GPU 1: 100 x
    100 + 52 + 53 = 10105, a verified plan. No solver may report a bound above it, nor
    call 15105 optimal; the exact ones prove 10105 (the residual's R9 is the live
    state's)."""
    doc: dict[str, Any] = {
        "name": "stopped",
        "now": 2,
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 4}]},
        "interleaving": {"enabled": False},
        "policy": {"priority": "strict", "preemption": {"enabled": True, "restart": 0}},
        "jobs": [
            {"id": "h", "duration": 100, "gpus": 1, "release": 0, "priority": 1, "weight": 100,
             "state": "running", "started": 0, "placement": [{"node": "n-0", "gpus": [0]}]},
            {"id": "w", "duration": 50, "gpus": 1, "release": 0, "priority": 3},
            {"id": "x", "duration": 1, "gpus": 1, "release": 0, "priority": 2, "after": ["w"]},
        ],
        "reservations": [{"id": "r", "start": 2, "end": 1000, "nodes": ["n-0"], "gpus": [0]}],
    }  # fmt: skip
    inst = instance_from_dict(doc)
    plans = {
        spec: solve(inst, spec, SolveOptions(time_limit=5, workers=1))
        for spec in ("greedy", "greedy:srsf", "cpsat", "milp")
    }
    best = min(_value(inst, s) for s in plans.values())
    assert best == 10105
    for spec in ("cpsat", "milp"):
        assert (plans[spec].status, _value(inst, plans[spec])) == ("optimal", 10105), spec
    for spec, s in plans.items():
        assert s.lower_bound is None or s.lower_bound["total_weighted_jct"] <= best + 1e-6, spec
        assert s.status != "optimal" or _value(inst, s) <= best + 1e-6, spec


def test_a_pool_hold_leaves_the_slack_the_verifier_allows() -> None:
    """5,000,000 of a pool of 10,000,000 beside 5,000,000.005 held for nobody passes R8
    (`verify.capacity._over`: a relative 1e-9 of the capacity) and every planner starts it
    at 0: 2a must not say it waits for the hold to end (a bound of 1010 beside a plan of 10)."""
    doc: dict[str, Any] = {
        "name": "slack",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1}], "pools": {"lic": 1e7}},
        "jobs": [{"id": "a", "duration": 10, "gpus": 0, "demand": {"lic": 5e6}}],
        "reservations": [
            {"id": "r", "start": 0, "end": 1000, "pool": "lic", "amount": 5e6 + 0.005}
        ],
    }
    inst = instance_from_dict(doc)
    s = solve(inst, "greedy", SolveOptions(time_limit=2, workers=1))
    assert lower_bounds(inst)["total_weighted_jct"] <= _value(inst, s) == 10
