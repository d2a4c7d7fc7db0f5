"""Signals to a real `plan solve` process: SIGINT twice microseconds apart (what
`timeout -s INT` delivers) and SIGTERM both write the best schedule found, which
`plan check` accepts; Ctrl-C during start-up exits 130 without a traceback."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.read import read_instance
from planner.schedule import schedule_from_dict
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "instances" / "demo.json"

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")


def plan(*args: str, temp: Path | None = None) -> subprocess.Popen[str]:
    """`plan ARGS`, with its temporary files in `temp` when given."""
    env = {**os.environ, "TMPDIR": str(temp), "TMP": str(temp)} if temp else None
    return subprocess.Popen(
        [sys.executable, "-m", "planner", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def stopped_bench(p: subprocess.Popen[str], signum: int) -> str:
    """Send `signum` to the bench `p`; it must exit 130 / 143, without a traceback. Its
    standard error."""
    try:
        p.send_signal(signum)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == (143 if signum == signal.SIGTERM else 130), stderr
    assert "Traceback" not in stdout + stderr
    return stderr


def catches(pid: int, signum: int) -> bool:
    """Whether the process has a handler installed for `signum` (/proc's SigCgt mask)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def wait_until(pred: object, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for the process")


def signalled(
    p: subprocess.Popen[str], signals: tuple[int, ...], delay: float, timeout: float = 60.0
) -> tuple[str, str]:
    """Once `p` handles SIGTERM, let it work `delay` s, send `signals`; its stdout and
    stderr (`p` is killed whatever happens)."""
    try:
        wait_until(lambda: catches(p.pid, signal.SIGTERM))
        time.sleep(delay)
        for s in signals:
            p.send_signal(s)
        return p.communicate(timeout=timeout)
    finally:
        p.kill()


TWICE = (signal.SIGINT, signal.SIGINT)


@pytest.mark.parametrize(
    ("solver", "signals", "code"),
    [
        ("cpsat", TWICE, 130),
        ("cpsat", (signal.SIGTERM,), 143),
        ("milp", (signal.SIGTERM,), 143),
        ("auto", TWICE, 130),
    ],
    ids=["cpsat-sigint-twice", "cpsat-sigterm", "milp-sigterm", "auto-sigint-twice"],
)
def test_signal_writes_the_best_schedule(
    tmp_path: Path, solver: str, signals: tuple[int, ...], code: int
) -> None:
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    # `plan` handles SIGTERM from its first line (planner/launch.py), so the signal may
    # come while the modules are still imported: on a loaded machine 0.5 s after that was
    # always then ("error: interrupted", nothing written; that case has its own tests).
    # Later signals until one reaches the solve.
    for delay in (0.5, 2.0, 5.0, 10.0):
        p = plan("solve", str(DEMO), "--solver", solver, "--time-limit", "60", "-o", str(out))
        stdout, stderr = signalled(p, signals, delay)
        if not (stdout == "" and stderr == "error: interrupted\n" and not out.exists()):
            break
    assert p.returncode == code, stderr
    assert "Traceback" not in stdout + stderr
    assert "interrupted" in stdout
    assert not gantt.exists()
    p2 = plan("check", str(DEMO), str(out))
    check_out, check_err = p2.communicate(timeout=60)
    assert p2.returncode == 0, check_out + check_err


def test_sigterm_during_a_long_greedy_plan_stops_it(tmp_path: Path) -> None:
    # SIGTERM set the stop event, which the greedy engine did not look at: the run went on
    # to its end and wrote its plan (200,000 jobs ran on for minutes). Now it stops, with
    # nothing to write (no plan was finished). The plan must outlast the signal by far:
    # greedy on 5,000 mixed elastic jobs on 8 nodes took 6.2 s, and 3.6 s once the event
    # engine kept its bucket values (`greedy/bucket_mins.py`), so the signal at 3 s came
    # after it on a fresh clone; on 20,000 it takes 14.6 s (2026-12-06)
    inst = tmp_path / "big.json"
    g = plan("generate", "--family", "mixed", "--jobs", "20000", "--nodes", "8", "--elastic",
             "--preemption", "-o", str(inst))  # fmt: skip
    assert g.wait(timeout=120) == 0
    out = tmp_path / "s.json"
    p = plan("solve", str(inst), "--solver", "greedy", "--time-limit", "1", "-o", str(out))
    # 4 s in: past reading the 20,000 jobs (at 0.5 s a fresh clone's first run, compiling
    # its modules on a loaded machine, was still starting up: "error: interrupted"), well
    # before the plan's end
    stdout, stderr = signalled(p, (signal.SIGTERM,), 4.0, timeout=300)
    assert p.returncode == 143, stderr
    assert "Traceback" not in stdout + stderr
    assert "interrupted before a schedule was found; nothing written" in stderr
    assert "stopped before a schedule was found" in stdout and not out.exists()


def test_ctrl_c_during_start_up_has_no_traceback(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    p = plan("solve", str(DEMO), "--solver", "greedy", "-o", str(out))
    try:
        # Once `_json` is mapped the CLI's modules are being imported (the interpreter's
        # own start-up, before any of our code runs, is out of reach): the interrupt lands
        # in the imports, the reading or, on a fast machine, the solve.
        wait_until(lambda: "/_json." in Path(f"/proc/{p.pid}/maps").read_text(), timeout=30)
        os.kill(p.pid, signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        p.kill()
    assert "Traceback" not in stdout + stderr
    assert p.returncode in (0, 130), stderr
    if p.returncode == 130 and not out.exists():
        assert stderr.strip().splitlines() == ["error: interrupted"]


_TERM_DURING_IMPORTS = """
import builtins, os, signal, sys
real = builtins.__import__
def imported(name, *args, **kw):
    if name == "planner.cli":  # SIGTERM as the CLI's modules begin to load
        os.kill(os.getpid(), signal.SIGTERM)
    return real(name, *args, **kw)
builtins.__import__ = imported
sys.argv = ["plan", "models"]
from planner.launch import run
run()
"""


def test_sigterm_during_start_up_is_one_line_and_exit_143() -> None:
    """SIGTERM before any command's handler is in place (the CLI's imports take a few
    tenths of a second): "error: interrupted" and exit 143, as later, not a silent death."""
    p = subprocess.run(
        [sys.executable, "-c", _TERM_DURING_IMPORTS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 143, (p.returncode, p.stderr)
    assert p.stderr.strip().splitlines() == ["error: interrupted"] and not p.stdout


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (from /proc's children lists)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                continue
            for k in map(int, kids):
                if k not in found:
                    found.add(k)
                    todo.append(k)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_bench_keeps_its_rows_in_order_and_leaves_no_process(
    tmp_path: Path, workers: str, signum: int
) -> None:
    for i in (1, 2):
        (tmp_path / f"d{i}.json").write_text(DEMO.read_text())
    out = tmp_path / "r.csv"
    p = plan("bench", str(tmp_path), "--solvers", "greedy:fifo,cpsat", "--time-limit", "60",
             "--workers", workers, "-o", str(out))  # fmt: skip
    try:
        # greedy runs take well under a second; the CP-SAT runs would take 60 s each
        wait_until(lambda: out.exists() and out.read_text().count("greedy:fifo") >= 1)
        wait_until(lambda: any(alive(k) for k in descendants(p.pid)))
        time.sleep(1.0)
        below = descendants(p.pid)
    except BaseException:
        p.kill()
        raise
    stderr = stopped_bench(p, signum)
    assert "interrupted" in stderr
    wait_until(lambda: not any(alive(k) for k in below), timeout=10)
    lines = out.read_text().splitlines()
    rows = [line.split(",")[:3] for line in lines[1:]]
    assert rows and all(r[2] == "greedy:fifo" for r in rows)
    assert rows == sorted(rows)  # rewritten in instance/solver/repeat order


def demo_bench(tmp_path: Path, solvers: str, workers: str) -> tuple[subprocess.Popen[str], Path]:
    """`plan bench` of two copies of the demo at 60 s, its temporary files in a folder of
    its own: the process and that folder."""
    for i in (1, 2):
        (tmp_path / f"d{i}.json").write_text(DEMO.read_text())
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "r.csv"
    p = plan("bench", str(tmp_path), "--solvers", solvers, "--time-limit", "60",
             "--workers", workers, "-o", str(out), temp=temp)  # fmt: skip
    return p, temp


def cbc_processes(marker: str) -> set[int]:
    """CBC processes whose command line names a file under `marker` (their model file)."""
    found: set[int] = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        pid = int(cmdline.parent.name)
        cbc = any(a.endswith(b"cbc") for a in args)
        if cbc and marker.encode() in b" ".join(args) and alive(pid):
            found.add(pid)
    return found


@pytest.mark.parametrize(
    ("workers", "signum"),
    [("1", signal.SIGTERM), ("1", signal.SIGINT), ("2", signal.SIGTERM)],
    ids=["inline-sigterm", "inline-sigint", "pool-sigterm"],
)
def test_an_interrupted_milp_bench_leaves_no_cbc_running_and_no_model_files(
    tmp_path: Path, workers: str, signum: int
) -> None:
    """CBC runs in its own process, with its model and solution files in the temporary
    folder: a bench stopped while CBC runs must stop CBC too and remove those files."""
    p, temp = demo_bench(tmp_path, "milp:cbc", workers)
    try:
        wait_until(lambda: cbc_processes(str(temp)))
        time.sleep(1.0)
        running = cbc_processes(str(temp))
    except BaseException:
        p.kill()
        raise
    stopped_bench(p, signum)
    wait_until(lambda: not any(alive(k) for k in running), timeout=10)
    assert not cbc_processes(str(temp))
    assert sorted(f.name for f in temp.rglob("*")) == []


def test_a_second_ctrl_c_during_a_milp_solve_leaves_no_cbc_and_no_model_files(
    tmp_path: Path,
) -> None:
    """README, "What we chose ...", Signals: a Ctrl-C more than a second after the first
    abandons the run; CBC, still running in its own session, must not outlive `plan`, nor
    its files."""
    from planner.generate import generate

    temp = tmp_path / "tmp"
    temp.mkdir()
    inst, out = tmp_path / "dl60.json", tmp_path / "s.json"
    # `milp` watches CBC from a thread of its own, not the one a Ctrl-C interrupts
    inst.write_text(json.dumps(generate("dl", 60, 4, 3)))
    p = plan("solve", str(inst), "--solver", "milp", "--time-limit", "60", "-o", str(out),
             temp=temp)  # fmt: skip
    try:
        # in branch and bound ("Cbc0010I" in its log, about 15 s in), where `plan` waits
        # for CBC to heed the first Ctrl-C; stopped, it heeds nothing
        wait_until(lambda: any("Cbc0010I" in f.read_text() for f in temp.glob("*.log")), 120)
        running = cbc_processes(str(temp))
        for pid in running:
            os.kill(pid, signal.SIGSTOP)
        p.send_signal(signal.SIGINT)
        time.sleep(1.5)  # past REPEAT_S: "stop waiting"
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
        assert p.returncode == 130, stderr
        assert "Traceback" not in stdout + stderr
        wait_until(lambda: not any(alive(k) for k in running), timeout=10)
        assert sorted(f.name for f in temp.rglob("*")) == []
    finally:
        p.kill()
        for pid in cbc_processes(str(temp)):  # what this test failed to see stopped
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("command", ["validate", "generate"])
def test_sigterm_to_a_command_without_a_solver_is_exit_143_and_writes_nothing(
    tmp_path: Path, command: str
) -> None:
    big = tmp_path / "big.json"
    if command == "validate":
        from planner.generate import generate

        big.write_text(json.dumps(generate("mixed", 80_000, 64, 1)))  # 3-4 s to read
        args = ["validate", str(big)]
    else:
        args = ["generate", "--jobs", "200000", "--nodes", "64", "-o", str(big)]
    p = plan(*args)
    # the handler is installed as the command starts; then let it get under way
    stdout, stderr = signalled(p, (signal.SIGTERM,), 0.3)
    assert p.returncode == 143, stderr
    assert stderr.strip().splitlines() == ["error: interrupted"]
    assert sorted(f.name for f in tmp_path.iterdir()) == (
        ["big.json"] if command == "validate" else []
    )


def test_a_repeated_signal_does_not_cut_the_clean_up_short() -> None:
    """Two Ctrl-C a millisecond apart (or `timeout -s INT`'s two): the first raises, the
    repeat is the same request and cannot interrupt the clean-up the first started (a
    bench's run folder was left behind so)."""
    from planner.cli.interrupts import Interrupted, Stopping

    cleaned = []
    with pytest.raises(Interrupted), Stopping():
        try:
            os.kill(os.getpid(), signal.SIGINT)
        finally:
            os.kill(os.getpid(), signal.SIGINT)
            cleaned.append("done")
    assert cleaned == ["done"]


def test_a_bench_run_whose_clean_up_was_cut_short_is_cleaned_when_the_bench_ends(
    tmp_path: Path,
) -> None:
    """A run left in the registry (its group and temporary folder) is killed and deleted
    as the in-process executor is left, whatever ends it."""
    from planner.batch import executors, run

    folder = tmp_path / "plan-bench-x"
    folder.mkdir()
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    run._JOBS.add(child.pid)
    run._FOLDERS.add(str(folder))
    try:
        rows = executors.run_inline([])
        assert list(rows) == []
        assert child.wait(timeout=10) == -signal.SIGKILL and not folder.exists()
        assert child.pid not in run._JOBS and str(folder) not in run._FOLDERS
    finally:
        child.kill()
        run._JOBS.discard(child.pid)
        run._FOLDERS.discard(str(folder))


def test_a_signal_after_the_outputs_are_written_changes_nothing(tmp_path: Path) -> None:
    """SIGTERM to a command that does not solve, once its output set is in place: it ends
    as it would have (exit 143 means that nothing was written); before, it is stopped."""
    from planner.cli.common import stops_on_signals
    from planner.cli.interrupts import Interrupted
    from planner.outputs import write_all

    @stops_on_signals
    def command(path: Path, write: bool) -> str:
        if write:
            write_all({str(path): "new"})
        os.kill(os.getpid(), signal.SIGTERM)
        return "finished"

    try:
        said = command(tmp_path / "a.txt", True)
    except Interrupted:  # a KeyboardInterrupt: let it not end the test session
        said = "interrupted"
    assert said == "finished"
    assert (tmp_path / "a.txt").read_text() == "new"
    with pytest.raises(Interrupted) as e:
        command(tmp_path / "b.txt", False)
    assert e.value.exit_code == 143


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bench_killed_outright_takes_its_running_jobs_with_it(
    tmp_path: Path, workers: str
) -> None:
    """SIGKILL cannot be handled, and a job under way leads a process group of its own
    (so a kill sent to the bench's group misses it) in a pool worker (which a kill sent
    to the bench alone misses): the jobs and workers die with the bench all the same,
    instead of running on to their time limit (README "plan bench" interrupted)."""
    p, _ = demo_bench(tmp_path, "cpsat", workers)
    jobs = 1 if workers == "1" else 4  # the pool's two workers and their jobs
    try:
        wait_until(lambda: sum(alive(k) for k in descendants(p.pid)) >= jobs)
        time.sleep(1.0)
        below = descendants(p.pid)
    finally:
        p.kill()
        p.wait()  # not its pipes' end: a job that outlived it would hold them open
    try:
        wait_until(lambda: not any(alive(k) for k in below), timeout=10)
    finally:
        for k in below:
            with contextlib.suppress(OSError):
                os.kill(k, signal.SIGKILL)
        for pipe in (p.stdout, p.stderr):
            assert pipe is not None
            pipe.close()


def test_sigterm_while_the_page_goes_to_a_stuck_reader_stops_show(tmp_path: Path) -> None:
    """`plan show S -o - | slow-reader`: the page is an output not yet written, so SIGTERM
    stops the command (exit 143) instead of waiting on the reader for ever (the files of
    its set are written after the page, so nothing else is)."""
    sched, png = tmp_path / "s.json", tmp_path / "p.png"
    done = subprocess.run(
        [sys.executable, "-m", "planner", "solve", str(DEMO), "--solver", "greedy",
         "-o", str(sched)],
        cwd=ROOT, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    p = plan("show", str(sched), "-o", "-", "--png", str(png))  # its stdout is never read
    try:
        wait_until(lambda: catches(p.pid, signal.SIGTERM))
        time.sleep(3.0)  # the page (megabytes) fills the pipe: the writer blocks
        p.send_signal(signal.SIGTERM)
        code = p.wait(timeout=20)
    finally:
        p.kill()
        p.wait()
        for pipe in (p.stdout, p.stderr):
            assert pipe is not None
            pipe.close()
    assert code == 143
    assert not png.exists()


_TERM_AT_EXIT = """
import atexit, os, signal, sys
atexit.register(lambda: os.kill(os.getpid(), signal.SIGTERM))  # once the command is done
sys.argv = ["plan", "models"]
from planner.launch import run
run()
"""


def test_a_signal_once_the_command_is_done_changes_nothing() -> None:
    """Between a finished command and the process's end (the interpreter's clean-up takes
    a tenth of a second with plotly loaded) SIGTERM no longer kills a run whose outputs
    are written: exit 0."""
    p = subprocess.run(
        [sys.executable, "-c", _TERM_AT_EXIT], cwd=ROOT, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, (p.returncode, p.stderr)


@pytest.mark.parametrize("command", ["solve", "simulate"])
def test_sigterm_before_the_solver_runs_is_one_line_and_exit_143(
    tmp_path: Path, command: str
) -> None:
    """While `plan solve` or `plan simulate` still reads its instance (no solver, so none
    of their own handlers yet), SIGTERM is "error: interrupted", exit 143, nothing written:
    it was a silent death."""
    from planner.generate import generate

    big, out = tmp_path / "big.json", tmp_path / "out.json"
    big.write_text(json.dumps(generate("mixed", 80_000, 64, 1)))  # 3-4 s to read
    more = ["--solver", "greedy:fifo"] if command == "solve" else ["--policy", "fifo"]
    p = plan(command, str(big), *more, "-o", str(out))
    stdout, stderr = signalled(p, (signal.SIGTERM,), 1.0)
    assert p.returncode == 143, stderr
    assert stderr.strip().splitlines() == ["error: interrupted"]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["big.json"]


_TERM_WHILE_SAYING = """
import os, signal, sys
import planner.cli.terminal as terminal
name = sys.argv[1]
real = getattr(terminal, name)
def said(*args, **kw):
    os.kill(os.getpid(), signal.SIGTERM)  # as the line is printed
    return real(*args, **kw)
setattr(terminal, name, said)
sys.argv = ["plan", *sys.argv[2:]]
from planner.launch import run
run()
"""


@pytest.mark.parametrize(
    ("printer", "args", "code"),
    [
        ("print_note", ["solve", str(DEMO), "--solver", "greedy", "-o", "{out}"], 0),
        ("print_input_error", ["validate", "{missing}"], 2),
    ],
    ids=["written", "bad-input"],
)
def test_sigterm_once_the_outputs_are_written_or_the_exit_chosen_changes_nothing(
    tmp_path: Path, printer: str, args: list[str], code: int
) -> None:
    """`plan solve` prints its tables after its files are written, and an error handler
    prints its message once the code is chosen: a SIGTERM then was exit 143 (or 130 through
    click's Abort) with the line printed twice."""
    out = tmp_path / "s.json"
    args = [a.format(out=out, missing=tmp_path / "none.json") for a in args]
    p = subprocess.run(
        [sys.executable, "-c", _TERM_WHILE_SAYING, printer, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == code, (p.returncode, p.stderr)
    assert "interrupted" not in p.stderr
    if code == 0:
        assert p.stderr.count(f"wrote {out}") == 1
        doc = json.loads(out.read_text())
        assert verify(read_instance(DEMO), schedule_from_dict(doc)) == []


_FLOOD_ONCE_WRITTEN = """
import importlib, os, signal, subprocess, sys
solve = importlib.import_module("planner.cli.solve")  # the module, not the command
import planner.cli.terminal as terminal
real_note, real_thread = terminal.print_note, solve._in_thread
def note(*args, **kw):
    if str(args[0]).startswith("wrote"):  # a SIGTERM every 2 ms for the next 3 s or so
        loop = f"for i in $(seq 1500); do kill -TERM {os.getpid()} || break; sleep 0.002; done"
        subprocess.Popen(["sh", "-c", loop], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return real_note(*args, **kw)
def in_thread(work):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the solve starts: its plan, exit 130
    return real_thread(work)
terminal.print_note, solve._in_thread = note, in_thread
sys.argv = ["plan", *sys.argv[1:]]
from planner.launch import run
run()
"""


def test_signals_after_an_interrupted_solve_wrote_its_plan_leave_its_exit(tmp_path: Path) -> None:
    """Python puts its signal handlers back to the default while it finalizes: a second
    signal just after an interrupted solve wrote its plan killed the process by that
    signal instead of exit 130 (README: once the outputs are written, a signal changes
    nothing)."""
    out = tmp_path / "s.json"
    args = ["solve", str(DEMO), "--solver", "greedy", "-o", str(out)]
    p = subprocess.run(
        [sys.executable, "-c", _FLOOD_ONCE_WRITTEN, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert verify(read_instance(DEMO), schedule_from_dict(json.loads(out.read_text()))) == []
