"""A hand-written instance and a schedule with segments, shared by the `plan show` tests.

The schedule is written by hand (not by a planner) so that it has every kind of bar:
job `a` is preempted (contract §8) and resumes on another node, `g1` and `g2` form group
`G` (same GPUs, same start, different ends), `b` spans both nodes, `c` holds only the
power pool. It is a valid schedule of the instance (a test checks it with the verifier):
`a` restarts at no cost, and the iterations of `g1` (dqn) and `g2` (vgg16) make the §4
group durations exactly 100 and 60.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

INSTANCE: dict[str, Any] = {
    "version": 1,
    "name": "show-case",
    "time_unit": "s",
    "cluster": {
        "nodes": [{"name": "n", "count": 2, "gpus": 4, "gpu_mem_gb": 32}],
        "pools": {"power_kw": 10},
    },
    "interleaving": {"enabled": True},
    "policy": {"preemption": {"enabled": True, "restart": 0}},
    "jobs": [
        {"id": "a", "duration": 70, "gpus": 2, "priority": 1, "tenant": "t1", "deadline": 300},
        {"id": "g1", "model": "dqn", "gpus": 2, "iterations": 175, "tenant": "t1"},
        {"id": "g2", "model": "vgg16", "gpus": 2, "iterations": 94, "tenant": "t2"},
        {"id": "b", "duration": 50, "gpus": 8, "release": 10, "tenant": "t2"},
        {"id": "c", "duration": 30, "gpus": 0, "demand": {"power_kw": 3}},
        {"id": "d", "duration": 50, "gpus": 2, "tenant": "t2", "demand": {"power_kw": 4}},
    ],
    "reservations": [
        {"id": "maint", "start": 160, "end": 200, "nodes": ["n-0"], "gpus": [2, 3], "for": None},
        {"id": "cap", "start": 0, "end": 50, "pool": "power_kw", "amount": 2, "for": None},
    ],
}


def _pl(node: str, *gpus: int) -> list[dict[str, Any]]:
    return [{"node": node, "gpus": list(gpus)}]


SCHEDULE: dict[str, Any] = {
    "format": "planner-schedule/1",
    "instance": "show-case",
    "solver": "by hand",
    "status": "feasible",
    "objective": {"total_weighted_jct": 470.0},
    "lower_bound": {"total_weighted_jct": 400.0},
    "jobs": [
        {
            "id": "a",
            "start": 0,
            "end": 90,
            "group": None,
            "placement": _pl("n-0", 0, 1),
            "segments": [
                {"start": 0, "end": 40, "placement": _pl("n-0", 0, 1), "group": None},
                {"start": 60, "end": 90, "placement": _pl("n-1", 2, 3), "group": None},
            ],
        },
        {"id": "g1", "start": 0, "end": 100, "group": "G", "placement": _pl("n-1", 0, 1)},
        {"id": "g2", "start": 0, "end": 60, "group": "G", "placement": _pl("n-1", 0, 1)},
        {
            "id": "b",
            "start": 100,
            "end": 150,
            "group": None,
            "placement": [*_pl("n-0", 0, 1, 2, 3), *_pl("n-1", 0, 1, 2, 3)],
        },
        {"id": "c", "start": 0, "end": 30, "group": None, "placement": []},
        {"id": "d", "start": 0, "end": 50, "group": None, "placement": _pl("n-0", 2, 3)},
    ],
    "groups": [{"id": "G", "jobs": ["g1", "g2"]}],
    "metrics": {"makespan": 150, "total_weighted_jct": 470.0, "gpu_utilization": 0.7},
}


def rows(doc: dict[str, Any]) -> set[tuple[str, int, str]]:
    """The (job, segment, node) rows of a schedule document, read straight from the JSON
    (a job without placement has one row with node "")."""
    out = set()
    for j in doc["jobs"]:
        for k, seg in enumerate(j.get("segments") or [j]):
            for p in seg["placement"] or [{"node": ""}]:
                out.add((j["id"], k, p["node"]))
    return out


def write_case(folder: Path) -> tuple[Path, Path]:
    """Write the instance and the schedule (which records the instance file) to `folder`."""
    inst, sched = folder / "case-instance.json", folder / "case-schedule.json"
    inst.write_text(json.dumps(INSTANCE), encoding="utf-8")
    doc = {**SCHEDULE, "info": {"instance_file": str(inst)}}
    sched.write_text(json.dumps(doc), encoding="utf-8")
    return inst, sched
