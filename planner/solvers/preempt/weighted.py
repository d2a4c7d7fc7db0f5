"""Weighted regrouping (docs/PREEMPTION.md, "All-at-zero windows"): at every decision, the
groups of greatest sum_j weight_j * rate_j / remaining_j^BETA, regrouped across the nodes.

`rate_j` is a member's speed in its group against alone (contract §4: solo iteration /
c(G)), `remaining_j` its solo work left; BETA = 1 would be SRPT's index, 0 throughput
alone. Rates depend only on the members' models and GPU count, so the best set of groups is
a small MIP over how many groups of each model mix run (highspy), within the cluster's
GPUs, each model's jobs taking its slots by falling rate (the heaviest job to the fastest
slot). The engine places the groups (`settle`: a group going on keeps its GPUs), stops what
moved and charges restarts (contract §8). After the deadline, or when a MIP finds no
answer in MIP_SECONDS, the decision is the regroup policy's (`policy.REGROUP`).
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

from planner.bounds_lp import quiet_highs
from planner.durations import group_cycle, inadmissible_reason, solo_iteration_ms, stage_tuple
from planner.instance import Instance, Job
from planner.simulate.engine import Policy, View
from planner.simulate.model import Decision, SimJob
from planner.simulate.policies import settle
from planner.solvers.preempt.policy import REGROUP, KeyedMuri

# On trace1 jobs 120-179 (experiments/weighted_regroup.py, scratch sweep in
# docs/PREEMPTION.md): 0.25 best of 0-1 (421,187 s; 0.2: 421,448, 0.3: 421,639).
BETA = 0.25
# Seconds per MIP: on that window 2 of 60 stopped at 5 s.
MIP_SECONDS = 5.0
# Relative gap at which a MIP stops: 1% took trace4 jobs 60-119's 59 MIPs from 98 s to 54 s.
MIP_GAP = 0.01
# Jobs to plan at most: a MIP per decision takes 0.7-1.7 s on the 60-job windows; on
# cluster_trace.csv (400 jobs, `auto` 120 s) the run was cut to its first decisions, and its
# lane gave 102,275 s average JCT against 101,170 s from the random keys it replaced.
MAX_JOBS = 100
# The share of the time limit left, after the weighted decisions, for the rest of the run
# (Muri's regrouping decides then): a run cut by the limit gives no plan.
RESERVE = 0.05

Mix = tuple[str, ...]  # the models of a group, sorted
Kind = tuple[int, Mix]  # GPU count, models


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


class WeightedRegroup(Policy):
    name = "weighted"
    preemptive = True

    def __init__(self, deadline: float, beta: float = BETA):
        self.deadline = deadline
        self.beta = beta
        self.rates: dict[Kind, dict[str, float] | None] = {}
        self.fallback = KeyedMuri(REGROUP)

    def decide(self, view: View) -> Decision:
        if time.perf_counter() > self.deadline:
            return self.fallback.decide(view)
        groups = self._best(view)
        if groups is None:
            return self.fallback.decide(view)
        return Decision(settle(view, groups))

    def _rate(self, inst: Instance, kind: Kind, jobs: Sequence[Job]) -> dict[str, float] | None:
        """Each model's rate in a group of `kind` (None: not admissible)."""
        if kind not in self.rates:
            gps = [inst.gpu_profile(j) for j in jobs]
            if len(jobs) == 1:
                self.rates[kind] = {kind[1][0]: 1.0}
            elif inadmissible_reason(inst, jobs, 1.0, None) is not None:
                self.rates[kind] = None
            else:
                c = group_cycle([stage_tuple(g) for g in gps], inst.interleaving.overhead)
                self.rates[kind] = {
                    j.model or "": solo_iteration_ms(g) / c for j, g in zip(jobs, gps, strict=True)
                }
        return self.rates[kind]

    def _best(self, view: View) -> list[list[SimJob]] | None:
        inst = view.instance
        weight = {
            s.id: s.job.weight / max(s.remaining_solo or 0.0, 1.0) ** self.beta for s in view.jobs
        }
        ranked: dict[tuple[int, str], list[SimJob]] = {}
        for s in sorted(view.jobs, key=lambda s: -weight[s.id]):
            ranked.setdefault((s.gpus, s.job.model or ""), []).append(s)
        kinds: list[tuple[int, Counter[str], dict[str, float]]] = []
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
        return self._solve(view, ranked, kinds, weight)

    def _solve(
        self,
        view: View,
        ranked: dict[tuple[int, str], list[SimJob]],
        kinds: list[tuple[int, Counter[str], dict[str, float]]],
        weight: dict[str, float],
    ) -> list[list[SimJob]] | None:
        import highspy

        gpus = sum(n.group.gpus for n in view.instance.nodes)
        h = quiet_highs()
        nk = len(kinds)
        h.addVars(nk, np.zeros(nk), np.full(nk, float(gpus)))  # y: groups of each kind
        h.changeColsIntegrality(
            nk, np.arange(nk, dtype=np.int32), np.full(nk, highspy.HighsVarType.kInteger)
        )
        size = np.array([float(k) for k, _, _ in kinds])
        h.addRow(0, gpus, nk, np.arange(nk, dtype=np.int32), size)  # the cluster's GPUs
        cost: list[float] = [0.0] * nk
        slots: dict[tuple[int, str, int], list[int]] = {}  # the r-th job of (k, m), per kind
        for i, (k, cnt, r) in enumerate(kinds):
            for m, c in cnt.items():
                jobs = ranked[k, m]
                cols = list(range(len(cost), len(cost) + len(jobs)))
                cost += [-r[m] * weight[s.id] for s in jobs]
                h.addVars(len(cols), np.zeros(len(cols)), np.ones(len(cols)))
                row = np.array([*([1.0] * len(cols)), -float(c)])
                h.addRow(0, 0, len(cols) + 1, np.array([*cols, i], np.int32), row)
                for rank, col in enumerate(cols):
                    slots.setdefault((k, m, rank), []).append(col)
        for cols in slots.values():
            h.addRow(-highspy.kHighsInf, 1, len(cols), np.array(cols, np.int32), np.ones(len(cols)))
        h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), np.array(cost))
        h.setOptionValue(
            "time_limit", min(MIP_SECONDS, max(0.1, self.deadline - time.perf_counter()))
        )
        h.setOptionValue("mip_rel_gap", MIP_GAP)
        h.run()
        if h.getInfo().primal_solution_status != 2:  # no feasible answer in the time
            return None
        y = h.getSolution().col_value
        groups: list[list[SimJob]] = []
        free: dict[tuple[int, str], list[tuple[float, int]]] = {key: [] for key in ranked}
        for i, (k, cnt, r) in enumerate(kinds):
            for _ in range(round(y[i])):
                for m, c in cnt.items():
                    free[k, m] += [(r[m], len(groups))] * c
                groups.append([])
        for key, sl in free.items():  # the heaviest jobs to the fastest slots
            for rank, (_, g) in enumerate(sorted(sl, key=lambda s: -s[0])):
                groups[g].append(ranked[key][rank])
        # the heaviest groups first, so that the packer places them when not all fit
        return sorted(groups, key=lambda g: -sum(weight[s.id] for s in g))
