"""Job-shop (`.jss`, OR-Library / Taillard style) files to the contract's instance JSON.

First non-comment line: `n_jobs n_machines`; then one line per job of
`machine duration` pairs in processing order. Each machine becomes a pool `m<k>` of
capacity 1; each task a job `t<job>_<op>` (0-based) with `gpus: 0`, demand `{m<k>: 1}`
and the previous task of its job in `after`. The cluster has no nodes: the machines are
the pools. Objective: makespan.
"""

from __future__ import annotations

from typing import Any

from planner.importers import project_instance


class JobshopFormatError(ValueError):
    pass


def parse_jss(text: str, name: str = "jobshop") -> dict[str, Any]:
    rows = []
    for line in text.splitlines():
        s = line.split("#", 1)[0].strip()
        if s:
            rows.append([int(x) for x in s.split()])
    if not rows or len(rows[0]) != 2:
        raise JobshopFormatError("first line must be 'jobs machines'")
    n, m = rows[0]
    if len(rows) < n + 1:
        raise JobshopFormatError(f"expected {n} job lines, found {len(rows) - 1}")
    jobs: list[dict[str, Any]] = []
    for j, row in enumerate(rows[1 : n + 1]):
        if len(row) != 2 * m:
            raise JobshopFormatError(f"job {j}: expected {m} (machine, duration) pairs")
        prev = None
        for op in range(m):
            machine, d = row[2 * op], row[2 * op + 1]
            if not 0 <= machine < m:
                raise JobshopFormatError(f"job {j}: machine {machine} out of range")
            tid = f"t{j}_{op}"
            job: dict[str, Any] = {
                "id": tid,
                "duration": d,
                "gpus": 0,
                "demand": {f"m{machine}": 1},
            }
            if prev is not None:
                job["after"] = [prev]
            jobs.append(job)
            prev = tid
    return project_instance(name, {f"m{k}": 1 for k in range(m)}, jobs)
