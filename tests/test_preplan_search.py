"""The preemptive planner's search machinery: Muri's groups re-formed for throughput
(planner.solvers.preempt.regroup), engine runs resumed from snapshots, and the verifier's
last word on the incumbent (planner.solvers.preempt.search)."""

from __future__ import annotations

import math
import random
import threading

import pytest
from builders import make_instance, profile
from test_preplan import small, value

import planner.solvers.preempt.regroup as regroup_module
import planner.solvers.preempt.search as search
from planner.instance import Instance, Interleaving, Job, NodeGroup, Preemption
from planner.schedule import schedule_from_dict
from planner.simulate import simulate
from planner.simulate.model import SimJob
from planner.simulate.output import result_to_schedule_dict
from planner.solvers.lanes import lanes
from planner.solvers.options import Progress, SolveOptions
from planner.solvers.preempt import solve_preempt
from planner.solvers.preempt.policy import KeyedMuri, Keys, Memo
from planner.solvers.preempt.regroup import ADMIT_GAIN, Rates, admit, regroup
from planner.verify import verify

# Each model is bound by another stage: two of one kind share a node badly.
BOUND = {"D": (1000, 900, 50, 50), "G": (1000, 50, 900, 50), "N": (1000, 50, 50, 900)}


def three_kinds() -> Instance:
    jobs = [Job(f"{m}{i}", 8, m, 100) for m in "DGN" for i in range(4)]
    return make_instance(
        jobs,
        [NodeGroup("n", 4, 8)],
        [profile(m, {8: st}) for m, st in BOUND.items()],
        interleaving=Interleaving(True, 3),
        preemption=Preemption(True, 0),
        priority_policy="none",
    )


def sim(job: Job) -> SimJob:
    return SimJob(job, 0, 100.0, 100.0, 0, None)


def total(rates: Rates, packs: list[list[SimJob]]) -> float:
    out = 0.0
    for pk in packs:
        t = rates.total(pk)
        assert t is not None, f"inadmissible group {[m.id for m in pk]}"
        out += t
    return out


def test_regroup_mixes_bottlenecks_a_matching_left_together():
    inst = three_kinds()
    rates = Rates(inst)
    by_id = {j.id: sim(j) for j in inst.jobs}
    # two of a kind in every group: they queue for the same busy stage
    names = [["D0", "D1", "G0"], ["G1", "G2", "N0"], ["N1", "N2", "D2"]]
    packs = [[by_id[a] for a in g] for g in names]
    after = regroup(rates, packs, 3)
    assert total(rates, after) > total(rates, packs) + 1.0
    assert sorted(len(g) for g in after) == [3, 3, 3]
    for g in after:  # each group ends with one job of each kind (the best a group can do)
        assert sorted(m.job.model or "" for m in g) == ["D", "G", "N"]


def _partition(rates: Rates, jobs: list[SimJob], rng: random.Random) -> list[list[SimJob]]:
    """A random partition of `jobs` into admissible groups of 1 to 3."""
    while True:
        rng.shuffle(jobs)
        packs, i = [], 0
        while i < len(jobs):
            n = rng.randint(1, 3)
            packs.append(jobs[i : i + n])
            i += n
        if all(rates.total(pk) is not None for pk in packs):
            return packs


@pytest.mark.parametrize("seed", range(6))
def test_regroup_keeps_jobs_and_group_count_and_never_lowers_throughput(seed):
    inst = three_kinds()
    rates = Rates(inst)
    packs = _partition(rates, [sim(j) for j in inst.jobs], random.Random(seed))
    before = total(rates, packs)
    after = regroup(rates, packs, 3)
    assert len(after) == len(packs)
    assert sorted(m.id for g in after for m in g) == sorted(m.id for g in packs for m in g)
    assert all(1 <= len(g) <= 3 for g in after)
    assert total(rates, after) >= before - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_regroup_works_out_each_pair_of_group_kinds_once(seed, monkeypatch):
    # The first improving step between two groups depends only on their members' models
    # in order (`Rates.step`): worked out once per pair of kinds, then looked up (on
    # trace4.csv's first 800 jobs, 6.2 million steps; regroup.py). The same groups as
    # without the cache, and a second search of the same groups works out nothing anew.
    inst = three_kinds()
    jobs = [sim(j) for j in inst.jobs] * 3  # 36 members: kinds of groups repeat
    packs = _partition(Rates(inst), jobs, random.Random(seed))
    worked: list[tuple[object, ...]] = []
    first_step = regroup_module._first_step

    def counted(rates: Rates, *key: object) -> object:
        worked.append(key)
        return first_step(rates, *key)

    monkeypatch.setattr(regroup_module, "_first_step", counted)
    rates = Rates(inst)
    after = regroup(rates, packs, 3)
    assert worked and len(worked) == len(set(worked))
    n = len(worked)
    assert [[m.id for m in g] for g in regroup(rates, packs, 3)] == [
        [m.id for m in g] for g in after
    ]
    assert len(worked) == n
    fresh = Rates(inst)
    monkeypatch.setattr(Rates, "step", lambda self, *key: first_step(self, *key))
    uncached = regroup(fresh, packs, 3)
    assert [[m.id for m in g] for g in uncached] == [[m.id for m in g] for g in after]
    assert total(rates, after) >= total(rates, packs) - 1e-9


def test_admit_gives_a_members_place_to_a_waiting_job_that_mixes_better():
    inst = three_kinds()
    rates = Rates(inst)
    by_id = {j.id: sim(j) for j in inst.jobs}
    group = [by_id["G0"], by_id["G1"], by_id["D0"]]  # two GPU-bound jobs queue for the GPU
    waiting = {8: [by_id["G2"], by_id["N0"], by_id["D1"]]}
    after = admit(rates, [group], waiting)
    assert total(rates, after) > total(rates, [group]) + ADMIT_GAIN
    assert sorted(m.job.model or "" for m in after[0]).count("G") == 1
    assert [m.id for m in waiting[8]] == ["G2", "N0", "D1"]  # the caller's list is kept


def test_admit_leaves_groups_alone_when_no_waiting_job_helps():
    inst = three_kinds()
    rates = Rates(inst)
    by_id = {j.id: sim(j) for j in inst.jobs}
    group = [by_id["D0"], by_id["G0"], by_id["N0"]]  # already one of each kind
    after = admit(rates, [group, [by_id["D1"]]], {8: [by_id["G1"], by_id["N1"], by_id["D2"]]})
    assert [[m.id for m in g] for g in after] == [["D0", "G0", "N0"], ["D1"]]


@pytest.mark.parametrize("seed", range(6))
def test_admit_keeps_group_sizes_never_lowers_a_group_and_runs_each_job_once(seed):
    inst = three_kinds()
    rates = Rates(inst)
    rng = random.Random(seed)
    jobs = [sim(j) for j in inst.jobs]
    rng.shuffle(jobs)
    packs = [jobs[0:3], jobs[3:5], jobs[5:6]]
    waiting = {8: jobs[6:]}
    after = admit(rates, packs, waiting)
    assert [len(g) for g in after] == [3, 2, 1]
    ids = [m.id for g in after for m in g]
    assert len(set(ids)) == len(ids)
    assert set(ids) <= {m.id for m in jobs}
    for old, new in zip(packs, after, strict=True):
        assert (rates.total(new) or 0.0) >= (rates.total(old) or 0.0) - 1e-9


@pytest.mark.parametrize("regroup_on", [False, True])
def test_a_resumed_engine_run_equals_the_run_from_the_start(regroup_on):
    inst = small(releases=True, reservations=False, multi_node=False)
    memo = Memo(inst)
    base = Keys(regroup=regroup_on)
    snaps: list = []
    simulate(inst, KeyedMuri(base, memo), record=snaps, every=2)
    assert len(snaps) > 2
    later = [j for j in inst.jobs if j.release >= 30]
    rng = random.Random(3)
    keys = Keys(regroup=regroup_on, mult={j.id: math.exp(rng.gauss(0, 1)) for j in later})
    first = min(j.release for j in later)
    snap = [x for x in snaps if x.t <= first][-1]
    assert snap.t > 0  # the resumed run really skips a part
    full = simulate(inst, KeyedMuri(keys, memo))
    resumed = simulate(inst, KeyedMuri(keys, memo), start=snap)
    assert resumed.segments == full.segments
    s = schedule_from_dict(result_to_schedule_dict(inst, resumed))
    assert verify(inst, s) == []


def test_the_search_resumes_runs_and_its_plan_verifies(monkeypatch):
    # this lane's search over keys alone (the weighted policy's lane: test_weighted.py)
    monkeypatch.setattr(search, "eligible", lambda inst: False)
    inst = small(releases=True, reservations=False, multi_node=False)
    s = solve_preempt(inst, SolveOptions(time_limit=3, seed=2))
    assert verify(inst, s) == []
    info = s.info["preempt"]
    assert info["resumed"] >= 1 and info["runs"] > info["resumed"]


@pytest.mark.skipif(lanes(2) < 2, reason="needs fork and two cores")
def test_a_second_lane_searches_other_random_keys_and_its_plan_verifies():
    # with two workers a forked child tries random keys from another seed; its settled
    # plan comes back (counted) and the better of the two lanes is the result
    inst = small(releases=True, reservations=False, multi_node=False)
    two = solve_preempt(inst, SolveOptions(time_limit=3, seed=2, workers=2))
    assert verify(inst, two) == []
    info = two.info["preempt"]
    assert info["second_lane_runs"] >= 1
    start = solve_preempt(inst, SolveOptions(time_limit=3), search=False)
    assert verify(inst, start) == [] and value(inst, two) <= value(inst, start)
    one = solve_preempt(inst, SolveOptions(time_limit=3, seed=2, workers=1))
    assert verify(inst, one) == [] and "second_lane_runs" not in one.info["preempt"]


def test_an_incumbent_the_verifier_rejects_gives_way_to_the_one_before(monkeypatch):
    monkeypatch.setattr(search, "eligible", lambda inst: False)  # as above
    inst = small(releases=True, reservations=False, multi_node=False)
    real = search.verify
    start = solve_preempt(inst, SolveOptions(time_limit=60), search=False)
    first = value(inst, start)
    checked: list[float] = []
    stop = threading.Event()

    def strict(instance, sched):
        # reject every plan better than the start, as if the engine had erred in it
        v = value(instance, sched)
        checked.append(v)
        return ["made up"] if v < first - 1e-9 else real(instance, sched)

    def better_found(p: Progress) -> None:
        # a stop, as Ctrl-C gives, once the search holds a better plan (not a short time
        # limit: on a slow machine the search might find none in it)
        if p.incumbent is not None and p.incumbent < first - 1e-9:
            stop.set()

    monkeypatch.setattr(search, "verify", strict)
    s = solve_preempt(inst, SolveOptions(time_limit=60, seed=1, progress=better_found, stop=stop))
    assert real(inst, s) == [] and value(inst, s) == first
    assert any(v < first for v in checked)  # a better plan was found, then refused
    assert s.info["preempt"]["rejected"] >= 1


def test_a_stop_before_the_start_cuts_every_run_and_the_greedy_plan_answers():
    # Every engine run, the first start's too, ends at the stop (policy.py, Deadline):
    # a stop or an expired limit returns at once with the greedy plan, made before them.
    # The other starts are not begun after it (a replan of 2,000 jobs scored and cut
    # them all and answered Ctrl-C 6.5 s late).
    inst = small(releases=True, reservations=False, multi_node=False)
    opts = SolveOptions(time_limit=60)
    opts.stop.set()  # as Ctrl-C does
    s = solve_preempt(inst, opts)
    info = s.info["preempt"]
    assert verify(inst, s) == [] and s.jobs
    assert info["cut"] == info["runs"] == 1  # the first start began and was cut
    assert info["found_by"].startswith("greedy") and info["start_objective"].keys() == {"greedy"}
