"""Elastic GPU counts and energy prices (contract §12): reading, the verifier, metrics.

Every expected number below is computed by hand from the profile in `_instance`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import assign, make_instance, make_schedule, place, profile
from conftest import EXACT

from planner.bounds import earliest_ends
from planner.errors import InputError
from planner.export import schedule_document
from planner.instance import Instance, Interleaving, Job, NodeGroup, PriceInterval
from planner.metrics import metrics
from planner.read import instance_from_dict
from planner.schedule import Schedule, schedule_from_dict
from planner.solvers import SolveOptions, solve
from planner.verify import rules, verify

# m: 100 ms per iteration at 2 GPUs, 60 ms at 4 (no data/net stage: the GPU stage is all)
PROF = profile("m", {2: (100.0, 0.0, 100.0, 0.0), 4: (60.0, 0.0, 60.0, 0.0)})


def _instance(**kw: Any) -> Instance:
    job = Job("e", 2, model="m", iterations=1000, gpu_counts=(2, 4))
    node = NodeGroup("n", 1, 4, gpu_idle_w=50.0, gpu_busy_w=250.0)
    return make_instance([job], [node], [PROF], time_unit="s", **kw)


def test_a_job_runs_at_either_listed_count_with_that_counts_duration() -> None:
    inst = _instance()
    # 1000 iterations x 100 ms = 100 s at 2 GPUs; x 60 ms = 60 s at 4 GPUs
    at2 = make_schedule([assign("e", 0, 100, place("n-0", 0, 1))])
    at4 = make_schedule([assign("e", 0, 60, place("n-0", 0, 1, 2, 3))])
    assert verify(inst, at2) == []
    assert verify(inst, at4) == []
    # the duration of the other count is wrong
    assert rules(verify(inst, make_schedule([assign("e", 0, 60, place("n-0", 0, 1))]))) == {"R3"}
    assert rules(verify(inst, make_schedule([assign("e", 0, 100, place("n-0", 0, 1, 2))]))) == {
        "R5"
    }


def test_the_entry_count_must_be_the_first_segments() -> None:
    inst = _instance()
    doc = schedule_document(inst, make_schedule([assign("e", 0, 60, place("n-0", 0, 1, 2, 3))]), [])
    assert doc["jobs"][0]["gpus"] == 4
    doc["jobs"][0]["gpus"] = 2
    assert rules(verify(inst, schedule_from_dict(doc))) == {"R5"}


def test_group_members_run_at_the_same_count() -> None:
    """Members share one placement, so one count: a member with one count (4) cannot join
    a group at 2 GPUs."""
    jobs = [
        Job("a", 2, model="m", iterations=10, gpu_counts=(2, 4)),
        Job("b", 4, model="m", iterations=10),
    ]
    inst = make_instance(
        jobs, [NodeGroup("n", 1, 4)], [PROF], interleaving=Interleaving(enabled=True)
    )
    s = make_schedule(
        [
            assign("a", 0, 1, place("n-0", 0, 1), group="g"),
            assign("b", 0, 1, place("n-0", 0, 1), group="g"),
        ]
    )
    found = verify(inst, s)
    assert "R5" in rules(found)  # b has one count, 4, and runs at 2


def test_energy_cost_across_a_price_boundary() -> None:
    # price 0.2 per kWh on [0, 50), 0.1 on [50, 200); the job runs 60 s at 4 GPUs, over
    # [20, 80), across the boundary.
    prices = (PriceInterval(0, 50, 0.2), PriceInterval(50, 200, 0.1))
    inst = _instance(power_price=prices)
    s = make_schedule([assign("e", 20, 80, place("n-0", 0, 1, 2, 3))])
    assert verify(inst, s) == []
    m = metrics(inst, s)
    # makespan 80. idle draw: 4 GPUs x 50 W over [0, 80): 200 W x (50 x 0.2 + 30 x 0.1) = 2600
    # busy extra: 4 GPUs x 200 W over [20, 80): 800 W x (30 x 0.2 + 30 x 0.1) = 7200
    # W x s x price -> x 1000 ms / 3.6e9
    assert m["energy_cost"] == pytest.approx((2600 + 7200) * 1000 / 3.6e9)
    # energy_kwh: 4 x 60 s busy at 250 W + 4 x 20 s idle at 50 W
    assert m["energy_kwh"] == pytest.approx((4 * 60 * 250 + 4 * 20 * 50) * 1000 / 3.6e9)


def test_no_price_means_no_cost() -> None:
    inst = _instance()
    s = make_schedule([assign("e", 0, 60, place("n-0", 0, 1, 2, 3))])
    assert metrics(inst, s)["energy_cost"] == 0.0


def _doc(**job: object) -> dict:
    return {
        "cluster": {
            "nodes": [{"name": "v", "count": 1, "gpus": 8, "gpu_busy_w": 300, "gpu_idle_w": 60}],
            "power_price": [{"start": 0, "end": 100, "price": 0.3}],
        },
        "jobs": [{"id": "a", "model": "bert", "iterations": 10, **job}],
        "objective": ["energy_cost", "total_weighted_jct"],
    }


def test_reader_takes_a_list_of_counts_and_prices() -> None:
    inst = instance_from_dict(_doc(gpus=[4, 2, 8]))
    (job,) = inst.jobs
    assert job.gpu_counts == (4, 2, 8) and job.gpus == 4 and job.elastic
    assert inst.power_price == (PriceInterval(0, 100, 0.3),)
    assert inst.objective == ("energy_cost", "total_weighted_jct")


@pytest.mark.parametrize(
    ("gpus", "path"),
    [
        ([2, 3], "jobs[0].gpus[1]"),  # bert has no profile at 3 GPUs
        ([2, 16], "jobs[0].gpus[1]"),  # 16 GPUs fits no node (one 8-GPU node)
        ([2, 2], "jobs[0].gpus"),
        ([], "jobs[0].gpus"),
        ([2, "4"], "jobs[0].gpus[1]"),
    ],
)
def test_reader_refuses_bad_counts_with_their_path(gpus: list, path: str) -> None:
    with pytest.raises(InputError) as e:
        instance_from_dict(_doc(gpus=gpus))
    assert path in [p.path for p in e.value.problems]


def test_a_count_listed_twice_does_not_hide_a_count_without_profile() -> None:
    # contract §2: every problem found is listed, not the first
    with pytest.raises(InputError) as e:
        instance_from_dict(_doc(gpus=[2, 3, 2]))
    told = {p.path: p.message for p in e.value.problems}
    assert told["jobs[0].gpus"] == "a GPU count is listed twice"
    assert "no profile for 3 GPUs" in told["jobs[0].gpus[1]"] and len(told) == 2


def test_reader_refuses_overlapping_prices(tmp_path: Path) -> None:
    d = _doc(gpus=2)
    d["cluster"]["power_price"] = [
        {"start": 0, "end": 100, "price": 0.3},
        {"start": 50, "end": 150, "price": 0.1},
    ]
    with pytest.raises(InputError) as e:
        instance_from_dict(json.loads(json.dumps(d)))
    assert "cluster.power_price[1]" in [p.path for p in e.value.problems]


# --- planners ------------------------------------------------------------------------


def _two_elastic(**kw: Any) -> Instance:
    """Two jobs of 1000 iterations on one 4-GPU node, each at 2 GPUs (100 s) or 4 (60 s)."""
    jobs = [Job(x, 2, model="m", iterations=1000, gpu_counts=(2, 4)) for x in "ab"]
    node = NodeGroup("n", 1, 4, gpu_idle_w=0.0, gpu_busy_w=100.0)
    return make_instance(jobs, [node], [PROF], time_unit="s", **kw)


def test_planners_choose_the_count(solve_verified: Any, solver: str) -> None:
    # Both at 4 GPUs one after the other: JCTs 60 + 120 = 180; both at 2 side by side:
    # 100 + 100 = 200; one at each: at best 60 + 160 or 100 + 100. The optimum is 180.
    s = solve_verified(_two_elastic(), solver, time_limit=10)
    assert metrics(_two_elastic(), s)["total_weighted_jct"] == 180
    if solver in (*EXACT, "auto"):
        assert s.status == "optimal"


def test_an_elastic_jobs_earliest_end_is_at_its_fastest_count() -> None:
    # 100 s at 2 GPUs (the count a planner that does not choose runs), 60 s at 4
    assert earliest_ends(_instance()) == {"e": 60.0}


def test_a_deadline_only_the_larger_count_meets_is_planned(
    solve_verified: Any, solver: str
) -> None:
    # From now = 5, at 4 GPUs the job ends at 65 <= 80; at 2 it would end at 105. The live
    # state's planners took the earliest end at 2 GPUs for a proof: "no schedule exists:
    # job e: deadline 80 passed (earliest end 105)".
    job = Job("e", 2, model="m", iterations=1000, gpu_counts=(2, 4), deadline=80)
    inst = make_instance([job], [NodeGroup("n", 1, 4)], [PROF], time_unit="s", now=5)
    s = solve_verified(inst, solver, time_limit=5)
    assert [(a.start, a.end) for a in s.jobs] == [(5, 65)]


def test_energy_cost_waits_for_the_cheap_price(solve_verified: Any, solver: str) -> None:
    """Price 1.0 on [0, 100), 0.1 on [100, 1000), 1.0 on [1000, 100000); no idle draw. One
    job, inside the cheap interval: at 2 GPUs 2 x 100 W x 100 s x 0.1 = 2000 W s, at 4 GPUs
    4 x 100 x 60 x 0.1 = 2400; any run outside [100, 1000) pays the high price for a part."""
    prices = (
        PriceInterval(0, 100, 1.0),
        PriceInterval(100, 1000, 0.1),
        PriceInterval(1000, 10**5, 1.0),
    )
    inst = _two_elastic(power_price=prices, objective=("energy_cost",))
    # the horizon keeps the job inside the curve: past its end the price is 0 (contract §12)
    inst = make_instance(inst.jobs[:1], inst.node_groups, [PROF], power_price=prices, horizon=2000)
    s = solve_verified(inst, solver, time_limit=10, objective=("energy_cost",))
    cost = metrics(inst, s)["energy_cost"]
    if solver.startswith("milp"):  # the MILP models energy_cost (planner/solvers/milp/energy.py)
        assert s.info["returned"] == "milp"
    assert cost == pytest.approx(2000 * 1000 / 3.6e9)
    assert s.jobs[0].start >= 100 and s.jobs[0].end <= 1000


def test_cpsat_energy_kwh_is_exact(solve_verified: Any) -> None:
    # energy_kwh: 2 GPUs x 100 s = 200 GPU-s per job, less than 4 x 60 = 240, so both jobs
    # at 2 GPUs: 2 jobs x 2 GPUs x 100 W x 100 s.
    inst = _two_elastic()
    s = solve_verified(inst, "cpsat", time_limit=10, objective=("energy_kwh",))
    assert metrics(inst, s)["energy_kwh"] == pytest.approx(40000 * 1000 / 3.6e9)
    assert s.status == "optimal"


@pytest.mark.parametrize(
    "names", [("total_weighted_jct", "energy_cost"), ("energy_cost", "total_weighted_jct")]
)
def test_lexicographic_energy_lists(solve_verified: Any, names: tuple[str, ...]) -> None:
    prices = (
        PriceInterval(0, 100, 1.0),
        PriceInterval(100, 1000, 0.1),
        PriceInterval(1000, 10**5, 1.0),
    )
    inst = _two_elastic(power_price=prices, horizon=2000)
    s = solve_verified(inst, "cpsat", time_limit=10, objective=names)
    m = metrics(inst, s)
    if names[0] == "total_weighted_jct":
        assert m["total_weighted_jct"] == 180  # then the cheapest way to get 180
    else:  # both at 2 GPUs side by side from 100: 2 x 2 x 100 W x 100 s x 0.1
        assert m["energy_cost"] == pytest.approx(4000 * 1000 / 3.6e9)
        assert m["total_weighted_jct"] == 400


def test_muri_import_offers_counts_between_half_and_twice() -> None:
    from planner.importers.muri import muri_to_instance

    row = {"job_id": "1", "num_gpu": "8", "submit_time": "0", "iterations": "10"}
    rows = [{**row, "model_name": "bert", "priority": "0"}]
    doc = muri_to_instance(rows, name="t", nodes=8, gpus_per_node=8, elastic=True)
    assert doc["jobs"][0]["gpus"] == [8, 4, 16]  # bert has 1..32; 32 > 2 x 8
    inst = instance_from_dict(doc)
    assert inst.jobs[0].gpus == 8 and inst.jobs[0].gpu_counts == (8, 4, 16)


def test_a_restart_may_change_the_count_and_pays_the_new_counts_cost() -> None:
    """1000 iterations: segment 0 at 2 GPUs over [0, 50) does 500 (100 ms each); segment 1
    at 4 GPUs from 50 pays the restart cost at 4 GPUs (5 s; 20 s at 2) and does the other
    500 at 60 ms: it ends at 50 + 5 + 30 = 85."""
    from planner.instance import GpuProfile, Preemption, Profile, Stages
    from planner.schedule import Assignment, Segment

    prof = Profile(
        "m",
        {
            2: GpuProfile(100.0, Stages(0.0, 100.0, 0.0), restart_ms=20000.0),
            4: GpuProfile(60.0, Stages(0.0, 60.0, 0.0), restart_ms=5000.0),
        },
    )
    job = Job("e", 2, model="m", iterations=1000, gpu_counts=(2, 4))
    inst = make_instance([job], [NodeGroup("n", 1, 4)], [prof], preemption=Preemption(enabled=True))

    def run(end: int) -> Schedule:
        segs = (
            Segment(0, 50, (place("n-0", 0, 1),)),
            Segment(50, end, (place("n-0", 0, 1, 2, 3),)),
        )
        return make_schedule([Assignment("e", 0, end, segs[0].placement, None, segs)])

    assert verify(inst, run(85)) == []
    assert rules(verify(inst, run(100))) == {"R3"}  # the old count's restart cost


@pytest.mark.parametrize("family", ["dl", "mixed"])
def test_generate_elastic_is_valid_and_keeps_each_jobs_count_first(family: str) -> None:
    from planner.generate import generate

    plain = generate(family, 30, 3, seed=5)
    doc = generate(family, 30, 3, seed=5, elastic=True)
    inst = instance_from_dict(doc)
    assert inst.elastic
    for before, job in zip(plain["jobs"], inst.jobs, strict=True):
        assert job.gpus == before["gpus"]
        assert all(before["gpus"] <= 2 * c <= 4 * before["gpus"] for c in job.gpu_counts)


def test_cpsat_reports_no_bound_it_does_not_have(solve_verified: Any) -> None:
    # with a negative price, planner.bounds gives no energy_cost bound: CP-SAT wrote
    # "relaxation_bound_error: KeyError('energy_cost')" into the schedule's info
    from planner.read import instance_from_dict

    inst = instance_from_dict({
        "version": 1,
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1, "gpu_idle_w": 100,
                               "gpu_busy_w": 1000}],
                    "power_price": [{"start": 0, "end": 10, "price": 10},
                                    {"start": 10, "end": 100, "price": -1}]},
        "objective": ["energy_cost"],
        "jobs": [{"id": "a", "duration": 5, "gpus": 1}],
    })  # fmt: skip
    s = solve_verified(inst, "cpsat", time_limit=5, objective=("energy_cost",))
    assert "relaxation_bound_error" not in s.info


def test_auto_plans_an_energy_objective_with_preemption_by_price() -> None:
    # Power costs 1.0 over [0, 100) and nothing after; a 1-GPU job of 20 time units on an
    # 8-GPU node at 300 W busy, 0 W idle. With preemption enabled `auto` ran Muri's
    # engine, whose orders know no prices: the job at 0, energy cost 20 * 300 W > 0.
    # The plans without the engine start it at 100, at no cost (CP-SAT proves it); so
    # does `greedy`'s list plan now that it holds jobs back to the curve's end.
    doc = _doc(gpus=1)
    doc["cluster"]["nodes"][0]["gpu_idle_w"] = 0
    doc["cluster"]["power_price"] = [{"start": 0, "end": 100, "price": 1.0}]
    doc["jobs"] = [{"id": "a", "duration": 20, "gpus": 1}]
    doc["objective"] = ["energy_cost"]
    doc["policy"] = {"preemption": {"enabled": True, "restart": 0}}
    inst = instance_from_dict(doc)
    greedy = solve(inst, "greedy", SolveOptions(time_limit=5))
    assert verify(inst, greedy) == [] and metrics(inst, greedy)["energy_cost"] == 0.0
    assert greedy.info["preempt"]["start_objective"]["engine"] > 0  # the engine's plan
    assert greedy.info["held_back"] == "until 100"
    s = solve(inst, "auto", SolveOptions(time_limit=5))
    assert verify(inst, s) == [] and metrics(inst, s)["energy_cost"] == 0.0
    assert s.info["auto"]["chose"] != "preempt"


def _priced(busy_w: float, prices: list[tuple[int, int, float]], **job: Any) -> Instance:
    return instance_from_dict({
        "version": 1,
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1, "gpu_idle_w": 100,
                               "gpu_busy_w": busy_w}],
                    "power_price": [{"start": a, "end": b, "price": p} for a, b, p in prices]},
        "horizon": 200,
        "objective": ["energy_cost"],
        "jobs": [{"id": "a", "duration": 5, "gpus": 1, **job}],
    })  # fmt: skip


@pytest.mark.parametrize("solver", ["cpsat", "milp:cbc", "milp:highs"])
def test_energy_cost_with_a_gpu_drawing_less_busy_than_idle(
    solve_verified: Any, solver: str
) -> None:
    # 100 W idle, 50 W busy; price 1 on [0, 10), -1 on [10, 100), 0 after: P(t) = 20 - t
    # on [10, 100]. Cost = 100 W x P(makespan) - 50 W x (P(end) - P(start)): ending at 100
    # or later pays 100 x -80 and the job's own term is 0 after 100, so -8000 W s. CP-SAT
    # built a watts variable with domain [0, -50] before: MODEL_INVALID, the greedy plan;
    # the MILP, its makespan only bounded below, ran the job at 0 (250 W s).
    inst = _priced(50, [(0, 10, 1.0), (10, 100, -1.0)])
    s = solve_verified(inst, solver, time_limit=10, objective=("energy_cost",))
    assert s.info["returned"] == solver.split(":")[0]
    assert metrics(inst, s)["energy_cost"] == pytest.approx(-8000 / 3.6e6)


@pytest.mark.parametrize("solver", ["cpsat", "milp:cbc", "milp:highs"])
def test_energy_cost_charges_idle_power_up_to_the_last_end(
    solve_verified: Any, solver: str
) -> None:
    # 100 W idle, 150 W busy; price 1 on [0, 4), 0.5 on [4, 10), -1 on [10, 100); the job
    # (5 s) must end by 9. Starting at s: 100 x P(s + 5) + 50 x (P(s + 5) - P(s)):
    # 450 + 225 = 675 at 0, 500 + 200 at 1, ..., 650 + 125 = 775 at 4. With a makespan only
    # bounded below, CP-SAT (and the MILP) put it after 100 (-8000 for idle power it does
    # not draw), so they only saw the job's own term and started the job at 4.
    inst = _priced(150, [(0, 4, 1.0), (4, 10, 0.5), (10, 100, -1.0)], deadline=9)
    s = solve_verified(inst, solver, time_limit=10, objective=("energy_cost",))
    assert s.info["returned"] == solver.split(":")[0]
    assert s.jobs[0].start == 0
    assert metrics(inst, s)["energy_cost"] == pytest.approx(675 / 3.6e6)


def test_energy_cost_holds_back_to_the_free_price_after_the_curve(
    solve_verified: Any, solver: str
) -> None:
    # no idle draw, 100 W busy; price 1 on [0, 50), 0.5 on [50, 100), 0 after (contract
    # §12). The 5 s job is free from 100 on; greedy held it back to 50 at most (the
    # listed intervals' starts, and its cheapest run inside the curve): 250 W s.
    inst = instance_from_dict({
        "version": 1,
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1, "gpu_idle_w": 0,
                               "gpu_busy_w": 100}],
                    "power_price": [{"start": 0, "end": 50, "price": 1.0},
                                    {"start": 50, "end": 100, "price": 0.5}]},
        "horizon": 200,
        "objective": ["energy_cost"],
        "jobs": [{"id": "a", "duration": 5, "gpus": 1}],
    })  # fmt: skip
    s = solve_verified(inst, solver, time_limit=5, objective=("energy_cost",))
    assert metrics(inst, s)["energy_cost"] == 0.0 and s.jobs[0].start >= 100
