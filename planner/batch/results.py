"""The results CSV: its columns, reading it back typed, and crash-safe writing.

Writing strategy (chosen for `plan bench`): each finished row is APPENDED to the file and
flushed to disk at once, so a killed bench loses at most the rows still running; when the
bench ends (or is interrupted) the whole file is REWRITTEN atomically (temporary file +
rename) in a canonical order: instance, solver, repeat as listed. A line torn by a crash in
the middle of an append (the last line) is dropped when the file is read back, and its job
runs again; a malformed line before it (a file edited or saved by another program) refuses
the file, which is left as it is.

Resumption: a row already in the file with the same (instance, solver, repeat, seed, time
limit) is not run again, whatever its status (`--retry-failed` reruns error and timeout
rows).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from planner.csvtext import csv_text
from planner.errors import UsageError, WriteError
from planner.jsonio import printable
from planner.metrics import METRIC_KEYS

COLUMNS: tuple[str, ...] = (
    "instance",
    "name",
    "solver",
    "repeat",
    "seed",
    "status",
    *METRIC_KEYS,
    "objective",
    "objective_value",
    "bound",
    "gap_to_bound",
    "wall_s",
    "verified",
    "violations",
    "groups",
    "error",
    "time_limit",
)
# The columns before `energy_cost` was one (2026-12-02): such a file is still read, and
# resumed, and rewritten with every column.
OLD_COLUMNS = tuple(c for c in COLUMNS if c != "energy_cost")
INT_COLUMNS = frozenset({"repeat", "seed", "violations", "groups"})
FLOAT_COLUMNS = frozenset(
    {*METRIC_KEYS, "objective_value", "bound", "gap_to_bound", "wall_s", "time_limit"}
)
BOOL_COLUMNS = frozenset({"verified"})

# A row is the same run only with the same seed and time limit: rows of another
# --seed or --time-limit are run again, not taken as done.
Key = tuple[str, str, int, int, float | None]


def key_of(row: Mapping[str, Any]) -> Key:
    limit = row.get("time_limit")
    seed = row.get("seed")
    return (
        printable(str(row["instance"])),  # as the file holds it (`format_value`)
        str(row["solver"]),
        int(row["repeat"]),
        int(seed) if seed is not None else 0,
        None if limit is None else float(limit),
    )


def format_value(v: Any) -> str:
    """CSV text of a value: empty for None, true/false, floats exact (repr round-trips)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return printable(str(v))  # a file name that is not UTF-8 (`jsonio.printable`)


def parse_row(raw: Mapping[str, str | None]) -> dict[str, Any]:
    """A row read from the CSV with its types back; ValueError if it is malformed."""
    out: dict[str, Any] = {}
    for col in COLUMNS:
        text = raw.get(col)
        if text is None and col == "energy_cost":  # a file of OLD_COLUMNS
            text = ""
        if text is None:
            raise ValueError(f"missing column {col}")
        if col in INT_COLUMNS:
            out[col] = int(text) if text != "" else None
        elif col in FLOAT_COLUMNS:
            out[col] = float(text) if text != "" else None
        elif col in BOOL_COLUMNS:
            if text not in ("true", "false"):
                raise ValueError(f"{col} is {text!r}")
            out[col] = text == "true"
        else:
            out[col] = text
    if out["repeat"] is None or not out["instance"] or not out["solver"]:
        raise ValueError("instance, solver and repeat are required")
    return out


def results_text(rows: Iterable[Mapping[str, Any]], header: bool = True) -> str:
    lines = [[format_value(row.get(c)) for c in COLUMNS] for row in rows]
    return csv_text([COLUMNS, *lines] if header else lines)


def _rows_after(text: str, line: int, header: tuple[str, ...]) -> bool:
    """Whether a line after line `line` of `text` is a whole row on its own. Lines end at
    "\n" only, as csv counts them (`splitlines` also ends one at a "\r" or U+2028 inside
    a quoted field)."""
    for later in text.split("\n")[line:]:
        try:
            fields = next(csv.reader([later]))
            if len(fields) == len(header):
                parse_row(dict(zip(header, fields, strict=True)))
                return True
        except (csv.Error, ValueError, StopIteration):
            continue
    return False


def read_results(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The rows of a results file and how many torn or malformed lines were dropped.
    A missing file has no rows; a file with other columns is refused (UsageError)."""
    p = Path(path)
    if not p.exists():
        return [], 0
    from planner.jsonio import read_text

    text = read_text(p)
    if not text.strip():
        return [], 0
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = tuple(reader.fieldnames or ())
        raws, first = [], reader.line_num + 1  # each record with its first line
        for raw in reader:
            raws.append((first, raw))
            first = reader.line_num + 1
    except csv.Error as e:  # e.g. a field over csv's size limit: not a file we wrote
        raise UsageError(f"{path} is not a results file ({e}); choose another -o file") from None
    if header not in (COLUMNS, OLD_COLUMNS):
        raise UsageError(
            f"{path} is not a results file of this version of `plan bench` "
            "(its columns differ); choose another -o file"
        )
    rows: list[dict[str, Any]] = []
    seen: dict[Key, int] = {}
    dropped = 0
    for i, (line, raw) in enumerate(raws):
        try:
            if None in raw:
                raise ValueError("more fields than columns")
            row = parse_row(raw)
        except ValueError as e:
            # only an append cut short by a crash is torn: the last record, with no row
            # after it (an open quote made the rest of the file one record: the finished
            # rows after it were dropped and run again; tests/test_bench.py -k open_quote)
            if i < len(raws) - 1 or _rows_after(text, line, header):
                raise UsageError(
                    f"{path} line {line}: {e}: not a row `plan bench` wrote (the file is left "
                    "as it is); mend it or choose another -o file"
                ) from None
            dropped += 1
            continue
        k = key_of(row)
        if k in seen:  # the later row wins (a rerun after --retry-failed)
            rows[seen[k]] = row
        else:
            seen[k] = len(rows)
            rows.append(row)
    return rows, dropped


def write_results(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Rewrite the whole file atomically."""
    from planner.export import write_atomic

    write_atomic(path, results_text(rows))


def canonical_order(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[Key]
) -> list[Mapping[str, Any]]:
    """Rows in the order of `keys` (the bench's task order); rows of other keys (an
    earlier bench on other instances) follow in their existing order."""
    rank = {k: i for i, k in enumerate(keys)}
    inside = [r for r in rows if key_of(r) in rank]
    outside = [r for r in rows if key_of(r) not in rank]
    return sorted(inside, key=lambda r: rank[key_of(r)]) + outside


class ResultsFile:
    """The results of one bench: rows read at the start, appended as jobs finish."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.rows, self.dropped = read_results(self.path)
        self._by_key = {key_of(r): i for i, r in enumerate(self.rows)}
        # Start from a clean file (no torn line) so that appends land on a row boundary.
        if self.dropped or not self.path.exists() or not self.rows:
            write_results(self.path, self.rows)

    def done(self) -> set[Key]:
        return set(self._by_key)

    def forget(self, keys: Iterable[Key]) -> int:
        """Drop the rows of `keys` (to run them again); returns how many were dropped."""
        drop = set(keys) & set(self._by_key)
        if drop:
            self.rows = [r for r in self.rows if key_of(r) not in drop]
            self._by_key = {key_of(r): i for i, r in enumerate(self.rows)}
            write_results(self.path, self.rows)
        return len(drop)

    def append(self, row: Mapping[str, Any]) -> None:
        row = dict(row)
        try:
            with self.path.open("a", encoding="utf-8", newline="") as f:
                f.write(results_text([row], header=False))
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise self._kept(f"cannot append to {self.path}: {e.strerror or e}") from None
        k = key_of(row)
        if k in self._by_key:
            self.rows[self._by_key[k]] = row
        else:
            self._by_key[k] = len(self.rows)
            self.rows.append(row)

    def finish(self, keys: Sequence[Key]) -> None:
        """Rewrite the file in canonical order."""
        self.rows = [dict(r) for r in canonical_order(self.rows, keys)]
        self._by_key = {key_of(r): i for i, r in enumerate(self.rows)}
        try:
            write_results(self.path, self.rows)
        except WriteError as e:
            raise self._kept(f"cannot rewrite {self.path} in order: {e.reason}") from None

    def _kept(self, what: str) -> UsageError:
        """A write that failed after rows were appended: they stay (a line cut short is
        dropped when the file is read back), and a rerun resumes from them."""
        return UsageError(
            f"{what}; the rows appended before stay in the file, and a rerun with the "
            "same -o resumes from them"
        )

    def rows_for(self, keys: Iterable[Key]) -> list[dict[str, Any]]:
        return [self.rows[self._by_key[k]] for k in keys if k in self._by_key]
