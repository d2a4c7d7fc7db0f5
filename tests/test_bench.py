"""`plan bench`: rows, resumption, failures as rows, summary ratios and the CLI."""

from __future__ import annotations

import csv
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner.batch.executors import run_local
from planner.batch.results import COLUMNS, read_results, write_results
from planner.batch.run import Task, execute, run_task, stop_jobs
from planner.batch.suite import collect_instances, make_tasks, run_bench
from planner.batch.summary import summarize
from planner.cli import main
from planner.errors import UsageError, WriteError

DATA = Path(__file__).parent / "data" / "bench"
SOLVERS = ["greedy:fifo", "greedy:sjf"]

TIGHT = {  # valid, but job b cannot meet its deadline behind job a on the single GPU
    "version": 1,
    "name": "tight",
    "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1}]},
    "jobs": [
        {"id": "a", "gpus": 1, "duration": 5},
        {"id": "b", "gpus": 1, "duration": 5, "release": 1, "deadline": 7},
    ],
}


def bench(
    out: Path, instances: list[str] | None = None, solvers: list[str] = SOLVERS, **kw: Any
) -> Any:
    files = collect_instances(instances or [str(DATA)])
    return run_bench(make_tasks(files, solvers, time_limit=5.0), out, workers=1, **kw)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_folder_bench_rows_all_verified(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    result = bench(out)
    rows = read_csv(out)
    assert list(rows[0]) == list(COLUMNS)
    assert len(rows) == 2 * 2 == result.ran == result.total
    assert {r["name"] for r in rows} == {"tiny-dl", "tiny-explicit"}
    assert [(Path(r["instance"]).name, r["solver"]) for r in rows] == [  # canonical order
        ("tiny-dl.json", "greedy:fifo"),
        ("tiny-dl.json", "greedy:sjf"),
        ("tiny-explicit.json", "greedy:fifo"),
        ("tiny-explicit.json", "greedy:sjf"),
    ]
    for r in rows:
        assert r["verified"] == "true" and r["violations"] == "0" and r["error"] == ""
        assert r["status"] in ("feasible", "optimal")
        assert float(r["makespan"]) > 0 and float(r["avg_jct"]) > 0
        assert 0 < float(r["gpu_utilization"]) <= 1
        assert r["objective"] and float(r["objective_value"]) > 0
        assert r["time_limit"] == "5" and r["seed"] == "0" and r["repeat"] == "0"
    # tiny-explicit lists makespan first: the objective column follows the instance
    explicit = [r for r in rows if r["name"] == "tiny-explicit"]
    assert {r["objective"] for r in explicit} == {"makespan"}
    assert all(r["objective_value"] == r["makespan"] for r in explicit)


def test_summary_ratios(tmp_path: Path) -> None:
    result = bench(tmp_path / "r.csv")
    s = summarize(result.rows, "greedy:fifo", SOLVERS)
    fifo, sjf = s["solvers"]
    assert fifo["solver"] == "greedy:fifo" and fifo["verified_share"] == 1.0
    assert fifo["avg_jct_ratio_baseline"] == pytest.approx(1.0)
    assert fifo["makespan_ratio_baseline"] == pytest.approx(1.0)
    assert sjf["avg_jct_ratio_best_rule"] == pytest.approx(1.0)  # sjf is the only rule
    by = {(r["name"], r["solver"]): r for r in result.rows}
    for metric in ("avg_jct", "makespan"):
        expected = (
            sum(
                float(by[(n, "greedy:fifo")][metric]) / float(by[(n, "greedy:sjf")][metric])
                for n in ("tiny-dl", "tiny-explicit")
            )
            / 2
        )
        assert sjf[f"{metric}_ratio_baseline"] == pytest.approx(expected)
        expected_rule = (
            sum(
                float(by[(n, "greedy:sjf")][metric]) / float(by[(n, "greedy:fifo")][metric])
                for n in ("tiny-dl", "tiny-explicit")
            )
            / 2
        )
        assert fifo[f"{metric}_ratio_best_rule"] == pytest.approx(expected_rule)
    assert s["best_rule_of"] == ["greedy:sjf"]
    assert fifo["n_baseline"] == sjf["n_baseline"] == 2


def test_best_rule_is_per_instance_minimum() -> None:
    def row(inst: str, solver: str, jct: float) -> dict[str, Any]:
        return {
            "instance": inst,
            "solver": solver,
            "status": "feasible",
            "verified": True,
            "avg_jct": jct,
            "makespan": 10.0,
        }

    rows = [
        row("i1", "greedy:sjf", 10),
        row("i1", "greedy:srsf", 20),
        row("i1", "x", 5),
        row("i2", "greedy:sjf", 40),
        row("i2", "greedy:srsf", 20),
        row("i2", "x", 40),
        {**row("i3", "x", 1), "verified": False},
    ]
    s = summarize(rows, None, ["greedy:sjf", "greedy:srsf", "x"])
    x = s["solvers"][2]
    assert x["avg_jct_ratio_best_rule"] == pytest.approx((10 / 5 + 20 / 40) / 2)
    assert x["avg_jct_ratio_baseline"] is None
    assert x["verified_share"] == pytest.approx(2 / 3) and x["n_best_rule"] == 2


def test_resume_skips_done_rows_and_reruns_deleted(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    bench(out)
    before = out.read_text()
    again = bench(out)
    assert again.ran == 0 and again.skipped == 4 and out.read_text() == before
    rows, _ = read_results(out)
    gone = rows.pop(1)
    write_results(out, rows)
    third = bench(out)
    assert third.ran == 1
    after = read_csv(out)
    assert len(after) == 4
    assert (after[1]["instance"], after[1]["solver"]) == (gone["instance"], gone["solver"])


def test_one_file_under_several_names_is_one_instance(tmp_path: Path) -> None:
    """The same file as a relative and an absolute path, through `..` and through a link
    runs once, named as first listed; a rerun naming it so resumes its rows, and one
    naming it otherwise runs it again (rows are matched by name, README "Benchmarks")."""
    files = sorted(DATA.glob("*.json"))
    folder = tmp_path / "d"
    folder.mkdir()
    shutil.copy(files[0], folder / "a.json")
    (folder / "link.json").symlink_to(folder / "a.json")
    a = folder / "a.json"
    names = [str(a), str(folder / ".." / "d" / "a.json"), str(folder), str(folder / "link.json")]
    assert collect_instances(names) == [str(a)]
    out = tmp_path / "r.csv"
    first = bench(out, names)
    assert first.ran == 2 and [r["instance"] for r in read_csv(out)] == [str(a)] * 2
    assert {r["verified"] for r in read_csv(out)} == {"true"}
    again = bench(out, [str(folder / "a.json"), str(folder / "link.json")])
    assert again.ran == 0 and again.skipped == 2 and len(read_csv(out)) == 2
    other = bench(out, [str(folder / "link.json")])
    assert other.ran == 2 and len(read_csv(out)) == 4


def test_an_instance_named_with_a_carriage_return_resumes(tmp_path: Path) -> None:
    # Unquoted, the "\r" split the row and the rerun refused the file (planner/csvtext.py).
    odd = tmp_path / "a\rb.json"
    shutil.copy(sorted(DATA.glob("*.json"))[0], odd)
    out = tmp_path / "r.csv"
    first = bench(out, [str(odd)])
    assert first.ran == 2 and [r["instance"] for r in read_csv(out)] == [str(odd)] * 2
    assert {r["verified"] for r in read_csv(out)} == {"true"}
    again = bench(out, [str(odd)])
    assert again.ran == 0 and again.skipped == 2


def test_torn_last_line_is_dropped_and_rerun(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    bench(out)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 3])  # killed mid-write
    result = bench(out)
    assert result.dropped_lines == 1 and result.ran == 1
    assert len(read_csv(out)) == 4


def test_a_malformed_row_before_the_last_refuses_the_file_untouched(tmp_path: Path) -> None:
    """A results file saved by pandas (`verified` as True): every row was dropped as torn
    and the file rewritten with this run's rows alone."""
    out = tmp_path / "r.csv"
    bench(out)
    text = out.read_text().replace(",true,", ",True,", 1)
    out.write_text(text)
    with pytest.raises(UsageError, match=r"r.csv line 2: verified is 'True'"):
        bench(out)
    assert out.read_text() == text


def test_an_open_quote_before_finished_rows_refuses_the_file_untouched(tmp_path: Path) -> None:
    """An open quote on line 3 made the rest of the file one record, dropped as torn: the
    two finished rows after it were run again and the file rewritten (exit 0)."""
    out = tmp_path / "r.csv"
    bench(out)
    lines = out.read_text().splitlines(keepends=True)
    text = "".join([*lines[:2], 'garbage,"unterminated\n', *lines[2:]])
    out.write_text(text)
    with pytest.raises(UsageError, match=r"r.csv line 3: "):
        bench(out)
    assert out.read_text() == text
    # a torn last line that opens a quote is still dropped and run again
    out.write_text("".join(lines[:-1]) + lines[-1].split(",", 1)[0] + ',"cut')
    result = bench(out)
    assert result.dropped_lines == 1 and result.ran == 1 and len(read_csv(out)) == 4
    assert {r["verified"] for r in read_csv(out)} == {"true"}


@pytest.mark.parametrize("odd", ["tiny\u2028dl", "a\rb"])
def test_a_torn_last_line_after_fields_with_other_line_breaks_is_still_dropped(
    tmp_path: Path, odd: str
) -> None:
    # the look for rows after an unreadable line counted lines as str.splitlines does (at
    # "\r" and U+2028 too), csv as "\n" only: it looked at a whole earlier row and
    # refused the file (planner/batch/results.py)
    from planner.batch.results import results_text

    out = tmp_path / "r.csv"
    bench(out, solvers=["greedy:fifo", "greedy:sjf", "greedy:srsf"])
    rows, _ = read_results(out)
    for row in rows[:2]:
        row["name"] = odd
    text = results_text(rows)
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    out.write_text(text[: len(text) - len(last) - 1] + last[:40], newline="")
    kept, dropped = read_results(out)
    assert dropped == 1 and len(kept) == len(rows) - 1 and kept[0]["name"] == odd


def test_failures_become_rows(tmp_path: Path) -> None:
    tight = tmp_path / "tight.json"
    tight.write_text(json.dumps(TIGHT))
    bad = tmp_path / "broken.json"
    bad.write_text('{"version": 1, "jobs": [')
    out = tmp_path / "r.csv"
    result = bench(out, [str(tight), str(bad)], solvers=["greedy:fifo"])
    assert result.ran == 2
    rows = {r["name"]: r for r in read_csv(out)}
    assert rows["tight"]["status"] in ("infeasible", "unknown")
    assert rows["tight"]["verified"] == "false" and rows["tight"]["makespan"] == ""
    assert "deadline" in rows["tight"]["error"]
    assert rows["broken"]["status"] == "error" and str(bad) in rows["broken"]["error"]
    assert "malformed JSON" in rows["broken"]["error"]
    s = summarize(result.rows, "greedy:fifo", ["greedy:fifo"])
    assert s["solvers"][0]["verified"] == 0


def test_cli_exit_code_when_no_run_gives_a_schedule(tmp_path: Path) -> None:
    # the bench exited 0 when every instance was bad input or no run gave a schedule; the
    # rows are written either way (contract §7: 2 bad input, 1 no schedule found)
    bad = tmp_path / "broken.json"
    bad.write_text('{"version": 1, "jobs": [')
    tight = tmp_path / "tight.json"
    tight.write_text(json.dumps(TIGHT))
    runner = CliRunner()
    cases = [([bad], 2, "every instance is bad input"), ([bad, tight], 1, "no run gave")]
    cases.append(([bad, tight, DATA], 0, ""))
    for k, (files, code, said) in enumerate(cases):
        out = tmp_path / f"r{k}.csv"
        args = ["bench", *map(str, files), "--solvers", "greedy:fifo", "-o", str(out)]
        res = runner.invoke(main, args)
        assert res.exit_code == code, res.output
        assert said in res.stderr
        rows = read_csv(out)
        assert any(r["name"] == "broken" and r["status"] == "error" for r in rows)
        assert all(
            r["verified"] == "true" for r in rows if r["status"] != "error" and r["name"] != "tight"
        )


def test_retry_failed_reruns_error_rows(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("{")
    out = tmp_path / "r.csv"
    bench(out, [str(bad)], solvers=["greedy:fifo"])
    assert bench(out, [str(bad)], solvers=["greedy:fifo"]).ran == 0
    shutil.copy(DATA / "tiny-explicit.json", bad)  # fixed
    result = bench(out, [str(bad)], solvers=["greedy:fifo"], retry_failed=True)
    assert result.retried == 1 and result.ran == 1
    (row,) = read_csv(out)
    assert row["status"] == "feasible" and row["verified"] == "true"


def _raise(*args: Any, **kw: Any) -> Any:
    raise RuntimeError("solver exploded")


def _hang(*args: Any, **kw: Any) -> Any:
    time.sleep(60)


def test_solver_exception_is_an_error_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("planner.solvers.solve", _raise)  # the forked child inherits it
    row = run_task(Task(str(DATA / "tiny-dl.json"), "greedy:fifo"))
    assert row["status"] == "error" and "solver exploded" in row["error"]
    assert row["name"] == "tiny-dl" and row["verified"] is False


def test_overrunning_solver_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("planner.solvers.solve", _hang)
    row = run_task(Task(str(DATA / "tiny-dl.json"), "greedy:fifo", time_limit=0.2, margin=0.3))
    assert row["status"] == "timeout" and "killed" in row["error"]


@pytest.mark.parametrize("spec", ["simulate:fifo", "greedy"])
def test_a_policy_run_on_an_instance_no_policy_can_run_is_infeasible_with_the_reason(
    tmp_path: Path, spec: str
) -> None:
    # strict priority has `a` start no later than `b`, and `after` has it wait for `b`:
    # as `plan simulate` says (exit 1), not a policy's error row ("left them waiting")
    doc = {
        "version": 1,
        "name": "pa",
        "cluster": {"nodes": [{"name": "n", "gpus": 1}]},
        "jobs": [
            {"id": "b", "duration": 5, "gpus": 1},
            {"id": "a", "duration": 5, "gpus": 1, "priority": 1, "after": ["b"]},
        ],
    }
    path = tmp_path / "pa.json"
    path.write_text(json.dumps(doc))
    row = run_task(Task(str(path), spec))
    assert row["status"] == "infeasible" and row["verified"] is False
    assert row["error"].startswith("job a: strict priority (R9) has it start no later than b")


def test_a_policy_that_misses_a_deadline_gives_no_schedule_as_plan_simulate_says(
    tmp_path: Path,
) -> None:
    # one GPU, two 5-unit jobs due by 6: fifo's realized schedule ends one at 10; the row
    # said `feasible` beside verified false, where `plan simulate` writes nothing (exit 1)
    doc = {
        "version": 1,
        "name": "late",
        "cluster": {"nodes": [{"name": "n", "gpus": 1}]},
        "jobs": [{"id": x, "duration": 5, "gpus": 1, "deadline": 6} for x in "ab"],
    }
    path = tmp_path / "late.json"
    path.write_text(json.dumps(doc))
    row = run_task(Task(str(path), "simulate:fifo"))
    assert row["status"] == "unknown" and row["verified"] is False and row["violations"] == 1
    assert row["error"].startswith("the policy missed the deadline or horizon of 1 job(s)")
    assert row["makespan"] == 10  # the realized schedule's, kept for the reader
    code = CliRunner().invoke(main, ["simulate", str(path), "--policy", "fifo"]).exit_code
    assert code == 1


def _simulate_until_stopped(instance: Any, spec: str, *, stop: Any = None, **kw: Any) -> Any:
    from planner.simulate import Stopped

    assert stop is not None and stop.wait(30)
    raise Stopped("stopped at simulated time 7")


def test_a_simulation_stopped_by_the_time_guard_is_a_timeout_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A simulation has no best-so-far plan: the bench's soft stop, half-way between the
    # time limit and the hard guard, ends it with `Stopped`, which was an error row
    # "solver failed: Stopped: ...".
    monkeypatch.setattr("planner.online.simulate_spec", _simulate_until_stopped)
    row = execute(Task(str(DATA / "tiny-dl.json"), "simulate:fifo", time_limit=0.2, margin=0.6))
    assert row["status"] == "timeout" and row["verified"] is False
    assert "solver failed" not in row["error"] and "simulated time 7" in row["error"]
    assert "stopped at 0.5 s" in row["error"], row["error"]


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: v for k, v in r.items() if k != "wall_s"} for r in rows),
        key=lambda r: (r["instance"], r["solver"]),
    )


def test_process_pool_gives_the_same_rows() -> None:
    tasks = make_tasks(collect_instances([str(DATA)]), SOLVERS, time_limit=5.0)
    inline = list(run_local(tasks, workers=1))
    pooled = list(run_local(tasks, workers=2))
    assert _strip(pooled) == _strip(inline)
    assert all(r["verified"] for r in pooled)


def test_a_pool_left_early_leaves_no_thread_behind() -> None:
    """An interrupted bench leaves `run_local` early. The pool's manager thread then has
    to be gone before the interpreter exits: Python 3.11's exit hook writes to that
    thread's wake-up pipe while the thread may be closing it, and a Ctrl-C on `plan bench
    --workers 2` showed that traceback (fresh-clone CI, tests/test_signals.py)."""
    demo = str(DATA.parents[2] / "instances" / "demo.json")  # CP-SAT proves nothing there
    tasks = [Task(str(DATA / "tiny-dl.json"), "greedy:fifo", time_limit=5.0)] + [
        Task(demo, "cpsat", repeat=k, time_limit=60.0) for k in range(2)
    ]
    rows = run_local(tasks, workers=2)
    assert next(rows)["solver"] == "greedy:fifo"  # the CP-SAT runs go on for 60 s
    rows.close()  # as an interrupt does
    managers = [t for t in threading.enumerate() if type(t).__name__ == "_ExecutorManagerThread"]
    assert not [t for t in managers if t.is_alive()]


def test_a_job_whose_clean_up_a_signal_cut_short_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal while a job's folder was removed: the job was already struck from the
    list `stop_jobs` (which the bench runs then) works from, and an empty plan-bench-*
    stayed in the temporary folder (2 of 27 interrupted benches; planner/batch/run.py)."""
    import tempfile

    from planner.batch import run as run_module

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real_rmtree, calls = run_module.shutil.rmtree, []

    def rmtree_once(*args: Any, **kw: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real_rmtree(*args, **kw)

    monkeypatch.setattr(run_module.shutil, "rmtree", rmtree_once)
    with pytest.raises(KeyboardInterrupt):
        run_task(Task(str(DATA / "tiny-dl.json"), "greedy:fifo", time_limit=5.0))
    stop_jobs()  # what run_inline's `finally` and a stopped pool worker do
    assert [f.name for f in tmp_path.iterdir() if f.name.startswith("plan-bench-")] == []


def test_cli_bench_json_and_table(tmp_path: Path) -> None:
    out = tmp_path / "out" / "r.csv"
    runner = CliRunner()
    args = [
        "bench",
        str(DATA),
        "--solvers",
        "greedy:fifo,greedy:sjf",
        "--workers",
        "1",
        "--time-limit",
        "5",
        "-o",
        str(out),
    ]
    res = runner.invoke(main, [*args, "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert [s["solver"] for s in summary["solvers"]] == ["greedy:fifo", "greedy:sjf"]
    assert summary["runs"] == 4 and summary["baseline"] == "greedy:fifo"
    assert len(read_csv(out)) == 4
    res = runner.invoke(main, args)  # resumed: nothing to run, the table still printed
    assert res.exit_code == 0 and "greedy:sjf" in res.stdout and "×base" in res.stdout


def test_a_report_that_cannot_be_written_keeps_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The results CSV is written as the runs finish: a report that fails at the end (a
    full disk) must not say "nothing was written" nor hide the summary."""

    def full_disk(path: str, *_: Any) -> None:
        raise WriteError(path, "No space left on device")

    monkeypatch.setattr("planner.show.files.write_report", full_disk)
    out, page = tmp_path / "r.csv", tmp_path / "r.html"
    args = ["bench", str(DATA / "tiny-dl.json"), "--solvers", "greedy:fifo", "--workers", "1"]
    res = CliRunner().invoke(main, [*args, "-o", str(out), "--report", str(page)])
    assert res.exit_code == 2
    err = " ".join(res.stderr.split())
    assert f"cannot write {page}: No space left on device; the runs are in {out}" in err
    assert "nothing was written" not in err and f"wrote {page}" not in err
    assert "greedy:fifo" in res.stdout  # the summary table
    assert [r["verified"] for r in read_csv(out)] == ["true"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--solvers", "greedy:nope"],
        ["--solvers", "greedy:sjf", "--baseline", "greedy:fifo"],  # a baseline not run
        ["--report", "{tmp}/r.png"],  # an HTML report under a picture's name
        ["--address", "localhost:6379"],  # without --executor ray
    ],
)
def test_cli_usage_errors(tmp_path: Path, extra: list[str]) -> None:
    extra = [x.format(tmp=tmp_path) for x in extra]
    res = CliRunner().invoke(main, ["bench", str(DATA), "-o", str(tmp_path / "r.csv"), *extra])
    assert res.exit_code == 2
    assert not list(tmp_path.iterdir())  # nothing written


def test_cli_missing_path_and_empty_folder(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["bench", str(tmp_path / "nope.json"), "-o", str(tmp_path / "r")])
    assert res.exit_code == 2
    (tmp_path / "empty").mkdir()
    res = runner.invoke(main, ["bench", str(tmp_path / "empty"), "-o", str(tmp_path / "r")])
    assert res.exit_code == 2


def test_cli_ray_missing_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # as if not installed
    res = CliRunner().invoke(
        main,
        [
            "bench",
            str(DATA),
            "--solvers",
            "greedy:fifo",
            "--executor",
            "ray",
            "-o",
            str(tmp_path / "r.csv"),
        ],
    )
    assert res.exit_code == 2
    assert "pip install" in res.output
    assert not (tmp_path / "r.csv").exists()  # refused before the results file is made


def test_the_default_baseline_is_the_first_solver_without_fifo(tmp_path: Path) -> None:
    # `plan --help`'s own example, `--solvers greedy,cpsat`, was exit 2: "--baseline
    # greedy:fifo is not among --solvers"
    out = tmp_path / "r.csv"
    args = ["bench", str(DATA), "--solvers", "greedy:sjf,greedy:srsf", "--time-limit", "5"]
    res = CliRunner().invoke(main, [*args, "--workers", "1", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["baseline"] == "greedy:sjf"
    sjf = next(s for s in summary["solvers"] if s["solver"] == "greedy:sjf")
    assert sjf["avg_jct_ratio_baseline"] == pytest.approx(1.0)


def test_rows_carry_the_energy_cost_and_old_files_resume(tmp_path: Path) -> None:
    # energy_cost is a metric (contract §12) and was no column; a results file written
    # before it was one is still resumed, and rewritten with the column
    from planner.metrics import metrics
    from planner.read import read_instance
    from planner.solvers import solve

    # One job on one of two GPUs for an hour: 1,000 W busy + 100 W idle = 1.1 kW, the
    # first half hour at 0.5 per kWh and the second at 2.0: 0.275 + 1.1 = 1.375
    priced = tmp_path / "priced.json"
    node = {"name": "n", "count": 1, "gpus": 2, "gpu_idle_w": 100, "gpu_busy_w": 1000}
    prices = [{"start": 0, "end": 30, "price": 0.5}, {"start": 30, "end": 60, "price": 2.0}]
    doc = {"version": 1, "name": "priced", "time_unit": "min", "objective": ["makespan"]}
    doc |= {"cluster": {"nodes": [node], "power_price": prices}}
    priced.write_text(json.dumps(doc | {"jobs": [{"id": "a", "gpus": 1, "duration": 60}]}))
    got = bench(tmp_path / "priced.csv", [str(priced)])
    assert got.ran == 2 and all(r["verified"] is True for r in got.rows)
    assert [float(r["energy_cost"]) for r in read_csv(tmp_path / "priced.csv")] == [1.375] * 2
    out = tmp_path / "r.csv"
    bench(out)
    rows = read_csv(out)
    for r in rows:
        inst = read_instance(r["instance"])
        want = metrics(inst, solve(inst, r["solver"]))["energy_cost"]
        assert float(r["energy_cost"]) == pytest.approx(want)
    old = [c for c in COLUMNS if c != "energy_cost"]
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=old, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    again = bench(out)
    assert again.ran == 0 and again.skipped == 4
    assert list(read_csv(out)[0]) == list(COLUMNS)


def test_an_instance_without_jobs_is_a_verified_row(tmp_path: Path) -> None:
    # its empty plan is optimal and complete: measured (zeros) and verified, not an error
    empty = Path(__file__).parent / "hostile" / "files" / "empty-jobs.json"
    out = tmp_path / "r.csv"
    bench(out, [str(empty)], ["greedy:fifo"])
    [row] = read_csv(out)
    assert (row["status"], row["verified"], row["error"]) == ("optimal", "true", "")
    assert float(row["makespan"]) == 0 and float(row["energy_cost"]) == 0


def test_a_results_file_that_cannot_be_finished_keeps_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a full disk at the final rewrite said "nothing was written" while the rows appended
    # as runs finished were in the file
    import errno
    import os

    import planner.batch.results as results
    from planner.errors import WriteError

    real = results.write_results
    calls: list[int] = []

    def full(path: Any, rows: Any) -> None:
        calls.append(1)
        if len(calls) > 1:  # the file is made, then the disk is full
            raise WriteError(str(path), os.strerror(errno.ENOSPC))
        real(path, rows)

    monkeypatch.setattr(results, "write_results", full)
    out = tmp_path / "r.csv"
    res = CliRunner().invoke(main, ["bench", str(DATA), "--solvers", "greedy:fifo", "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert "No space left" in res.stderr and "stay in the file" in res.stderr
    assert "nothing was written" not in res.stderr
    rows = read_csv(out)
    assert rows and all(r["verified"] == "true" for r in rows)


def test_repeat_is_capped(tmp_path: Path) -> None:
    """Every run is a row held in memory: `--repeat 100000000` ran out of it (exit 3)."""
    out = tmp_path / "r.csv"
    r = CliRunner().invoke(main, ["bench", str(DATA), "--repeat", "1001", "-o", str(out)])
    assert r.exit_code == 2 and "1<=x<=1000" in r.output and not out.exists()
