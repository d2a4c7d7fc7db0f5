"""The event-driven greedy engine on generated instances of a few thousand jobs, every
feature on: every schedule is verified against R1-R10. (Speed is measured by
experiments/scale_bench.py, not here.)"""

from __future__ import annotations

from functools import cache

import pytest

from planner.generate import generate
from planner.instance import Instance
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import SolveOptions
from planner.solvers.greedy import RULES, solve_greedy
from planner.solvers.greedy.place import OutOfWork, WorkMeter
from planner.solvers.greedy.serial import run_serial
from planner.solvers.greedy.solve import SERIAL_WORK_BUDGET, serial_floor
from planner.verify import verify

OPTS = SolveOptions()


@cache
def inst(family: str, jobs: int, nodes: int, seed: int) -> Instance:
    return instance_from_dict(generate(family, jobs, nodes, seed))


def check(instance: Instance, rule: str | None, engine: str = "events"):
    s = solve_greedy(instance, rule, OPTS, engine=engine)
    assert s.status == "feasible", s.info
    assert len(s.jobs) == len(instance.jobs)
    assert verify(instance, s) == [], (instance.name, rule)
    return s


@pytest.mark.parametrize("rule", RULES)
def test_mixed_all_features_every_rule(rule):
    # Reservations (maintenance, a tenant hold, a pool hold), strict priority with chains,
    # pools, CPU/memory limits, two node speeds, deadlines, GPU-less jobs, interleaving.
    i = inst("mixed", 1500, 12, 5)
    assert i.reservations and i.pools and i.priority_policy == "strict"
    s = check(i, rule)
    assert s.info["engine"] == "events"
    lb = s.lower_bound
    assert lb is not None
    obj = objective_values(i, s, list(i.objective))
    assert all(lb[k] <= obj[k] + 1e-6 for k in obj)


def test_dl_interleave_forms_groups_at_scale():
    i = inst("dl", 3000, 24, 1)
    s = check(i, "interleave")
    assert s.groups and s.info["grouping"] == "kept"
    assert all(a.group is not None for a in s.jobs if any(a.id in g.jobs for g in s.groups))


@pytest.mark.parametrize("rule", ["fifo", "srsf", "priority"])
def test_dl_rules(rule):
    check(inst("dl", 3000, 24, 2), rule)


def test_strict_priority_dl_with_classes():
    # The dl family with strict priority: high-priority jobs block later low-priority ones.
    d = generate("dl", 2000, 16, 3)
    d["policy"] = {"priority": "strict"}
    i = instance_from_dict(d)
    for rule in ("srsf", "interleave"):
        check(i, rule)


def test_auto_engine_uses_events_above_the_serial_limit():
    i = inst("dl", 3000, 24, 2)
    # (the serial run starts here and runs out of its work budget: events only)
    assert check(i, "srsf", engine="auto").info["engine"] == "events"
    # under the limit both engines plan and the better plan is returned
    small = inst("dl", 60, 4, 2)
    assert serial_floor(small) <= SERIAL_WORK_BUDGET
    names = list(small.objective)
    got = objective_values(small, check(small, "srsf", engine="auto"), names)
    each = [
        objective_values(small, check(small, "srsf", engine=e), names) for e in ("serial", "events")
    ]
    assert [got[k] for k in names] == min([v[k] for k in names] for v in each)


def test_events_engine_is_deterministic():
    i = inst("mixed", 600, 6, 9)
    a = solve_greedy(i, "interleave", OPTS, engine="events")
    b = solve_greedy(i, "interleave", OPTS, engine="events")
    assert (a.jobs, a.groups) == (b.jobs, b.groups)
    assert verify(i, a) == []


def test_events_engine_reports_priority_precedence_conflict():
    d = {
        "version": 1,
        "name": "t",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]},
        "jobs": [
            {"id": "lo", "duration": 10, "gpus": 1, "priority": 0},
            {"id": "mid", "duration": 10, "gpus": 1, "priority": 1},
            {"id": "hi", "duration": 10, "gpus": 1, "priority": 2, "after": ["lo"]},
        ],
    }
    s = solve_greedy(instance_from_dict(d), "fifo", OPTS, engine="events")
    assert s.status == "unknown" and "strict priority" in s.info["reason"]


def test_events_engine_deadline_reported():
    d = {
        "version": 1,
        "name": "t",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]},
        "jobs": [
            {"id": "a", "duration": 100, "gpus": 2},
            {"id": "b", "duration": 100, "gpus": 2, "deadline": 50},
        ],
    }
    s = solve_greedy(instance_from_dict(d), "fifo", OPTS, engine="events")
    assert s.status == "unknown" and "deadline 50" in s.info["reason"]


def test_events_engine_zero_length_jobs_and_chains():
    d = {
        "version": 1,
        "name": "t",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]},
        "jobs": [
            {"id": "a", "duration": 0, "gpus": 1},
            {"id": "b", "duration": 5, "gpus": 2, "after": ["a"]},
            {"id": "c", "duration": 3, "gpus": 0, "after": ["b"]},
        ],
    }
    i = instance_from_dict(d)
    s = check(i, "fifo")
    ends = {a.id: (a.start, a.end) for a in s.jobs}
    assert ends == {"a": (0, 0), "b": (0, 5), "c": (5, 8)}


def test_auto_stops_the_serial_engine_past_its_work_budget():
    # 1,000 dl jobs on 16 nodes under a long queue: the serial engine would probe millions
    # of starts. Under "auto" it is stopped at SERIAL_WORK_BUDGET and the event-driven
    # plan is returned; asked for explicitly, it still runs to the end.
    i = inst("dl", 1000, 16, 0)
    rule = "srsf"
    meter = WorkMeter(SERIAL_WORK_BUDGET)
    with pytest.raises(OutOfWork):
        run_serial(i, rule, "total_weighted_jct", (), None, 0.0, meter)
    assert meter.spent > SERIAL_WORK_BUDGET
    auto = check(i, rule, engine="auto")
    assert auto.info["engine"] == "events"
    assert auto.jobs == check(i, rule, engine="events").jobs
    unlimited = WorkMeter()
    serial = run_serial(i, rule, "total_weighted_jct", (), None, 0.0, unlimited)
    assert serial.status == "feasible" and verify(i, serial) == []
    assert unlimited.spent > SERIAL_WORK_BUDGET >= serial_floor(i)


def test_auto_skips_the_serial_engine_when_its_least_work_is_over_budget():
    i = inst("dl", 5000, 64, 0)
    assert serial_floor(i) > SERIAL_WORK_BUDGET
    assert check(i, "srsf", engine="auto").info["engine"] == "events"


def test_serial_floor_is_a_lower_bound_and_small_instances_keep_the_serial_engine():
    # On this small instance (instances/bench/gen-mixed-25j-4n-s3.json) the serial plan is
    # at least as good as the event-driven one, so "auto" returns it: the budget leaves it.
    i = inst("mixed", 25, 4, 3)
    meter = WorkMeter()
    serial = run_serial(i, "srsf", "total_weighted_jct", (), None, 0.0, meter)
    assert verify(i, serial) == []
    assert serial_floor(i) <= meter.spent <= SERIAL_WORK_BUDGET
    assert check(i, None, engine="auto").info["engine"] == "serial"
