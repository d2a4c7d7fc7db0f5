"""How much work Muri's grouping kept to the end (`planner.solvers.preempt.kept`) and the
matching it shares with `muri-s`/`muri-l` do: counted, not timed. What depends only on the
instance is worked out once for the three engine runs of `kept_plan`; a waiting job's order
key once per view of it; a pack that cannot fit does not work out how long its run must
be clear; the matching asks each pair of types once per solve. The shortcuts give the
same answers as the plain formulas they replace (`slot_cycle`, the R9 gate)."""

from __future__ import annotations

import random
from dataclasses import replace

from builders import make_instance, profile, reservation

import planner.simulate.muri as muri
import planner.simulate.policies as policies
from planner.durations import slot_cycle
from planner.generate import generate
from planner.instance import Interleaving, Job, NodeGroup
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.simulate.matching import TypeMatcher
from planner.simulate.priority import PriorityGate
from planner.solvers.options import SolveOptions
from planner.solvers.preempt.kept import _Keyed, kept_plan
from planner.solvers.preempt.policy import Keys
from planner.verify import verify

A = profile("A", {1: (1000, 800, 100, 50), 2: (600, 450, 60, 50)})
B = profile("B", {1: (1000, 100, 800, 50), 2: (600, 60, 450, 50)})


def assert_verified(inst, res) -> None:
    assert verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res))) == []


def test_the_kept_runs_work_out_each_matching_weight_once(monkeypatch):
    # the weight of a group depends only on its models and GPU count (`_used_ratio`): the
    # three runs of kept_plan share one memo, so no (count, models) is worked out twice;
    # two jobs of one model and count share an entry, another count has its own
    asked = []

    def counted(inst, gpus, models):
        asked.append((gpus, models))
        return used_ratio(inst, gpus, models)

    used_ratio = muri._used_ratio
    monkeypatch.setattr(muri, "_used_ratio", counted)
    jobs = [Job(f"j{i:02d}", 1 + i % 2, "AB"[i // 2 % 2], 50 + 7 * i) for i in range(24)]
    inst = make_instance(jobs, [NodeGroup("n", 2, 4)], [A, B], interleaving=Interleaving(True, 2))
    plan = kept_plan(inst, SolveOptions())
    assert plan is not None and plan.groups and verify(inst, plan) == []
    assert asked and len(asked) == len(set(asked))
    assert {g for g, _ in asked} == {1, 2}  # one entry per count for the same models
    assert len(asked) <= 2 * 3  # AA, AB, BB at each of the two counts


def test_a_waiting_job_is_keyed_once_per_view(monkeypatch):
    # a waiting job's view is the same object from one decision to the next, and so is its
    # key: before, every decision keyed every waiting job again
    keyed = []
    key = Keys.key

    def counted(self, s):
        keyed.append(s.id)
        return key(self, s)

    monkeypatch.setattr(Keys, "key", counted)
    inst = instance_from_dict(generate("dl", 60, 2, 3))
    res = simulate(inst, _Keyed(0.5))
    assert_verified(inst, res)
    assert res.info["decisions"] > 10
    # kept runs never stop: a job is seen waiting in one view, from release to start
    assert len(keyed) == len(inst.jobs) == len(set(keyed))


def test_a_pack_that_cannot_fit_does_not_work_out_its_end(monkeypatch):
    # Jobs of an explicit duration never group, so each decision's candidates outnumber the
    # free GPUs; with a reservation the packer reads how long a run must be clear (`until`),
    # but only for the runs that can still fit, not for every candidate left over
    calls = []
    until = policies.until

    def counted(view, members, preemptive=True):
        calls.append(view.now)
        return until(view, members, preemptive)

    monkeypatch.setattr(policies, "until", counted)
    jobs = [Job(f"j{i:02d}", 1, duration=5 + i) for i in range(30)]
    inst = make_instance(
        jobs,
        [NodeGroup("n", 1, 2)],
        interleaving=Interleaving(True, 4),
        reservations=(reservation("m", 10**6, 10**6 + 1, nodes=["n-0"]),),
    )
    res = simulate(inst, _Keyed(1.0))
    assert_verified(inst, res)
    # each start asks at most twice: when it becomes a candidate and when it is placed
    assert 0 < len(calls) <= 2 * len(jobs)


def test_the_matching_asks_each_pair_of_types_once_per_solve():
    asked = []

    def weight(a, b):
        asked.append((a, b))
        return 0.0 if a == b == "c" else 1.0 + 0.01 * ("abc".index(a) + "abc".index(b))

    types = ["a", "b", "c"] * 8
    pairs = TypeMatcher(weight).pairs(types)
    assert sorted(i for p in pairs for i in p) == list(range(len(types)))
    assert len(asked) == len(set(asked)) <= 9
    assert sum(len(p) == 2 for p in pairs) == 12  # everything pairs: no c-c edge is needed


def _slot_cycle_plain(order):
    """contract §4's recurrence as written first: the whole list, `max` at each step."""
    k = len(order)
    d, g, n = [s[0] for s in order], [s[1] for s in order], [s[2] for s in order]
    f = [0.0] * 161
    for i in range(160):
        best = f[i]
        if (i + 1) % 4 < k:
            best = max(best, f[i] + n[(i + 1) % 4])
        if (i + 2) % 4 < k:
            best = max(best, f[i] + g[(i + 2) % 4])
        if i >= 1 and (i + 3) % 4 < k:
            best = max(best, f[i - 1] + d[(i + 3) % 4])
        f[i + 1] = best
    return (f[160] - f[80]) / 20


def test_slot_cycle_is_the_plain_recurrence_to_the_bit():
    rnd = random.Random(7)
    for trial in range(3000):
        values = [0.0, 0.1, 0.2, 0.3, 1e-9, 7.0, 1e6] if trial % 2 else None
        order = [
            tuple(rnd.choice(values) if values else rnd.uniform(0, 100) for _ in range(3))
            for _ in range(rnd.randint(1, 4))
        ]
        assert repr(slot_cycle(order)) == repr(_slot_cycle_plain(order))


def test_the_priority_gate_holds_back_what_the_plain_rule_does():
    # R9 as written: b is held back if a job of higher priority released no later waits
    rnd = random.Random(3)
    for _ in range(200):
        jobs = [
            replace(
                Job(f"j{i:02d}", 1, duration=1),
                priority=rnd.randint(0, 3),
                release=rnd.randint(0, 20),
            )
            for i in range(30)
        ]
        inst = make_instance(jobs, [NodeGroup("n", 1, 1)], priority_policy="strict")
        gate = PriorityGate(inst)
        started = {j.id for j in jobs if rnd.random() < 0.3}
        now = rnd.randint(0, 25)
        waiting = [j for j in jobs if j.release <= now and j.id not in started]
        starting = {j.id for j in waiting if rnd.random() < 0.4}
        got = gate.blocked(now, started.__contains__, starting)
        going = set(starting)
        while True:  # the plain rule, to a fixed point
            out = [a for a in waiting if a.id not in going]
            held = {
                b.id
                for b in waiting
                if any(a.priority > b.priority and a.release <= b.release for a in out)
            }
            if not held & going:
                break
            going -= held
        assert got == held - going if starting else got == set()
