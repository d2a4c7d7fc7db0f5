"""Re-forming Muri's groups for throughput: a local search after Muri's matching.

Muri's matching pairs jobs, then pairs of pairs, by the share of the resource slots a
group keeps busy; two good pairs do not always make the best group of four. Once Muri has
chosen which jobs run and how many groups each GPU count gets, this search moves one
member to another group (with room) or swaps two members of different groups, of the
same GPU count, whenever that raises the sum of the members' progress rates (solo
iteration time / group cycle, contract §4): the same jobs run on the same number of GPU
sets, doing more work per second. Only admissible groups are formed.

Measured on cluster_trace.csv (400 jobs, 8 x 8, Muri's restart costs, one run):
muri-s 120,101 s average JCT / 2,659,808 s makespan; with this search 115,620 s /
2,645,374 s. Weighting the rates by 1 / remaining time^a did worse (a = 0.5: 120,330 s;
a = 1: 122,858 s), and so did handing the shortest jobs the fastest slots afterwards
(117,653 s): throughput is what pays on this trace (experiments/preemption_targets.py).

`admit` then looks past Muri's candidates: a group member gives its place to one of the
next ADMIT_DEPTH waiting jobs of its GPU count (in the policy's order) whenever that raises
the group's total rate by more than ADMIT_GAIN; the member waits instead (it may take the
place of another group's member in turn). Muri takes each GPU count's candidates as a prefix
of its order, so a group holds jobs that happen to be next, not jobs that mix well. Online
policy `policy.REGROUP`, one run each, average JCT (base: regroup without admission):

| trace (8 x 8, Muri's restart costs) | base | depth 6, gain 0.05 | 6, 0.1 | 4, 0.05 | 10, 0 |
| --- | --- | --- | --- | --- | --- |
| cluster_trace.csv | 110,314 | 103,034 | 102,967 | 102,863 | 101,986 |
| trace1.csv, first 400 | 1,403,549 | 1,403,131 | - | 1,401,330 | 1,434,730 |
| trace2.csv, first 600 | 220,943 | 219,925 | 219,148 | 220,221 | 230,472 |
| trace4.csv, first 400 | 298,471 | 298,373 | - | - | 299,627 |

A gain of 0 admits for any rise and a deep look swaps long waiting jobs in for short ones
(trace2: 4% worse); depth 6 and gain 0.05 are never worse than the base on these traces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from planner.instance import Instance
from planner.simulate.model import SimJob
from planner.simulate.muri import group_on_first_fit

Pack = list[SimJob]
T = TypeVar("T")
# Improvement passes over all pairs of groups; the search stops earlier at a local optimum
# (on cluster_trace.csv 3 and 30 passes give the same plan).
PASSES = 10
# `admit`: how many waiting jobs of each GPU count may take a member's place, and the least
# rise of the group's total rate that pays for it (module docstring: measured).
ADMIT_DEPTH = 6
ADMIT_GAIN = 0.05


class Rates:
    """Each member's progress rate in a group of given models and GPU count, cached, and
    the regroup search's first improving step between two groups (`step`)."""

    def __init__(self, instance: Instance):
        self.instance = instance
        self._memo: dict[tuple[int, tuple[str, ...]], tuple[float, ...] | None] = {}
        self._totals: dict[tuple[int, tuple[str, ...]], float | None] = {}
        self._steps: dict[tuple[int, Models, Models, bool, int], Step | None] = {}

    def of(self, gpus: int, models: tuple[str, ...]) -> tuple[float, ...] | None:
        """Rates in the order of `models` (sorted); None if the group is not admissible on
        the first node group that runs the count (as Muri's matching weight)."""
        key = (gpus, models)
        if key not in self._memo:
            self._memo[key] = self._compute(gpus, models)
        return self._memo[key]

    def _compute(self, gpus: int, models: tuple[str, ...]) -> tuple[float, ...] | None:
        if len(models) == 1:
            return (1.0,)
        found = group_on_first_fit(self.instance, gpus, models)
        if found is None:
            return None
        _stages, solo, cycle = found
        return tuple(t / cycle for t in solo)

    def total(self, pack: Sequence[SimJob]) -> float | None:
        """Sum of the members' rates; None if not admissible."""
        return self.total_of(pack[0].gpus, models_of(pack))

    def total_of(self, gpus: int, models: Models) -> float | None:
        """`total` of a group of these models (in any order) at `gpus` GPUs."""
        if len(models) == 1:
            return 1.0
        key = (gpus, tuple(sorted(models)))
        if key not in self._totals:
            rates = self.of(*key)
            self._totals[key] = None if rates is None else sum(rates)
        return self._totals[key]

    def step(self, gpus: int, ma: Models, mb: Models, swaps: bool, size: int) -> Step | None:
        """`_first_step` of two groups of these models (in member order), cached: it
        depends on nothing else, and the search meets the same pairs again and again
        (on trace4.csv's first 800 jobs 6.2 million steps in 1,546 decisions)."""
        key = (gpus, ma, mb, swaps, size)
        if key not in self._steps:
            self._steps[key] = _first_step(self, gpus, ma, mb, swaps, size)
        return self._steps[key]


Models = tuple[str, ...]  # a group's members' models, in member order
Step = tuple[int, int]  # (i, -1): move member i of a to b; (i, j): swap a's i and b's j


def models_of(pack: Sequence[SimJob]) -> Models:
    return tuple(m.job.model or "" for m in pack)


def regroup(rates: Rates, packs: Sequence[Pack], size: int) -> list[Pack]:
    """`packs` with members moved and swapped between groups of one GPU count while the
    total rate rises; group count and members unchanged."""
    by_k: dict[int, list[Pack]] = {}
    for pk in packs:
        by_k.setdefault(pk[0].gpus, []).append(list(pk))
    out: list[Pack] = []
    for groups in by_k.values():
        if len(groups) > 1:
            _improve(rates, groups, size)
        out.extend(groups)
    return out


def _improve(rates: Rates, groups: list[Pack], size: int) -> None:
    gpus = groups[0][0].gpus
    models = [models_of(g) for g in groups]
    for _ in range(PASSES):
        changed = False
        for a in range(len(groups)):
            for b in range(len(groups)):
                if a == b:
                    continue
                found = rates.step(gpus, models[a], models[b], a < b, size)
                if found is None:
                    continue
                ga, gb = _stepped(found, groups[a], groups[b])
                groups[a], groups[b] = list(ga), list(gb)
                models[a], models[b] = _stepped(found, models[a], models[b])
                changed = True
        if not changed:
            return


def _first_step(
    rates: Rates, gpus: int, ma: Models, mb: Models, swaps: bool, size: int
) -> Step | None:
    """The first improving move of a member of group `a` to `b`, or swap of members of
    `a` and `b` (`swaps`: each pair of groups is swapped once, a < b), as groups of models
    `ma` and `mb`: what raises the sum of their total rates (an inadmissible group's
    counting 0)."""
    now = (rates.total_of(gpus, ma) or 0.0) + (rates.total_of(gpus, mb) or 0.0)
    for i in range(len(ma)):
        tries: list[Step] = []
        if len(ma) > 1 and len(mb) < size:
            tries.append((i, -1))
        if swaps:  # swapping two jobs of one model changes no rate
            tries.extend((i, j) for j in range(len(mb)) if mb[j] != ma[i])
        for found in tries:
            na, nb = _stepped(found, ma, mb)
            va, vb = rates.total_of(gpus, na), rates.total_of(gpus, nb)
            if va is not None and vb is not None and va + vb > now + 1e-9:
                return found
    return None


def _stepped(step: Step, a: Sequence[T], b: Sequence[T]) -> tuple[tuple[T, ...], tuple[T, ...]]:
    """Groups `a` and `b` (models or members) after `step`, a move or a swap."""
    i, j = step
    if j < 0:
        return (*a[:i], *a[i + 1 :]), (*b, a[i])
    return (*a[:i], b[j], *a[i + 1 :]), (*b[:j], a[i], *b[j + 1 :])


def admit(rates: Rates, packs: Sequence[Pack], waiting: dict[int, list[SimJob]]) -> list[Pack]:
    """`packs` with members exchanged for jobs of `waiting` (per GPU count, in order, at most
    ADMIT_DEPTH each) while one exchange raises a group's total rate by more than ADMIT_GAIN;
    the best exchange of a group first. `waiting` is not changed."""
    pools = {k: list(v[:ADMIT_DEPTH]) for k, v in waiting.items()}
    out: list[Pack] = []
    for pk in packs:
        group = list(pk)
        pool = pools.get(group[0].gpus, [])
        while len(group) > 1 and _exchange(rates, group, pool):
            pass
        out.append(group)
    return out


def _exchange(rates: Rates, group: Pack, pool: list[SimJob]) -> bool:
    """Apply the exchange of a member of `group` with a job of `pool` that raises the
    group's total rate most, if by more than ADMIT_GAIN; whether one was applied."""
    base = rates.total(group)
    if base is None:
        return False
    best: tuple[float, int, int] | None = None
    for i, member in enumerate(group):
        for j, other in enumerate(pool):
            if other.job.model == member.job.model:
                continue
            value = rates.total(group[:i] + [other] + group[i + 1 :])
            if value is None or value <= base + ADMIT_GAIN:
                continue
            if best is None or value > best[0]:
                best = (value, i, j)
    if best is None:
        return False
    _v, i, j = best
    group[i], pool[j] = pool[j], group[i]
    return True
