"""One benchmark job: read an instance, solve it, verify and measure the schedule.

`run_task` never raises: whatever goes wrong (a bad instance file, a solver exception, a
solver that overruns its limit, a crashed child process) becomes a row whose `status` is
`error` or `timeout` and whose `error` column says what happened. The solver's own
statuses (`optimal`, `feasible`, `infeasible`, `unknown`) pass through unchanged.

Hard wall-clock guard: where the platform can fork, the job runs in a forked child that is
killed when it overruns `time_limit + margin`; before that, at `time_limit + margin / 2`, the
solver's stop event is set so that anytime solvers hand back their best schedule. Forking
per job keeps a stuck C++ solver from blocking a pool worker for ever, and costs a few
milliseconds. The child leads a process group of its own, which its solver subprocess (CBC)
joins, and writes its temporary files to a folder of its own: however the job ends (its
result sent, the hard guard, an interrupted bench), the whole group is killed and the folder
deleted, so no solver is left running and no model file left behind (tests/test_signals.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from planner.jsonio import printable
from planner.metrics import METRIC_KEYS

ERROR, TIMEOUT = "error", "timeout"
NO_LIMIT_TIMEOUT = 3600.0  # hard guard when no time limit is given
PR_SET_PDEATHSIG = 1  # prctl(2)
# How a row of an instance that could not be read begins its error: the results file keeps
# only the text, and a bench whose every row is such exits 2 (`unread`).
BAD_INSTANCE, UNREADABLE = "bad instance ", "cannot read "


def unread(row: dict[str, Any]) -> bool:
    """Whether the row is of an instance file that could not be read (bad input)."""
    return str(row.get("error") or "").startswith((BAD_INSTANCE, UNREADABLE))


@dataclass(frozen=True)
class Task:
    """One (instance, solver, repeat) job; the run uses seed `seed + repeat`."""

    instance: str  # path as listed on the command line (the resume key)
    solver: str
    repeat: int = 0
    seed: int = 0
    time_limit: float | None = 10.0
    workers: int = 1  # solver-internal threads; 1 so N processes use N cores
    margin: float | None = None  # hard timeout = time_limit + margin; None: default_margin
    text: str | None = None  # the file's content, shipped to remote (Ray) workers

    @property
    def key(self) -> tuple[str, str, int, int, float | None]:
        """The resume key (`planner.batch.results.key_of` of its row)."""
        limit = None if self.time_limit is None else float(self.time_limit)
        return (printable(self.instance), self.solver, self.repeat, self.run_seed, limit)

    @property
    def run_seed(self) -> int:
        return self.seed + self.repeat

    @property
    def timeout(self) -> float:
        if self.time_limit is None:
            return NO_LIMIT_TIMEOUT
        margin = self.margin if self.margin is not None else default_margin(self.time_limit)
        return self.time_limit + margin


def default_margin(time_limit: float) -> float:
    """Room for reading, model building, verification and metrics beyond the solve limit."""
    return 10.0 + 0.5 * time_limit


def with_text(task: Task) -> Task:
    """The task with the instance file's content attached (for workers on other hosts);
    an unreadable file is left for the worker to report as an error row."""
    from planner.errors import InputError
    from planner.jsonio import read_text

    try:
        return replace(task, text=read_text(task.instance))
    except InputError:
        return task


def base_row(task: Task) -> dict[str, Any]:
    row: dict[str, Any] = {
        "instance": task.instance,
        "name": Path(task.instance).stem,
        "solver": task.solver,
        "repeat": task.repeat,
        "seed": task.run_seed,
        "status": ERROR,
    }
    row.update(dict.fromkeys(METRIC_KEYS))
    row.update(
        {
            "objective": "",
            "objective_value": None,
            "bound": None,
            "gap_to_bound": None,
            "wall_s": None,
            "verified": False,
            "violations": None,
            "groups": None,
            "error": "",
            "time_limit": task.time_limit,
        }
    )
    return row


def error_row(
    task: Task, message: str, status: str = ERROR, wall_s: float | None = None
) -> dict[str, Any]:
    return {**base_row(task), "status": status, "error": one_line(message), "wall_s": wall_s}


def one_line(text: str, limit: int = 500) -> str:
    text = " | ".join(line.strip() for line in str(text).splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_task(task: Task) -> dict[str, Any]:
    """Run one job under the hard wall-clock guard; always returns a row."""
    try:
        if "fork" in multiprocessing.get_all_start_methods():
            return _run_forked(task)
        return execute(task)  # no fork (Windows): the soft stop event is the only guard
    except Exception as e:  # the guard itself failed (no processes left, ...)
        return error_row(task, f"{type(e).__name__}: {e}")


# The forked jobs under way in this process (each one's pid, also its process group), and
# their temporary folders from made to removed: a signal between the fork and the pid's
# registration, or during the removal, left an empty folder behind (2 of 27 interrupted
# benches; tests/test_bench.py -k cut_short).
_JOBS: set[int] = set()
_FOLDERS: set[str] = set()


def stop_jobs() -> None:
    """Kill every forked job under way here, with its solver subprocesses, and delete its
    temporary files (a pool worker told to stop)."""
    for pid in list(_JOBS):
        _kill_group(pid)
        _JOBS.discard(pid)
    for folder in list(_FOLDERS):
        _remove(folder)


def _remove(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    _FOLDERS.discard(folder)


def _kill_group(pid: int) -> None:
    # call it before the child is reaped: until then its pid, the group's id, is not reused
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is empty
        os.killpg(pid, signal.SIGKILL)


def _run_forked(task: Task) -> dict[str, Any]:
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    folder = os.path.join(tempfile.gettempdir(), f"plan-bench-{uuid.uuid4().hex}")
    _FOLDERS.add(folder)  # before it exists: known to stop_jobs from the start
    os.mkdir(folder, 0o700)  # as mkdtemp makes it
    # the child dies with the thread that forks it (PR_SET_PDEATHSIG): only a main thread
    # lives as long as its process (a pool worker's, the bench's)
    tied = threading.current_thread() is threading.main_thread()
    parent = os.getpid() if tied else None
    child = ctx.Process(target=_child, args=(task, send, folder, parent), daemon=True)
    t0 = time.perf_counter()
    try:
        child.start()
    except BaseException:
        _remove(folder)
        raise
    pid = child.pid
    assert pid is not None  # started
    _JOBS.add(pid)
    # the child does it too, whichever comes first (then this fails: EACCES)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    send.close()
    row: dict[str, Any] | None = None
    died = False
    try:
        if recv.poll(task.timeout):
            try:
                row = recv.recv()
            except EOFError:
                died = True
    finally:
        _kill_group(pid)
        child.join()
        recv.close()
        _JOBS.discard(pid)
        _remove(folder)
    wall = round(time.perf_counter() - t0, 3)
    if row is not None:
        return row
    if died:
        return error_row(task, f"worker process died (exit code {child.exitcode})", wall_s=wall)
    return error_row(
        task,
        f"no result within {task.timeout:g} s (time limit {task.time_limit} s + margin); killed",
        status=TIMEOUT,
        wall_s=wall,
    )


def die_with(parent: int, signum: int) -> None:
    """Linux: get `signum` when `parent` dies, even of a SIGKILL that it cannot pass on
    (`timeout -s KILL plan bench ...`): a job leads a group of its own, out of reach of a
    kill sent to the bench's group, and a pool worker is out of reach of one sent to the
    bench alone. Call it in the new process, whose parent forked it from its main thread
    (the signal comes when the forking thread ends)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signum)
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:  # it died before the call
        os.kill(os.getpid(), signum)


def _child(task: Task, conn: Any, folder: str, parent: int | None) -> None:
    from planner.subprocesses import stay_in_group

    try:
        os.setpgid(0, 0)
        if parent is not None:
            die_with(parent, signal.SIGKILL)  # no handler would run in a solver's C++ loop
        stay_in_group()
        os.environ["TMPDIR"] = os.environ["TMP"] = tempfile.tempdir = folder
        conn.send(execute(task))
        conn.close()
    except BaseException:  # Ctrl-C or a broken pipe: the parent writes the row
        os._exit(1)


def load_instance(task: Task) -> Any:
    """The validated Instance; InputError (naming the file) if it is bad."""
    from planner.jsonio import loads
    from planner.read import instance_from_dict, read_instance

    if task.text is None:
        return read_instance(task.instance)
    return instance_from_dict(loads(task.text, task.instance), file=task.instance)


def execute(task: Task) -> dict[str, Any]:
    """The job itself, in the calling process, without the hard guard; never raises."""
    from planner.errors import InputError

    row = base_row(task)
    try:
        instance = load_instance(task)
    except InputError as e:
        problems = "; ".join(str(p) for p in e.problems[:5])
        more = f" (+{len(e.problems) - 5} more)" if len(e.problems) > 5 else ""
        return {**row, "error": one_line(f"{BAD_INSTANCE}{e.file}: {problems}{more}")}
    except Exception as e:
        error = f"{UNREADABLE}{task.instance}: {type(e).__name__}: {e}"
        return {**row, "error": one_line(error)}
    row["name"] = instance.name
    try:
        return _solve_and_measure(task, instance, row)
    except Exception as e:
        return {**row, "status": ERROR, "error": one_line(f"{type(e).__name__}: {e}")}


def _solve_and_measure(task: Task, instance: Any, row: dict[str, Any]) -> dict[str, Any]:
    from planner.solvers import SolveOptions, objectives_of

    options = SolveOptions(time_limit=task.time_limit, seed=task.run_seed, workers=task.workers)
    objective = objectives_of(instance, options)[0]
    row["objective"] = objective
    timer = None
    soft = (task.time_limit + task.timeout) / 2 if task.time_limit is not None else None
    if soft is not None:  # ask anytime solvers to stop before the hard kill
        timer = threading.Timer(soft, options.stop.set)
        timer.daemon = True
        timer.start()
    t0 = time.perf_counter()
    try:
        sched = _plan(instance, task.solver, options)
    except Exception as e:
        from planner.simulate import NotApplicable, Stopped

        wall = round(time.perf_counter() - t0, 3)
        if isinstance(e, Stopped) and options.stop.is_set():
            # a simulation has no best-so-far plan to hand back: it ran out of time
            why = f"stopped at {soft:g} s (half-way from the time limit to the hard guard)"
            return {**row, "status": TIMEOUT, "error": one_line(f"{why}: {e}"), "wall_s": wall}
        if isinstance(e, NotApplicable):
            # the policy does not apply to the instance (a preemptive policy without
            # policy.preemption): the reason plan simulate gives, not a failure of ours
            return {**row, "error": one_line(f"not applicable: {e}"), "wall_s": wall}
        return {**row, "error": one_line(f"solver failed: {type(e).__name__}: {e}"), "wall_s": wall}
    finally:
        if timer is not None:
            timer.cancel()
    row["wall_s"] = round(time.perf_counter() - t0, 3)
    row["status"] = sched.status
    row["groups"] = len(sched.groups)
    bound = (sched.lower_bound or {}).get(objective)
    row["bound"] = None if bound is None else float(bound)
    if not sched.jobs and instance.jobs:  # no schedule (an empty instance's plan is one)
        reason = sched.info.get("reason") if sched.info else None
        row["error"] = one_line(str(reason or f"no schedule ({sched.status})"))
        return row
    return _measure(instance, sched, objective, row, task.solver.startswith("simulate:"))


def _plan(instance: Any, spec: str, options: Any) -> Any:
    """A planner's schedule, or the realized schedule of `simulate:POLICY` (contract §10),
    measured and verified alike."""
    if spec.startswith("simulate:"):
        from planner.online import simulate_spec

        return simulate_spec(instance, spec, stop=options.stop)
    from planner.solvers import solve

    return solve(instance, spec, options)


def _measure(
    instance: Any, sched: Any, objective: str, row: dict[str, Any], realized: bool = False
) -> dict[str, Any]:
    """`realized`: `sched` is a simulation's; one that misses a deadline or the horizon is
    no schedule, as `plan simulate` says (exit 1): status `unknown`, its metrics kept."""
    from planner.metrics import metrics, objective_values
    from planner.simulate.output import missed_limits
    from planner.verify import verify

    violations = verify(instance, sched)
    row["verified"] = not violations
    row["violations"] = len(violations)
    late = missed_limits(instance, sched, violations) if realized and violations else None
    if late is not None:
        row["status"] = "unknown"
        what = f"the policy missed the deadline or horizon of {late} job(s)"
        row["error"] = one_line(f"{what}: {violations[0]}")
    elif violations:
        row["error"] = one_line(f"invalid schedule: {violations[0]}")
    m = metrics(instance, sched)
    for name in METRIC_KEYS:
        row[name] = m.get(name)
    value = float(objective_values(instance, sched, (objective,))[objective])
    row["objective_value"] = value
    bound = row["bound"]
    if bound is not None:
        row["gap_to_bound"] = (
            (value - bound) / abs(value) if value else (0.0 if bound == value else None)
        )
    return row
