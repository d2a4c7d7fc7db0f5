"""PSPLIB single-mode RCPSP (`.sm`) files to the contract's instance JSON.

Kolisch & Sprecher (1996), "PSPLIB - A project scheduling problem library", EJOR
96:205-216. Each renewable resource R1..Rk becomes a cluster pool with its capacity;
each non-dummy activity becomes an explicit-duration job `j<n>` with `gpus: 0`, its
resource requests as `demand` and its predecessors in `after`.

The supersource and supersink (activities with duration 0 and no requests, first and
last) are dropped: they constrain nothing, and the makespan (max end) is the same.
The cluster has no nodes: the project needs only its pools.
"""

from __future__ import annotations

import re
from typing import Any

from planner.importers import project_instance


class PsplibFormatError(ValueError):
    pass


def _section(lines: list[str], title: str) -> int:
    for i, line in enumerate(lines):
        if line.strip().upper().startswith(title):
            return i
    raise PsplibFormatError(f"section {title!r} not found")


def _ints(line: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", line)]


def parse_sm(text: str, name: str = "psplib") -> dict[str, Any]:
    """Parse a single-mode `.sm` file into an instance dict (objective: makespan)."""
    lines = text.splitlines()
    n_jobs = None
    for line in lines:
        if line.lower().startswith("jobs (incl. supersource/sink )"):
            n_jobs = _ints(line.split(":", 1)[1])[0]
    if n_jobs is None:
        raise PsplibFormatError("'jobs (incl. supersource/sink )' line not found")

    succ: dict[int, list[int]] = {}
    i = _section(lines, "PRECEDENCE RELATIONS:") + 2
    while len(succ) < n_jobs:
        nums = _ints(lines[i])
        i += 1
        if not nums:
            continue
        job, _modes, n_succ = nums[0], nums[1], nums[2]
        succ[job] = nums[3 : 3 + n_succ]

    i = _section(lines, "REQUESTS/DURATIONS:")
    header = lines[i + 1]
    res_names = [f"R{n}" for n in _ints(header.split("duration", 1)[1])]
    dur: dict[int, int] = {}
    req: dict[int, list[int]] = {}
    i += 3  # title, header, dashes
    while len(dur) < n_jobs:
        nums = _ints(lines[i])
        i += 1
        if not nums:
            continue
        job, _mode, d = nums[0], nums[1], nums[2]
        dur[job] = d
        req[job] = nums[3 : 3 + len(res_names)]

    i = _section(lines, "RESOURCEAVAILABILITIES:")
    caps = _ints(lines[i + 2])
    if len(caps) != len(res_names):
        raise PsplibFormatError("resource availabilities do not match the resources")

    def dummy(j: int) -> bool:
        return dur[j] == 0 and not any(req[j]) and j in (1, n_jobs)

    pred: dict[int, list[int]] = {j: [] for j in dur}
    for a, bs in succ.items():
        for b in bs:
            pred[b].append(a)
    jobs = []
    for j in sorted(dur):
        if dummy(j):
            continue
        demand = {r: q for r, q in zip(res_names, req[j], strict=True) if q}
        entry: dict[str, Any] = {"id": f"j{j}", "duration": dur[j], "gpus": 0, "demand": demand}
        after = [f"j{a}" for a in sorted(pred[j]) if not dummy(a)]
        if after:
            entry["after"] = after
        jobs.append(entry)
    return project_instance(name, dict(zip(res_names, caps, strict=True)), jobs)
