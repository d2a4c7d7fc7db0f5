"""Writing results: the schedule JSON and the Gantt CSV (contract §6).

Files are written whole or not at all: each goes to a temporary file beside the target,
which is renamed over it only when complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from planner.csvtext import csv_text
from planner.instance import Instance
from planner.jsonio import dumps
from planner.metrics import metrics, objective_values
from planner.outputs import write_all
from planner.schedule import Schedule, schedule_to_dict

GANTT_HEADER = (
    "job",
    "group",
    "node",
    "gpus",
    "start",
    "end",
    "priority",
    "tenant",
    "model",
    "segment",
)


def write_atomic(path: str | Path, text: str) -> None:
    write_all({str(path): text})


def json_text(data: Any) -> str:
    """The schedule's JSON text, never NaN or Infinity (`planner.jsonio.dumps`)."""
    return dumps(data)


def write_json(path: str | Path, data: Any) -> None:
    write_atomic(path, json_text(data))


def schedule_document(
    instance: Instance, schedule: Schedule, objectives: Sequence[str]
) -> dict[str, Any]:
    """The schedule as the contract's JSON document, with objective values and metrics
    computed from it (a schedule without jobs has none, unless the instance has none
    either: its empty plan is complete, with zero for every value, as `plan simulate`
    writes)."""
    if schedule.jobs or not instance.jobs:
        obj = objective_values(instance, schedule, objectives)
        met = metrics(instance, schedule)
    else:
        obj, met = {}, {}
    return schedule_to_dict(with_counts(instance, schedule), obj, met)


def with_counts(instance: Instance, schedule: Schedule) -> Schedule:
    """Each elastic job's entry carries the count its first segment runs at (contract §12:
    the size of its placement); jobs with one count stay in the version-1 form."""
    jobs = []
    for a in schedule.jobs:
        j = instance.job_by_id.get(a.id)
        if j is not None and j.elastic and a.gpus is None:
            count = sum(len(set(p.gpus)) for p in a.pieces()[0].placement)
            a = replace(a, gpus=count)
        jobs.append(a)
    return schedule.with_(jobs=tuple(jobs))


def gantt_rows(schedule: Schedule, instance: Instance | None) -> list[tuple[Any, ...]]:
    """One row per (job, segment, node), `segment` counting a job's segments from 0 (contract
    §8); segments without placement get one row with an empty node. Without the instance,
    priority, tenant and model are left empty."""
    rows: list[tuple[Any, ...]] = []
    jobs = instance.job_by_id if instance is not None else {}
    pieces = [(seg, k, a.id) for a in schedule.jobs for k, seg in enumerate(a.pieces())]
    for seg, k, jid in sorted(pieces, key=lambda x: (x[0].start, x[2], x[1])):
        job = jobs.get(jid)
        extra = (
            (job.priority, job.tenant or "", job.model or "") if job is not None else ("", "", "")
        )
        group = seg.group or ""
        if not seg.placement:
            rows.append((jid, group, "", "", seg.start, seg.end, *extra, k))
        for p in seg.placement:
            gpus = ";".join(str(g) for g in p.gpus)
            rows.append((jid, group, p.node, gpus, seg.start, seg.end, *extra, k))
    return rows


def gantt_csv(rows: Iterable[Sequence[Any]]) -> str:
    return csv_text([GANTT_HEADER, *rows])


def write_gantt(path: str | Path, schedule: Schedule, instance: Instance | None) -> None:
    write_atomic(path, gantt_csv(gantt_rows(schedule, instance)))


def schedule_files(
    instance: Instance, schedule: Schedule, doc: Any, output: str | None, gantt: str | None
) -> dict[str, str]:
    """The schedule document (`doc`, as `schedule_document` makes it) at `output` and its
    Gantt CSV at `gantt`, as path -> text for `outputs.write_all` (either may be None)."""
    files = {output: dumps(doc)} if output else {}
    if gantt:
        files[gantt] = gantt_csv(gantt_rows(schedule, instance))
    return files
