"""Choosing GPU counts and start times ahead of a planner that does not (contract §12).

A planner that takes each job's count as given (`Job.gpus`) plans an elastic instance once
the counts are fixed: `fixed_counts` gives that instance, and its schedules are valid for
the elastic one (a segment's count is its placement's size, one of the job's counts).
`count_choices` lists the count assignments the greedy planner tries; `price_shifts` the
instants before which it may hold jobs back to start them at a cheaper price. Which of
them wins is measured in `experiments/elastic_energy.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from planner.durations import solo_duration
from planner.energy import price_curve
from planner.instance import ENERGY_OBJECTIVES, Instance, Job
from planner.schedule import Schedule

# Hold-back instants tried by the greedy planner under an energy objective (the first
# cheaper price intervals): each costs one more greedy run per count choice.
MAX_SHIFTS = 4


def fixed_counts(instance: Instance, counts: Mapping[str, int]) -> Instance:
    """The instance with each job of `counts` fixed at that count."""
    if not counts:
        return instance
    jobs = tuple(j.fixed_at(counts[j.id]) if j.id in counts else j for j in instance.jobs)
    return replace(instance, jobs=jobs)


def counts_of(instance: Instance, schedule: Schedule) -> dict[str, int]:
    """Each elastic job's count in the schedule (its first segment's placement size)."""
    out = {}
    for a in schedule.jobs:
        j = instance.job_by_id.get(a.id)
        if j is not None and j.elastic:
            out[a.id] = sum(len(set(p.gpus)) for p in a.pieces()[0].placement)
    return out


def _duration(instance: Instance, job: Job, count: int) -> int:
    jc = job.at_count(count)
    return min(solo_duration(instance, jc, g.speed) for g in instance.eligible_groups(jc))


def count_choices(instance: Instance) -> list[tuple[str, dict[str, int]]]:
    """Count assignments to try, distinct, each named:
    - `listed`: every job at its default count (`Job.gpus`), so choosing never loses to
      the fixed counts;
    - `fewest`: the fewest GPUs (most jobs at once; least GPU-time when scaling is
      sublinear);
    - `fastest`: the count with the shortest solo duration (ties: fewer GPUs);
    - `fill`: the fewest GPUs, then, while the jobs' counts sum to less than the
      cluster's GPUs, one step up for the job whose duration falls most (an idle cluster
      lends its GPUs)."""
    elastic = [j for j in instance.jobs if j.elastic]
    dur = {(j.id, c): _duration(instance, j, c) for j in elastic for c in j.gpu_counts}
    fewest = {j.id: min(j.gpu_counts) for j in elastic}
    choices = [
        ("listed", {j.id: j.gpus for j in elastic}),
        ("fewest", fewest),
        ("fastest", {j.id: min(j.gpu_counts, key=lambda c: (dur[(j.id, c)], c)) for j in elastic}),
        ("fill", _fill(instance, elastic, dur, fewest)),
    ]
    out: list[tuple[str, dict[str, int]]] = []
    for name, counts in choices:
        if all(counts != c for _, c in out):
            out.append((name, counts))
    return out


def _fill(
    instance: Instance,
    elastic: list[Job],
    dur: Mapping[tuple[str, int], int],
    start: Mapping[str, int],
) -> dict[str, int]:
    counts = dict(start)
    room = sum(n.gpus for n in instance.nodes) - sum(j.gpus for j in instance.jobs if not j.elastic)
    used = sum(counts.values())
    while True:
        best: tuple[float, str, int] | None = None
        for j in elastic:
            up = sorted(c for c in j.gpu_counts if c > counts[j.id])
            if not up or used - counts[j.id] + up[0] > room:
                continue
            gain = dur[(j.id, counts[j.id])] - dur[(j.id, up[0])]
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, j.id, up[0])
        if best is None:
            return counts
        used += best[2] - counts[best[1]]
        counts[best[1]] = best[2]


def price_shifts(instance: Instance, names: tuple[str, ...] | list[str]) -> list[int]:
    """Instants before which jobs may be held back to start in a cheaper price interval:
    the starts of the first MAX_SHIFTS intervals cheaper than the price at time 0, when
    `energy_cost` is among the objectives; else none."""
    if "energy_cost" not in names or not instance.power_price:
        return []
    curve = price_curve(instance)
    now = curve.price_at(0)
    out: list[int] = []
    for p in instance.power_price:
        if p.start > 0 and p.price < now and (not out or p.start > out[-1]):
            out.append(p.start)
            now = p.price
        if len(out) >= MAX_SHIFTS:
            break
    return out


def held_back(instance: Instance, t: int) -> Instance:
    """The instance with every job released no earlier than `t`, except jobs whose
    deadline would not leave room for their shortest run after `t`."""
    jobs = []
    for j in instance.jobs:
        shortest = min(_duration(instance, j, c) for c in j.gpu_counts) if j.gpus else 0
        if j.deadline is not None and max(t, j.release) + shortest > j.deadline:
            jobs.append(j)
        else:
            jobs.append(replace(j, release=max(j.release, t)))
    return replace(instance, jobs=tuple(jobs))


def prices_matter(names: tuple[str, ...] | list[str]) -> bool:
    return any(n in ENERGY_OBJECTIVES for n in names)
