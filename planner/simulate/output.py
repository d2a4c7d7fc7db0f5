"""A simulation result as a schedule document (contract §6 with §8 segments)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.instance import Instance
from planner.metrics import metrics
from planner.schedule import FORMAT, Assignment, Schedule, Segment
from planner.simulate.model import SimResult, SimSegment
from planner.simulate.packer import count_of


def _pl(seg: SimSegment) -> list[dict[str, Any]]:
    return [{"node": p.node, "gpus": list(p.gpus)} for p in seg.placement]


def sim_metrics(instance: Instance, res: SimResult) -> dict[str, float]:
    """The contract §6 and §12 metrics of a simulated schedule, from every segment (JCT
    from a job's last end; GPU time, energy and its cost while any segment uses a GPU)."""
    jobs = []
    for j in instance.jobs:
        segs = [Segment(q.start, q.end, q.placement, q.group) for q in res.segments[j.id]]
        jobs.append(Assignment(j.id, segs[0].start, segs[-1].end).with_pieces(segs))
    return metrics(instance, Schedule(instance.name, "", "feasible", tuple(jobs)))


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
            {"id": g, "jobs": ids}
            for g, ids in sorted(labels.items(), key=lambda x: _label_key(x[0]))
        ],
        "metrics": m,
        "info": {"simulation": dict(res.info)},
    }


def _label_key(label: str) -> tuple[int, str]:
    """The engine's labels g1, g2, ... in number order; a live state's own first."""
    num = label[1:]
    return (int(num), "") if label.startswith("g") and num.isdigit() else (-1, label)


def missed_limits(instance: Instance, realized: Schedule, violations: Sequence[Any]) -> int | None:
    """How many jobs end after their deadline or the horizon, when that is every violation
    of the realized schedule (an online policy may miss them: the policy's doing); None
    when some violation is of another kind (the engine broke a rule)."""
    late = set()
    for a in realized.jobs:
        j = instance.job_by_id[a.id]
        limits = [x for x in (j.deadline, instance.horizon) if x is not None]
        if any(a.end > x for x in limits):
            late.add(a.id)
    if all(v.rule == "R2" and v.job in late for v in violations):
        return len(late)
    return None
