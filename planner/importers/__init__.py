"""Converters from public benchmark and trace formats to the contract's instance JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from planner.limits import MAX_NUMBER

# A field of a PSPLIB or job-shop line: ASCII digits only (int() would also take '٣',
# '+3' and '3_0'), at most 30 of them: `within_limit` refuses anything past 13 at its line
# and field, while int() refuses past 4,300 with its own advice (`not_whole` says why).
WHOLE = re.compile(r"[0-9]{1,30}")


class FormatError(ValueError):
    """A malformed PSPLIB or job-shop file: where (`line 18`, `line 18, field 5`, or `$`
    for the whole file) and what. `plan import` reports it as an InputError problem, so
    the user gets the file, the line and the problem, not a parser's exception text."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def within_limit(value: int, where: str, what: str, error: type[FormatError]) -> None:
    """Refuse a number above what an instance may hold (`planner.limits`) at the file's
    line and field: the converted instance's own check would name a JSON path
    (`jobs[3].duration`) that the file does not have."""
    if value > MAX_NUMBER:
        raise error(where, f"{what} {value} is larger than the limit {MAX_NUMBER:g}")


def not_whole(what: str, token: str) -> str:
    """Why `token` (not matching WHOLE) is refused: a negative number says so."""
    if re.fullmatch(r"-[0-9]+", token):
        return f"{what} {shown(token)} is negative"
    if re.fullmatch(r"[0-9]+", token):
        return f"{what} {shown(token)} is larger than the limit {MAX_NUMBER:g}"
    return f"{what} {shown(token)} is not a whole number"


def shown(token: str, limit: int = 20) -> str:
    """A token of a bad line, quoted and cut short (a PSPLIB rule line is 72 '*')."""
    return repr(token if len(token) <= limit else token[:limit] + "...")


def project_instance(
    name: str, pools: Mapping[str, float], jobs: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A makespan instance of pool-only jobs (PSPLIB, job-shop): no nodes, just pools."""
    return {
        "version": 1,
        "name": name,
        "time_unit": "s",
        "cluster": {"nodes": [], "pools": dict(pools)},
        "objective": ["makespan"],
        "jobs": list(jobs),
    }
