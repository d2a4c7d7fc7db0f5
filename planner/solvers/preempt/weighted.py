"""Weighted regrouping (docs/PREEMPTION.md, "All-at-zero windows"): at every decision, the
groups of greatest sum_j weight_j * rate_j / remaining_j^BETA, regrouped across the nodes.

`rate_j` is a member's speed in its group against alone (contract §4: solo iteration /
c(G)), `remaining_j` its solo work left; BETA = 1 would be SRPT's index, 0 throughput
alone. Rates depend only on the members' models and GPU count, so the best set of groups is
a small MIP over how many groups of each model mix run (highspy), within the cluster's
GPUs, each model's jobs taking its slots by falling rate (the heaviest job to the fastest
slot). Its LP, rounded down and filled greedily, is mostly within MIP_GAP of the best;
else the MIP, over the kinds that the LP uses or prices best, starts from that rounding.
The engine places the groups (`settle`: a group going on keeps its GPUs), stops what
moved and charges restarts (contract §8). After the deadline, or when the LP finds no
answer, the decision is the regroup policy's (`policy.REGROUP`).
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from planner.bounds.lp import quiet_highs
from planner.durations import (
    best_speed,
    group_cycle,
    inadmissible_reason,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import Instance, Job
from planner.simulate.model import Decision, Policy, SimJob, View
from planner.simulate.policies import settle
from planner.solvers.preempt.policy import REGROUP, KeyedMuri, Memo

# On trace1 jobs 120-179 (experiments/weighted_regroup.py, scratch sweep in
# docs/PREEMPTION.md): 0.25 best of 0-1 (421,187 s; 0.2: 421,448, 0.3: 421,639).
BETA = 0.25
# The betas the preemptive planner's weighted lane runs, in turn, while its time lasts
# (`search.py`). The best beta differs by window (docs/PREEMPTION.md, "All-at-zero
# windows": trace2 jobs 0-59 469,351 s at 0.25, 463,861 s at 0.35).
BETAS = (0.35, 0.25, 0.15, 0.45, 0.3, 0.2)
# Seconds per MIP (rarely reached: on the heavy windows most take 0.05-1 s).
MIP_SECONDS = 5.0
# Relative gap at which a MIP stops, and at which the LP's rounded answer is taken.
MIP_GAP = 0.01
# The MIP's kinds besides those the LP's answer and its rounding use: the KINDS of least
# reduced cost. docs/PREEMPTION.md, "Made faster on 2026-12-02, evening": on trace4 jobs
# 60-119 (670 kinds at the start), beta 0.25, every kind in the MIP 242,385 s average JCT
# in 84 s of MIPs, 80 kinds 243,563 s in 14 s; a 0.1% gap 243,544 s in 33 s, 150 kinds
# 244,152 s in 51 s. The other heavy windows in 5-9 s.
KINDS = 80
# Jobs to plan at most: when the MIPs held every kind they took 0.7-1.7 s each on the
# 60-job windows; on cluster_trace.csv (400 jobs, `auto` 120 s) the run was cut to its first
# decisions, and its lane gave 102,275 s average JCT against 101,170 s from the random
# keys it replaced.
MAX_JOBS = 100
# The share of the time limit left, after the weighted decisions, for the rest of the run
# (Muri's regrouping decides then): a run cut by the limit gives no plan.
RESERVE = 0.05

Mix = tuple[str, ...]  # the models of a group, sorted
Kind = tuple[int, Mix]  # GPU count, models
Kind3 = tuple[int, Counter[str], dict[str, float]]  # GPU count, model counts, model rates


def eligible(inst: Instance) -> bool:
    """Instances the policy plans: interleaving on, every job profiled at one GPU count,
    no pools, no strict priorities (the MIP knows none of them), at most MAX_JOBS jobs to
    run."""
    il = inst.interleaving
    return (
        sum(1 for j in inst.jobs if j.state != "done") <= MAX_JOBS
        and il.enabled
        and il.max_group >= 2
        and not inst.pools
        and inst.priority_policy != "strict"
        and all(j.model is not None and not j.elastic for j in inst.jobs)
    )


def reset_highs_threads() -> None:
    """A fresh HiGHS thread pool, for a forked child (the parent's threads are not in it)."""
    import highspy

    highspy.Highs.resetGlobalScheduler(True)


def member_rates(
    inst: Instance, jobs: Sequence[Job], mem: float | None = None
) -> dict[str, float] | None:
    """Each member's model and its rate in a group of `jobs` against alone (contract §4:
    solo iteration / c(G)) on the fastest node group every member may use (speed 1.0
    when they share none; the GPU stage scales with the speed, so rates and admissibility
    depend on it); None when the group is not admissible there (`mem`: the GPU memory to
    check it against, as `durations.inadmissible_reason` takes it)."""
    if len(jobs) == 1:
        return {jobs[0].model or "": 1.0}
    speed = best_speed(inst, *jobs)
    if inadmissible_reason(inst, jobs, speed, mem) is not None:
        return None
    gps = [inst.gpu_profile(j) for j in jobs]
    c = group_cycle([stage_tuple(g, speed) for g in gps], inst.interleaving.overhead)
    return {j.model or "": solo_iteration_ms(g, speed) / c for j, g in zip(jobs, gps, strict=True)}


class WeightedRegroup(Policy):
    name = "weighted"
    preemptive = True

    def __init__(self, deadline: float, beta: float = BETA, memo: Memo | None = None):
        self.deadline = deadline
        self.beta = beta
        self.memo = memo
        # the rates of each kind of group; the lane's runs share them through `memo`
        # (docs/PREEMPTION.md, "Tried later on 2026-12-03")
        self.rates: dict[Kind, dict[str, float] | None] = (
            {} if memo is None else memo.weighted_rates
        )
        self.fallback = KeyedMuri(REGROUP, memo)

    def decide(self, view: View) -> Decision:
        if time.perf_counter() > self.deadline:
            return self.fallback.decide(view)
        groups = self._best(view)
        if groups is None:
            return self.fallback.decide(view)
        return Decision(settle(view, groups))

    def _rate(self, inst: Instance, kind: Kind, jobs: Sequence[Job]) -> dict[str, float] | None:
        """Each model's rate in a group of `kind` (None: not admissible)."""
        if self.memo is not None and self.memo.instance is not inst:
            self.memo = None
            self.rates = {}
        if kind not in self.rates:
            self.rates[kind] = member_rates(inst, jobs)
        return self.rates[kind]

    def _best(self, view: View) -> list[list[SimJob]] | None:
        inst = view.instance
        weight = {
            s.id: s.job.weight / max(s.remaining_solo or 0.0, 1.0) ** self.beta for s in view.jobs
        }
        ranked: dict[tuple[int, str], list[SimJob]] = {}
        for s in sorted(view.jobs, key=lambda s: -weight[s.id]):
            ranked.setdefault((s.gpus, s.job.model or ""), []).append(s)
        kinds: list[Kind3] = []
        for k in sorted({g for g, _ in ranked}):
            models = sorted(m for g, m in ranked if g == k)
            for size in range(1, inst.interleaving.max_group + 1):
                for mix in itertools.combinations_with_replacement(models, size):
                    cnt = Counter(mix)
                    if any(len(ranked[k, m]) < c for m, c in cnt.items()):
                        continue
                    rep = [s.job for m, c in cnt.items() for s in ranked[k, m][:c]]
                    r = self._rate(inst, (k, mix), rep)
                    if r is not None:
                        kinds.append((k, cnt, r))
        return self._solve(view, ranked, kinds, weight) if kinds else []

    def _solve(
        self,
        view: View,
        ranked: dict[tuple[int, str], list[SimJob]],
        kinds: list[Kind3],
        weight: dict[str, float],
    ) -> list[list[SimJob]] | None:
        import highspy

        gpus = sum(n.group.gpus for n in view.instance.nodes)
        whole = _Mip(ranked, kinds, weight, gpus)
        h = whole.model()
        h.setOptionValue("solve_relaxation", True)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        # the LP's answer rounded down and filled; if not within MIP_GAP of the LP's bound,
        # the MIP over the kinds the LP uses or prices best starts from it
        bound = -h.getInfo().objective_function_value
        lp = h.getSolution()
        y = whole.filled(np.floor(np.array(lp.col_value[: len(kinds)]) + 1e-6))
        if whole.value(y) >= (1 - MIP_GAP) * bound:
            return whole.groups(y)
        cheap = np.argsort(np.array(lp.col_dual[: len(kinds)]))[:KINDS]
        keep = sorted(
            {
                *np.flatnonzero(np.array(lp.col_value[: len(kinds)]) > 1e-6),
                *np.flatnonzero(y > 0),
                *cheap,
            }
        )
        seconds = min(MIP_SECONDS, max(0.1, self.deadline - time.perf_counter()))
        some = _Mip(ranked, [kinds[i] for i in keep], weight, gpus).solve(y[keep], seconds)
        if some is not None:
            other = np.zeros(len(kinds))
            other[keep] = some
            if whole.value(other) > whole.value(y):
                y = other
        return whole.groups(y)


class _Mip:
    """The choice of one decision: y_i groups of kind i (GPU count, model counts, each
    model's rate), within the cluster's GPUs, each model's ranked jobs in its slots."""

    def __init__(
        self,
        ranked: dict[tuple[int, str], list[SimJob]],
        kinds: list[Kind3],
        weight: dict[str, float],
        gpus: int,
    ):
        self.ranked, self.kinds, self.weight, self.gpus = ranked, kinds, weight, gpus
        self.heavy = {key: [weight[s.id] for s in jobs] for key, jobs in ranked.items()}

    def model(self) -> Any:
        """The MIP: y (integer) and, per kind and model, one column per ranked job (the
        job in one of the kind's slots), each job in at most one slot."""
        import highspy

        kinds, gpus = self.kinds, float(self.gpus)
        h = quiet_highs()
        nk = len(kinds)
        h.addVars(nk, np.zeros(nk), np.full(nk, gpus))
        h.changeColsIntegrality(
            nk, np.arange(nk, dtype=np.int32), np.full(nk, highspy.HighsVarType.kInteger)
        )
        size = np.array([float(k) for k, _, _ in kinds])
        h.addRow(0, gpus, nk, np.arange(nk, dtype=np.int32), size)  # the cluster's GPUs
        cost: list[float] = [0.0] * nk
        slots: dict[tuple[int, str, int], list[int]] = {}  # the r-th job of (k, m), per kind
        for i, (k, cnt, r) in enumerate(kinds):
            for m, c in cnt.items():
                jobs = self.ranked[k, m]
                cols = list(range(len(cost), len(cost) + len(jobs)))
                cost += [-r[m] * self.weight[s.id] for s in jobs]
                h.addVars(len(cols), np.zeros(len(cols)), np.ones(len(cols)))
                row = np.array([*([1.0] * len(cols)), -float(c)])
                h.addRow(0, 0, len(cols) + 1, np.array([*cols, i], np.int32), row)
                for rank, col in enumerate(cols):
                    slots.setdefault((k, m, rank), []).append(col)
        for cols in slots.values():
            h.addRow(-highspy.kHighsInf, 1, len(cols), np.array(cols, np.int32), np.ones(len(cols)))
        h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), np.array(cost))
        return h

    def solve(self, start: np.ndarray, seconds: float) -> np.ndarray | None:
        """The MIP's y from `start` within `seconds` (None: no answer)."""
        h = self.model()
        h.setOptionValue("time_limit", seconds)
        h.setOptionValue("mip_rel_gap", MIP_GAP)
        n = len(self.kinds)
        h.setSolution(n, np.arange(n, dtype=np.int32), start.astype(float))
        h.run()
        if h.getInfo().primal_solution_status != 2:
            return None
        return np.round(np.array(h.getSolution().col_value[:n]))

    def slots(self, y: np.ndarray) -> dict[tuple[int, str], list[tuple[float, int]]]:
        """Per (GPU count, model): the slots of the groups y holds, (rate, group index)."""
        out: dict[tuple[int, str], list[tuple[float, int]]] = {key: [] for key in self.ranked}
        g = 0
        for i, (k, cnt, r) in enumerate(self.kinds):
            for _ in range(round(y[i])):
                for m, c in cnt.items():
                    out[k, m] += [(r[m], g)] * c
                g += 1
        return out

    def _worth(self, key: tuple[int, str], rates: list[float]) -> float:
        """The heaviest jobs of `key` in the fastest of these slots (-inf: too few jobs)."""
        heavy = self.heavy[key]
        if len(rates) > len(heavy):
            return -math.inf
        return sum(w * r for w, r in zip(heavy, sorted(rates, reverse=True), strict=False))

    def value(self, y: np.ndarray) -> float:
        return sum(self._worth(key, [r for r, _ in sl]) for key, sl in self.slots(y).items())

    def filled(self, y: np.ndarray) -> np.ndarray:
        """`y` with groups added, the best gain first, while the GPUs left allow."""
        y = y.copy()
        rates = {key: [r for r, _ in sl] for key, sl in self.slots(y).items()}
        room = self.gpus - sum(k * y[i] for i, (k, _, _) in enumerate(self.kinds))
        while True:
            best, pick = 0.0, -1
            for i, (k, cnt, r) in enumerate(self.kinds):
                if k > room:
                    continue
                gain = sum(
                    self._worth((k, m), rates[k, m] + [r[m]] * c) - self._worth((k, m), rates[k, m])
                    for m, c in cnt.items()
                )
                if gain > best:
                    best, pick = gain, i
            if pick < 0:
                return y
            k, cnt, r = self.kinds[pick]
            y[pick] += 1
            room -= k
            for m, c in cnt.items():
                rates[k, m] += [r[m]] * c

    def groups(self, y: np.ndarray) -> list[list[SimJob]]:
        """The groups of y, the heaviest jobs of each model in its fastest slots, the
        heaviest groups first (so that the packer places them when not all fit)."""
        groups: list[list[SimJob]] = [[] for _ in range(int(round(sum(y))))]
        for key, sl in self.slots(y).items():
            for rank, (_, g) in enumerate(sorted(sl, key=lambda s: -s[0])):
                groups[g].append(self.ranked[key][rank])
        return sorted(groups, key=lambda g: -sum(self.weight[s.id] for s in g))
