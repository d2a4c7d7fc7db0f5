"""Durations and interleaving (contract §4): the one piece of arithmetic that the planners
and the verifier share. Everything here is a pure function of numbers and profiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import permutations

from planner.errors import gpus_phrase
from planner.instance import TOL, GpuProfile, Instance, Job, over

StageTuple = tuple[float, float, float]  # (data, gpu / speed, net) in ms


def ceil_units(ms: float, unit_ms: float) -> int:
    # TOL guards the ceiling against float noise such as 437.00000000000006 time units. A
    # positive time below TOL still takes one unit, as contract §4's ceiling gives: a group
    # whose cycle is vanishingly small (an overhead of 1e-12) ends its members a unit after
    # their start, never at it (R1; tests/test_durations.py, the vanishing cycle test).
    units = ms / unit_ms
    return max(1 if units > 0 else 0, math.ceil(units - TOL))


def solo_iteration_ms(gp: GpuProfile, speed: float = 1.0) -> float:
    """Measured iteration time with the GPU stage scaled by the node's speed."""
    return gp.iteration_ms - gp.stages.gpu + gp.stages.gpu / speed


def best_speed(instance: Instance, *jobs: Job) -> float:
    """The speed of the fastest node group every one of `jobs` may use (1.0 when they share
    none): where a job's solo time is shortest, as greedy's `best_solo_duration` takes it.
    The simulation's policies, the online versions of the greedy rules (contract §10), rank
    jobs by it; the weighted regrouping policy prices a group of `jobs` there."""
    shared = set.intersection(*({g.name for g in instance.eligible_groups(j)} for j in jobs))
    return max((g.speed for g in instance.node_groups if g.name in shared), default=1.0)


def stage_tuple(gp: GpuProfile, speed: float = 1.0) -> StageTuple:
    return (gp.stages.data, gp.stages.gpu / speed, gp.stages.net)


def solo_duration(instance: Instance, job: Job, speed: float = 1.0) -> int:
    """Duration in time units of `job` run alone on a node of the given speed."""
    if job.duration is not None:
        return job.duration
    assert job.iterations is not None
    it = solo_iteration_ms(instance.gpu_profile(job), speed)
    return ceil_units(job.iterations * it, instance.unit_ms)


def slot_cycle(order: Sequence[StageTuple]) -> float:
    """Steady period of the 4-slot cycle for one ordering of k <= 4 jobs.

    f[i + 1] is the most of f[i], f[i] + n[(i + 1) % 4], f[i] + g[(i + 2) % 4] and, from
    i = 1, f[i - 1] + d[(i + 3) % 4] (each term when that slot holds a job); the period is
    (f[160] - f[80]) / 20. Kept as the two last values, with each step's terms looked up
    once per slot: the same sums and comparisons as the whole list and `max` of each
    step, in a quarter of the time (it ran for every new group of the matchings)."""
    k = len(order)
    steps = [
        (
            order[(r + 1) % 4][2] if (r + 1) % 4 < k else None,
            order[(r + 2) % 4][1] if (r + 2) % 4 < k else None,
            order[(r + 3) % 4][0] if (r + 3) % 4 < k else None,
        )
        for r in range(4)
    ]
    prev = cur = f80 = 0.0  # f[i - 1], f[i], f[80]
    for i in range(160):
        n, g, d = steps[i & 3]
        best = cur
        if n is not None and cur + n > best:
            best = cur + n
        if g is not None and cur + g > best:
            best = cur + g
        if d is not None and i >= 1 and prev + d > best:
            best = prev + d
        prev, cur = cur, best
        if i == 79:
            f80 = best
    return (cur - f80) / 20


def pair_cycle(a: StageTuple, b: StageTuple) -> float:
    return max(a[0], b[1] + b[2]) + max(b[0], a[1] + a[2])


@lru_cache(maxsize=65536)
def _raw_cycle_sorted(stages: tuple[StageTuple, ...]) -> float:
    best = min(slot_cycle(p) for p in permutations(stages))
    if len(stages) == 2:
        best = min(best, pair_cycle(stages[0], stages[1]))
    return best


def raw_cycle(stages: Sequence[StageTuple]) -> float:
    """TT(G): the best cycle over all orderings (and the pair formula for two jobs)."""
    if len(stages) < 2:
        raise ValueError("a group has at least two members")
    return _raw_cycle_sorted(tuple(sorted(stages)))


def group_cycle(stages: Sequence[StageTuple], overhead: Mapping[int, float]) -> float:
    """c(G) = overhead[k] * TT(G), in ms per iteration of every member."""
    return overhead[len(stages)] * raw_cycle(stages)


def member_elapsed_ms(
    iterations: Sequence[int],
    stages: Sequence[StageTuple],
    solo_ms: Sequence[float],
    overhead: Mapping[int, float],
) -> list[float]:
    """Time from the group's start to each member's end, in ms, phase by phase.

    All members advance one iteration per cycle; when one finishes, the rest go on as a
    smaller group with its own cycle, the last one alone at its solo iteration time.
    """
    remaining = [float(it) for it in iterations]
    active = list(range(len(iterations)))
    elapsed = [0.0] * len(iterations)
    now = 0.0
    while active:
        if len(active) == 1:
            cyc = solo_ms[active[0]]
        else:
            cyc = group_cycle([stages[i] for i in active], overhead)
        step = min(remaining[i] for i in active)
        now += step * cyc
        still = []
        for i in active:
            remaining[i] -= step
            if remaining[i] <= 0:
                elapsed[i] = now
            else:
                still.append(i)
        active = still
    return elapsed


def group_member_durations(
    instance: Instance, jobs: Sequence[Job], speed: float = 1.0
) -> list[int]:
    """Each member's `end - start` in time units when `jobs` run as one group."""
    gps = [instance.gpu_profile(j) for j in jobs]
    elapsed = member_elapsed_ms(
        [j.iterations or 0 for j in jobs],
        [stage_tuple(gp, speed) for gp in gps],
        [solo_iteration_ms(gp, speed) for gp in gps],
        instance.interleaving.overhead,
    )
    return [ceil_units(e, instance.unit_ms) for e in elapsed]


def group_gpu_mem(instance: Instance, jobs: Sequence[Job]) -> float:
    """GB each GPU must hold for `jobs` sharing it (one solo job or one group's members):
    the sum of their profiles' `gpu_mem_gb` (contract §4, R7).

    The one rule for unknown memory, used by the planners and the verifier alike: a member
    whose profile gives no `gpu_mem_gb` (or that has no profile) adds 0, so the members
    whose memory is known must fit on their own. A group is never refused for a number
    the instance does not give, nor accepted when the numbers it gives do not fit."""
    total = 0.0
    for j in jobs:
        if j.model is not None and j.model in instance.profiles:
            total += instance.profiles[j.model].gpu_mem_gb or 0.0
    return total


def gpu_mem_fits(instance: Instance, jobs: Sequence[Job], gpu_mem_gb: float | None) -> bool:
    """`group_gpu_mem` fits GPUs of `gpu_mem_gb` GB (always, when that is not given)."""
    return gpu_mem_gb is None or not over(group_gpu_mem(instance, jobs), gpu_mem_gb)


def inadmissible_reason(
    instance: Instance, jobs: Sequence[Job], speed: float = 1.0, gpu_mem_gb: float | None = None
) -> str | None:
    """Why `jobs` may not run as one group on nodes of this speed and GPU memory (contract
    §4), or None: 2..max_group profiled jobs, same GPU count, every profile has that GPU
    count, their GPU memory fits (`gpu_mem_fits`; not checked when `gpu_mem_gb` is None),
    and a cycle shorter than the sum of solo iteration times. Checked in that order."""
    k = len(jobs)
    if not 2 <= k <= instance.interleaving.max_group:
        return f"{k} members, allowed 2..{instance.interleaving.max_group}"
    if any(not j.profiled for j in jobs):
        return "jobs with an explicit duration do not interleave"
    if any(instance.profiles[j.model or ""].alone for j in jobs):
        return "the rest of a stopped job runs alone"
    if len({j.gpus for j in jobs}) != 1:
        return "members have different GPU counts"
    gpus = jobs[0].gpus
    profs = [instance.profiles[j.model] for j in jobs if j.model is not None]
    for p in profs:
        if gpus not in p.by_gpus:
            return f"{p.model} has no profile for {gpus_phrase(gpus)}"
    if not gpu_mem_fits(instance, jobs, gpu_mem_gb):
        need = group_gpu_mem(instance, jobs)
        return f"the members need {need:g} GB per GPU, the GPUs have {gpu_mem_gb:g} GB"
    gps = [p.by_gpus[gpus] for p in profs]
    cyc = group_cycle([stage_tuple(gp, speed) for gp in gps], instance.interleaving.overhead)
    if cyc >= sum(solo_iteration_ms(gp, speed) for gp in gps):
        return "its cycle is not shorter than the sum of the solo iteration times"
    return None


def group_admissible(
    instance: Instance, jobs: Sequence[Job], speed: float = 1.0, gpu_mem_gb: float | None = None
) -> bool:
    """Contract §4: `inadmissible_reason` finds nothing."""
    return inadmissible_reason(instance, jobs, speed, gpu_mem_gb) is None


def restart_units(instance: Instance, job: Job) -> int:
    """Contract §8: the cost, in time units, charged at the start of every segment after a
    job's first. The profile's `restart_ms` at the job's GPU count, rounded up on its own,
    when it gives one; else the instance's `policy.preemption.restart` (also for jobs with
    an explicit duration)."""
    if job.model is not None:
        gp = instance.profiles[job.model].by_gpus.get(job.gpus)
        if gp is not None and gp.restart_ms is not None:
            return ceil_units(gp.restart_ms, instance.unit_ms)
    return instance.preemption.restart
