"""What every command shares: reading an instance and turning errors into exit codes."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

import planner.cli.terminal as terminal
from planner.cli.interrupts import Stopping
from planner.errors import InputError, UsageError

if TYPE_CHECKING:
    from planner.instance import Instance

F = TypeVar("F", bound=Callable[..., Any])

# contract §7 (EXIT_OK is the table's first row; a command that returns exits with it)
EXIT_OK, EXIT_INFEASIBLE, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_PIPE = 141  # 128 + SIGPIPE: the reader of standard output went away (README)

# Where the global `--debug` flag is kept: click shares `meta` across all contexts of one run.
DEBUG_KEY = "planner.debug"


def _debug() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get(DEBUG_KEY))


def _wants_json(kwargs: dict[str, Any]) -> bool:
    """Whether the command prints JSON: its `--json`, or what `solve`'s and `replan`'s
    shared options say (`SolveArgs.prints_json`)."""
    shared: Any = kwargs.get("args")
    return bool(getattr(shared, "prints_json", kwargs.get("as_json")))


def handle_errors(fn: F) -> F:
    """Bad input and usage errors exit 2 with a message and no traceback; Ctrl-C exits 130;
    standard output closed by its reader exits 141, silently; any other exception is a bug
    of ours: one line and exit 3 (the traceback with `--debug`), so that a crash never
    looks like exit 1, "no feasible schedule"."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = _wants_json(kwargs)
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            _say_and_exit(EXIT_USAGE, functools.partial(terminal.print_input_error, e, as_json))
        except UsageError as e:
            _say_and_exit(EXIT_USAGE, functools.partial(terminal.print_error, str(e)))
        except KeyboardInterrupt as e:  # `Interrupted` carries 143 for SIGTERM
            code = getattr(e, "exit_code", EXIT_INTERRUPTED)
            _say_and_exit(code, functools.partial(terminal.print_error, "interrupted"))
        except BrokenPipeError:  # `plan ... | head`: not a bug, and nothing more to say
            _say_and_exit(EXIT_PIPE, terminal.silence_output)
        except click.ClickException:
            raise
        except Exception as e:
            trace = traceback.format_exc() if _debug() else None
            _say_and_exit(EXIT_INTERNAL, functools.partial(_internal, e, trace))

    return wrapper  # type: ignore[return-value]


def stops_on_signals(fn: F) -> F:
    """For a command with nothing to hand back early (no solver; under `handle_errors`):
    SIGTERM stops it as Ctrl-C does, its clean-up runs (an output's temporary file is
    removed) and it exits 143 "interrupted" (tests/test_signals.py); a signal that comes
    once its outputs are written in full changes nothing. The commands that solve install
    their own handlers once they solve (`planner.cli.interrupts`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from planner import outputs

        before = outputs.sets_written()
        with Stopping(finished=lambda: outputs.sets_written() > before):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _internal(e: Exception, trace: str | None) -> None:
    if trace is not None:
        terminal.print_traceback(trace)
    terminal.print_internal_error(f"{type(e).__name__}: {e}", traced=trace is not None)


_exit_decided = False  # `exit_decided`


def exit_decided() -> bool:
    """Whether the error handler has chosen the exit code: a signal then changes nothing
    (`planner.launch`)."""
    return _exit_decided


def _say_and_exit(code: int, say: Callable[[], None]) -> NoReturn:
    """Print the message and exit with `code`; when the message's reader went away
    (`plan ... 2>&1 | head`) or its device is full, exit with `code` all the same: a bad
    input piped into head once exited 1, "no feasible schedule", and an infeasible
    solve's message to a full device 120 (tests/test_cli.py)."""
    global _exit_decided
    _exit_decided = True
    try:
        say()
        for stream in (sys.stdout, sys.stderr):  # a buffered write fails here, not at exit
            if stream is not None:
                stream.flush()
    except OSError:  # BrokenPipeError, ENOSPC
        terminal.silence_output()
    sys.exit(code)


def fail(code: int, message: str | None, violations: Sequence[Any] = ()) -> NoReturn:
    """A command's own error exit (no schedule, broken rules, interrupted before a plan):
    "error: MESSAGE" and the violations on standard error, then `code`, kept whatever
    happens to standard error (`_say_and_exit`)."""

    def say() -> None:
        if message is not None:
            terminal.print_error(message)
        if violations:
            terminal.print_violations(violations)

    _say_and_exit(code, say)


def parse_objective(text: str | None) -> tuple[str, ...] | None:
    from planner.instance import OBJECTIVES
    from planner.structure import objective_list

    if text is None:
        return None
    # spaces around a name are dropped ("makespan, energy_cost"); an empty name is refused
    # ("makespan," ran as makespan alone); the rest is an instance's objective list's rules
    names = [t.strip() for t in text.split(",")]
    if not text.strip() or "" in names:
        what = "empty" if not text.strip() else f"an empty name in {text!r}"
        raise UsageError(
            f"--objective: {what}; use a comma-separated list of {', '.join(OBJECTIVES)}"
        )
    parsed, problems = objective_list(names)
    if problems:
        raise UsageError(f"--objective: {'; '.join(problems)}")
    return parsed


def schedule_instance(
    schedule: str, ids: list[Any], name: Any, given: str | None, info: Any
) -> Instance | None:
    """The instance a schedule is drawn or exported with, or None: the one
    given, whose jobs must include the schedule's (exit 2 otherwise), else the one the
    schedule records when it is found and includes them (a note otherwise: the picture or
    CSV then goes without models, priorities and tenants). An instance of another name than
    the schedule's `instance` is used with a note."""
    from planner.read import foreign_jobs, read_instance, recorded_instance

    path = given or recorded_instance(info, schedule)
    if path is None:
        terminal.print_note("no instance file: models, priorities, tenants, reservations left out")
        return None
    try:
        inst = read_instance(path)
    except InputError as e:
        if given:
            raise
        # the recorded file is used when readable (`--help`): another file of its name
        # beside the schedule, or one broken since, no longer stops the picture or CSV
        first = e.problems[0] if e.problems else "unreadable"
        terminal.print_note(f"{path}: {first}: instance left out")
        return None
    foreign = foreign_jobs(ids, inst, path)
    if foreign and given:
        raise InputError(schedule, foreign)
    if foreign:
        terminal.print_note(f"{schedule}: {foreign[0]}: instance left out")
        return None
    if isinstance(name, str) and name != inst.name:
        terminal.print_note(f"{schedule} plans instance {name!r}; {path} is {inst.name!r}")
    return inst
