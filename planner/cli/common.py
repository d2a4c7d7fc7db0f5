"""What every command shares: reading an instance and turning errors into exit codes."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from planner.cli import terminal
from planner.errors import InputError, UsageError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_INFEASIBLE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def handle_errors(fn: F) -> F:
    """Bad input and usage errors exit 2 with a message and no traceback; Ctrl-C exits 130."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            terminal.print_input_error(e, as_json)
            sys.exit(EXIT_USAGE)
        except UsageError as e:
            terminal.print_error(str(e))
            sys.exit(EXIT_USAGE)
        except KeyboardInterrupt:
            terminal.print_error("interrupted")
            sys.exit(EXIT_INTERRUPTED)

    return wrapper  # type: ignore[return-value]


def parse_objective(text: str | None) -> tuple[str, ...] | None:
    from planner.instance import OBJECTIVES

    if not text:
        return None
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [n for n in names if n not in OBJECTIVES]
    if bad or not names:
        raise UsageError(
            f"--objective: unknown {', '.join(bad) or 'empty'}; "
            f"use a comma-separated list of {', '.join(OBJECTIVES)}"
        )
    return names
