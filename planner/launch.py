"""The `plan` entry point: Ctrl-C while the CLI's modules are still being imported ends
with one line and exit 130, not a KeyboardInterrupt traceback (once a command runs,
`planner.cli.common.handle_errors` does the same)."""

from __future__ import annotations

import sys


def _interrupted() -> None:
    sys.stderr.write("error: interrupted\n")
    sys.exit(130)


def run() -> None:
    try:
        from planner.cli import main
    except KeyboardInterrupt:
        _interrupted()
    try:
        main(prog_name="plan")
    except KeyboardInterrupt:
        _interrupted()
