"""Candidate interleaving groups shared by the greedy, CP-SAT and MILP planners.

A candidate is a set of 2..max_group profiled jobs with the same GPU count that may run
interleaved on one node group (contract §4). The list is pruned so that every job appears
in at most `max_per_job` candidates; planners choose among them.

Why it is not quadratic: jobs of the same model and GPU count have identical stage tuples,
so the cycle of a group depends only on its multiset of models. Per (node group, GPU count)
we evaluate every model multiset once (pairs of all models present; a multiset of k >= 3 is
tried only as an extension of one of the `_EXTEND` most efficient admissible (k-1)-multisets,
as Muri merges pairs into larger groups), then pick concrete job combinations for the
admissible ones. Job combinations are taken between jobs close in release time and solo
duration: a group starts at its latest member's release, and a group whose members end
unevenly leaves its last member running on its own with the GPUs held.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from planner.durations import (
    group_admissible,
    group_cycle,
    group_member_durations,
    solo_duration,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import Instance, Job, NodeGroup
from planner.schedule import Schedule


@dataclass(frozen=True)
class CandidateGroup:
    jobs: tuple[str, ...]  # member ids, sorted
    gpus: int
    node_group: str  # the node group whose speed and gpu_mem_gb it was evaluated for
    efficiency: float  # sum of members' solo iteration ms / group cycle ms (> 1 pays)
    durations: tuple[int, ...]  # member end - start in time units, same order as jobs
    span: int  # max of durations: how long the group holds its GPUs


def _efficiency(instance: Instance, reps: Sequence[Job], speed: float) -> float:
    gps = [instance.gpu_profile(j) for j in reps]
    cyc = group_cycle([stage_tuple(gp, speed) for gp in gps], instance.interleaving.overhead)
    return sum(solo_iteration_ms(gp, speed) for gp in gps) / cyc


# (Chosen, not tuned: no run comparing other values is recorded.)
_EXTEND = 6


def _model_multisets(
    instance: Instance, by_model: dict[str, list[Job]], ng: NodeGroup
) -> list[tuple[float, tuple[str, ...]]]:
    """Admissible model multisets with their efficiency, most efficient first."""
    models = sorted(by_model)
    out: list[tuple[float, tuple[str, ...]]] = []
    efficiency: dict[tuple[str, ...], float] = {}
    level: list[tuple[str, ...]] = [(m,) for m in models]
    for _k in range(2, instance.interleaving.max_group + 1):
        nxt: list[tuple[str, ...]] = []
        for base in level:
            for m in models:
                if m < base[-1]:
                    continue  # each multiset once, in sorted order
                combo = (*base, m)
                if combo.count(m) > len(by_model[m]):
                    continue  # not enough jobs of that model
                reps = _representatives(by_model, combo)
                if not group_admissible(instance, reps, ng.speed, ng.gpu_mem_gb):
                    continue
                nxt.append(combo)
                efficiency[combo] = _efficiency(instance, reps, ng.speed)
                out.append((efficiency[combo], combo))
        # Only the best few are extended: evaluating every multiset of 3-4 models costs
        # thousands of slot-cycle simulations per (node group, GPU count).
        nxt.sort(key=lambda c: (-efficiency[c], c))
        level = nxt[:_EXTEND]
    out.sort(key=lambda e: (-e[0], e[1]))
    return out


def _representatives(by_model: dict[str, list[Job]], combo: tuple[str, ...]) -> list[Job]:
    seen: dict[str, int] = defaultdict(int)
    reps = []
    for m in combo:
        reps.append(by_model[m][seen[m]])
        seen[m] += 1
    return reps


def candidate_groups(
    instance: Instance, max_per_job: int = 4, jobs: Sequence[Job] | None = None
) -> list[CandidateGroup]:
    """Admissible interleaving groups among `jobs` (default: all jobs of the instance).

    Empty when interleaving is disabled. Pruning rule: model multisets are visited from the
    most to the least efficient (ties by model names), node groups in instance order; for
    each multiset, each job (shortest first) of its first model is combined with the jobs of
    the other models closest to it in solo duration that still have room, and a combination
    is kept only while every member appears in fewer than `max_per_job` kept candidates.
    So each job keeps its (at most `max_per_job`) most efficient candidates, with members
    close in release time and length (smallest |release gap| + |duration gap| among the
    nearest jobs in release order). The result is sorted by efficiency (descending), then
    member ids.
    """
    if not instance.interleaving.enabled or instance.interleaving.max_group < 2:
        return []
    pool = [j for j in (instance.jobs if jobs is None else jobs) if j.profiled and j.gpus >= 1]
    count: dict[str, int] = defaultdict(int)
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out: list[CandidateGroup] = []
    for ng in instance.node_groups:
        buckets: dict[int, dict[str, list[Job]]] = defaultdict(lambda: defaultdict(list))
        for j in pool:
            model = j.model or ""
            if ng in instance.eligible_groups(j) and j.gpus in instance.profiles[model].by_gpus:
                buckets[j.gpus][model].append(j)
        for gpus in sorted(buckets):
            by_model = buckets[gpus]
            dur = {
                j.id: solo_duration(instance, j, ng.speed) for ms in by_model.values() for j in ms
            }
            for ms in by_model.values():
                ms.sort(key=lambda j: (j.release, dur[j.id], j.id))
            for eff, combo in _model_multisets(instance, by_model, ng):
                for members in _job_combinations(by_model, combo, dur, count, max_per_job):
                    ids = tuple(sorted(j.id for j in members))
                    if (ng.name, ids) in seen:
                        continue
                    seen.add((ng.name, ids))
                    out.append(_candidate(instance, members, ng, eff))
                    for i in ids:
                        count[i] += 1
    out.sort(key=lambda c: (-c.efficiency, c.jobs, c.node_group))
    return out


def with_groups_of(
    instance: Instance, groups: list[CandidateGroup], schedule: Schedule | None
) -> list[CandidateGroup]:
    """`groups` and every group of `schedule` they lack (on the node group its first
    member's first node belongs to, when admissible there), so that a start schedule
    made by another planner can be the exact solvers' hint in full."""
    if schedule is None or not schedule.groups:
        return groups
    have = {(c.jobs, c.node_group) for c in groups}
    jobs = {j.id: j for j in instance.jobs}
    first = {a.id: a.placement[0].node for a in schedule.jobs if a.placement}
    by_node = {n.name: n.group for n in instance.nodes}
    out = list(groups)
    for g in schedule.groups:
        members = sorted((jobs[i] for i in g.jobs if i in jobs), key=lambda j: j.id)
        node = first.get(members[0].id) if members else None
        if len(members) != len(g.jobs) or node is None:
            continue
        ng = by_node[node]
        ids = tuple(j.id for j in members)
        if (ids, ng.name) in have or not group_admissible(
            instance, members, ng.speed, ng.gpu_mem_gb
        ):
            continue
        out.append(_candidate(instance, members, ng, _efficiency(instance, members, ng.speed)))
        have.add((ids, ng.name))
    return out


def _candidate(
    instance: Instance, members: Sequence[Job], ng: NodeGroup, efficiency: float
) -> CandidateGroup:
    """The candidate of these members on node group `ng` (members by id, their in-group
    durations there)."""
    ordered = sorted(members, key=lambda j: j.id)
    durs = tuple(group_member_durations(instance, ordered, ng.speed))
    ids = tuple(j.id for j in ordered)
    return CandidateGroup(ids, ordered[0].gpus, ng.name, efficiency, durs, max(durs))


def _job_combinations(
    by_model: dict[str, list[Job]],
    combo: tuple[str, ...],
    dur: dict[str, int],
    count: dict[str, int],
    max_per_job: int,
) -> list[list[Job]]:
    """Concrete job sets for one model multiset: each job of the first model (in release
    order) with, per other model, the job nearest to it among those that still have room.
    Jobs are booked here so that one multiset cannot overfill a job; the caller books the
    kept ones in `count`."""
    booked: dict[str, int] = defaultdict(int)

    def room(j: Job) -> bool:
        return count[j.id] + booked[j.id] < max_per_job

    # Per model, the jobs with room in (release, duration) order; a job leaves when it
    # fills up, so the nearest-job search below stays local.
    avail = {m: [j for j in by_model[m] if room(j)] for m in set(combo)}
    keys = {m: [(j.release, dur[j.id], j.id) for j in avail[m]] for m in avail}

    def book(j: Job) -> None:
        booked[j.id] += 1
        if not room(j):
            m = j.model or ""
            i = bisect.bisect_left(keys[m], (j.release, dur[j.id], j.id))
            del avail[m][i]
            del keys[m][i]

    out: list[list[Job]] = []
    for anchor in list(avail[combo[0]]):
        if not room(anchor):
            continue
        members = [anchor]
        for m in combo[1:]:
            pick = _nearest(avail[m], keys[m], anchor, dur, members)
            if pick is None:
                break
            members.append(pick)
        else:
            out.append(members)
            for j in members:
                book(j)
    return out


# How many neighbours on each side, in release order, the nearest-job search looks at
# (chosen, not tuned: no run comparing other values is recorded).
_WINDOW = 8


def _nearest(
    cands: list[Job],
    keys: list[tuple[int, int, str]],
    anchor: Job,
    dur: dict[str, int],
    taken: list[Job],
) -> Job | None:
    """The job of `cands` nearest to `anchor`: smallest |release gap| + |duration gap|
    (the group starts at the later release and the shorter member leaves the longer one
    running alone), among the `_WINDOW` neighbours on each side in release order."""
    i = bisect.bisect_left(keys, (anchor.release, dur[anchor.id], anchor.id))
    taken_ids = {j.id for j in taken}
    best: tuple[int, str, Job] | None = None
    for k in range(max(0, i - _WINDOW), min(len(cands), i + _WINDOW + 1)):
        j = cands[k]
        if j.id in taken_ids:
            continue
        d = abs(j.release - anchor.release) + abs(dur[j.id] - dur[anchor.id])
        if best is None or (d, j.id) < best[:2]:
            best = (d, j.id, j)
    return None if best is None else best[2]


# Job sets tried at most when enumerating every admissible group (pairs to max_group);
# chosen, not tuned (no run comparing other values is recorded).
ENUMERATE_MAX = 3000


def exact_candidates(
    instance: Instance, per_job: int, most: int, start: Schedule | None
) -> tuple[list[CandidateGroup], bool]:
    """The candidate groups of an exact model and whether they hold every admissible
    group, which the model needs before an optimum, a bound or an infeasibility of its
    is a proof. The candidates each job keeps (`candidate_groups`), with every admissible
    group when there are at most `most` in all (so that small instances get real proofs),
    and the groups of `start` (`with_groups_of`). Completeness is known by enumeration
    when there are at most `ENUMERATE_MAX` job sets to try, else assumed not; candidates
    are formed at the jobs' default counts only (contract §12), so never complete for
    elastic jobs that may interleave."""
    groups = candidate_groups(instance, max_per_job=per_job)
    # candidate_groups keeps at least one group per admissible multiset: none, none exist
    none_exist = not groups and not instance.elastic
    found = _admissible_sets(instance)
    if found is not None and len(found) <= most:
        have = {(c.jobs, c.node_group) for c in groups}
        for members, ng in found:
            if (tuple(j.id for j in members), ng.name) not in have:
                eff = _efficiency(instance, members, ng.speed)
                groups.append(_candidate(instance, members, ng, eff))
    groups = with_groups_of(instance, groups, start)
    if found is None:
        return groups, none_exist
    have = {(c.jobs, c.node_group) for c in groups}
    return groups, all((tuple(j.id for j in m), ng.name) in have for m, ng in found)


def _admissible_sets(instance: Instance) -> list[tuple[tuple[Job, ...], NodeGroup]] | None:
    """Every admissible group (members by id, node group), or None when there are more
    than `ENUMERATE_MAX` job sets to try, or elastic jobs may interleave (candidates are
    formed at the jobs' default counts only, contract §12)."""
    if not instance.interleaving.enabled:
        return []
    if instance.elastic:
        return None
    jobs = sorted((j for j in instance.jobs if j.profiled and j.gpus >= 1), key=lambda j: j.id)
    k_max = instance.interleaving.max_group
    if sum(math.comb(len(jobs), k) for k in range(2, k_max + 1)) > ENUMERATE_MAX:
        return None
    out: list[tuple[tuple[Job, ...], NodeGroup]] = []
    for k in range(2, k_max + 1):
        for combo in combinations(jobs, k):
            if len({j.gpus for j in combo}) != 1:
                continue
            common = set.intersection(*(set(instance.eligible_groups(j)) for j in combo))
            for ng in instance.node_groups:
                if ng in common and group_admissible(instance, combo, ng.speed, ng.gpu_mem_gb):
                    out.append((combo, ng))
    return out


def split_by_reservation(instance: Instance, groups: Sequence[CandidateGroup]) -> bool:
    """Whether a GPU reservation that admits some jobs admits some members of a candidate
    group and not others, on a node of the group's node group. R10 binds each member only
    while it runs (after the others end, an admitted member may run on under the
    reservation). The MILP lets a group use reserved GPUs only when the reservation admits
    every member, for its whole span: stricter than the rules, so its optimum, bound and
    infeasibility are then no proof. CP-SAT holds such a group off the reservation only
    until its last member not admitted ends (`cpsat.constraints._outside`), which is exact
    (tests/test_groups.py)."""
    group_of = {n.name: n.group.name for n in instance.nodes}
    for r in instance.reservations:
        if r.pool is not None or not (r.admits.tenants or r.admits.jobs):
            continue
        on = {group_of[n] for n in r.nodes if n in group_of}
        for c in groups:
            if c.node_group in on:
                admitted = {r.admits.admits(instance.job_by_id[j]) for j in c.jobs}
                if len(admitted) == 2:
                    return True
    return False
