"""Greedy list-scheduling planner: every rule on random instances, and targeted cases
(the behavioural scenarios shared with the exact solvers are in test_conformance.py)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run_verified

from planner.generate import generate
from planner.instance import Instance
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.schedule import Schedule
from planner.solvers import SolveOptions, solve
from planner.solvers.greedy import RULES, solve_greedy
from planner.verify import verify

OPTS = SolveOptions()


def plan(inst, rule):
    return run_verified(inst, f"greedy:{rule}")


def base(jobs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "version": 1,
        "name": "t",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]},
        "jobs": jobs,
    }
    d.update(extra)
    return d


def by_id(s):
    return {a.id: a for a in s.jobs}


def _greedy_status(inst: Instance, s: Schedule) -> bool:
    """A greedy plan is `feasible`, or `optimal` when it meets its lower bound (README)."""
    if s.status == "optimal":
        names = list(inst.objective)
        got = objective_values(inst, s, names)
        lower = s.lower_bound or {}
        return s.info.get("optimal_by_bound") is True and all(
            got[n] <= lower[n] * (1 + 1e-6) + 1e-6 for n in names
        )
    return s.status == "feasible"


@pytest.mark.parametrize("chunk", range(4))
def test_random_mixed_instances_every_rule_verifies(chunk):
    groups = 0
    for seed in range(chunk * 50, chunk * 50 + 50):
        d = generate("mixed", 8 + seed % 13, 1 + seed % 5, seed)
        inst = instance_from_dict(d)
        for rule in RULES:
            s = plan(inst, rule)
            assert _greedy_status(inst, s), (seed, rule, s.info)
            assert s.solver == f"greedy:{rule}"
            groups += len(s.groups)
            if rule != "interleave":
                assert not s.groups and all(a.group is None for a in s.jobs)
    assert groups > 0  # interleave does form groups on these instances


def test_dl_and_rcpsp_families_verify():
    for fam, n, nodes in (("dl", 40, 3), ("rcpsp", 30, 1)):
        for seed in range(5):
            inst = instance_from_dict(generate(fam, n, nodes, seed))
            for rule in RULES:
                s = plan(inst, rule)
                assert _greedy_status(inst, s), (fam, seed, rule, s.info)


def test_srsf_backfills_the_short_job_without_strict_priority():
    # Strict priority is checked for every rule in test_conformance.py; without it, srsf
    # starts the smallest job first.
    d = base(
        [
            {"id": "lo1", "duration": 10, "gpus": 2, "release": 0, "priority": 0},
            {"id": "lo2", "duration": 1, "gpus": 1, "release": 0, "priority": 0},
            {"id": "hi", "duration": 50, "gpus": 2, "release": 0, "priority": 1},
        ],
        policy={"priority": "none"},
    )
    s = by_id(plan(instance_from_dict(d), "srsf"))
    assert s["lo2"].start == 0 and s["hi"].start > 0


def test_precedence_against_strict_priority_is_reported():
    # hi depends on lo; mid (between them) must start after hi and before lo: impossible.
    d = base(
        [
            {"id": "lo", "duration": 10, "gpus": 1, "priority": 0},
            {"id": "mid", "duration": 10, "gpus": 1, "priority": 1},
            {"id": "hi", "duration": 10, "gpus": 1, "priority": 2, "after": ["lo"]},
        ]
    )
    s = solve_greedy(instance_from_dict(d), "fifo", OPTS)
    assert s.status == "unknown" and not s.jobs
    assert "strict priority" in s.info["reason"]


def test_infeasible_deadline_reported_with_reason():
    d = base(
        [
            {"id": "a", "duration": 100, "gpus": 2},
            {"id": "b", "duration": 100, "gpus": 2, "deadline": 150},
        ]
    )
    for rule in ("fifo", "srsf", "interleave"):
        s = solve_greedy(instance_from_dict(d), rule, OPTS)
        if s.status == "feasible":  # b first meets its deadline (sjf order tie -> id a...)
            assert by_id(s)["b"].end <= 150
            continue
        assert s.status == "unknown" and s.jobs == ()
        # b first would meet it: missed in this order, not "cannot be met"
        assert "deadline 150 of job b missed in this order (it ends at 200)" in s.info["reason"]
    d["jobs"][1]["deadline"] = 50
    s = solve_greedy(instance_from_dict(d), "fifo", OPTS)
    assert s.status == "unknown" and "deadline 50" in s.info["reason"]


def test_horizon_reported():
    d = base(
        [{"id": "a", "duration": 100, "gpus": 2}, {"id": "b", "duration": 100, "gpus": 2}],
        horizon=150,
    )
    s = solve_greedy(instance_from_dict(d), "fifo", OPTS)
    assert s.status == "unknown" and "horizon" in s.info["reason"]


def test_deterministic():
    inst = instance_from_dict(generate("mixed", 20, 4, seed=11))
    for rule in RULES:
        a, b = solve_greedy(inst, rule, OPTS), solve_greedy(inst, rule, OPTS)
        assert (a.jobs, a.groups, a.status) == (b.jobs, b.groups, b.status)
        assert verify(inst, a) == []


def complementary(enabled: bool) -> dict[str, Any]:
    # One 8-GPU node and a queue of data-heavy (a2c) and GPU-heavy (bert) jobs of similar
    # length: interleaving pairs them.
    jobs = []
    for i in range(4):
        jobs.append({"id": f"a{i}", "model": "a2c", "gpus": 8, "iterations": 2000})
        jobs.append({"id": f"b{i}", "model": "bert", "gpus": 8, "iterations": 5800})
    return base(
        jobs,
        cluster={"nodes": [{"name": "v", "count": 1, "gpus": 8, "gpu_mem_gb": 32}]},
        interleaving={"enabled": enabled},
        policy={"priority": "none"},
    )


def test_interleave_groups_complementary_jobs_and_pays():
    inst = instance_from_dict(complementary(True))
    s = plan(inst, "interleave")
    assert s.groups and s.status == "feasible"
    members = {i for g in s.groups for i in g.jobs}
    assert all(by_id(s)[i].group is not None for i in members)
    solo = plan(inst, "srsf")
    assert sum(a.end for a in s.jobs) < sum(a.end for a in solo.jobs)
    assert solve(inst, "greedy", OPTS).solver == "greedy:interleave"  # the default rule


def test_never_groups_when_interleaving_disabled():
    inst = instance_from_dict(complementary(False))
    s = plan(inst, "interleave")
    assert not s.groups and all(a.group is None for a in s.jobs)
    assert solve(inst, "greedy", OPTS).solver == "greedy:srsf"


def test_speed_400_jobs_runs():
    # Not timed (shared machine): just a big instance end to end.
    inst = instance_from_dict(generate("dl", 400, 8, seed=2))
    s = plan(inst, "interleave")
    assert s.status == "feasible" and len(s.jobs) == 400


def test_a_stop_before_any_plan_returns_none() -> None:
    # SIGTERM sets `stop`: a greedy run of 20,000 mixed jobs on 8 nodes went on for
    # minutes after it; now each run ends at its next event
    import threading

    inst = instance_from_dict(generate("mixed", 40, 2, 3, elastic=True))
    stop = threading.Event()
    stop.set()
    # (the serial engine, capped by a work budget, is left to finish: engine "events")
    s = solve_greedy(inst, None, SolveOptions(stop=stop), engine="events")
    assert s.status == "unknown" and not s.jobs and s.info["reason"] == "interrupted"


def test_past_the_time_limit_elastic_count_choices_are_skipped() -> None:
    # each count choice is a whole greedy plan: past the limit, the first plan is kept
    inst = instance_from_dict(generate("mixed", 40, 2, 3, elastic=True))
    whole = run_verified(inst, "greedy", time_limit=60)
    cut = run_verified(inst, "greedy", time_limit=0)
    assert "variants" not in whole.info
    tried, _, total = cut.info["variants"].partition(" of ")
    assert tried == "1" and int(total) > 1


@pytest.mark.parametrize("interleave", [False, True])
def test_gpus_held_from_the_start_are_busy_gpus_not_scanned_reservations(
    monkeypatch: pytest.MonkeyPatch, interleave: bool
) -> None:
    """A reservation for nobody from the first release on (a live state's running job,
    `live.residual._held`) is booked as busy GPUs freed at its end (`Occupancy.held`) and never
    scanned, unlike the same reservation admitting a tenant no job has. Both plans keep
    off the held GPUs (R10); they may differ, as best fit now sees the true free count."""
    from dataclasses import replace

    from builders import admits, reservation

    import planner.solvers.greedy.occupancy as occupancy
    from planner.solvers.greedy.events import plan_in_order

    base = instance_from_dict(generate("dl", 40, 3, 4))
    n0, n1, n2 = (nd.name for nd in base.nodes[:3])

    def held(who: Any) -> Instance:
        return replace(
            base,
            reservations=(
                reservation("run-a", 0, 900, nodes=[n0], gpus=[0, 1, 2], for_=who),
                reservation("run-b", 0, 400, nodes=[n0], gpus=[2, 3], for_=who),
                reservation("whole", 0, 600, nodes=[n1], for_=who),
                reservation("later", 300, 2000, nodes=[n2], gpus=[1]),  # scanned either way
            ),
        )

    calls = 0
    real = occupancy.blocks

    def counted(*args: Any) -> bool:
        nonlocal calls
        calls += 1
        return real(*args)

    monkeypatch.setattr(occupancy, "blocks", counted)
    inst, scanned = held(admits()), held(admits(tenants=["nobody-has-it"]))
    n = len(inst.jobs)
    by_gpus = sorted(range(n), key=lambda i: (inst.jobs[i].gpus, i))
    for ranks in (list(range(n)), list(range(n))[::-1], [by_gpus.index(i) for i in range(n)]):
        calls = 0
        got = plan_in_order(inst, ranks, interleave, "total_weighted_jct")
        on_busy_gpus = calls
        calls = 0
        want = plan_in_order(scanned, ranks, interleave, "total_weighted_jct")
        assert calls > on_busy_gpus  # the held GPUs' reservations are scanned only there
        for res, where in ((got, inst), (want, scanned)):
            assert res.assignments is not None
            plan = Schedule(
                inst.name, "greedy", "feasible", tuple(res.assignments), tuple(res.groups)
            )
            assert verify(where, plan) == []


def test_grouping_in_limit_cuts_the_run_with_groups_not_the_plan_without() -> None:
    # `auto` asks for it: past the time limit (0 s: at once) the event-driven run with
    # groups ends at its first event and the plan without groups of the same order answers
    inst = instance_from_dict(complementary(True))
    kept = solve_greedy(inst, "interleave", OPTS, engine="events")
    assert kept.groups and kept.info["grouping"] == "kept"
    opts = SolveOptions(time_limit=0.0)
    cut = solve_greedy(inst, "interleave", opts, engine="events", grouping_in_limit=True)
    assert cut.status == "feasible" and not cut.groups
    assert cut.info["grouping"].startswith("cut")
    assert verify(inst, cut) == []
    solo = solve_greedy(inst, "srsf", OPTS, engine="events")
    assert [(a.id, a.start, a.end) for a in cut.jobs] == [(a.id, a.start, a.end) for a in solo.jobs]
