"""`plan[:SOLVER]` on a preemptive instance (contract §10; `planner.solvers.rolling` and
`forecast`): each decision plans the known jobs with preemption, plus phantom copies of
the jobs released lately as a forecast, and runs what the plan runs now. Every realized
schedule passes the verifier."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from builders import make_instance, place, profile

from planner.instance import Instance, Interleaving, Job, NodeGroup, Preemption
from planner.read import instance_from_dict
from planner.schedule import Assignment, Schedule, Segment, schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.simulate.forecast import PHANTOM, original, phantoms, remaining_jobs, starts_now
from planner.simulate.model import SimJob, View
from planner.solvers.preempt.policy import REGROUP, KeyedMuri
from planner.solvers.rolling import RollingHorizon
from planner.verify import verify

PROFILES = [
    profile("A", {1: (1000, 800, 100, 50), 2: (1000, 800, 100, 50)}),
    profile("B", {1: (1000, 50, 800, 100), 2: (1000, 50, 800, 100)}),
]


DEMO = Path(__file__).resolve().parent.parent / "instances" / "demo.json"


def cluster(*jobs: Job, nodes: int = 1, gpus: int = 2, restart: int = 2) -> Instance:
    return make_instance(
        jobs,
        [NodeGroup("n", nodes, gpus)],
        PROFILES,
        interleaving=Interleaving(True, 2),
        preemption=Preemption(True, restart),
    )


def arrivals() -> Instance:
    """Jobs of both models arriving over time on two 2-GPU nodes."""
    jobs = [
        Job("a1", 2, "A", 40),
        Job("b1", 2, "B", 60, release=3),
        Job("a2", 1, "A", 30, release=5),
        Job("b2", 1, "B", 50, release=5),
        Job("a3", 2, "A", 20, release=8),
        Job("b3", 1, "B", 15, release=12, after=("a1",)),
        Job("a4", 1, "A", 25, release=30),
        Job("b4", 2, "B", 35, release=31),
    ]
    return cluster(*jobs, nodes=2)


def sim(job: Job, released: int, left: float | None = None) -> SimJob:
    rest = float(job.iterations or 0) if left is None else left
    return SimJob(job, released, rest, rest, 0, None)


def realize(inst: Instance, pol: RollingHorizon) -> Any:
    res = simulate(inst, pol)
    assert verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res))) == []
    return res


def test_phantoms_repeat_only_the_past_window_shifted_ahead() -> None:
    inst = cluster(
        Job("old", 1, "A", 10, release=1),
        Job("mid", 1, "A", 20, release=6),
        Job("now", 2, "B", 30, release=10),
        Job("late", 1, "B", 40, release=11),  # released after now: never seen
        Job("child", 1, "A", 5, release=7, after=("old",)),
    )
    view = View(inst, 10, (), {})
    got = phantoms(view, 8, 10, repeats=2)
    assert [(j.id, j.release, j.iterations, j.gpus) for j in got] == [
        (f"{PHANTOM}1~now", 18, 30, 2),
        (f"{PHANTOM}1~mid", 14, 20, 1),
        (f"{PHANTOM}2~now", 26, 30, 2),
        (f"{PHANTOM}2~mid", 22, 20, 1),
    ]
    assert [j.id for j in phantoms(view, 8, 3, repeats=2)] == [j.id for j in got[:3]]
    assert [j.id for j in phantoms(view, 8, 1)] == [f"{PHANTOM}1~now"]  # the latest first
    assert phantoms(view, 0, 10) == []


def test_remaining_jobs_start_now_with_the_work_left() -> None:
    j = Job("x", 1, "A", 50, release=2, after=("y",), deadline=90)
    (r,) = remaining_jobs(View(cluster(j), 20, (), {}), [sim(j, 2, left=12.3)])
    assert (r.release, r.iterations, r.after, r.deadline) == (20, 13, (), None)


def test_the_decision_is_the_plans_segments_at_now_of_known_jobs() -> None:
    a, b, c = Job("a", 1, "A", 10), Job("b", 1, "B", 10), Job("c", 1, "A", 10)
    pl = (place("n-0", 0),)
    sched = Schedule(
        "t",
        "x",
        "feasible",
        (
            Assignment("a", 5, 20, pl, "g1", (Segment(5, 9, pl, "g1"), Segment(12, 20, pl))),
            Assignment("b", 5, 9, pl, "g1"),
            Assignment("c", 9, 12, pl),
            Assignment(f"{PHANTOM}a", 5, 8, pl),
        ),
    )
    known = [sim(a, 0), sim(b, 0), sim(c, 0)]
    assert [[s.id for s in g] for g in starts_now(sched, 5, known)] == [["a", "b"]]
    assert [[s.id for s in g] for g in starts_now(sched, 12, known)] == [["a"]]


def test_an_elastic_job_starts_at_the_count_the_plan_gives_it() -> None:
    # c runs at 2 GPUs; the plan resumes it at 1 in a group with b: it was started at 2, in
    # a group of members of different counts (R3, R5; seen on the demo with preemption)
    b = Job("b", 1, "B", 10)
    c = replace(Job("c", 2, "A", 10), gpu_counts=(2, 1))
    pl = (place("n-0", 1),)
    sched = Schedule(
        "t", "x", "feasible", (Assignment("b", 5, 20, pl, "g1"), Assignment("c", 5, 20, pl, "g1"))
    )
    running = replace(sim(c, 0), run=3, since=0)
    groups = starts_now(sched, 5, [sim(b, 0), running])
    assert [[(s.id, s.job.gpus) for s in g] for g in groups] == [[("b", 1), ("c", 1)]]


def test_the_demo_with_preemption_plans_elastic_jobs_validly() -> None:
    doc = json.loads(DEMO.read_text())
    doc["policy"]["preemption"] = {"enabled": True, "restart": 30}
    inst = instance_from_dict(doc)
    assert inst.elastic
    res = realize(inst, RollingHorizon("greedy", budget=0.3))
    assert res.info["preemptions"] > 0


class Recorder(RollingHorizon):
    """Keeps every instance it plans."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.seen: list[Instance] = []

    def _solve(self, inst: Instance) -> Schedule:
        self.seen.append(inst)
        return super()._solve(inst)


@pytest.mark.parametrize("solver", ["auto", "greedy", "greedy:srsf"])
def test_each_plan_is_preemptive_and_forecasts_only_from_the_past(solver: str) -> None:
    inst = arrivals()
    pol = Recorder(solver, budget=0.2, window=10)
    realize(inst, pol)
    assert pol.seen and all(p.preemption.enabled for p in pol.seen)
    for p in pol.seen:
        now = min(j.release for j in p.jobs if not j.id.startswith(PHANTOM))
        ghosts = [j for j in p.jobs if j.id.startswith(PHANTOM)]
        assert all(now < j.release <= now + 10 for j in ghosts)
        originals = [inst.job_by_id[original(j.id) or ""] for j in ghosts]
        assert all(o.release <= now for o in originals)  # nothing from the future
    assert any(j.id.startswith(PHANTOM) for p in pol.seen for j in p.jobs)


def test_without_a_window_the_plan_holds_only_known_jobs() -> None:
    pol = Recorder("greedy", budget=0.2, window=0)
    realize(arrivals(), pol)
    assert not any(j.id.startswith(PHANTOM) for p in pol.seen for j in p.jobs)


def test_a_short_arrival_preempts_the_long_job_as_the_plan_says() -> None:
    """One GPU: the preemptive plan runs the short job first, so the long one is stopped
    and resumed after it, paying its restart."""
    inst = make_instance(
        [Job("long", 1, "A", 100), Job("short", 1, "A", 10, release=5)],
        [NodeGroup("n", 1, 1)],
        PROFILES,
        preemption=Preemption(True, 2),
    )
    res = realize(inst, RollingHorizon("auto", budget=0.2, trust=0.0))
    assert [(s.start, s.end) for s in res.segments["short"]] == [(5, 15)]
    assert [(s.start, s.end) for s in res.segments["long"]] == [(0, 5), (15, 15 + 2 + 95)]


class PlanKeeper(RollingHorizon):
    """Keeps every plan it makes."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.made: list[Schedule] = []

    def _solve(self, inst: Instance) -> Schedule:
        sched = super()._solve(inst)
        self.made.append(sched)
        return sched


@pytest.mark.parametrize("solver", ["greedy", "greedy:srsf"])
def test_a_followed_plan_is_what_the_cluster_runs(solver: str) -> None:
    """Every job known at time 0 and no forecast: the plan made then holds to the end, so
    it is made once and the realized segments are the plan's."""
    jobs = [Job(f"{m}{i}", g, m, n) for i, (m, g, n) in enumerate(
        [("A", 2, 40), ("B", 2, 60), ("A", 1, 30), ("B", 1, 50), ("A", 2, 20), ("B", 1, 15)]
    )]  # fmt: skip
    inst = cluster(*jobs, nodes=2)
    pol = PlanKeeper(solver, budget=0.2, window=0, follow=True, trust=0.0)
    res = realize(inst, pol)
    assert len(pol.made) == 1 < res.info["decisions"]
    plan = {a.id: [(p.start, p.end) for p in a.pieces()] for a in pol.made[0].jobs}
    assert {a: [(s.start, s.end) for s in segs] for a, segs in res.segments.items()} == plan


def test_following_plans_again_when_a_job_arrives() -> None:
    inst = arrivals()
    follow = PlanKeeper("greedy", budget=0.2, window=0, follow=True, trust=0.0)
    every = PlanKeeper("greedy", budget=0.2, window=0, trust=0.0)
    realize(inst, every)
    realize(inst, follow)
    releases = {j.release for j in inst.jobs if not j.after}
    assert len(releases) <= len(follow.made) < len(every.made)


def test_a_plan_not_trusted_leaves_the_decision_to_the_regroup_policy() -> None:
    """With a trust share no plan can meet, every decision is the planner's own online rule
    (Muri's matching, groups re-formed for throughput): the realized schedule is its."""
    inst = arrivals()
    res = realize(inst, RollingHorizon("greedy", budget=0.2, window=0, trust=0.99))
    base = simulate(inst, KeyedMuri(REGROUP))
    assert res.segments == base.segments


class Stopped(RollingHorizon):
    """Plans as if the time limit had passed before the planner began: every engine start
    is cut and the greedy plan (no preemption) answers."""

    def _solve(self, inst: Instance) -> Schedule:
        from planner.solvers import SolveOptions, solve

        opts = SolveOptions(time_limit=self.budget, seed=0, workers=1)
        opts.stop.set()
        sched = solve(inst, self.solver, opts)
        assert sched.info["preempt"]["found_by"].startswith("greedy")
        return sched


def test_a_plan_whose_engine_starts_were_cut_is_not_trusted() -> None:
    """Nothing shows such a plan beats the planner's own online rule (rolling.gains), so
    the rule decides: the realized schedule is the regroup policy's, not the plan's."""
    inst = arrivals()
    res = realize(inst, Stopped("auto", budget=0.2, window=0, trust=0.2))
    base = simulate(inst, KeyedMuri(REGROUP))
    assert res.segments == base.segments
    trusting = realize(inst, Stopped("auto", budget=0.2, window=0, trust=0.0))
    assert trusting.segments != base.segments  # the greedy plans would have run otherwise
