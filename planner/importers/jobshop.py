"""Job-shop (`.jss`, OR-Library / Taillard style) files to the contract's instance JSON.

First non-comment line: `n_jobs n_machines`; then one line per job of
`machine duration` pairs in processing order. Each machine becomes a pool `m<k>` of
capacity 1; each task a job `t<job>_<op>` (0-based) with `gpus: 0`, demand `{m<k>: 1}`
and the previous task of its job in `after`. The cluster has no nodes: the machines are
the pools. Objective: makespan.
"""

from __future__ import annotations

from typing import Any

from planner.importers import (
    WHOLE,
    FormatError,
    not_whole,
    project_instance,
    within_limit,
)


class JobshopFormatError(FormatError):
    pass


HEADER = "not a job-shop file: the first line must be 'jobs machines' (two whole numbers)"


def parse_jss(text: str, name: str = "jobshop") -> dict[str, Any]:
    """Parse a `.jss` file into an instance dict (objective: makespan).
    JobshopFormatError names the line (and field) of the first thing wrong."""
    rows: list[tuple[int, list[int]]] = []  # (line number, values) of the non-comment lines
    lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        tokens = line.split("#", 1)[0].split()
        if not tokens:
            continue
        for k, token in enumerate(tokens, 1):
            if not WHOLE.fullmatch(token):
                what = ("machine" if k % 2 else "duration") if rows else HEADER + ";"
                raise JobshopFormatError(f"line {no}, field {k}", not_whole(what, token))
        rows.append((no, [int(x) for x in tokens]))
    if not rows:
        raise JobshopFormatError("$", f"{HEADER}; the file has none")
    no, first = rows[0]
    if len(first) != 2 or min(first) < 1:
        raise JobshopFormatError(f"line {no}", f"{HEADER}, at least 1 each")
    n, m = first
    if len(rows) < n + 1:
        raise JobshopFormatError(
            f"line {len(lines) + 1}",
            f"the file ends after {len(rows) - 1} of the {n} job lines that line {no} declares",
        )
    if len(rows) > n + 1:  # dropped, the extra lines would lose jobs the user meant to have
        raise JobshopFormatError(
            f"line {rows[n + 1][0]}", f"more job lines than the {n} that line {no} declares"
        )
    jobs: list[dict[str, Any]] = []
    for j, (no, row) in enumerate(rows[1:]):
        if len(row) != 2 * m:
            raise JobshopFormatError(
                f"line {no}",
                f"job {j}: expected {m} (machine, duration) pairs, found {len(row)} numbers",
            )
        prev = None
        for op in range(m):
            machine, d = row[2 * op], row[2 * op + 1]
            if not 0 <= machine < m:
                raise JobshopFormatError(
                    f"line {no}, field {2 * op + 1}",
                    f"job {j}: machine {machine} out of range (0..{m - 1})",
                )
            within_limit(
                d, f"line {no}, field {2 * op + 2}", f"job {j}: duration", JobshopFormatError
            )
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
