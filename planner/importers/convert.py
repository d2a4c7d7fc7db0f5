"""One entry point for `plan import`: a PSPLIB .sm, job-shop .jss or Muri trace .csv file
to the contract's instance dict, every failure an InputError naming the file and where in
it (line, field or CSV row)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.errors import InputError, Problem
from planner.importers import FormatError
from planner.importers.jobshop import parse_jss
from planner.importers.muri import muri_to_instance
from planner.importers.psplib import parse_sm
from planner.jsonio import read_text


def convert_file(
    kind: str, file: str, name: str, muri_options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The instance dict of `file` read as `kind`; `muri_options` are
    `planner.importers.muri.muri_to_instance`'s keyword arguments (muri only)."""
    if kind == "muri":
        return muri_to_instance(file, name=name, **dict(muri_options or {}))
    parse = parse_sm if kind == "psplib" else parse_jss
    try:
        return {**parse(read_text(file)), "name": name}
    except FormatError as e:  # the parsers name the line (and field) of what is wrong
        raise InputError(file, [Problem(e.path, e.message)]) from None
    except (ValueError, LookupError, ArithmeticError) as e:  # a case the parsers missed
        raise InputError(file, [Problem("$", f"not a {kind} file: {e}")]) from None
