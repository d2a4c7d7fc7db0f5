"""Reading the schedule document `plan show` draws, and making the pictures.

`show_files` is the one entry point for every command that shows a schedule (`plan
show`, `plan solve --show`, and later `plan simulate --show`): it returns the files'
contents, which the command writes with its other outputs by `planner.outputs.write_all`
(all or nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from planner.errors import InputError, Problem
from planner.instance import Instance
from planner.jsonio import read_json
from planner.outputs import write_all
from planner.schedule import ScheduleFormatError, schedule_from_dict
from planner.show.data import show_data
from planner.show.html import gantt_html
from planner.show.png import gantt_png
from planner.show.report import instance_sizes, report_html
from planner.show.segments import document_segments


def read_document(path: str | Path) -> dict[str, Any]:
    """A schedule file as its JSON document, its shape checked (not its rules)."""
    file = str(path)
    doc = read_json(path)  # the safe reader: size, UTF-8, depth, no NaN (InputError)
    problems: list[tuple[str, str]] = []
    try:
        schedule_from_dict(doc)
    except ScheduleFormatError as e:
        problems.extend(e.problems)
    if not problems:
        problems.extend(document_segments(doc)[1])
    if problems:
        raise InputError(file, [Problem(p, m) for p, m in problems])
    return dict(doc)


def show_files(
    doc: Mapping[str, Any],
    instance: Instance | None,
    html_path: str | None,
    png_path: str | None = None,
    colour_by: str = "group",
) -> dict[str, str | bytes]:
    """The HTML page and/or the PNG picture of schedule document `doc`, by path."""
    data = show_data(doc, instance, colour_by)
    files: dict[str, str | bytes] = {}
    if html_path:
        files[html_path] = gantt_html(data)
    if png_path:
        files[png_path] = gantt_png(data)
    return files


def write_report(
    path: str,
    rows: Sequence[Mapping[str, Any]],
    baseline: str | None,
    solvers: Sequence[str],
) -> None:
    """The benchmark report of `rows` (results CSV rows) as one HTML page."""
    sizes = instance_sizes(str(r["instance"]) for r in rows)
    write_all({path: report_html(rows, baseline, solvers, sizes)})
