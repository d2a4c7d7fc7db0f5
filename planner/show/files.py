"""Reading the schedule document `plan show` draws, and writing the pictures whole.

`write_show` is the one entry point for every command that shows a schedule
(`plan show`, `plan solve --show`, and later `plan simulate --show`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from planner.errors import InputError, Problem
from planner.export import write_atomic
from planner.instance import Instance
from planner.schedule import ScheduleFormatError, schedule_from_dict
from planner.show.data import show_data
from planner.show.html import gantt_html
from planner.show.png import gantt_png
from planner.show.report import instance_sizes, report_html
from planner.show.segments import document_segments


def read_document(path: str | Path) -> dict[str, Any]:
    """A schedule file as its JSON document, its shape checked (not its rules)."""
    file = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(file, [Problem("$", f"cannot read: {e.strerror}")]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(file, [Problem("$", f"malformed JSON: {e}")]) from None
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


def instance_path(doc: Mapping[str, Any], schedule_path: str | Path) -> Path | None:
    """The instance file the schedule records (`info.instance_file`), looked for as written
    and beside the schedule; None when it is not there."""
    info = doc.get("info")
    recorded = info.get("instance_file") if isinstance(info, dict) else None
    if not isinstance(recorded, str):
        return None
    for candidate in (Path(recorded), Path(schedule_path).parent / Path(recorded).name):
        if candidate.is_file():
            return candidate
    return None


def write_bytes_atomic(path: str | Path, content: bytes) -> None:
    """Like `planner.export.write_atomic`, for binary content."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_show(
    doc: Mapping[str, Any],
    instance: Instance | None,
    html_path: str | Path | None,
    png_path: str | Path | None = None,
    colour_by: str = "group",
) -> None:
    """Draw schedule document `doc` as the HTML page and/or the PNG picture. Both are built
    before either is written, so a failure writes nothing."""
    data = show_data(doc, instance, colour_by)
    page = gantt_html(data) if html_path else None
    picture = gantt_png(data) if png_path else None
    if html_path and page is not None:
        write_atomic(html_path, page)
    if png_path and picture is not None:
        write_bytes_atomic(png_path, picture)


def write_report(
    path: str | Path,
    rows: Sequence[Mapping[str, Any]],
    baseline: str | None,
    solvers: Sequence[str],
) -> None:
    """The benchmark report of `rows` (results CSV rows) as one HTML page."""
    sizes = instance_sizes(str(r["instance"]) for r in rows)
    write_atomic(path, report_html(rows, baseline, solvers, sizes))
