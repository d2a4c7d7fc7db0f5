"""Muri's online policies (contract §10): `muri-s` orders jobs by remaining GPU-time, `muri-l`
(blind) by attained GPU-time (`_attained`).

At each decision, as Muri's simulator does:
1. Candidates: jobs are taken in order and placed first fit on the whole cluster; each job
   that fits books a GPU set for itself and the next `max_group - 1` jobs with the same GPU
   count, so each GPU count's candidates are a prefix of its jobs in order.
2. Grouping: while the candidates need more GPUs than the cluster has, jobs of the same GPU
   count are paired by a maximum-weight matching whose weight is the group's use of the
   three stages, `sum of members' (data + gpu + net) / (4 * c(G))`; matched pairs are merged
   in order (of their later member) until the demand fits; the next round matches the
   merged groups again, up to `max_group` members. Only admissible groups (contract §4)
   get an edge.
3. The groups, in the order of their best member, are placed first fit; what does not fit
   waits (and is stopped if it ran). `settle` keeps unchanged runs on their GPUs.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Sequence
from typing import cast

from planner.durations import (
    StageTuple,
    group_admissible,
    group_cycle,
    restart_units,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import Instance, Job
from planner.simulate.matching import TypeMatcher
from planner.simulate.model import Decision, Policy, SimJob, View
from planner.simulate.packer import Packer, fewest_gpus
from planner.simulate.policies import first_fit, placed_as, settle, try_place

Pack = list[SimJob]
# a pack's type for the matching: its models, sorted, and the node groups it may run on
PackType = tuple[tuple[str, ...], frozenset[str]]


class Muri(Policy):
    preemptive = True

    def __init__(self, name: str = "muri-s"):
        if name not in ("muri-s", "muri-l"):
            raise ValueError(f"unknown Muri variant {name}")
        self.name = name
        self.blind = name == "muri-l"
        self._weights: dict[tuple[int, tuple[str, ...]], float] = {}
        self._matchers: dict[int, TypeMatcher] = {}
        # a job's node groups at a GPU count (`_where`)
        self._groups: dict[tuple[str, int], frozenset[str]] = {}
        # a one-job pack's type (`_type`)
        self._types: dict[tuple[str, int], PackType] = {}

    def _key(self, s: SimJob) -> tuple[float, int, str]:
        rest = s.remaining_solo if s.remaining_solo is not None else 0.0
        return (rest * max(1, s.gpus), s.released, s.id)

    def decide(self, view: View) -> Decision:
        if self.blind:
            order = sorted(view.jobs, key=lambda s: (_attained(view, s), s.released, s.id))
        else:
            order = sorted(view.jobs, key=self._key)
        il = view.instance.interleaving
        if not il.enabled or il.max_group < 2:
            return Decision(settle(view, first_fit(view, order)))
        cands = self._candidates(view, order)
        packs = self._group(view, cands)
        rank = {s.id: i for i, s in enumerate(order)}
        packs.sort(key=lambda pk: min(rank[m.id] for m in pk))
        p = Packer(view.instance, view.now)
        chosen = []
        for pk in packs:
            # a group that fits nowhere (a pool or GPU memory it needs more of than any
            # member alone) runs as its members, each where it fits
            alone = [[m] for m in pk] if len(pk) > 1 else []
            for part in [pk, *alone]:
                pl = try_place(p, view, part)
                if pl is not None:
                    chosen.append(placed_as(part, pl))
                    if part is pk:
                        break
        return Decision(settle(view, chosen))

    def _candidates(self, view: View, order: Sequence[SimJob]) -> dict[int, list[SimJob]]:
        size = view.instance.interleaving.max_group
        by_k: dict[int, list[SimJob]] = {}
        at: dict[int, list[int]] = {}  # each job's position in `order`, per GPU count
        low = None
        for i, s in enumerate(order):
            k = s.job.gpus
            if k not in by_k:
                by_k[k], at[k] = [], []
            by_k[k].append(s)
            at[k].append(i)
            f = fewest_gpus(s.job)
            if low is None or f < low:
                low = f
        # Only the first job of its count not yet taken is tried, in order: each count's
        # next one is kept in a heap by position, and a count whose job does not fit is
        # done (its later jobs are never first). Walking all of `order` for them was most
        # of `_candidates` (kept_plan on 1,000 generated mixed jobs).
        taken = dict.fromkeys(by_k, 0)
        heads = [(pos[0], k) for k, pos in at.items()]
        heapq.heapify(heads)
        p = self._free_packer(view)
        while heads:
            if p.free_gpus < (low or 0):
                break  # every later job is passed over (`try_place`), as in `first_fit`
            _, k = heapq.heappop(heads)
            lst = by_k[k]
            if try_place(p, view, [lst[taken[k]]]) is not None:
                taken[k] = min(taken[k] + size, len(lst))
                if taken[k] < len(lst):
                    heapq.heappush(heads, (at[k][taken[k]], k))
        return {k: lst[: taken[k]] for k, lst in by_k.items() if taken[k]}

    def _group(self, view: View, cands: dict[int, list[SimJob]]) -> list[Pack]:
        excess = sum(k * len(v) for k, v in cands.items()) - self._capacity(view)
        packs: dict[int, list[Pack]] = {k: [[s] for s in v] for k, v in cands.items()}
        for _round in range(view.instance.interleaving.max_group):
            if excess <= 0:
                break
            for k in list(packs):
                packs[k], excess = self._merge_round(view, packs[k], excess)
        return [pk for v in packs.values() for pk in v]

    def _merge_round(self, view: View, packs: list[Pack], excess: int) -> tuple[list[Pack], int]:
        """One round of matching `packs` (one GPU count): matched pairs are merged in order
        while the candidates need `excess` > 0 more GPUs than the cluster has; returns the
        packs and the excess left."""
        k = packs[0][0].gpus
        merged: list[Pack] = []
        for item in self._match(view, packs):
            if len(item) == 2 and excess > 0:
                merged.append(item[0] + item[1])
                excess -= k
            else:
                merged.extend(item)
        return merged, excess

    def _free_packer(self, view: View) -> Packer:
        """The GPUs candidates may take (a hook, as `_capacity`: the whole cluster here)."""
        return Packer(view.instance, view.now)

    def _capacity(self, view: View) -> int:
        """GPUs the candidates share (a hook: the planner's non-preemptive variant, in
        planner.solvers.preempt.kept, counts only the GPUs no run holds)."""
        return sum(n.gpus for n in view.instance.nodes)

    def _match(self, view: View, nodes: list[Pack]) -> list[list[Pack]]:
        """Max-weight matching of the packs (of one GPU count); pairs and singles in the
        order of their later member's position."""
        k = nodes[0][0].gpus
        matcher = self._matchers.get(k)
        if matcher is None:
            size = view.instance.interleaving.max_group
            inst = view.instance

            def weight(a: Hashable, b: Hashable) -> float:
                ta, tb = cast(PackType, a), cast(PackType, b)
                ms = tuple(sorted((*ta[0], *tb[0])))
                if len(ms) > size or not ta[1] & tb[1]:
                    return 0.0
                w = self._weights.get((k, ms))
                if w is None:
                    w = self._weights[(k, ms)] = _used_ratio(inst, k, ms)
                return w

            matcher = self._matchers[k] = TypeMatcher(weight)
        types = [self._type(view, pk) for pk in nodes]
        return [[nodes[i] for i in p] for p in matcher.pairs(types)]

    def _type(self, view: View, pack: Pack) -> PackType:
        """The pack's type for the matching; a one-job pack's kept by its job and GPU count
        (most packs are one job, typed anew at each round of each decision)."""
        if len(pack) > 1:
            return (tuple(sorted(m.job.model or "" for m in pack)), self._where(view, pack))
        m = pack[0]
        key = (m.id, m.job.gpus)
        got = self._types.get(key)
        if got is None:
            got = self._types[key] = ((m.job.model or "",), self._where(view, pack))
        return got

    def _where(self, view: View, pack: Pack) -> frozenset[str]:
        """The node groups every member of `pack` may run on (`node_types`, R5): packs that
        share none get no edge, since no group of them could be placed."""
        names = []
        for m in pack:
            key = (m.id, m.job.gpus)
            got = self._groups.get(key)
            if got is None:
                eligible = view.instance.eligible_groups(m.job)
                got = self._groups[key] = frozenset(g.name for g in eligible)
            names.append(got)
        return frozenset.intersection(*names)


def _attained(view: View, s: SimJob) -> float:
    """Blind, a job's attained GPU-time, without the restart its current segment is paying
    (contract §8): a resumed run keeps the place that started it until it is past its
    restart. Counted in, the job it displaced had less at the next decision, and with
    `--interval` at or below the restart cost two jobs swapped at every tick without
    progress, a run that never ended (`tests/test_simulate.py`). Measured with `plan
    simulate` on cluster_trace.csv (`plan import muri --preemption`), muri-l's average JCT
    without `--interval` / with 600 / with 60: 134,248 / 136,400 / 171,073 s before, 135,058
    / 136,351 / 171,516 s now; a run kept ahead of every job that ran before until it had
    worked as long as its restart gave 132,897 s without `--interval` but 200,099 s with 60."""
    if s.since is None:
        return float(s.attained_gpu)
    age = view.now - s.since
    paid = min(age, restart_units(view.instance, s.job)) if s.attained > age else 0
    return float((s.attained - paid) * max(1, s.gpus))


def _used_ratio(inst: Instance, gpus: int, models: tuple[str, ...]) -> float:
    """Muri's matching weight: the share of the 4 resource slots the group keeps busy; 0 for
    a group contract §4 does not admit (on the first node group that can run the count)."""
    found = group_on_first_fit(inst, gpus, models)
    if found is None:
        return 0.0
    stages, _solo, cycle = found
    return sum(sum(st) for st in stages) / (4 * cycle)


def group_on_first_fit(
    inst: Instance, gpus: int, models: tuple[str, ...]
) -> tuple[list[StageTuple], list[float], float] | None:
    """Stages, solo iteration times (ms) and cycle c(G) of a group of `models` at `gpus` on
    the first node group that can run the count; None if contract §4 does not admit it
    there (or a member has no model)."""
    if not all(models):
        return None
    jobs = [Job(f"_{i}", gpus, m, 1) for i, m in enumerate(models)]
    groups = [ng for ng in inst.node_groups if inst.misfit(jobs[0], ng) is None]
    if not groups or not group_admissible(inst, jobs, groups[0].speed, groups[0].gpu_mem_gb):
        return None
    speed = groups[0].speed
    gps = [inst.gpu_profile(j) for j in jobs]
    stages = [stage_tuple(gp, speed) for gp in gps]
    solo = [solo_iteration_ms(gp, speed) for gp in gps]
    return stages, solo, group_cycle(stages, inst.interleaving.overhead)
