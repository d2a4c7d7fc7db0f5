"""Convert a Muri trace (CSV; README, "Data and credits") into an instance dict (contract §2).

Columns used: `job_id, num_gpu, submit_time (ms), iterations, model_name, priority (0/1)`.
The stage columns are not copied: the models/ catalogue carries the same figures (one profile
per model and GPU count, derived from these traces by scripts/make_models.py), so jobs name
their model and the planner computes durations from the catalogue.

Choices:
- Rows are taken in file order: skip `offset` rows, then keep `first` rows (all if None).
- `release = floor((submit_time - t0) / unit_ms)` where `t0` is the smallest submit time among
  the selected rows, so a slice taken from the middle of a trace starts at time 0;
  `all_at_zero` sets every release to 0 (like the traces' `*_pr.csv` variants).
- Job ids are `j<job_id>`; `priority` is the trace's 0/1 column.
- `policy.priority` is "none" by default: the traces mark about half the jobs priority 1, and
  strict priority (R9) over an online trace forbids a priority-0 job to start before any
  later-or-equal-released priority-1 job, which rules out almost all backfilling. Pass
  `strict_priority=True` to keep R9.
- One node group (`gpu_type` lower-cased as its name) with `gpus_per_node` GPUs per node,
  `gpu_mem_gb` per GPU and nominal V100 power figures (60 W idle, 300 W busy = SXM2 TDP);
  cpus and mem_gb are left unset (unlimited) because the trace has no CPU or memory demand.
- Interleaving enabled with groups of up to `max_group` jobs; objective total weighted JCT.
- `preemption=True` enables `policy.preemption` (contract §8) with `restart` 0: every job
  names a catalogue model, whose profile carries Muri's measured restart cost per GPU count.
- `elastic=True` (contract §12) offers each job every GPU count its catalogue profile has
  between half and twice its trace count that fits the cluster, the trace count first (so
  it stays the job's default count, what a planner that does not choose runs it at).
- A job that cannot fit the cluster (more GPUs than it has, or a multi-node GPU count that is
  not a whole number of nodes) is refused: InputError naming `rows[i].num_gpu`, with i the
  0-based data row of the file.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from planner.catalogue import load_catalogue
from planner.errors import InputError, Problem
from planner.importers import shown
from planner.instance import UNIT_MS, Profile

COLUMNS = ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "priority")


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The data rows of a trace CSV; InputError when the file is missing or not a trace."""
    from planner.jsonio import read_text

    text = read_text(path)
    rows: list[dict[str, str]] = []
    ragged: list[Problem] = []
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        for row in reader:
            # DictReader puts a row's extra fields under None and fills missing ones with
            # None: either way a stray or lost comma has shifted the values after it.
            count = sum(v is not None for k, v in row.items() if k is not None)
            count += len(row.get(None) or [])
            width = len(reader.fieldnames or [])
            if count != width:
                ragged.append(
                    Problem(
                        f"line {reader.line_num}",
                        f"rows[{len(rows)}] has {count} fields but the header has {width}: "
                        "a stray or missing comma would shift the values after it",
                    )
                )
            rows.append(row)
        header = reader.fieldnames or []
    except csv.Error as e:
        raise InputError(str(path), [Problem("$", f"not a CSV file: {e}")]) from None
    first: dict[str, int] = {}
    twice = [
        Problem("line 1", f"column '{c}' appears twice (columns {first[c]} and {k})")
        for k, c in enumerate(header, 1)
        if first.setdefault(c, k) != k
    ]
    if twice:  # DictReader keeps one value per name: the field counts above would be wrong
        raise InputError(str(path), twice)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise InputError(
            str(path), [Problem("$", f"not a Muri trace: missing column(s) {', '.join(missing)}")]
        )
    if ragged:
        raise InputError(str(path), ragged)
    return rows


def muri_to_instance(
    source: str | Path | Iterable[Mapping[str, str]],
    *,
    name: str,
    nodes: int,
    gpus_per_node: int,
    first: int | None = None,
    offset: int = 0,
    all_at_zero: bool = False,
    time_unit: str = "s",
    gpu_type: str = "V100",
    gpu_mem_gb: float | None = 32,
    gpu_idle_w: float = 60.0,
    gpu_busy_w: float = 300.0,
    strict_priority: bool = False,
    preemption: bool = False,
    max_group: int = 4,
    file: str | None = None,
    elastic: bool = False,
) -> dict[str, Any]:
    """The instance dict for rows `offset .. offset+first-1` of a trace (a path or rows).

    `file` names the source in errors and in `description` (default: the path, or "<rows>").
    """
    if isinstance(source, str | Path):
        file = file or str(source)
        rows: list[Mapping[str, str]] = list(read_rows(source))
    else:
        file = file or "<rows>"
        rows = list(source)
    if time_unit not in UNIT_MS:
        raise InputError(file, [Problem("time_unit", f"'{time_unit}' is not one of ms, s, min")])
    if nodes < 1 or gpus_per_node < 1 or offset < 0 or (first is not None and first < 0):
        raise InputError(
            file, [Problem("$", "nodes and gpus_per_node must be >= 1, offset and first >= 0")]
        )
    stop = None if first is None else offset + first
    chosen = list(enumerate(rows))[offset:stop]
    if not chosen:  # an empty instance would plan nothing: almost surely a wrong --offset
        raise InputError(
            file, [Problem("$", f"selects no rows (the trace has {len(rows)}, offset {offset})")]
        )

    parsed = _parse_rows(chosen, nodes, gpus_per_node, file)
    jobs = _jobs(parsed, UNIT_MS[time_unit], all_at_zero)
    if elastic:  # contract §12: the counts the profile has between half and twice the trace's
        catalogue = load_catalogue()
        for job in jobs:
            job["gpus"] = _counts(catalogue.get(job["model"]), job["gpus"], nodes, gpus_per_node)
    span = f"rows {parsed[0][0]}-{parsed[-1][0]}" if parsed else "no rows"
    group: dict[str, Any] = {
        "name": gpu_type.lower(),
        "count": nodes,
        "gpus": gpus_per_node,
        "gpu_type": gpu_type,
        "gpu_idle_w": gpu_idle_w,
        "gpu_busy_w": gpu_busy_w,
    }
    if gpu_mem_gb is not None:
        group["gpu_mem_gb"] = gpu_mem_gb
    doc = {
        "version": 1,
        "name": name,
        "description": f"Imported from {Path(file).name} ({span}), Muri trace (SIGCOMM 2022 "
        f"artifact, Apache-2.0, derived from the Microsoft Philly trace)",
        "time_unit": time_unit,
        "cluster": {"nodes": [group]},
        "interleaving": {"enabled": True, "max_group": max_group},
        "policy": _policy(strict_priority, preemption),
        "objective": ["total_weighted_jct"],
        "jobs": jobs,
    }
    submits = [str(v["submit_time"]) for _, v in parsed]
    _check_as_rows(doc, [i for i, _ in parsed], submits, time_unit, file)
    return doc


# The trace column each job field comes from (`_jobs`).
COLUMN_OF = {
    "id": "job_id",
    "model": "model_name",
    "gpus": "num_gpu",
    "iterations": "iterations",
    "release": "submit_time",
    "priority": "priority",
}


def _check_as_rows(
    doc: dict[str, Any], rows: list[int], submits: list[str], unit: str, file: str
) -> None:
    """Validate the instance as `plan import` will, and name a bad job by its trace row
    and column (`jobs[3].iterations` -> `rows[41].iterations`): the user has the CSV, not
    the instance. A bad release also names the row's submit_time (ms), the value in the
    CSV (`submits`, one per job)."""
    from planner.read import instance_from_dict

    try:
        instance_from_dict(doc, file=file)
    except InputError as e:
        problems = [_row_problem(p, rows, submits, unit) for p in e.problems]
        raise InputError(file, problems) from None


def _row_problem(p: Problem, rows: list[int], submits: list[str], unit: str) -> Problem:
    m = re.fullmatch(r"jobs\[(\d+)\](?:\.(\w+))?(.*)", p.path)
    if m is None or int(m.group(1)) >= len(rows):
        return p
    job = int(m.group(1))
    path = f"rows[{rows[job]}]"
    if m.group(2):
        path += f".{COLUMN_OF.get(m.group(2), m.group(2))}{m.group(3)}"
    message = re.sub(r"jobs\[(\d+)\]", lambda x: f"rows[{rows[int(x.group(1))]}]", p.message)
    if m.group(2) == "release":
        message = (
            f"submit_time {submits[job]} ms gives a release (in {unit}, from the earliest "
            f"submit_time) that is out of bounds: {message}"
        )
    return Problem(path, message)


def _parse_rows(
    chosen: list[tuple[int, Mapping[str, str]]], nodes: int, gpus_per_node: int, file: str
) -> list[tuple[int, dict[str, Any]]]:
    """The used columns of each (row number, row) as values; InputError listing every bad
    cell and every job that cannot fit the cluster."""
    problems: list[Problem] = []
    parsed: list[tuple[int, dict[str, Any]]] = []
    for i, row in chosen:
        values: dict[str, Any] = {}
        for col in COLUMNS:
            text = (row.get(col) or "").strip()
            if col == "model_name":
                if not text:
                    problems.append(Problem(f"rows[{i}].{col}", "empty model name"))
                values[col] = text
                continue
            try:
                values[col] = _ms(text) if col == "submit_time" else int(text)
            except (ValueError, OverflowError):  # also 'inf' and 'nan'
                got = f"expected an integer, got {shown(text)}"  # a 5,000-digit one cut short
                problems.append(Problem(f"rows[{i}].{col}", got))
        g = values.get("num_gpu")
        if g is not None:
            why = _misfit(g, nodes, gpus_per_node)
            if why:
                problems.append(Problem(f"rows[{i}].num_gpu", why))
        parsed.append((i, values))
    if problems:
        raise InputError(file, problems)
    return parsed


def _jobs(
    parsed: list[tuple[int, dict[str, Any]]], unit: float, all_at_zero: bool
) -> list[dict[str, Any]]:
    """The instance's jobs, released relative to the earliest submit time (or all at 0)."""
    t0 = min((v["submit_time"] for _, v in parsed), default=0)
    return [
        {
            "id": f"j{v['job_id']}",
            "model": v["model_name"],
            "gpus": v["num_gpu"],
            "iterations": v["iterations"],
            "release": 0 if all_at_zero else int((v["submit_time"] - t0) // unit),
            "priority": v["priority"],
        }
        for _, v in parsed
    ]


def _policy(strict_priority: bool, preemption: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"priority": "strict" if strict_priority else "none"}
    if preemption:
        out["preemption"] = {"enabled": True, "restart": 0}
    return out


def _counts(profile: Profile | None, trace: int, nodes: int, per_node: int) -> int | list[int]:
    """The trace count first, then the profile's other counts in [trace / 2, 2 trace] that
    fit the cluster; the trace count alone when the model is not in the catalogue (the
    reader then reports the unknown model)."""
    if profile is None:
        return trace
    others = [
        c
        for c in sorted(profile.by_gpus)
        if c != trace and trace <= 2 * c and c <= 2 * trace and _misfit(c, nodes, per_node) is None
    ]
    return [trace, *others] if others else trace


def _misfit(gpus: int, nodes: int, per_node: int) -> str | None:
    if gpus < 1:
        return f"{gpus} GPUs: a training job needs at least one"
    if gpus > nodes * per_node:
        return f"{gpus} GPUs is more than the cluster's {nodes * per_node}"
    if gpus > per_node and gpus % per_node:
        return f"{gpus} GPUs is not a whole number of {per_node}-GPU nodes"
    return None


def _ms(text: str) -> int:
    """A submit time in ms: an integer as written (exact, however large), or a decimal
    number such as '1534000.0', truncated."""
    try:
        return int(text)
    except ValueError:
        return int(float(text))
