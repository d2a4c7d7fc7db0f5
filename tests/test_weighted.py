"""The weighted regroup policy (planner/solvers/preempt/weighted.py): its decision is the best
set of groups, checked against an enumeration of every set; its engine runs keep the
rules; the preemptive planner runs it in its second lane."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from planner.durations import group_cycle, inadmissible_reason, solo_iteration_ms, stage_tuple
from planner.generate import generate
from planner.instance import Instance
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import result_to_schedule_dict, simulate
from planner.simulate.model import Decision, SimJob, View
from planner.solvers.lanes import lanes
from planner.solvers.options import SolveOptions
from planner.solvers.preempt import solve_preempt, weighted
from planner.solvers.preempt.policy import Memo
from planner.solvers.preempt.weighted import BETA, BETAS, MIP_GAP, WeightedRegroup, eligible
from planner.verify import verify


class Checked(WeightedRegroup):
    """Records, at every decision, the worth of its groups and the best by enumeration."""

    def __init__(self) -> None:
        super().__init__(math.inf)
        self.seen: list[tuple[float, float]] = []

    def decide(self, view: View) -> Decision:
        groups = self._best(view)
        assert groups is not None
        assert sum(g[0].gpus for g in groups) <= sum(n.group.gpus for n in view.instance.nodes)
        got = sum(worth(view.instance, tuple(g)) or 0.0 for g in groups)
        self.seen.append((got, best_by_enumeration(view.instance, view.jobs)))
        return super().decide(view)


def worth(inst: Instance, group: tuple[SimJob, ...]) -> float | None:
    """sum_j weight_j rate_j / remaining_j^BETA of one group, from the contract's cycle
    (None: not admissible)."""
    jobs = [s.job for s in group]
    if len({j.gpus for j in jobs}) > 1:
        return None
    if len(jobs) > 1 and inadmissible_reason(inst, jobs, 1.0, None) is not None:
        return None
    gps = [inst.gpu_profile(j) for j in jobs]
    rates = [1.0]
    if len(jobs) > 1:
        c = group_cycle([stage_tuple(g) for g in gps], inst.interleaving.overhead)
        rates = [solo_iteration_ms(g) / c for g in gps]
    return sum(
        s.job.weight * r / max(s.remaining_solo or 0.0, 1.0) ** BETA
        for s, r in zip(group, rates, strict=True)
    )


def best_by_enumeration(inst: Instance, jobs: tuple[SimJob, ...]) -> float:
    """The greatest worth of disjoint groups within the cluster's GPUs: every subset of the
    jobs, split into groups every way (a set partition), for small `jobs`."""
    gpus = sum(n.group.gpus for n in inst.nodes)
    size = inst.interleaving.max_group
    memo: dict[tuple[frozenset[int], int], float] = {}

    def best(left: frozenset[int], room: int) -> float:
        if not left:
            return 0.0
        if (left, room) in memo:
            return memo[left, room]
        first, rest = min(left), left - {min(left)}
        out = best(rest, room)  # the first job waits
        for k in range(0, size):
            for more in itertools.combinations(sorted(rest), k):
                group = tuple(jobs[i] for i in (first, *more))
                need = group[0].gpus
                w = worth(inst, group)
                if w is not None and need <= room:
                    out = max(out, w + best(rest - set(more), room - need))
        memo[left, room] = out
        return out

    return best(frozenset(range(len(jobs))), gpus)


@pytest.mark.parametrize("gap", [0.0, MIP_GAP])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_each_decision_is_the_best_set_of_groups(
    seed: int, gap: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the gap of the best (gap 0: the LP's rounding is taken only when it is the
    best, else the MIP decides)."""
    monkeypatch.setattr(weighted, "MIP_GAP", gap)
    inst = instance_from_dict(generate("dl", 7, 1, seed, preemption=True))
    pol = Checked()
    res = simulate(inst, pol)
    assert verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res))) == []
    assert len(pol.seen) >= 7
    for got, best in pol.seen:
        assert (1 - gap) * best - 1e-9 <= got <= best + 1e-9


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_engine_runs_keep_the_rules(seed: int) -> None:
    inst = instance_from_dict(generate("dl", 40, 3, seed, preemption=True))
    assert eligible(inst)
    res = simulate(inst, WeightedRegroup(math.inf))
    assert verify(inst, schedule_from_dict(result_to_schedule_dict(inst, res))) == []


def test_runs_sharing_a_memo_price_each_kind_once(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = instance_from_dict(generate("dl", 40, 3, 2, preemption=True))
    calls = [0]
    rates = weighted.member_rates

    def counted(*args: Any, **kw: Any) -> dict[str, float] | None:
        calls[0] += 1
        return rates(*args, **kw)

    monkeypatch.setattr(weighted, "member_rates", counted)
    memo = Memo(inst)
    priced, plans = [], []
    for shared in (None, memo, memo):  # alone, then two runs sharing the memo
        calls[0] = 0
        res = simulate(inst, WeightedRegroup(math.inf, 0.3, shared))
        priced.append(calls[0])
        plans.append(result_to_schedule_dict(inst, res))
    assert priced[0] > 0 and priced[1] == priced[0] and priced[2] == 0
    # the same plan, priced once ("info" holds the run's timings)
    assert plans[0]["jobs"] == plans[1]["jobs"] == plans[2]["jobs"]
    assert verify(inst, schedule_from_dict(plans[2])) == []


@pytest.mark.skipif(lanes(2) < 2, reason="needs fork and two cores")
def test_the_preemptive_planner_runs_it_in_its_second_lane() -> None:
    inst = instance_from_dict(generate("dl", 30, 2, 5, preemption=True))
    s = solve_preempt(inst, SolveOptions(time_limit=20, workers=2))
    assert verify(inst, s) == []
    runs = s.info["preempt"]["second_lane_runs"]
    assert 1 <= runs <= len(BETAS)  # a weighted run per beta, not random keys
    name = inst.objective[0]
    value = objective_values(inst, s, [name])[name]
    for beta in BETAS[:runs]:  # no worse than any of them
        alone = simulate(inst, WeightedRegroup(math.inf, beta))
        plan = schedule_from_dict(result_to_schedule_dict(inst, alone))
        assert verify(inst, plan) == []
        assert value <= objective_values(inst, plan, [name])[name] + 1e-6
    one = solve_preempt(inst, SolveOptions(time_limit=5, workers=1))  # one lane: not run
    assert verify(inst, one) == [] and "weighted" not in one.info["preempt"]["found_by"]


@pytest.mark.skipif(lanes(2) < 2, reason="needs fork and two cores")
def test_a_second_lane_that_fails_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the weighted lane costs its plans and says so (`info.preempt.second_lane`);
    the first lane's plan comes back."""
    from planner.solvers.preempt import search

    def broken(self: object) -> None:
        raise KeyError("j7")

    monkeypatch.setattr(search._Search, "weighted_lane", broken)
    inst = instance_from_dict(generate("dl", 30, 2, 5, preemption=True))
    s = solve_preempt(inst, SolveOptions(time_limit=4, workers=2))
    assert verify(inst, s) == [] and len(s.jobs) == len(inst.jobs)
    assert s.info["preempt"]["second_lane"] == "failed: KeyError: 'j7'"
    assert "second_lane_runs" not in s.info["preempt"]


def test_only_instances_it_can_price() -> None:
    doc = generate("mixed", 30, 3, 1, preemption=True)
    assert not eligible(instance_from_dict(doc))  # pools, strict priorities
    assert eligible(instance_from_dict(generate("dl", 30, 3, 1, preemption=True)))


A_STAGES = {"data": 90, "gpu": 10, "net": 5}
B_STAGES = {"data": 5, "gpu": 90, "net": 5}


def fast_pair(speed: float) -> Instance:
    """A data-bound and a GPU-bound job on one GPU of the given speed."""
    doc = {
        "version": 1,
        "name": "fast",
        "cluster": {"nodes": [{"name": "fast", "count": 1, "gpus": 1, "speed": speed}]},
        "interleaving": {"enabled": True, "max_group": 2},
        "policy": {"preemption": {"enabled": True, "restart": 0}},
        "profiles": {
            "A": {"by_gpus": {"1": {"iteration_ms": 100, "stages_ms": A_STAGES}}},
            "B": {"by_gpus": {"1": {"iteration_ms": 100, "stages_ms": B_STAGES}}},
        },
        "jobs": [
            {"id": "a", "model": "A", "gpus": 1, "iterations": 100},
            {"id": "b", "model": "B", "gpus": 1, "iterations": 100},
        ],
    }
    return instance_from_dict(doc, file="<test>")


def test_rates_are_priced_at_the_speed_of_the_nodes_the_members_may_use() -> None:
    # The GPU stage scales with the node's speed (contract §4), so the pair's cycle and
    # rates do. At speed 1.5 both rates are the formula's there, not speed 1's; at speed 4
    # the pair's cycle (127.8 ms) is not shorter than its solo iterations (92.5 + 32.5 ms):
    # no node may run it, where priced at speed 1 (137.6 against 200 ms) it was a group
    # the policy asked for and the engine's packer refused.
    inst = fast_pair(1.5)
    gps = [inst.gpu_profile(j) for j in inst.jobs]

    def rates(speed: float) -> dict[str, float]:
        c = group_cycle([stage_tuple(g, speed) for g in gps], inst.interleaving.overhead)
        return {m: solo_iteration_ms(g, speed) / c for m, g in zip("AB", gps, strict=True)}

    got = weighted.member_rates(inst, inst.jobs)
    assert got == pytest.approx(rates(1.5))
    assert got != pytest.approx(rates(1.0))
    fast = fast_pair(4.0)
    assert weighted.member_rates(fast, fast.jobs) is None
    assert inadmissible_reason(fast, fast.jobs, 1.0, None) is None
