"""Choosing GPU counts and start times ahead of a planner that does not (contract §12).

A planner that takes each job's count as given (`Job.gpus`) plans an elastic instance once
the counts are fixed: `fixed_counts` gives that instance, and its schedules are valid for
the elastic one (a segment's count is its placement's size, one of the job's counts).
`count_choices` lists the count assignments the greedy planner tries; `hold_backs` the
earliest starts it may hold jobs back to, to start them at a cheaper price. Which of
them wins is measured in `experiments/elastic_energy.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from planner.durations import solo_duration
from planner.energy import price_curve
from planner.instance import Instance, Job
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
      lends its GPUs);
    - `at placement` (empty: nothing fixed): the planner's serial engine chooses each
      job's count when it places it (the one that ends it first); its event engine runs
      the listed counts."""
    elastic = [j for j in instance.jobs if j.elastic]
    dur = {(j.id, c): _duration(instance, j, c) for j in elastic for c in j.gpu_counts}
    fewest = {j.id: min(j.gpu_counts) for j in elastic}
    choices = [
        ("listed", {j.id: j.gpus for j in elastic}),
        ("fewest", fewest),
        ("fastest", {j.id: min(j.gpu_counts, key=lambda c: (dur[(j.id, c)], c)) for j in elastic}),
        ("fill", _fill(instance, elastic, dur, fewest)),
        ("at placement", {}),
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


def hold_backs(instance: Instance, names: Sequence[str]) -> list[tuple[str, dict[str, int]]]:
    """Earliest starts to plan with under `energy_cost` (none otherwise), each named:
    - `until T`: every job held back to T, for the first MAX_SHIFTS instants T at which
      the price falls below every earlier price (a job whose deadline leaves no room after
      T keeps its release);
    - `cheapest`: each job held back to the instant in its window (release to deadline
      less its shortest run; without a deadline, up to the price curve's end) where its
      shortest run is cheapest; the first such instant.
    Outside every interval the price is 0 (contract §12): the end of the last interval is
    such an instant. Without it an 8-job instance whose prices end at 9000 was planned at
    0.319 by greedy and CP-SAT, where holding everything back to 9000 gives 0.300
    (`tests/test_elastic.py`)."""
    if "energy_cost" not in names or not instance.power_price:
        return []
    curve = price_curve(instance)
    shortest = {j.id: _shortest(instance, j) for j in instance.jobs}
    out: list[tuple[str, dict[str, int]]] = []
    now = curve.price_at(0)
    points = curve.breakpoints()
    for t in points:
        if len(out) < MAX_SHIFTS and t > 0 and curve.price_at(t) < now:
            out.append((f"until {t}", _until(instance, t, shortest)))
            now = curve.price_at(t)
    cheap = {}
    for j in instance.jobs:
        d = shortest[j.id]
        last = (j.deadline - d) if j.deadline is not None else max(points[-1], j.release)
        cands = [j.release] + [t for b in points for t in (b, b - d) if j.release < t <= last]
        cheap[j.id] = min(cands, key=lambda t: (round(curve.integral(t, t + d), 9), t))
    out.append(("cheapest", cheap))
    return out


def _shortest(instance: Instance, job: Job) -> int:
    if not job.gpus:
        return job.duration or 0
    return min(_duration(instance, job, c) for c in job.gpu_counts)


def _until(instance: Instance, t: int, shortest: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for j in instance.jobs:
        if j.deadline is None or max(t, j.release) + shortest[j.id] <= j.deadline:
            out[j.id] = max(j.release, t)
    return out


def held_back(instance: Instance, starts: Mapping[str, int]) -> Instance:
    """The instance with each job of `starts` released no earlier than its entry."""
    jobs = tuple(
        replace(j, release=max(j.release, starts[j.id])) if j.id in starts else j
        for j in instance.jobs
    )
    return replace(instance, jobs=jobs)
