"""Running CBC and HiGHS on a PuLP model: time limit, threads, seed, warm start, live
progress, Ctrl-C, and the real status with the dual bound.

PuLP's own status is not enough: a time-limited CBC run with an incumbent comes back as
"Optimal" (LpStatus), only `sol_status` says "Solution Found" rather than "Optimal
Solution Found"; HiGHS via PuLP maps a time limit to the same pair. We read the solver's
own facts instead: CBC's solution-file header and its log ("Result - ...", "Objective
value", "Lower bound"), and HiGHS's model status, primal solution status and
mip_dual_bound.

CBC runs as a subprocess. We start it ourselves (same command line PuLP builds, its output
line-buffered by `stdbuf` where there is one) to watch its log for progress and, when
`stop` is set, send it SIGINT: CBC then stops branching and writes its best solution
("Stopped on ctrl-c - objective value ..."), which we read like a time-limited result.
When its log (seen to be line-buffered) shows no solution better than the warm start and
no branch and bound under way, there is nothing to wait for: it is killed at once and the
caller keeps the start it holds. It runs in a session of its own, so that a terminal
Ctrl-C reaches only us, except in a benchmark job, which is stopped by killing its
process group and so keeps CBC in it (planner/subprocesses.py).
HiGHS runs in this process; a MIP-interrupt callback polls `stop` and interrupts it, and
it keeps its incumbent.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import pulp
from pulp.apis.coin_api import PULP_CBC_CMD

from planner.highs import silence_banner
from planner.subprocesses import clean_up_at_exit, own_session

# Seconds we keep asking CBC to stop before killing it (its solution is then lost and the
# caller falls back to the best schedule it already has).
STOP_GRACE = 10.0
# CBC's output to a file is block-buffered: without `stdbuf -oL` its log shows nothing
# for long stretches, so neither progress nor whether it holds a better solution is known.
STDBUF = shutil.which("stdbuf")

ProgressFn = Callable[[float | None, float | None], None]  # (incumbent, bound)

# The CBC runs of this process and their files, while they last. CBC is watched from the
# thread that solves, often not the one a later Ctrl-C interrupts (README, "What we chose
# where the contract is silent", Signals: it abandons the run); the process then exits
# without that thread's clean-up, so this is done at exit (tests/test_signals.py).
_CBC_RUNS: dict[tuple[str, ...], subprocess.Popen[bytes] | None] = {}  # files -> CBC


@clean_up_at_exit
def _abandon_cbc() -> None:
    for files, proc in list(_CBC_RUNS.items()):
        if proc is not None and proc.poll() is None:
            proc.kill()
        for path in files:
            with contextlib.suppress(OSError):
                os.remove(path)


# "none": no solution, and nothing proved
RunStatus = Literal["optimal", "feasible", "infeasible", "none"]


@dataclass
class RunResult:
    status: RunStatus
    objective: float | None
    bound: float | None
    interrupted: bool
    seconds: float
    detail: str  # the solver's own words, for info


def run_backend(
    prob: pulp.LpProblem,
    backend: str,
    time_limit: float,
    threads: int,
    seed: int,
    warm: bool,
    stop: threading.Event,
    progress: ProgressFn | None,
) -> RunResult:
    """Solve `prob` with CBC or HiGHS (`backend`) within `time_limit`, from the variables'
    values as warm start when `warm`; `stop` (Ctrl-C) ends it with the best it has."""
    if stop.is_set():  # handing the model over takes up to twice its build (solve.HANDOVER)
        return RunResult("none", None, None, True, 0.0, "interrupted before the solver ran")
    if backend == "highs":
        return _run_highs(prob, time_limit, threads, seed, warm, stop, progress)
    res = _run_cbc(prob, time_limit, threads, seed, warm, stop, progress)
    if res.detail != _FRACTIONAL or stop.is_set():
        return res
    # CBC 2.10.3 with a MIP start: its preprocessing's postprocessing gave back a
    # fractional answer as "Optimal" (its log: "Postprocessing changed objective from 23 to
    # 21 - possible tolerance issue - try without preprocessing"; makespan 21 where the
    # optimum is 25: tests/test_milp.py). Its advice, in the time left:
    left = time_limit - res.seconds
    again = _run_cbc(prob, left, threads, seed, warm, stop, progress, preprocess=False)
    again.seconds += res.seconds
    again.detail = f"{again.detail} (without preprocessing: {_FRACTIONAL} with it)"
    return again


# --- CBC -------------------------------------------------------------------------------

_INCUMBENT = re.compile(r"Cbc0012I Integer solution of (\S+)|Cbc0004I Integer solution of (\S+)")
_MIPSTART = re.compile(r"Cbc0045I MIPStart provided solution with cost (\S+)")
_ROOT_LP = "Continuous objective value"  # the root LP is solved
_BOUND = re.compile(r"best possible (\S+)")
_RESULT = re.compile(r"^Result - (.*)$", re.M)
_OBJ = re.compile(r"^Objective value:\s+(\S+)", re.M)
_LB = re.compile(r"^Lower bound:\s+(\S+)", re.M)


def _num(s: str | None) -> float | None:
    if s is None:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if abs(v) < 1e30 else None


# The banner CBC prints first; seen within the log's first block, it shows the log is
# line-buffered (a block-buffered log shows nothing before a whole block: `stdbuf` has no
# effect on a statically linked CBC).
_BANNER = "Welcome to the CBC MILP Solver"
_BLOCK = 4096
_TREE = "Cbc0010I"  # a node-count line: branch and bound is under way, SIGINT is heard


@dataclass
class _CbcLog:
    """What CBC's log has shown so far (whole lines only): its incumbent, bound and
    warm-start value, and how far it got. A reader's state, updated by `read`."""

    path: str
    seen: int = 0  # bytes consumed, up to the last whole line
    line_buffered: bool = False
    root_lp: bool = False
    in_tree: bool = False
    incumbent: float | None = None
    bound: float | None = None
    start: float | None = None

    def read(self) -> bool:
        """Read the whole lines added; whether the incumbent or the bound changed."""
        with open(self.path, "rb") as f:
            f.seek(self.seen)
            data = f.read()
        data = data[: data.rfind(b"\n") + 1]  # a line still being written waits
        if not data:
            return False
        chunk = data.decode(errors="replace")
        if not self.seen and _BANNER in chunk and len(data) < _BLOCK:
            self.line_buffered = True
        self.seen += len(data)
        self.root_lp = self.root_lp or _ROOT_LP in chunk
        self.in_tree = self.in_tree or _TREE in chunk
        changed = False
        for m in _MIPSTART.finditer(chunk):
            self.start = _num(m.group(1))
        for m in _INCUMBENT.finditer(chunk):
            self.incumbent = _num(m.group(1) or m.group(2))
            changed = True
        for m in _BOUND.finditer(chunk):
            self.bound = _num(m.group(1))
            changed = True
        return changed

    def nothing_to_wait_for(self) -> bool:
        """Known from the log: CBC holds no solution better than the warm start (the
        objective is minimised) and is not in branch and bound, where SIGINT would stop
        it with its bound."""
        if not self.line_buffered or self.in_tree:
            return False
        if self.incumbent is None:
            return True
        return self.start is not None and self.incumbent >= self.start - 1e-9 * max(
            1.0, abs(self.start)
        )


def _kill(proc: subprocess.Popen[bytes], why: str) -> str | None:
    """Kill CBC; `why`, or None when it had just ended by itself (its solution file
    whole)."""
    proc.kill()
    return why if proc.wait() != 0 else None


def _watch_cbc(
    proc: subprocess.Popen[bytes],
    log: _CbcLog,
    t0: float,
    time_limit: float,
    stop: threading.Event,
    progress: ProgressFn | None,
) -> tuple[bool, str | None]:
    """Wait for CBC, asking it to stop on Ctrl-C or overrun, and feed `progress` from its
    log; whether Ctrl-C interrupted it, and why it was killed if it was (then any
    solution file it was writing may be partial)."""
    interrupted = False
    overran = False
    first_ask = 0.0
    asked = 0.0
    while proc.poll() is None:
        time.sleep(0.2)
        now = time.monotonic()
        if log.read() and progress is not None:
            progress(log.incumbent, log.bound)
        # CBC checks its clock only between nodes and cut passes, so it gets 3 s to stop
        # by itself (and report its bound); still in its root LP, it will not look
        margin = 3.0 if log.root_lp or not log.line_buffered else 0.0
        if not overran and now - t0 > time_limit + margin:
            overran = True  # then it is stopped as on Ctrl-C
        if not (stop.is_set() or overran):
            continue
        interrupted = interrupted or stop.is_set()
        if log.nothing_to_wait_for():
            # waiting would only delay the start the caller holds (la01-la05 imported from
            # the job-shop set at 5 s: killed by the bench at 17.5 s before, 5.4-8.7 s
            # after; README "What we chose where the contract is silent")
            return interrupted, _kill(proc, "stopped: no solution better than the start")
        if now - asked >= 1.0:
            # CBC acts on SIGINT only inside branch and bound (its handler flags the
            # tree search), so repeat it; after STOP_GRACE s give up and kill it.
            if not asked:
                first_ask = now
            asked = now
            if now - first_ask > STOP_GRACE:
                return interrupted, _kill(
                    proc, f"killed: not stopped {STOP_GRACE:g} s after SIGINT"
                )
            proc.send_signal(signal.SIGINT)
    return interrupted, None


def _cbc_result(text: str, head: str, sol_status: int, interrupted: bool, t0: float) -> RunResult:
    """Status, objective and bound from CBC's log and its solution file's first line."""
    result = _RESULT.search(text)
    detail = result.group(1).strip() if result else head
    obj = _num(_OBJ.findall(text)[-1]) if _OBJ.search(text) else None
    lb = _num(_LB.findall(text)[-1]) if _LB.search(text) else None
    elapsed = time.monotonic() - t0
    if head.startswith("Optimal"):
        return RunResult("optimal", obj, obj, interrupted, elapsed, detail)
    if head.startswith("Infeasible") or head.startswith("Integer infeasible"):
        return RunResult("infeasible", None, None, interrupted, elapsed, detail)
    if sol_status == pulp.LpSolutionIntegerFeasible:
        if lb is None:
            found = _BOUND.findall(text)
            lb = _num(found[-1]) if found else None
        return RunResult("feasible", obj, lb, interrupted, elapsed, detail)
    return RunResult("none", None, None, interrupted, elapsed, detail or head)


# CBC's answer has an integer variable this far from a whole number: it is no solution
# of the model (CBC's own integer tolerance is 1e-6 too)
INTEGRALITY_TOL = 1e-6
_FRACTIONAL = "CBC returned a fractional solution"


def _fractional(variables: list[pulp.LpVariable], values: dict[str, float]) -> bool:
    for v in variables:
        x = values.get(v.name)
        if v.cat == pulp.LpInteger and x is not None and abs(x - round(x)) > INTEGRALITY_TOL:
            return True
    return False


def _run_cbc(
    prob: pulp.LpProblem,
    time_limit: float,
    threads: int,
    seed: int,
    warm: bool,
    stop: threading.Event,
    progress: ProgressFn | None,
    preprocess: bool = True,
) -> RunResult:
    """One CBC run (see run_backend): the model written to files, CBC run on them and
    watched to its end, its answer read back into `prob`'s variables. `_end_run` leaves
    no CBC and no file behind (`_abandon_cbc` at exit, for a run abandoned before it)."""
    t0 = time.monotonic()
    seconds = max(1.0, time_limit)
    solver = pulp.COIN_CMD(path=PULP_CBC_CMD.pulp_cbc_path, msg=False, warmStart=warm)
    files = _CbcFiles(*solver.create_tmp_files(prob.name, "mps", "sol", "mst", "log"))
    _CBC_RUNS[files] = None
    model = _write_model(solver, prob, files, warm)
    args = _cbc_command(solver.path, files, warm, seconds, threads, seed, preprocess)
    try:
        interrupted, killed = _start_and_watch(args, files, t0, seconds, stop, progress)
        answer = _read_answer(solver, prob, model, files, interrupted, killed, t0)
    finally:
        _end_run(solver, files)
    if isinstance(answer, RunResult):
        return answer
    # `model.variables`: writeMPS's (`prob.variables()` would walk every row again)
    if _fractional(model.variables, answer.values):  # the model's variables keep the start
        return RunResult("none", None, None, interrupted, time.monotonic() - t0, _FRACTIONAL)
    prob.assignVarsVals(answer.values)
    return _cbc_result(answer.text, answer.head, answer.sol_status, interrupted, t0)


class _CbcFiles(NamedTuple):
    """A CBC run's temporary files (a tuple: the key of `_CBC_RUNS`)."""

    mps: str  # the model
    sol: str  # CBC's solution
    mst: str  # the warm start
    log: str  # CBC's output


@dataclass
class _Written:
    """`prob` as writeMPS wrote it: its variables and the names it gave them and the rows,
    which reading CBC's solution back needs."""

    variables: list[pulp.LpVariable]
    vnames: dict[str, str]
    cnames: dict[str, str]


@dataclass
class _CbcAnswer:
    """What a CBC run that ended with a solution file left: its log, the values of its
    solution, its solution status (pulp's) and the file's first line."""

    text: str
    values: dict[str, float]
    sol_status: int
    head: str


def _write_model(
    solver: pulp.COIN_CMD, prob: pulp.LpProblem, files: _CbcFiles, warm: bool
) -> _Written:
    """`prob` as an MPS file and, when `warm`, its variables' values as CBC's MIP start."""
    vs, vnames, cnames, _ = prob.writeMPS(files.mps, rename=1)
    if warm:
        solver.writesol(files.mst, prob, vs, vnames, cnames)
    return _Written(vs, vnames, cnames)


def _cbc_command(
    path: str,
    files: _CbcFiles,
    warm: bool,
    seconds: float,
    threads: int,
    seed: int,
    preprocess: bool,
) -> list[str]:
    """CBC's command line (PuLP's, line-buffered by `stdbuf` where there is one)."""
    args = ([STDBUF, "-oL"] if STDBUF else []) + [path, files.mps]
    if warm:
        args += ["-mips", files.mst]
    return args + [
        "-sec",
        f"{seconds:.2f}",
        "-timeMode",
        "elapsed",
        "-threads",
        str(max(1, threads)),
        # CBC takes 0 as "seed from the clock"; keep runs reproducible
        "-randomCbcSeed",
        str(seed + 1),
        "-randomSeed",
        str(seed + 1),
        *([] if preprocess else ["-preprocess", "off"]),
        "-solve",
        "-printingOptions",
        "all",
        "-solution",
        files.sol,
    ]


def _start_and_watch(
    args: list[str],
    files: _CbcFiles,
    t0: float,
    seconds: float,
    stop: threading.Event,
    progress: ProgressFn | None,
) -> tuple[bool, str | None]:
    """Start CBC, its output to the log file, in a session of its own (module docstring),
    and `_watch_cbc` it to its end: whether Ctrl-C interrupted it, why it was killed."""
    log = _CbcLog(files.log)
    with open(files.log, "w") as out:
        proc = subprocess.Popen(
            args,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=own_session(),
        )
        _CBC_RUNS[files] = proc  # `_end_run` (or at exit `_abandon_cbc`) ends it
        return _watch_cbc(proc, log, t0, seconds, stop, progress)


def _read_answer(
    solver: pulp.COIN_CMD,
    prob: pulp.LpProblem,
    model: _Written,
    files: _CbcFiles,
    interrupted: bool,
    killed: str | None,
    t0: float,
) -> _CbcAnswer | RunResult:
    """CBC's log and solution file, before they are deleted; no solution ("none", saying
    why: CBC was killed, or its log's last lines) when CBC was killed or wrote none."""
    with open(files.log) as f:
        text = f.read()
    if killed or not os.path.exists(files.sol):
        why = killed or _tail(text)
        return RunResult("none", None, None, interrupted, time.monotonic() - t0, why)
    _status, values, _dj, _pi, _slacks, sol_status = solver.readsol_MPS(
        files.sol, prob, model.variables, model.vnames, model.cnames
    )
    with open(files.sol) as f:
        head = f.readline().strip()
    return _CbcAnswer(text, values, sol_status, head)


def _end_run(solver: pulp.COIN_CMD, files: _CbcFiles) -> None:
    """CBC killed if it still runs (e.g. a second Ctrl-C raised KeyboardInterrupt: leave no
    orphan) and the run's files deleted."""
    proc = _CBC_RUNS[files]
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()
    solver.delete_tmp_files(*files)
    del _CBC_RUNS[files]


def _tail(text: str) -> str:
    return " | ".join(text.strip().splitlines()[-3:])


# --- HiGHS -----------------------------------------------------------------------------

# HiGHS presolve rules switched off (a bit mask, HiGHS's `presolve_rule_off`). Presolve
# cannot be interrupted by our callbacks, and two of its rules cost more than the time
# limit on time-indexed models: probing (2^15) took the whole budget (HiGHS's own log
# advises switching it off), and enumeration (2^16) took 14 of presolve's 16.6 s on
# instances/bench/gen-mixed-25j-4n-s3.json's 445,798-nonzero model at --time-limit 9 (2.4 s
# without it; a 6 s limit ran 17 s).
PRESOLVE_RULES_OFF = (1 << 15) | (1 << 16)


class _Highs(pulp.HiGHS):
    """PuLP's HiGHS with a warm start (setSolution) and interrupt/progress callbacks,
    which PuLP's class does not offer."""

    def __init__(
        self, warm: bool, stop: threading.Event, progress: ProgressFn | None, **kw: object
    ) -> None:
        super().__init__(**kw)
        self.warm = warm
        self.stop = stop
        self.deadline = math.inf
        self.on_progress = progress

    def callSolver(self, lp: pulp.LpProblem) -> None:
        import highspy

        h = lp.solverModel
        if self.warm:
            cols = sorted(lp.variables(), key=lambda v: v.index)
            sol = highspy.HighsSolution()
            sol.col_value = [float(v.varValue) if v.varValue is not None else 0.0 for v in cols]
            sol.value_valid = True  # without it HiGHS ignores the values
            h.setSolution(sol)

        def interrupt(e: object) -> None:
            # HiGHS's time limit starts at run(); PuLP's model building before it is ours,
            # so also stop at our own wall-clock deadline
            if self.stop.is_set() or time.monotonic() > self.deadline:
                e.interrupt()  # type: ignore[attr-defined]

        def improved(e: object) -> None:
            if self.on_progress is not None:
                out = e.data_out  # type: ignore[attr-defined]
                self.on_progress(
                    _num(str(out.objective_function_value)), _num(str(out.mip_dual_bound))
                )

        # the model was just built in Python: only what is left of the budget is HiGHS's
        h.setOptionValue("time_limit", max(0.5, self.deadline - 1.0 - time.monotonic()))
        h.cbMipInterrupt += interrupt
        h.cbSimplexInterrupt += interrupt  # the root LP can be long: stop there too
        h.cbMipImprovingSolution += improved
        h.run()


def _run_highs(
    prob: pulp.LpProblem,
    time_limit: float,
    threads: int,
    seed: int,
    warm: bool,
    stop: threading.Event,
    progress: ProgressFn | None,
) -> RunResult:
    t0 = time.monotonic()
    res = _highs_once(prob, time_limit, seed, warm, stop, progress)
    actual = _solution_value(prob) if res.objective is not None else None
    if actual is None or res.objective is None or _same(res.objective, actual):
        return res
    # HiGHS 1.16, warm-started on a model its presolve solves outright, can report an
    # objective and a dual bound that are not its solution's (3 jobs: "optimal" 5 and bound
    # 5 for a solution of value 13, tests/test_milp.py::
    # test_highs_reports_the_value_of_the_solution_it_returns): then nothing it reported
    # holds. Run it again without the warm start, which reports truly, and take that run
    # unless its solution is worse; else keep the first solution, at its own value, with
    # the second run's bound if it gave a true one, unproved.
    kept = {v.name: v.varValue for v in prob.variables()}
    bound = None
    left = time_limit - (time.monotonic() - t0)
    if warm and left >= 1.0 and not stop.is_set():
        again = _highs_once(prob, left, seed, False, stop, progress)
        value = _solution_value(prob) if again.objective is not None else None
        if value is not None and again.objective is not None and _same(again.objective, value):
            if value <= actual or _same(value, actual):
                again.seconds = time.monotonic() - t0
                return again
            bound = again.bound
        for v in prob.variables():
            v.varValue = kept[v.name]
    detail = f"{res.detail}; its objective {res.objective:g} is not its solution's {actual:g}"
    return RunResult("feasible", actual, bound, res.interrupted, time.monotonic() - t0, detail)


def _solution_value(prob: pulp.LpProblem) -> float | None:
    """The objective at the variables' values, as HiGHS counts it: PuLP passes it no
    constant term."""
    value = pulp.value(prob.objective)
    return None if value is None else float(value) - float(prob.objective.constant or 0.0)


def _same(reported: float, actual: float) -> bool:
    return abs(reported - actual) <= 1e-6 * max(1.0, abs(actual))


def _highs_once(
    prob: pulp.LpProblem,
    time_limit: float,
    seed: int,
    warm: bool,
    stop: threading.Event,
    progress: ProgressFn | None,
) -> RunResult:
    import highspy

    silence_banner()
    t0 = time.monotonic()
    solver = _Highs(
        warm,
        stop,
        progress,
        msg=False,
        timeLimit=max(1.0, time_limit),
        # no `threads`: HiGHS sets up its thread pool once per process (the bound LPs run
        # first, with its default), and a later run asking another count fails at once
        # ("Not Set"; --workers 1, 3 or 4 did)
        random_seed=seed,
        mip_rel_gap=1e-9,
        presolve_rule_off=PRESOLVE_RULES_OFF,
    )
    solver.deadline = t0 + max(1.0, time_limit) + 1.0
    prob.solve(solver)
    h = prob.solverModel
    ms = h.getModelStatus()
    info = h.getInfo()
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    obj = info.objective_function_value if has_sol else None
    bound = _num(str(info.mip_dual_bound))
    detail = h.modelStatusToString(ms)
    elapsed = time.monotonic() - t0
    interrupted = ms == highspy.HighsModelStatus.kInterrupt and stop.is_set()
    if ms == highspy.HighsModelStatus.kOptimal and has_sol:
        return RunResult(
            "optimal", obj, bound if bound is not None else obj, interrupted, elapsed, detail
        )
    if ms in (highspy.HighsModelStatus.kInfeasible,):
        return RunResult("infeasible", None, None, interrupted, elapsed, detail)
    if has_sol:
        return RunResult("feasible", obj, bound, interrupted, elapsed, detail)
    return RunResult("none", None, bound, interrupted, elapsed, detail)
