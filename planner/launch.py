"""The `plan` entry point: Ctrl-C while the CLI's modules are still being imported ends
with one line and exit 130, not a KeyboardInterrupt traceback (once a command runs,
`planner.cli.common.handle_errors` does the same). Usage errors are shown as click
shows them (exit 2). The one line is written here, not by `planner.cli.terminal`: the
interrupt may have come while rich, which that module needs, was being imported."""

from __future__ import annotations

import os
import sys


def _interrupted() -> None:
    sys.stderr.write("error: interrupted\n")
    sys.exit(130)


def _interrupted_at_start() -> None:
    """Nothing has run yet, so nothing needs cleaning up. `os._exit`, because when the
    interrupt crossed an extension module's import CPython remembers it as unhandled
    and would end the process by SIGINT instead of exit 130."""
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def run() -> None:
    try:
        from planner.cli import main
    except KeyboardInterrupt:
        _interrupted_at_start()
    import click

    try:
        # Not standalone: click would turn a Ctrl-C while it parses into "Aborted!", exit 1.
        code = main.main(prog_name="plan", standalone_mode=False)
    except (KeyboardInterrupt, click.Abort):
        _interrupted()
    except click.ClickException as e:
        try:
            e.show()
        except BrokenPipeError:  # its reader went away: the exit code still says what
            from planner.cli.terminal import silence_output

            silence_output()
        sys.exit(e.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
