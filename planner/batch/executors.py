"""Where benchmark jobs run. Every executor yields one row per task, in completion order.

- in-process (`workers == 1`): plain loop, easy to test and debug;
- local processes: `concurrent.futures.ProcessPoolExecutor`, one job per task; workers are
  spawned (not forked) so they never inherit the parent's threads;
- Ray: the same `run_task` as a Ray remote function; the instance file's text travels with
  the task, so workers on other hosts need the `planner` package but not the files.
Each job also guards itself with a hard wall-clock timeout (see `planner.batch.run`).
"""

from __future__ import annotations

import importlib.util
import logging
import multiprocessing
import os
import signal
import socket
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from planner.batch.run import Task, die_with, error_row, run_task, stop_jobs, with_text
from planner.errors import UsageError

EXECUTORS = ("local", "ray")
# How long an interrupted pool's manager thread may take to end (it sees its terminated
# workers within a second in tests/test_bench.py and tests/test_signals.py).
MANAGER_JOIN_S = 10.0
REACH_TIMEOUT_S = 5.0  # `--address`: how long a cluster has to accept a connection


# The extra's package, not `planner[ray]`: on PyPI that name is another project.
NEEDS_RAY = (
    "--executor ray needs Ray: pip install 'ray>=2.9' (from a clone: pip install -e '.[ray]')"
)


def run_inline(tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
    try:
        for task in tasks:
            yield run_task(task)
    finally:  # a run whose own clean-up a later signal cut short: its group and folder
        stop_jobs()


def _stop_worker(signum: int, frame: object) -> None:
    stop_jobs()  # the job's forked child, its solver and its temporary files (`run_task`)
    os._exit(143)  # not SystemExit: the pool would catch it and hand this worker a next job


def _worker_start(bench: int) -> None:
    """A pool worker leaves Ctrl-C to the bench, which stops it with SIGTERM; then it
    kills the job it runs and exits (no orphans). The same when the bench dies without a
    word (SIGKILL: tests/test_signals.py)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    die_with(bench, signal.SIGTERM)


def run_local(tasks: Sequence[Task], workers: int) -> Iterator[dict[str, Any]]:
    """Run on `workers` local processes (in this process when `workers` is 1). Left
    early (an interrupted bench), the workers still running are stopped."""
    if workers <= 1 or len(tasks) <= 1:
        yield from run_inline(tasks)
        return
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)),
        mp_context=ctx,
        initializer=_worker_start,
        initargs=(os.getpid(),),
    )  # started by `submit`, from this (the main) thread
    pending: dict[Future[dict[str, Any]], Task] = {}
    try:
        for t in tasks:
            pending[pool.submit(run_task, t)] = t
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                task = pending.pop(fut)
                try:
                    yield fut.result()
                except Exception as e:  # the pool broke (a worker was killed)
                    yield error_row(task, f"worker failed: {type(e).__name__}: {e}")
    finally:
        if pending:  # interrupted: a running job would otherwise go on as an orphan
            for worker in multiprocessing.active_children():
                worker.terminate()
        manager: threading.Thread | None = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=not pending, cancel_futures=True)
        if pending and manager is not None:
            # Python 3.11's exit hook wakes this thread through a pipe that the thread
            # closes once it sees its workers gone: were the two to meet, a Ctrl-C would end
            # in a traceback (tests/test_bench.py). It ends within moments of the workers.
            manager.join(timeout=MANAGER_JOIN_S)


def run_ray(
    tasks: Sequence[Task], workers: int, address: str | None = None
) -> Iterator[dict[str, Any]]:
    """Run as Ray tasks. With `address`, join that cluster (`ray.init(address=...)`: "auto",
    "HOST:PORT" or "ray://HOST:PORT"); without, reuse an initialised Ray or start a local
    one with `workers` CPUs. Ray is shut down at the end only if this function started it."""
    try:
        import ray
    except ImportError:
        raise UsageError(NEEDS_RAY) from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        else:
            ray.init(
                num_cpus=max(1, workers),
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        started = True
    remote = ray.remote(num_cpus=1, max_retries=0)(run_task)
    pending: dict[Any, Task] = {}
    try:
        for t in tasks:
            pending[remote.remote(with_text(t))] = t
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                task = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as e:  # worker crash, lost node, serialisation error
                    yield error_row(task, f"ray task failed: {type(e).__name__}: {e}")
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def check_executor(executor: str, address: str | None = None) -> None:
    """Refuse an unusable executor before any work starts (UsageError)."""
    if executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r}: use {' or '.join(EXECUTORS)}")
    if executor == "local" and address:
        raise UsageError("--address needs --executor ray")
    if executor == "ray":
        try:
            found = importlib.util.find_spec("ray") is not None
        except ValueError:  # a module without a spec
            found = False
        if not found:
            raise UsageError(NEEDS_RAY)
    if address:
        _reachable(address)


def _reachable(address: str) -> None:
    """Refuse a HOST:PORT (or ray://HOST:PORT) nothing answers at: `ray.init` retried such
    an address for minutes, printing a warning every 5 s. "auto" is Ray's to resolve."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        if address == "auto":
            return
        raise UsageError(f"--address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
    except (OSError, ValueError, OverflowError) as e:
        raise UsageError(f"--address {address}: no Ray cluster answers there ({e})") from None


def run_tasks(
    tasks: Sequence[Task], executor: str = "local", workers: int = 1, address: str | None = None
) -> Iterator[dict[str, Any]]:
    check_executor(executor, address)
    if executor == "ray":
        return run_ray(tasks, workers, address)
    return run_local(tasks, workers)
