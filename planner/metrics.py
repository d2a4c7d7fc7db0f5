"""Metrics and objective values of a schedule (contract §6), from the schedule alone.

- makespan: the latest end (time 0 is the origin), an integer like every time (contract
  §1, §6); 0 for an empty schedule. A preempted job (contract §8) ends when its last
  segment ends.
- JCT of a job: `end - release`. avg_jct is the mean, p99_jct the nearest-rank 99th
  percentile (sorted JCTs, index `ceil(0.99 n) - 1`); both 0 for an empty schedule.
- total_weighted_jct: sum of `weight * (end - release)`; total_weighted_tardiness: sum of
  `weight * max(0, end - due)` over jobs with a `due`.
- gpu_utilization: busy GPU-time / (GPUs in the cluster * makespan), 0 when either is 0.
  A GPU is busy once while anything uses it: a solo segment, or a group from its start
  to its last member's end (not once per member, not twice where uses overlap).
- energy_kwh: every GPU of the cluster draws `gpu_busy_w` while busy and `gpu_idle_w`
  otherwise, from time 0 to the makespan.
- energy_cost (contract §12): the same draw over [0, makespan) times `cluster.power_price`
  (per kWh, 0 outside its intervals): every GPU's idle draw times the price integral over
  [0, makespan), plus `gpu_busy_w - gpu_idle_w` times the price integral over each span in
  which the GPU is busy (the union of its holders' spans, as for utilisation).

Jobs of the schedule that the instance does not know, and repeated ids, are ignored (the
verifier reports them). Nothing is rounded here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from planner.energy import extra_watts, idle_watts, kwh_per_watt_unit, price_curve
from planner.instance import OBJECTIVES, Instance
from planner.schedule import Assignment, Schedule, Segment

METRIC_KEYS = (
    "makespan",
    "avg_jct",
    "p99_jct",
    "total_weighted_jct",
    "total_weighted_tardiness",
    "gpu_utilization",
    "energy_kwh",
    "energy_cost",
)


def _known(instance: Instance, schedule: Schedule) -> list[Assignment]:
    seen: set[str] = set()
    out = []
    for a in schedule.jobs:
        if a.id in instance.job_by_id and a.id not in seen:
            seen.add(a.id)
            out.append(a)
    return out


def nearest_rank(values: Sequence[float], pct: float) -> float:
    """The nearest-rank percentile: sorted values, index ceil(pct/100 * n) - 1."""
    if not values:
        return 0.0
    xs = sorted(values)
    k = max(1, math.ceil(pct / 100 * len(xs) - 1e-9))
    return float(xs[k - 1])


def busy_gpu_time(instance: Instance, schedule: Schedule) -> dict[str, float]:
    """Node name -> busy GPU-time on it (GPUs * time units): per GPU, the length of the
    union of the intervals in which a solo segment or a group holds it."""
    busy: dict[str, float] = defaultdict(float)
    for (node, _), spans in _held(instance, schedule).items():
        busy[node] += sum(e - s for s, e in _union(spans))
    return dict(busy)


def _held(instance: Instance, schedule: Schedule) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """(node, GPU) -> the spans in which a solo segment or a whole group holds it."""
    held: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    groups: dict[str, list[Segment]] = defaultdict(list)
    for a in _known(instance, schedule):
        for seg in a.pieces():
            if seg.group is not None:
                groups[seg.group].append(seg)
                continue
            for p in seg.placement:
                for g in set(p.gpus):
                    held[(p.node, g)].append((seg.start, seg.end))
    for members in groups.values():
        start = min(s.start for s in members)
        end = max(s.end for s in members)
        for s in members:
            for p in s.placement:
                for g in set(p.gpus):
                    held[(p.node, g)].append((start, end))
    return held


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of spans as disjoint spans, in order (empty spans dropped)."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def energy_cost(instance: Instance, schedule: Schedule, makespan: int) -> float:
    """The price of the cluster's draw over [0, makespan) (contract §12)."""
    if not instance.power_price or makespan <= 0:
        return 0.0
    curve = price_curve(instance)
    idle = idle_watts(instance) * curve.integral(0, makespan)
    extra = 0.0
    for (node, _), spans in _held(instance, schedule).items():
        if node not in instance.node_by_name:
            continue  # the verifier reports unknown nodes
        g = instance.node_by_name[node].group
        if g.gpu_busy_w != g.gpu_idle_w:
            priced = sum(curve.integral(s, e) for s, e in _union(spans))
            extra += extra_watts(g) * priced
    return (idle + extra) * kwh_per_watt_unit(instance)


def metrics(instance: Instance, schedule: Schedule) -> dict[str, float]:
    """The metrics of contract §6 and §12, keyed as in the schedule file."""
    jobs = _known(instance, schedule)
    by_id = instance.job_by_id
    ends = {a.id: a.pieces()[-1].end for a in jobs}  # a job's last end (contract §8)
    makespan = max(ends.values(), default=0)
    jct = [ends[a.id] - by_id[a.id].release for a in jobs]
    twj = sum(by_id[a.id].weight * (ends[a.id] - by_id[a.id].release) for a in jobs)
    twt = 0.0
    for a in jobs:
        j = by_id[a.id]
        if j.due is not None:
            twt += j.weight * max(0, ends[a.id] - j.due)
    busy = busy_gpu_time(instance, schedule)
    cluster_gpus = sum(n.gpus for n in instance.nodes)
    total_busy = sum(busy.values())
    util = total_busy / (cluster_gpus * makespan) if cluster_gpus and makespan else 0.0
    # W * time units -> kWh: * unit_ms / 3.6e6 (ms per hour) / 1000 (W per kW)
    to_kwh = kwh_per_watt_unit(instance)
    energy = 0.0
    for n in instance.nodes:
        b = busy.get(n.name, 0.0)
        idle = n.gpus * makespan - b
        energy += (b * n.group.gpu_busy_w + idle * n.group.gpu_idle_w) * to_kwh
    return {
        "makespan": makespan,
        "avg_jct": sum(jct) / len(jct) if jct else 0.0,
        "p99_jct": nearest_rank(jct, 99),
        "total_weighted_jct": float(twj),
        "total_weighted_tardiness": float(twt),
        "gpu_utilization": util,
        "energy_kwh": energy,
        "energy_cost": energy_cost(instance, schedule, makespan),
    }


def objective_vector(instance: Instance, schedule: Schedule, names: Sequence[str]) -> list[float]:
    """The schedule's objective values in the order of `names`: what the planners compare
    (lexicographically) when they choose between plans."""
    v = objective_values(instance, schedule, names)
    return [float(v[n]) for n in names]


def strictly_better(a: Sequence[float], b: Sequence[float], tol: float = 0.0) -> bool:
    """Whether the objective vector `a` (objective_vector) beats `b`: lexicographically
    smaller, every objective minimised, the first listed first (contract §2, `objective`).
    The first objective on which they differ by more than `tol` decides; where none does
    they tie and the answer is False, so a caller that replaces its plan only on True keeps
    the one it holds: the tie rule is the caller's, by which side it passes as `a`.

    `tol` is relative to `b`'s value, absolute below 1 (an energy cost's terms may cancel
    to float noise around 0). 0, the planners' comparison of their own plans, compares
    exactly, as Python's list `<` does on the (finite) objective values; the exact solvers
    pass theirs (`planner/solvers/exact.py`: ties within 10^-6 go to the earlier start rule;
    a model's plan is refused only when its start is better by more than float error)."""
    for x, y in zip(a, b, strict=True):
        slack = tol * max(1.0, abs(y)) if tol else 0.0
        if x < y - slack:
            return True
        if x > y + slack:
            return False
    return False


def objective_values(
    instance: Instance, schedule: Schedule, names: Sequence[str]
) -> dict[str, float]:
    """The named objectives (contract §2) of the schedule, in the given order."""
    bad = [n for n in names if n not in OBJECTIVES]
    if bad:
        raise ValueError(f"unknown objective {', '.join(bad)}; known: {', '.join(OBJECTIVES)}")
    m = metrics(instance, schedule)
    return {n: m[n] for n in names}


def group_count(schedule: Schedule) -> int:
    """How many interleaving groups the schedule's jobs use."""
    return len({a.group for a in schedule.jobs if a.group is not None})
