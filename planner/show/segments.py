"""The segments of a schedule document's job entries (contract §8), read from the JSON.

`plan show` draws what it is given and does not verify it, so it reads the document itself:
a job entry with `segments` has one segment per item, one without has a single segment made
of its own `start`, `end`, `placement` and `group`. A placement item with an empty `gpus`
list holds no GPU and is left out, so a segment made only of such items is drawn like one
without placement (`plan check` reports it as R5, contract §5). `job_segments` is the one
place that knows this; the rest of `planner.show` sees only `ShownSegment` records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class Slot(NamedTuple):
    """GPUs of one node that a segment uses."""

    node: str
    gpus: tuple[int, ...]
    path: str = ""  # the JSON path of its placement item, for notes


class ShownSegment(NamedTuple):
    job: str
    segment: int  # 0, 1, ... in the job's order
    start: int
    end: int
    placement: tuple[Slot, ...]
    group: str | None

    @property
    def gpu_count(self) -> int:
        """The GPU count the segment runs at: the size of its placement (contract §12)."""
        return sum(len(p.gpus) for p in self.placement)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _placement(raw: Any, path: str, problems: list[tuple[str, str]]) -> tuple[Slot, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append((path, "not a list"))
        return ()
    out = []
    for k, p in enumerate(raw):
        if (
            isinstance(p, dict)
            and isinstance(p.get("node"), str)
            and isinstance(p.get("gpus"), list)
            and all(_int(g) for g in p["gpus"])
        ):
            if p["gpus"]:  # an item with no GPUs holds none: drawn as no placement
                out.append(Slot(p["node"], tuple(p["gpus"]), f"{path}[{k}]"))
        else:
            problems.append((f"{path}[{k}]", "needs a node name and a list of GPU indices"))
    return tuple(out)


def _one(
    job: str, index: int, raw: Any, path: str, problems: list[tuple[str, str]]
) -> ShownSegment | None:
    if not isinstance(raw, dict):
        problems.append((path, "not an object"))
        return None
    bad = [k for k in ("start", "end") if not _int(raw.get(k))]
    for k in bad:
        problems.append((f"{path}.{k}", "missing or not an integer"))
    group = raw.get("group")
    if group is not None and not isinstance(group, str):
        problems.append((f"{path}.group", "not a string or null"))
        group = None
    placement = _placement(raw.get("placement"), f"{path}.placement", problems)
    if bad:
        return None
    return ShownSegment(job, index, raw["start"], raw["end"], placement, group)


def job_segments(
    entry: Mapping[str, Any], path: str, problems: list[tuple[str, str]]
) -> tuple[ShownSegment, ...]:
    """The segments of one job entry of a schedule document; shape problems are appended
    to `problems` as (JSON path, text) and the bad parts left out."""
    job = str(entry.get("id"))
    raw = entry.get("segments")
    if raw is None:
        seg = _one(job, 0, entry, path, problems)
        return (seg,) if seg else ()
    if not isinstance(raw, list) or not raw:
        problems.append((f"{path}.segments", "not a non-empty list"))
        return ()
    out = []
    for i, item in enumerate(raw):
        seg = _one(job, i, item, f"{path}.segments[{i}]", problems)
        if seg:
            out.append(seg)
    return tuple(out)


def document_segments(doc: Any) -> tuple[tuple[ShownSegment, ...], list[tuple[str, str]]]:
    """Every segment of a schedule document in job order, and the shape problems found."""
    problems: list[tuple[str, str]] = []
    if not isinstance(doc, dict):
        return (), [("$", "a schedule is a JSON object")]
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        return (), [("jobs", "missing or not a list")]
    out: list[ShownSegment] = []
    for i, entry in enumerate(jobs):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            problems.append((f"jobs[{i}]", "needs an object with a string id"))
            continue
        out.extend(job_segments(entry, f"jobs[{i}]", problems))
    return tuple(out), problems
