"""Ctrl-C and SIGTERM while a solver runs: stop it and keep the best schedule found.

SIGINT (Ctrl-C) and SIGTERM (what `kill`, Slurm and `timeout` send) both set the solvers'
`stop` event; the solver returns its best schedule, which is verified and written as
usual, and the command exits 130 (SIGINT) or 143 (SIGTERM). Signals repeated within
`REPEAT_S` seconds of the first are the same request (`timeout -s INT` delivers SIGINT
to the process and its group microseconds apart), so they are ignored; a Ctrl-C given
later means "stop waiting": the solve is abandoned and nothing is written.

`Stopping` is for commands with nothing to return early (`plan bench`): either signal
raises `Interrupted` in the main thread, so the command's `finally` blocks run (the bench
rewrites its results file and stops its workers) and it exits 130 or 143.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any, Self

REPEAT_S = 1.0
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; `exit_code` is 130 or 143."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.exit_code = EXIT_CODES[signal.Signals(signum)]


class _Handlers:
    """Installs `_handle` for SIGINT and SIGTERM while open, then restores the previous
    handlers (main thread only)."""

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        for s in EXIT_CODES:
            self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)


class Stopping(_Handlers):
    """SIGINT and SIGTERM raise `Interrupted`. Repeats within `REPEAT_S` of the first are
    the same request and ignored, so that they cannot cut short the clean-up the first one
    started (a bench's run folder was left behind by two Ctrl-C 1 ms apart:
    tests/test_signals.py). Once `finished()` says the command's outputs are written, a
    signal is too late to undo anything and is ignored too: the command ends as it would
    have (exit 143 means nothing was written)."""

    def __init__(self, finished: Callable[[], bool] | None = None) -> None:
        super().__init__()
        self.finished = finished
        self._first: float | None = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if self._first is not None and now - self._first <= REPEAT_S:
            return
        if self.finished is not None and self.finished():
            return
        self._first = now
        raise Interrupted(signum)


class Interrupts(_Handlers):
    """SIGINT and SIGTERM set `stop`; a later SIGINT raises KeyboardInterrupt."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop
        self.signum: int | None = None
        self._first = 0.0

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            self._first = time.monotonic()
            self.stop.set()
        elif signum == signal.SIGINT and time.monotonic() - self._first > REPEAT_S:
            raise KeyboardInterrupt

    @property
    def exit_code(self) -> int | None:
        """130 after SIGINT, 143 after SIGTERM, None when no signal came."""
        return None if self.signum is None else EXIT_CODES[signal.Signals(self.signum)]
