"""Where a solver's subprocess (CBC) sits among process groups.

By default it gets a session of its own, so that a terminal Ctrl-C reaches only `plan`,
which then stops the solver gracefully and keeps its best solution
(planner/solvers/milp/backends.py). A benchmark job (planner/batch/run.py) instead leads a
process group of its own, out of the terminal's reach, and is stopped by killing that whole
group: there the solver must stay in the group, or it would outlive the job
(tests/test_signals.py)."""

from __future__ import annotations

from collections.abc import Callable

_own_session = True
_clean_ups: list[Callable[[], None]] = []


def own_session() -> bool:
    """Whether a solver subprocess started now gets a session of its own."""
    return _own_session


def stay_in_group() -> None:
    """From now on, solver subprocesses stay in this process's group (a benchmark job)."""
    global _own_session
    _own_session = False


def clean_up_at_exit(fn: Callable[[], None]) -> Callable[[], None]:
    """Register `fn` (it kills what a solver left running and removes its files) for an
    exit without the interpreter's finalization too (`run_clean_ups`); also an atexit
    function."""
    import atexit

    _clean_ups.append(fn)
    atexit.register(fn)
    return fn


def run_clean_ups() -> None:
    """What `clean_up_at_exit` registered, for a process about to end by `os._exit` (an
    abandoned solve, `planner.launch`): the other exit functions are left out, HiGHS's
    among them, which tears down its threads under a solve still running."""
    for fn in _clean_ups:
        fn()
