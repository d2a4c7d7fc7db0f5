"""A simulation result as a schedule document (contract §6 with §8 segments)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from planner.instance import Instance
from planner.metrics import metrics
from planner.schedule import FORMAT, Assignment, Schedule
from planner.simulate.model import Segment, SimResult
from planner.simulate.packer import count_of


def _pl(seg: Segment) -> list[dict[str, Any]]:
    return [{"node": p.node, "gpus": list(p.gpus)} for p in seg.placement]


def _busy(instance: Instance, res: SimResult) -> dict[str, float]:
    """Node -> busy GPU-time, each GPU counted once while any segment uses it (§8)."""
    spans: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for segs in res.segments.values():
        for seg in segs:
            for p in seg.placement:
                for g in p.gpus:
                    spans[(p.node, g)].append((seg.start, seg.end))
    busy: dict[str, float] = defaultdict(float)
    for (node, _g), iv in spans.items():
        iv.sort()
        cur_s, cur_e = iv[0]
        for s, e in iv[1:]:
            if s > cur_e:
                busy[node] += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        busy[node] += cur_e - cur_s
    return busy


def sim_metrics(instance: Instance, res: SimResult) -> dict[str, float]:
    """The contract §6 metrics of a simulated schedule: JCT from each job's last end."""
    firsts = []
    for j in instance.jobs:
        segs = res.segments[j.id]
        firsts.append(Assignment(j.id, segs[0].start, segs[-1].end, segs[0].placement))
    m = metrics(instance, Schedule(instance.name, "", "feasible", tuple(firsts)))
    busy = _busy(instance, res)
    makespan = m["makespan"]
    cluster = sum(n.gpus for n in instance.nodes)
    m["gpu_utilization"] = sum(busy.values()) / (cluster * makespan) if makespan else 0.0
    to_kwh = instance.unit_ms / 3.6e9
    m["energy_kwh"] = sum(
        (
            busy.get(n.name, 0.0) * n.group.gpu_busy_w
            + (n.gpus * makespan - busy.get(n.name, 0.0)) * n.group.gpu_idle_w
        )
        * to_kwh
        for n in instance.nodes
    )
    return m


def result_to_schedule_dict(
    instance: Instance, res: SimResult, wall_s: float = 0.0
) -> dict[str, Any]:
    """Schedule JSON of contract §6 + §8: a job's start/end/placement/group repeat its first
    segment (its end is the last segment's end); `segments` appear only when there are
    several; `groups` lists, per label, exactly the jobs carrying it."""
    jobs: list[dict[str, Any]] = []
    labels: dict[str, list[str]] = {}
    for j in instance.jobs:
        segs = res.segments[j.id]
        first = segs[0]
        entry: dict[str, Any] = {
            "id": j.id,
            "start": first.start,
            "end": segs[-1].end,
            "group": first.group,
            "placement": _pl(first),
        }
        if j.elastic:  # contract §12: the first segment's count
            entry["gpus"] = count_of(first.placement)
        if len(segs) > 1:
            entry["segments"] = [
                {"start": s.start, "end": s.end, "placement": _pl(s), "group": s.group}
                for s in segs
            ]
        for s in segs:
            if s.group is not None and j.id not in labels.setdefault(s.group, []):
                labels[s.group].append(j.id)
        jobs.append(entry)
    m = sim_metrics(instance, res)
    return {
        "format": FORMAT,
        "instance": instance.name,
        "solver": f"simulate:{res.policy}",
        "status": "feasible",
        "objective": {o: m[o] for o in instance.objective},
        "lower_bound": None,
        "wall_s": round(wall_s, 3),
        "jobs": jobs,
        "groups": [
            {"id": g, "jobs": ids} for g, ids in sorted(labels.items(), key=lambda x: int(x[0][1:]))
        ],
        "metrics": m,
        "info": {"simulation": dict(res.info)},
    }
