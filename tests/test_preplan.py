"""Planning with preemption (planner.solvers.preempt) and Muri's grouping kept to the end
without preemption (planner.solvers.preempt.kept): every schedule verifies, the search is
never worse than its starts, and auto / greedy choose them as the README says."""

from __future__ import annotations

from dataclasses import replace

import pytest
from builders import make_instance, profile, reservation

from planner.generate import generate
from planner.instance import Instance, Interleaving, Job, NodeGroup, Preemption
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.schedule import Schedule, schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.simulate.packer import Packer
from planner.solvers.dispatch import solve
from planner.solvers.greedy import solve_greedy
from planner.solvers.options import SolveOptions
from planner.solvers.preempt import solve_preempt
from planner.solvers.preempt.batch import is_batch
from planner.solvers.preempt.filler import Filler
from planner.solvers.preempt.kept import kept_plan
from planner.solvers.preempt.policy import Keys
from planner.verify import verify

# A is data-bound, B GPU-bound: they interleave well (contract §4).
PROFILES = [
    profile("A", {g: (1000, 800, 100, 50) for g in (1, 2, 4, 8)}),
    profile("B", {g: (1000, 50, 800, 100) for g in (1, 2, 4, 8)}),
]


def small(releases: bool, reservations: bool, multi_node: bool) -> Instance:
    jobs = []
    for i in range(10):
        gpus = 8 if multi_node and i % 5 == 0 else (1, 2, 4)[i % 3]
        rel = 7 * i if releases else 0
        jobs.append(Job(f"j{i}", gpus, "AB"[i % 2], 40 + 25 * (i % 4), release=rel))
    res = (reservation("m", 30, 60, nodes=("n-0",)),) if reservations else ()
    return make_instance(
        jobs,
        [NodeGroup("n", 2, 4)],
        PROFILES,
        interleaving=Interleaving(True, 4),
        preemption=Preemption(True, 3),
        reservations=res,
        priority_policy="none",
    )


def value(inst: Instance, s: Schedule) -> float:
    return objective_values(inst, s, inst.objective)[inst.objective[0]]


CASES = [(r, v, m) for r in (False, True) for v in (False, True) for m in (False, True)]


@pytest.mark.parametrize(("releases", "reservations", "multi_node"), CASES)
def test_preemptive_plans_verify_and_never_lose_to_their_starts(releases, reservations, multi_node):
    inst = small(releases, reservations, multi_node)
    # the same time limit: below batch.BATCH_MIN_LIMIT a batch gets no batch starts
    start = solve_preempt(inst, SolveOptions(time_limit=1.5), search=False)
    best = solve_preempt(inst, SolveOptions(time_limit=1.5, seed=1))
    for s in (start, best):
        assert s.status == "feasible" and verify(inst, s) == []
    assert value(inst, best) <= value(inst, start)
    info = best.info["preempt"]
    assert info["runs"] >= 1 and value(inst, best) <= min(info["start_objective"].values())


def test_preemption_lets_the_planner_regroup():
    # a long job holds the node; a short one arrives: pairing them at once (the long one
    # stops, then restarts in the group) beats making the short one wait
    jobs = [Job("long", 4, "A", 2000), Job("short", 4, "B", 30, release=5)]
    inst = make_instance(
        jobs,
        [NodeGroup("n", 1, 4)],
        PROFILES,
        interleaving=Interleaving(True, 2),
        preemption=Preemption(True, 3),
        priority_policy="none",
    )
    s = solve_preempt(inst, SolveOptions(time_limit=60), search=False)
    assert s.solver == "preempt:muri-s"
    assert any(len(a.segments) > 1 for a in s.jobs)  # a job was stopped and resumed
    assert verify(inst, s) == []


def test_without_interleaving_the_engine_runs_srsf_p():
    inst = replace(small(True, False, False), interleaving=Interleaving(False, 1))
    s = solve(inst, "greedy", SolveOptions(time_limit=10))
    assert s.info["preempt"]["start"].startswith("engine srsf-p")
    assert s.status == "feasible" and verify(inst, s) == []


def test_auto_picks_the_preemptive_planner_when_preemption_is_on():
    inst = small(True, True, False)
    s = solve(inst, "auto", SolveOptions(time_limit=2))
    # the preemptive planner ran; on so small an instance CP-SAT without segments gets
    # the rest of the limit and may do better (auto.SMALL_PREEMPTIVE_CPSAT_SHARE), which
    # depends on how far each got in its share of the 2 s
    assert s.info["auto"]["why"].startswith("preemption is enabled")
    chose = s.info["auto"]["chose"]
    assert chose == "cpsat" or (chose == "preempt" and "preempt" in s.info)
    assert verify(inst, s) == []
    off = replace(inst, preemption=Preemption(False, 0))
    s2 = solve(off, "auto", SolveOptions(time_limit=2))
    assert s2.info["auto"]["chose"] != "preempt" and "preempt" not in s2.info
    assert verify(off, s2) == []


def test_generated_preemptive_instances_through_greedy_and_auto():
    for family in ("dl", "mixed"):
        inst = instance_from_dict(generate(family, 40, 3, 5, preemption=True))
        for spec in ("greedy", "auto"):
            s = solve(inst, spec, SolveOptions(time_limit=2))
            assert s.status == "feasible" and verify(inst, s) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_groups_verify_without_preemption(seed):
    inst = instance_from_dict(generate("dl", 60, 4, seed))
    assert not inst.preemption.enabled and inst.interleaving.enabled
    kept = kept_plan(inst, SolveOptions())
    assert kept is not None and verify(inst, kept) == []
    assert all(len(a.segments) <= 1 for a in kept.jobs)
    plan = solve(inst, "greedy", SolveOptions())
    assert verify(inst, plan) == []
    listed = solve_greedy(inst, "interleave", SolveOptions())  # the list plan alone
    assert verify(inst, listed) == []
    assert value(inst, plan) <= min(value(inst, kept), value(inst, listed))
    assert plan.info["kept"]["solver"].startswith("muri-kept")
    assert plan.solver == "greedy:interleave"
    assert plan.info["kept"]["returned"] == (value(inst, kept) < value(inst, listed))


def test_kept_groups_form_when_the_queue_overloads_the_cluster():
    jobs = [Job(f"j{i}", 4, "AB"[i % 2], 200) for i in range(8)]
    inst = make_instance(jobs, [NodeGroup("n", 1, 4)], PROFILES, interleaving=Interleaving(True, 2))
    kept = kept_plan(inst, SolveOptions())
    assert kept is not None and kept.groups and verify(inst, kept) == []


def test_auto_above_the_engine_size_limit_plans_greedy_and_improvement(monkeypatch):
    import planner.solvers.auto as auto

    monkeypatch.setattr(auto, "SRSF_MAX_JOBS", 5)
    inst = small(True, False, False)
    s = solve(inst, "auto", SolveOptions(time_limit=1))
    assert s.info["auto"]["chose"] != "preempt" and "preempt" not in s.info
    assert s.status == "feasible" and verify(inst, s) == []


def test_fillers_and_the_packer_keep_groups_within_gpu_memory():
    # Every member needs 10 GB on each of its GPUs and the GPUs hold 25 GB (contract R7):
    # two may share them, three may not, however much slack the fillers are given.
    profiles = [replace(p, gpu_mem_gb=10.0) for p in PROFILES]
    jobs = [Job(f"j{i}", 4, "AB"[i % 2], 100 + 10 * i) for i in range(6)]
    inst = make_instance(
        jobs,
        [NodeGroup("n", 1, 4, gpu_mem_gb=25)],
        profiles,
        interleaving=Interleaving(True, 4),
        preemption=Preemption(True, 3),
        priority_policy="none",
    )
    s = schedule_from_dict(result_to_schedule_dict(inst, simulate(inst, Filler(Keys(), 10.0))))
    assert verify(inst, s) == []
    # a label's members all start together and only leave (contract §8): its size is the most
    # jobs that ever shared the GPUs under it
    assert max(len(g.jobs) for g in s.groups) == 2
    packer = Packer(inst, 0)
    assert packer.place([jobs[0], jobs[1], jobs[2]], 500) is None
    assert packer.place([jobs[0], jobs[1]], 500) is not None


def test_batch_starts_only_where_the_batch_plan_models_the_rules():
    # Every release at 0: a batch. The mixed family's priorities, dependencies, pools and
    # reservations are not in `partition.Batcher`'s model: its plans left jobs waiting in
    # the engine (a failed start) and used up the time, so there are no batch starts.
    docs = {f: generate(f, 40, 4, 1, preemption=True) for f in ("dl", "mixed")}
    for doc in docs.values():
        for j in doc["jobs"]:
            j["release"] = 0
    dl, mixed = (instance_from_dict(docs[f]) for f in ("dl", "mixed"))
    assert is_batch(dl) and not is_batch(mixed)
    for inst in (dl, mixed):
        s = solve_preempt(inst, SolveOptions(time_limit=6), search=False)
        assert verify(inst, s) == [] and s.info["preempt"]["failed"] == 0
        assert ("engine batch" in s.info["preempt"]["start"]) == (inst is dl)
