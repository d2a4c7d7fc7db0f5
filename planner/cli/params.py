"""Option types shared by the commands."""

from __future__ import annotations

import math
from typing import Any

import click

MAX_SECONDS = 7 * 24 * 3600.0  # a week: longer limits are typing mistakes


class Seconds(click.ParamType):
    """A finite, non-negative number of seconds (nan, inf and negatives are refused by
    click as a usage error, exit 2, before anything is read)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            seconds = value
        else:
            try:
                seconds = float(value)
            except ValueError:
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or not 0 <= seconds <= MAX_SECONDS:
            self.fail(f"{value!r} is not a number of seconds in [0, {MAX_SECONDS:g}]", param, ctx)
        return seconds


SECONDS = Seconds()


OR_LEAVE_OUT = ": give one, or leave the option out"


class FileName(click.Path):
    """A file's name, refused when empty (exit 2, naming the option or argument): an empty
    `--changes` or `--instance` was read as no file at all, and an empty INSTANCE was
    reported as ": $: file not found" (tests/test_cli.py -k empty_name)."""

    def __init__(self, *, dir_okay: bool = False, allow_dash: bool = False):
        super().__init__(dir_okay=dir_okay, allow_dash=allow_dash)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":  # a shell variable left empty, say
            optional = isinstance(param, click.Option) and not param.required
            self.fail(f"the file name is empty{OR_LEAVE_OUT if optional else ''}", param, ctx)
        return super().convert(value, param, ctx)


# Solver seeds reach CP-SAT and HiGHS as 32-bit integers; bench adds the repeat number.
SEED = click.IntRange(-(2**30), 2**30)

# Threads or processes: HiGHS aborts the process when asked for tens of thousands.
MAX_THREADS = 256
THREADS = click.IntRange(1, MAX_THREADS)
