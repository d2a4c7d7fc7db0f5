"""The `plan` entry point: Ctrl-C while the CLI's modules are still being imported ends
with one line and exit 130, not a KeyboardInterrupt traceback, and SIGTERM then with the
same line and exit 143, not a silent death. After that SIGTERM raises `Interrupted` as
Ctrl-C raises KeyboardInterrupt, which `planner.cli.common.handle_errors` turns into the
same line (the commands install their own handlers where they do more: a solver stops
and its best schedule is written). Usage errors are shown as click shows them (exit 2).
The one line is written here, not by `planner.cli.terminal`: the interrupt may have come
while rich, which that module needs, was being imported."""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def _interrupted(code: int = 130) -> None:
    sys.stderr.write("error: interrupted\n")
    _exit_without_finalizing(code)
    sys.exit(code)


def _ignore_signals() -> None:
    """The exit is chosen: a signal now would only turn it into a killed process. Python
    sets its own handlers back to the default while it finalizes, so a second Ctrl-C or
    SIGTERM just after an interrupted solve wrote its plan ended it by that signal instead
    of exit 130 (tests/test_signals.py); ignored signals stay ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _exit_without_finalizing(code: int) -> None:
    """An exit with another thread still running, as a solve abandoned by a second Ctrl-C
    leaves its solver thread in C++: in the interpreter's finalization that thread, calling
    back into Python, is unwound through HiGHS's frames, which aborts the process
    ("terminate called without an active exception", exit 134 for 130, in 2 of 13 runs;
    under gdb the main thread in Py_FinalizeEx). Then only our clean-ups run (CBC killed,
    its files removed), the streams are flushed and the process ends without finalizing."""
    import threading

    if threading.active_count() > 1:
        from planner.subprocesses import run_clean_ups

        run_clean_ups()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
        os._exit(code)


def _interrupted_at_start(code: int = 130) -> None:
    """Nothing has run yet, so nothing needs cleaning up. `os._exit`, because when the
    interrupt crossed an extension module's import CPython remembers it as unhandled
    and would end the process by SIGINT instead of exit 130."""
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(code)


def _terminated_at_start(signum: int, frame: object) -> None:
    """SIGTERM while the modules are imported: as Ctrl-C then, one line (exit 143)."""
    _interrupted_at_start(143)


def _drop_stdout() -> None:
    """What standard output still buffers goes to /dev/null: it cannot be written, and the
    exit's flush would fail again (exit 120 instead of ours)."""
    if sys.stdout is None:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _signalled(signum: int, frame: object) -> None:
    """SIGINT or SIGTERM outside a command's own handler (`planner.cli.interrupts`,
    installed while a solver runs or around a command without one): KeyboardInterrupt or
    `Interrupted`, so that the error handler says one line and exits 130 or 143; nothing
    once an output set is written or the exit code chosen (too late to change either)."""
    from planner.cli.common import exit_decided
    from planner.cli.interrupts import Interrupted
    from planner.outputs import sets_written

    if sets_written() or exit_decided():
        return
    raise Interrupted(signum)


def run() -> None:
    signal.signal(signal.SIGTERM, _terminated_at_start)
    try:
        from planner.cli import main
    except KeyboardInterrupt:
        _interrupted_at_start()
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _signalled)
    import click

    try:
        # Not standalone: click would turn a Ctrl-C while it parses into "Aborted!", exit 1.
        code = main.main(prog_name="plan", standalone_mode=False)
        _ignore_signals()
        if sys.stdout is not None:  # None when standard output was closed (`>&-`)
            sys.stdout.flush()  # what click wrote itself (help, --version), while errors count
    except (KeyboardInterrupt, click.Abort) as e:
        _ignore_signals()
        # click turns a KeyboardInterrupt (so `Interrupted`) in its parsing into Abort
        cause = e if isinstance(e, KeyboardInterrupt) else e.__context__
        _interrupted(getattr(cause, "exit_code", 130))
    except BrokenPipeError:  # `plan --help | head`: exit 141, as a command's output
        from planner.cli.common import EXIT_PIPE
        from planner.cli.terminal import silence_output

        silence_output()
        sys.exit(EXIT_PIPE)
    except OSError as e:  # help or --version to a full device: one line, exit 3
        sys.stderr.write(f"error: cannot write standard output: {e.strerror or e}\n")
        _drop_stdout()
        sys.exit(3)
    except SystemExit as e:
        _ignore_signals()
        # click ends a write to a closed pipe with exit 1 ("no feasible schedule" here),
        # wrapping the streams so that their flush at exit says nothing
        # (its class is public in click 8.1, private from 8.2: known by its name)
        pacified = type(sys.stdout).__name__.endswith("PacifyFlushWrapper")
        if e.code == 1 and pacified:
            from planner.cli.common import EXIT_PIPE

            _exit_without_finalizing(EXIT_PIPE)
            sys.exit(EXIT_PIPE)
        try:  # the exit's own flush would turn the code into 120
            if sys.stdout is not None:
                sys.stdout.flush()
        except OSError:
            _drop_stdout()
        _exit_without_finalizing(0 if e.code is None else e.code if isinstance(e.code, int) else 1)
        raise
    except click.ClickException as e:
        try:
            e.show()
            sys.stderr.flush()  # buffered, a full device fails here, not in the exit's flush
        except OSError:  # its reader went away or its device is full: the code still says
            from planner.cli.terminal import silence_output

            silence_output()
        sys.exit(e.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
