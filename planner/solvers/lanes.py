"""A second lane for the searches that run in one Python thread (the batch and release
plans' annealing, `planner.solvers.preempt.batch`, and the preemptive planner's search
over engine runs, `planner.solvers.preempt.search`): with `SolveOptions.workers` >= 2 on
Linux with two or more cores, `side_by_side` runs one call in a forked child process while
another runs here, so the second core works on another seed instead of idling until
CP-SAT starts (docs/PREEMPTION.md, "Releases known in advance, no preemption").

Fork, not spawn: a spawned child imports the caller's main script again, and a user's
script without a `__main__` guard would run twice. The child only computes on what it
inherited, sends the pickled result through a pipe and leaves by `os._exit` (no exit
handlers, no flush of streams another thread may hold). The child's result is dropped
(None, with the reason) when its work raises (the error is sent instead, so that a bug
there is reported, not hidden), when it is not there `GRACE_S` after the work's own time
(or this process's lane, if that took longer), or when the solve is stopped (Ctrl-C also
reaches the child, whose copy of the stop event then ends its work; it gets
`STOP_GRACE_S` to send what it has).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")

# Seconds the parent waits for the child beyond the work's own time limit, or beyond its
# own lane's end when that came later.
GRACE_S = 5.0
# Seconds the child gets to send its result once the solve is stopped.
STOP_GRACE_S = 1.0


def lanes(workers: int) -> int:
    """How many lanes `side_by_side` runs for `workers` solver threads: 2 on Linux when
    this process may use a second core, else 1 (macOS's system libraries are not safe in
    a child forked from a threaded process, and Windows cannot fork)."""
    if workers < 2 or not sys.platform.startswith("linux"):
        return 1
    return 2 if len(os.sched_getaffinity(0)) >= 2 else 1


class _NoResult:
    """Why there is no result of the child's: what it sends when its work raised (the
    error, in one line), or what the parent saw."""

    def __init__(self, why: str):
        self.why = why


def side_by_side(
    there: Callable[[], T], here: Callable[[], T], seconds: float, stop: threading.Event
) -> tuple[T | None, T, str | None]:
    """(`there()` computed in a forked child or None, `here()` computed in this process,
    why the child's result is None or None); both should end within `seconds`. Call only
    when `lanes(...)` is 2."""
    r, w = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about forking a threaded process
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines are measured in the child only
        os.close(r)
        code = 1
        try:
            try:
                result: object = there()
            except Exception as e:
                result = _NoResult(f"failed: {type(e).__name__}: {e}")
            data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(data)
            while view:
                view = view[os.write(w, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + seconds
    try:
        mine = here()
        # the child does work like this lane's: past `seconds` when this lane was
        deadline = max(deadline, time.monotonic()) + GRACE_S
        theirs = _receive(r, pid, deadline, stop)
    except BaseException:
        _end(pid, r)
        raise
    if isinstance(theirs, _NoResult):
        return None, mine, theirs.why
    return cast(T, theirs), mine, None


def _receive(r: int, pid: int, deadline: float, stop: threading.Event) -> object:
    """The child's result from pipe `r`, or `_NoResult` (module doc); reaps the child
    either way."""
    chunks: list[bytes] = []
    stopped_at: float | None = None
    while True:
        now = time.monotonic()
        if stop.is_set() and stopped_at is None:
            stopped_at = now
        if now > deadline or (stopped_at is not None and now - stopped_at > STOP_GRACE_S):
            _end(pid, r)
            return _NoResult("stopped" if stopped_at is not None else "ended past its time")
        ready, _, _ = select.select([r], [], [], 0.1)
        if not ready:
            continue
        chunk = os.read(r, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return _NoResult(f"died (wait status {status})")
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # a truncated message: the child died while sending
        return _NoResult("died while sending its result")


def _end(pid: int, r: int) -> None:
    """Kill the child, reap it and close the pipe."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(r)
