"""A whole bench: the instance files, the task list and the loop that records rows.

Bad instance files are NOT refused up front: each of their jobs becomes an `error` row
naming the file and its first problems, so one broken file in a folder of hundreds does
not stop a long benchmark (and the CSV shows what was skipped). Paths that do not exist
and folders without any *.json are usage errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.batch.executors import check_executor, run_tasks
from planner.batch.results import Key, ResultsFile
from planner.batch.run import ERROR, TIMEOUT, Task
from planner.errors import UsageError

RETRY_STATUSES = (ERROR, TIMEOUT)


def collect_instances(paths: Iterable[str]) -> list[str]:
    """Files as given; folders: every *.json below them, sorted, recursively. A file
    listed again, under any spelling or through a link, keeps its first place and name."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.rglob("*.json") if f.is_file())
            if not found:
                raise UsageError(f"{p}: no *.json instance files in this folder")
            out.extend(found)
        elif path.exists():
            out.append(str(path))
        else:
            raise UsageError(f"{p}: no such file or folder")
    first: dict[str, str] = {}
    for p in out:
        first.setdefault(os.path.realpath(p), p)
    return list(first.values())


def make_tasks(
    instances: Sequence[str],
    solvers: Sequence[str],
    repeat: int = 1,
    seed: int = 0,
    time_limit: float | None = 10.0,
    solver_threads: int = 1,
    margin: float | None = None,
) -> list[Task]:
    return [
        Task(inst, solver, r, seed, time_limit, solver_threads, margin)
        for inst in instances
        for solver in solvers
        for r in range(repeat)
    ]


@dataclass
class BenchRun:
    """What a bench did: all rows of its tasks (old and new) and the counts."""

    rows: list[dict[str, Any]]
    total: int
    skipped: int
    ran: int
    dropped_lines: int
    retried: int


def run_bench(
    tasks: Sequence[Task],
    output: str | Path,
    executor: str = "local",
    workers: int = 1,
    address: str | None = None,
    retry_failed: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> BenchRun:
    """Run the tasks not yet in `output`, appending each row as it finishes; the file is
    rewritten in canonical order at the end, also when interrupted."""
    check_executor(executor, address)
    results = ResultsFile(output)
    keys: list[Key] = [t.key for t in tasks]
    retried = 0
    if retry_failed:
        failed = [
            k for k in keys if any(r["status"] in RETRY_STATUSES for r in results.rows_for([k]))
        ]
        retried = results.forget(failed)
    done = results.done()
    todo = [t for t in tasks if t.key not in done]
    if on_start is not None:
        on_start(len(tasks), len(tasks) - len(todo))
    ran = 0
    try:
        if todo:
            for row in run_tasks(todo, executor, workers, address):
                results.append(row)
                ran += 1
                if on_row is not None:
                    on_row(row)
    finally:
        results.finish(keys)
    return BenchRun(
        rows=results.rows_for(keys),
        total=len(tasks),
        skipped=len(tasks) - len(todo),
        ran=ran,
        dropped_lines=results.dropped,
        retried=retried,
    )
