"""CSV text as every file here writes it: rows ending in "\\n", a field quoted when it
holds the delimiter, a quote or either line-break character.

Python's `csv.writer` quotes a field holding a character of its line terminator, so with
"\\n" alone a bare "\\r" in a job id or a tenant went out unquoted and every CSV reader split
the row there (tests/test_cli.py -k carriage). The writer therefore ends each row in
"\\r\\n", which quotes both, and each row's terminator is cut back to "\\n".
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import Any


class _Rows(list[str]):
    """A file for `csv.writer`, which hands it one whole row per `write`."""

    def write(self, row: str) -> None:
        self.append(row[:-2] + "\n")


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    out = _Rows()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return "".join(out)
