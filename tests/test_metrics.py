"""planner.metrics on the small instance of tests/builders.py, computed by hand."""

from __future__ import annotations

import json

import pytest
from builders import (
    assign,
    make_instance,
    make_schedule,
    one_gpu_priced,
    place,
    small_instance,
    small_schedule,
)
from conftest import run_verified

from planner.export import schedule_document
from planner.instance import Job, NodeGroup
from planner.metrics import METRIC_KEYS, group_count, metrics, nearest_rank, objective_values
from planner.verify import verify

# JCTs (end - release): d1 625, g1 1499, s1 238-10 = 228, big 1650, p_hi 20, p_lo 50,
# t1 10, t2 15.
JCT_SUM = 625 + 1499 + 228 + 1650 + 20 + 50 + 10 + 15  # 4097


def test_small_instance_metrics():
    inst, s = small_instance(), small_schedule()
    assert verify(inst, s) == []
    m = metrics(inst, s)
    assert tuple(m) == METRIC_KEYS
    assert m["makespan"] == 1650
    assert m["avg_jct"] == pytest.approx(JCT_SUM / 8)  # 512.125
    assert m["p99_jct"] == 1650  # n = 8: rank ceil(7.92) = 8, the largest
    assert m["total_weighted_jct"] == pytest.approx(JCT_SUM + 1650)  # big has weight 2
    assert m["total_weighted_tardiness"] == pytest.approx(38)  # s1 due 200 ends 238; p_hi on time
    # Busy GPU-time: group d1+g1 holds 2 GPUs for 1499 once (not 625 + 1499 per GPU);
    # big 8 x 50; p_hi 20; p_lo 30; s1 2 x 228.  12 GPUs in the cluster.
    busy_a = 2 * 1499 + 8 * 50 + 20 + 30  # 3448 on the a nodes
    busy_b = 2 * 228  # 456 on b-1
    assert m["gpu_utilization"] == pytest.approx((busy_a + busy_b) / (12 * 1650))
    # a GPUs: 250 W busy, 50 W idle; b GPUs: 200 W busy, 30 W idle; time unit s.
    watt_s = (
        busy_a * 250 + (8 * 1650 - busy_a) * 50 + busy_b * 200 + (4 * 1650 - busy_b) * 30
    )  # 1,625,120 W s
    assert m["energy_kwh"] == pytest.approx(watt_s / 3.6e6)  # 0.45142 kWh


def test_energy_follows_time_unit():
    inst = small_instance(time_unit="min")
    m = metrics(inst, small_schedule())
    assert m["energy_kwh"] == pytest.approx(
        metrics(small_instance(), small_schedule())["energy_kwh"] * 60
    )


def test_objective_values_and_group_count():
    inst, s = small_instance(), small_schedule()
    vals = objective_values(inst, s, ["total_weighted_tardiness", "makespan"])
    assert list(vals) == ["total_weighted_tardiness", "makespan"]
    assert vals == {"total_weighted_tardiness": pytest.approx(38), "makespan": 1650}
    assert objective_values(inst, s, []) == {}
    with pytest.raises(ValueError, match="avg_jct"):
        objective_values(inst, s, ["avg_jct"])
    assert group_count(s) == 1


def test_nearest_rank():
    assert nearest_rank(list(range(1, 8)), 99) == 7  # ceil(6.93) = 7
    assert nearest_rank(list(range(100, 0, -1)), 99) == 99  # ceil(99) = 99, unsorted input
    assert nearest_rank(list(range(1, 201)), 99) == 198
    assert nearest_rank([5], 99) == 5
    assert nearest_rank([], 99) == 0.0


def test_p99_through_metrics_with_100_jobs():
    jobs = [Job(f"j{i}", 0, duration=i, release=1) for i in range(1, 101)]
    inst = make_instance(jobs, [NodeGroup("n", 1, 2, gpu_idle_w=10)])
    s = make_schedule([assign(f"j{i}", 1, 1 + i) for i in range(1, 101)])
    assert verify(inst, s) == []
    m = metrics(inst, s)
    assert m["p99_jct"] == 99
    assert m["avg_jct"] == pytest.approx(50.5)
    assert m["makespan"] == 101
    assert m["gpu_utilization"] == 0.0
    assert m["energy_kwh"] == pytest.approx(2 * 101 * 10 / 3.6e6)  # idle all along


def test_empty_schedule():
    m = metrics(small_instance(), make_schedule([], status="infeasible"))
    assert m == {k: 0.0 for k in METRIC_KEYS}


def test_makespan_is_written_as_an_integer():
    # Times are integers (contract §1, §6): the schedule file says "makespan": 1650, not
    # 1650.0, in the metrics and as an objective value.
    inst, s = small_instance(), small_schedule()
    assert verify(inst, s) == []
    doc = schedule_document(inst, s, ["makespan"])
    assert type(doc["metrics"]["makespan"]) is int
    text = json.dumps(doc)
    assert '"makespan": 1650,' in text and '"makespan": 1650.0' not in text
    assert (
        type(metrics(small_instance(), make_schedule([], status="infeasible"))["makespan"]) is int
    )


def test_a_price_paid_after_a_huge_one_is_not_lost_in_rounding(solver):
    # 10^12 per kWh for 10^6 s, then 1 for 100 s, then 0.001: the price integral up to
    # 10^6 is about 10^18, whose rounding step (128) swallowed every later integral, so a
    # job's cost there read 0 and the planners ran it at price 1 (1,000 times the cost).
    steps = [(0, 10**6, 10**12), (10**6, 10**6 + 100, 1), (10**6 + 100, 10**6 + 200, 0.001)]
    job = {"id": "a", "duration": 10, "gpus": 1, "release": 10**6, "deadline": 10**6 + 300}
    inst = one_gpu_priced([*steps, (10**6 + 200, 2 * 10**6, 1000)], job)
    kwh = 300 * 10 / 3.6e6
    at_one = make_schedule([assign("a", 10**6, 10**6 + 10, place("n-0", 0))])
    assert metrics(inst, at_one)["energy_cost"] == pytest.approx(kwh, rel=1e-9)
    s = run_verified(inst, solver, time_limit=5)
    assert metrics(inst, s)["energy_cost"] == pytest.approx(kwh * 0.001, rel=1e-9), solver
