"""The `plan` command end to end, through click's test runner."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from cases import BAD, base
from click.testing import CliRunner
from test_signals import catches, wait_until

from planner.cli import main, terminal
from planner.read import read_instance
from planner.schedule import schedule_from_dict
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "instances" / "demo.json"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), (
        r.exception
    )
    return r.exit_code, r.stdout, r.stderr


def small_instance(tmp_path: Path, **over: object) -> Path:
    doc = {
        "version": 1,
        "name": "small",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 4}], "pools": {}},
        "jobs": [
            {"id": "a", "duration": 5, "gpus": 2},
            {"id": "b", "duration": 3, "gpus": 4, "after": ["a"]},
            {"id": "c", "duration": 2, "gpus": 1, "release": 1},
        ],
    }
    doc.update(over)
    p = tmp_path / "small.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("solver", ["greedy:fifo", "greedy:sjf", "greedy", "cpsat", "milp"])
def test_solve_writes_verified_schedule_and_gantt(tmp_path: Path, solver: str) -> None:
    inst = small_instance(tmp_path)
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    code, stdout, _ = run(
        "solve", inst, "--solver", solver, "--time-limit", "5", "-o", out, "--gantt", gantt
    )
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == "planner-schedule/1"
    sched = schedule_from_dict(doc)
    assert verify(read_instance(inst), sched) == []
    assert set(doc["metrics"]) == {
        "makespan",
        "avg_jct",
        "p99_jct",
        "total_weighted_jct",
        "total_weighted_tardiness",
        "gpu_utilization",
        "energy_kwh",
        "energy_cost",  # contract §12
    }
    rows = list(csv.reader(gantt.open()))
    assert rows[0] == [
        "job",
        "group",
        "node",
        "gpus",
        "start",
        "end",
        "priority",
        "tenant",
        "model",
        "segment",  # contract 1.1 §8
    ]
    assert sorted(r[0] for r in rows[1:]) == ["a", "b", "c"]
    assert "makespan" in stdout


def test_solve_json_output_is_the_schedule(tmp_path: Path) -> None:
    code, stdout, _ = run("solve", small_instance(tmp_path), "--solver", "greedy:fifo", "--json")
    assert code == 0
    doc = json.loads(stdout)
    assert doc["solver"] == "greedy:fifo" and len(doc["jobs"]) == 3


def test_solve_demo_and_check(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    code, _, _ = run("solve", DEMO, "--solver", "greedy", "-o", out)
    assert code == 0
    code, stdout, _ = run("check", DEMO, out)
    assert code == 0 and "no violations" in stdout


def test_check_names_the_schedule_as_given(tmp_path: Path) -> None:
    # a path with brackets was read as rich markup: "a[red]b/s[bold].json" printed "ab/s.json"
    out = tmp_path / "a[red]b" / "s[bold].json"
    out.parent.mkdir()
    assert run("solve", DEMO, "--solver", "greedy", "-o", out)[0] == 0
    code, stdout, _ = run("check", DEMO, out)
    squeezed = "".join(stdout.split())  # rich may wrap a long path
    assert code == 0 and "".join(f"ok {out}:".split()) in squeezed


# rich read "[bold]" in a name, an id or a message as a style (the summary said "plan for
# demo", the job table "xy", the error "unknown job 'nosuch'") and replaced ":fire:" by its
# emoji ("plan for de🔥mo", "x👍", "unknown job 'no🔥such'")
@pytest.mark.parametrize(
    ("name", "job", "unknown", "bad_file"),
    [
        ("de[bold]mo", "x[red]y", "no[bold]such", "b[red]ad.json"),
        ("de:fire:mo", "x:+1:", "no:fire:such", "bad:fire:.json"),
    ],
)
def test_user_text_is_shown_as_given(
    tmp_path: Path, name: str, job: str, unknown: str, bad_file: str
) -> None:
    doc = json.loads(Path(DEMO).read_text())
    doc["name"], doc["jobs"][0]["id"] = name, job
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    code, stdout, _ = run("solve", good, "--solver", "greedy", "--jobs", "-o", tmp_path / "s.json")
    assert code == 0 and f"plan for {name}" in stdout and f" {job} " in stdout
    sched = schedule_from_dict(json.loads((tmp_path / "s.json").read_text()))
    assert verify(read_instance(good), sched) == []
    doc["jobs"][1]["after"] = [unknown]
    bad = tmp_path / bad_file
    bad.write_text(json.dumps(doc))
    code, _, stderr = run("validate", bad)
    squeezed = "".join(stderr.split())
    assert code == 2 and "".join(f"{bad}: jobs[1].after[0]: unknown job '{unknown}'".split()) in (
        squeezed
    )


@pytest.mark.parametrize("plain", [False, True], ids=["table", "plain-lines"])
def test_control_characters_in_user_text_reach_no_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain: bool
) -> None:
    # an id with ESC [31m turned the user's terminal red (the job table printed it raw,
    # and the error message too): shown as \x1b instead; in both forms of the job list
    if plain:
        monkeypatch.setattr(terminal, "PLAIN_ROWS", 0)
    doc = json.loads(Path(DEMO).read_text())
    doc["name"], doc["jobs"][0]["id"] = "de\u0007mo", "x\u001b[1m\u0000"
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    code, stdout, stderr = run(
        "solve", good, "--solver", "greedy", "--jobs", "-o", tmp_path / "s.json"
    )
    assert code == 0 and "plan for de\\x07mo" in stdout and "x\\x1b[1m\\x00" in stdout
    doc["jobs"][1]["after"] = ["no\u001b]0;title\u0007"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, _, stderr2 = run("validate", bad)
    assert code == 2 and "unknown job 'no\\x1b]0;title\\x07'" in stderr2
    for text in (stdout, stderr, stderr2):
        assert not any(ord(c) < 0x20 and c != "\n" for c in text), repr(text)


def test_a_long_job_list_is_one_aligned_line_per_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # above terminal.PLAIN_ROWS jobs `--jobs` prints plain lines: rich's table took 8 of
    # the 11.7 s of `plan solve --jobs` on 10,000 jobs. Each job whole on its own line
    # (rich folds a long "why it waited" at 80 columns when piped), columns aligned.
    monkeypatch.setattr(terminal, "PLAIN_ROWS", 2)
    out = tmp_path / "s.json"
    code, stdout, _ = run("solve", DEMO, "--solver", "greedy", "--jobs", "-o", out)
    sched = schedule_from_dict(json.loads(out.read_text()))
    assert code == 0 and verify(read_instance(DEMO), sched) == []
    head, *lines = stdout.split("jobs\n", 1)[1].splitlines()[: len(sched.jobs) + 1]
    assert head.split()[:6] == ["job", "node", "GPUs", "group", "start", "end"]
    end_edge = head.index(" end ") + 4  # right-aligned: every end finishes under "end"
    ends = {a.id: a.end for a in sched.jobs}
    assert {line.split()[0] for line in lines} == set(ends)
    for line in lines:
        value = line[:end_edge].rsplit(" ", 1)[1]
        assert value.replace(",", "") == str(ends[line.split()[0]]), line
        assert line[end_edge] == " ", line


def test_the_plain_job_lines_keep_a_newline_id_on_its_line_and_align_wide_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an id holding "\n" broke its line in two, and one of CJK characters (two cells
    # each) pushed its row's columns right (terminal._aligned)
    from rich.cells import cell_len

    monkeypatch.setattr(terminal, "PLAIN_ROWS", 2)
    doc = json.loads(DEMO.read_text())
    doc["jobs"][0]["id"], doc["jobs"][1]["id"] = "two\nlines", "训练任务"
    inst, out = tmp_path / "i.json", tmp_path / "s.json"
    inst.write_text(json.dumps(doc))
    code, stdout, _ = run("solve", inst, "--solver", "greedy", "--jobs", "-o", out)
    sched = schedule_from_dict(json.loads(out.read_text()))
    assert code == 0 and verify(read_instance(inst), sched) == []
    head, *lines = stdout.split("jobs\n", 1)[1].splitlines()[: len(sched.jobs) + 1]
    assert {line.split()[0] for line in lines} == {a.id.replace("\n", "\\x0a") for a in sched.jobs}
    end_edge = cell_len(head[: head.index(" end ") + 4])
    for line in lines:  # every end right-aligned under "end", counted in terminal cells
        cells = [cell_len(line[: k + 1]) for k in range(len(line))]
        assert end_edge in cells and line[cells.index(end_edge) + 1] == " ", line


def test_the_job_table_folds_a_long_node_list_rather_than_cut_it(tmp_path: Path) -> None:
    doc = {
        "version": 1,
        "name": "wide",
        "cluster": {"nodes": [{"name": "gpu-node-with-a-long-name", "count": 6, "gpus": 2}]},
        "jobs": [{"id": "spread", "duration": 10, "gpus": 12}],
    }
    inst, out = tmp_path / "i.json", tmp_path / "s.json"
    inst.write_text(json.dumps(doc))
    r = CliRunner().invoke(
        main, ["solve", str(inst), "--solver", "greedy", "--jobs", "-o", str(out)],
        terminal_width=80, env={"COLUMNS": "80"},
    )  # fmt: skip
    sched = schedule_from_dict(json.loads(out.read_text()))
    assert r.exit_code == 0 and verify(read_instance(inst), sched) == []
    assert len(sched.jobs[0].placement) == 6 and "…" not in r.stdout  # was "…-name-0,…"
    table = r.stdout.split("jobs\n", 1)[1].split("\n\n", 1)[0]
    assert len(table.splitlines()) > 2  # the node list folded onto further lines


def test_check_of_another_instances_schedule_warns(tmp_path: Path) -> None:
    # a valid schedule whose "instance" names another: the verdict is the rules' (exit
    # 0), so the mismatch is a warning; it was printed as "error:" with exit 0
    out = tmp_path / "demo.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", out)[0] == 0
    doc = json.loads(out.read_text())
    doc["instance"] = "another"
    out.write_text(json.dumps(doc))
    code, stdout, stderr = run("check", DEMO, out)
    assert code == 0 and "no violations" in stdout
    assert "warning:" in stderr and "instance 'another'" in stderr and "error" not in stderr


@pytest.mark.parametrize("value", ["planner-schedule/9", "planner-instance/1", 1])
def test_check_of_a_schedule_of_another_format_exit_2(tmp_path: Path, value: object) -> None:
    # a schedule of a format to come (or another document) passed `plan check`
    out = tmp_path / "demo.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", out)[0] == 0
    doc = json.loads(out.read_text())
    doc["format"] = value
    out.write_text(json.dumps(doc))
    code, stdout, stderr = run("check", DEMO, out)
    assert code == 2 and "no violations" not in stdout
    assert f"{out}: format: expected 'planner-schedule/1', found {json.dumps(value)}" in stderr


@pytest.mark.parametrize("command", ["check", "export", "replan", "show", "validate", "solve"])
def test_an_instance_and_a_schedule_swapped_is_one_clear_problem(
    tmp_path: Path, command: str
) -> None:
    # `plan check d.s.json demo.json` listed 170 problems ("cluster: required field is
    # missing", then each job's 'start' as an unknown field), none saying what was wrong
    sched = tmp_path / "demo.s.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", sched)[0] == 0
    written = tmp_path / "written"
    args = {
        "check": ["check", sched, DEMO],
        "export": ["export", DEMO, "--gantt", written],
        "replan": ["replan", sched, DEMO, "--now", 1, "-o", written],
        "show": ["show", DEMO, "-o", written],
        "validate": ["validate", sched],
        "solve": ["solve", sched, "-o", written],
    }[command]
    code, _, stderr = run(*args)
    assert code == 2 and not written.exists(), stderr
    assert "1 problem(s)" in stderr, stderr
    if command in ("export", "show"):
        assert f"{DEMO}: $: this is an instance (it has 'cluster'), not a schedule" in stderr
    else:
        assert (
            f"{sched}: $: this is a schedule (format 'planner-schedule/1'), not an instance"
            in stderr
        )


@pytest.mark.parametrize("command", ["check", "export", "replan", "show"])
def test_a_schedule_time_past_the_limit_is_bad_input(tmp_path: Path, command: str) -> None:
    # 10**400 passed `plan check`, then `plan replan` and `plan show` failed on it
    # (OverflowError, exit 3); the limit is 2**53 (README)
    out = tmp_path / "demo.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", out)[0] == 0
    doc = json.loads(out.read_text())
    doc["jobs"][-1]["start"] = 10**400
    doc["jobs"][-1]["end"] = 2**53 + 1
    out.write_text(json.dumps(doc))
    written = tmp_path / "written"
    args = {
        "check": ["check", DEMO, out],
        "export": ["export", out, "--gantt", written],
        "replan": ["replan", DEMO, out, "--now", 1, "-o", written],
        "show": ["show", out, "--instance", DEMO, "-o", written],
    }[command]
    code, _, stderr = run(*args)
    n = len(doc["jobs"]) - 1
    assert code == 2 and not written.exists()
    assert f"{out}: jobs[{n}].start: an integer outside" in stderr
    assert f"{out}: jobs[{n}].end: an integer outside ±9,007,199,254,740,992" in stderr


def test_check_reports_violations_exit_1(tmp_path: Path) -> None:
    inst = small_instance(tmp_path)
    out = tmp_path / "s.json"
    assert run("solve", inst, "--solver", "greedy:fifo", "-o", out)[0] == 0
    doc = json.loads(out.read_text())
    for j in doc["jobs"]:
        if j["id"] == "b":
            j["start"], j["end"] = 0, 3  # before its predecessor ends
    out.write_text(json.dumps(doc))
    code, stdout, stderr = run("check", inst, out, "--json")
    assert code == 1
    rules = {v["rule"] for v in json.loads(stdout)["violations"]}
    assert "R4" in rules


def test_bad_instance_exit_2_names_path_and_writes_nothing(tmp_path: Path) -> None:
    bad = small_instance(
        tmp_path,
        jobs=[
            {"id": "a", "duration": 5, "gpus": "two"},
            {"id": "b", "duration": 1, "gpus": 1, "after": ["zz"]},
        ],
    )
    out = tmp_path / "s.json"
    code, _, stderr = run("solve", bad, "--solver", "greedy", "-o", out)
    assert code == 2
    assert "jobs[0].gpus" in stderr and "jobs[1].after[0]" in stderr
    assert str(bad) in stderr and "Traceback" not in stderr
    assert not out.exists()


def test_validate_ok_and_malformed_json(tmp_path: Path) -> None:
    assert run("validate", DEMO)[0] == 0
    p = tmp_path / "broken.json"
    p.write_text('{"version": 1,,}')
    code, _, stderr = run("validate", p)
    assert code == 2 and "line 1" in stderr


def test_a_hold_for_a_tenant_without_jobs_is_valid_and_noted(tmp_path: Path) -> None:
    # a tenant is a label, not a reference (contract §2 refuses unknown models, nodes and
    # jobs): a team's GPUs may be held before its jobs arrive. It was exit 2 ("no job has
    # tenant", found by fuzzing); now valid, with a note that may catch a typo
    doc = base()
    doc["reservations"][1]["for"] = {"tenants": ["nlpp"]}
    path = tmp_path / "i.json"
    path.write_text(json.dumps(doc))
    code, _, stderr = run("validate", path)
    assert code == 0 and "no job has tenant 'nlpp' (did you mean 'nlp'?)" in stderr, stderr
    out = tmp_path / "s.json"
    code, _, stderr = run("solve", path, "--solver", "greedy", "-o", out)
    assert code == 0 and "no job has tenant 'nlpp'" in stderr, stderr
    assert verify(read_instance(path), schedule_from_dict(json.loads(out.read_text()))) == []


def test_unknown_solver_is_usage_error(tmp_path: Path) -> None:
    code, _, stderr = run("solve", small_instance(tmp_path), "--solver", "greedy:lifo")
    assert code == 2 and "lifo" in stderr


def test_infeasible_exit_1_no_file(tmp_path: Path) -> None:
    inst = small_instance(tmp_path, jobs=[{"id": "a", "duration": 5, "gpus": 1, "deadline": 3}])
    out = tmp_path / "s.json"
    code, _, _ = run("solve", inst, "--solver", "greedy", "-o", out)
    assert code == 1 and not out.exists()


def test_export_from_schedule(tmp_path: Path) -> None:
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    assert run("solve", DEMO, "--solver", "greedy:fifo", "-o", out)[0] == 0
    code, _, _ = run("export", out, "--gantt", gantt)
    assert code == 0
    rows = list(csv.DictReader(gantt.open()))
    demo = read_instance(DEMO)
    assert {r["job"] for r in rows} == {j.id for j in demo.jobs}
    prep = [r for r in rows if r["job"] == "prep"]
    assert prep[0]["node"] == "" and prep[0]["tenant"] == "nlp"


@pytest.mark.parametrize("text", ["cr\rlf", "new\nline", "a,b", 'say "hi"', "both\r\n"])
def test_a_carriage_return_or_other_csv_character_in_user_text_keeps_its_row(
    tmp_path: Path, text: str
) -> None:
    # A bare "\r" went out unquoted and split the row (planner/csvtext.py).
    inst = small_instance(tmp_path)
    doc = json.loads(inst.read_text())
    doc["jobs"][0]["id"], doc["jobs"][0]["tenant"] = text, f"t{text}"
    doc["jobs"][1]["after"] = [text]
    inst.write_text(json.dumps(doc))
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    assert run("solve", inst, "--solver", "greedy", "-o", out, "--gantt", gantt)[0] == 0
    assert verify(read_instance(inst), schedule_from_dict(json.loads(out.read_text()))) == []
    exported = CliRunner().invoke(main, ["export", str(out), "-o", "-"]).stdout_bytes
    for written in (gantt.read_bytes().decode(), exported.decode()):  # bytes: as written
        rows = list(csv.DictReader(io.StringIO(written, newline="")))
        assert sorted(r["job"] for r in rows) == sorted([text, "b", "c"])
        assert [r["tenant"] for r in rows if r["job"] == text] == [f"t{text}"]


def test_models_names_the_folder_it_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, stdout, _ = run("models")
    assert code == 0 and f"model catalogue ({ROOT / 'models'})" in " ".join(stdout.split())
    monkeypatch.setenv("PLANNER_MODELS", str(tmp_path / "[nowhere]"))
    code, stdout, stderr = run("models")
    assert code == 0 and stdout == ""
    assert f"no models in {tmp_path / '[nowhere]'} (missing or empty" in " ".join(stderr.split())


def test_models_lists_catalogue() -> None:
    code, stdout, _ = run("models", "--json")
    assert code == 0
    names = {r["model"] for r in json.loads(stdout)}
    assert {
        "bert",
        "gpt2",
        "vgg16",
        "vgg19",
        "resnet18",
        "shufflenet_v2_x1_0",
        "a2c",
        "dqn",
    } <= names


def test_generate_then_solve(tmp_path: Path) -> None:
    inst = tmp_path / "gen.json"
    assert (
        run(
            "generate",
            "--family",
            "mixed",
            "--jobs",
            "12",
            "--nodes",
            "2",
            "--seed",
            "3",
            "-o",
            inst,
        )[0]
        == 0
    )
    out = tmp_path / "s.json"
    assert run("solve", inst, "--solver", "greedy", "-o", out)[0] == 0
    assert verify(read_instance(inst), schedule_from_dict(json.loads(out.read_text()))) == []


def test_import_jobshop_and_psplib(tmp_path: Path) -> None:
    js = ROOT / "instances" / "jobshop" / "ft06.jss"
    sm = sorted((ROOT / "instances" / "psplib").rglob("*.sm"))[0]
    for kind, src in (("jobshop", js), ("psplib", sm)):
        out = tmp_path / f"{kind}.json"
        code, _, stderr = run("import", kind, src, "-o", out)
        assert code == 0, stderr
        assert len(read_instance(out).jobs) > 0


@pytest.mark.parametrize("kind", ["psplib", "jobshop"])
@pytest.mark.parametrize("option", [["--preemption"], ["--elastic"], ["--first", "3"]])
def test_a_muri_option_with_another_format_is_exit_2(
    tmp_path: Path, kind: str, option: list[str]
) -> None:
    # ignored, --preemption wrote an instance without preemption (and --first kept every job)
    src = ROOT / "instances" / "jobshop" / "ft06.jss"
    if kind == "psplib":
        src = sorted((ROOT / "instances" / "psplib").rglob("*.sm"))[0]
    out = tmp_path / "x.json"
    code, _, stderr = run("import", kind, src, *option, "-o", out)
    assert code == 2 and f"{option[0]}: for muri traces only, not {kind}" in stderr, stderr
    assert not out.exists()


@pytest.mark.parametrize("kind", ["psplib", "jobshop", "muri"])
def test_import_of_a_broken_file_exit_2_nothing_written(tmp_path: Path, kind: str) -> None:
    src = tmp_path / "broken.txt"
    src.write_text("garbage\n1 2 x\n")
    out = tmp_path / "x.json"
    code, _, stderr = run("import", kind, src, "-o", out)
    assert code == 2 and str(src) in stderr and "Traceback" not in stderr
    assert not out.exists()


def test_import_muri(tmp_path: Path) -> None:
    src = ROOT / "tests" / "data" / "muri" / "cluster_trace.csv"
    out = tmp_path / "m.json"
    code, _, stderr = run(
        "import", "muri", src, "--nodes", "8", "--gpus-per-node", "8", "--first", "20", "-o", out
    )
    assert code == 0, stderr
    assert len(read_instance(out).jobs) == 20


@pytest.mark.parametrize("solver", ["cpsat", "milp"])
def test_ctrl_c_writes_best_schedule_and_exits_130(tmp_path: Path, solver: str) -> None:
    """A real SIGINT to a running `plan solve`: the best schedule so far is written and
    verified, and the exit code is 130."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "s.json"
    if solver == "cpsat":
        inst = ROOT / "instances" / "muri-testbed-100.json"
    else:  # a model the MILP builds and cannot finish in seconds
        inst = tmp_path / "j120.json"
        code, _, stderr = run(
            "import", "psplib", ROOT / "instances" / "psplib" / "j120" / "j12013_1.sm", "-o", inst
        )
        assert code == 0, stderr
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planner",
            "solve",
            str(inst),
            "--solver",
            solver,
            "--time-limit",
            "120",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the handlers are set once the solve starts (not at a fixed time after the spawn: a
    # loaded machine may still be importing), then 2 s: past the greedy start
    try:
        wait_until(lambda: catches(proc.pid, signal.SIGTERM))
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    doc = json.loads(out.read_text())
    assert doc["info"]["interrupted"] is True
    assert verify(read_instance(inst), schedule_from_dict(doc)) == []


@pytest.mark.parametrize(("mutate", "path"), [pytest.param(b[1], b[2], id=b[0]) for b in BAD])
def test_every_kind_of_bad_instance_exit_2(tmp_path: Path, mutate: Any, path: str) -> None:
    """Each bad input of the reader's tests, through `plan solve`: exit 2, the file and
    the JSON path in the message, no traceback, no output file."""
    d = base()
    mutate(d)
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(d))
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    code, _, stderr = run("solve", src, "--solver", "greedy", "-o", out, "--gantt", gantt)
    assert code == 2
    assert f"{src}: {path}:" in stderr.replace("\n", " ") or f"{path}:" in stderr
    assert str(src) in stderr and "Traceback" not in stderr
    assert not out.exists() and not gantt.exists()


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("injected fault")


@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_one_line_exit_3_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, debug: bool
) -> None:
    """A bug inside a solver is not "no feasible schedule" (exit 1): one line, exit 3, no
    file; the traceback only with the global `--debug`."""
    monkeypatch.setattr("planner.solvers.dispatch.solve_greedy", _boom)
    inst = small_instance(tmp_path)
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    flags = ["--debug"] if debug else []
    code, stdout, stderr = run(
        *flags, "solve", inst, "--solver", "greedy", "-o", out, "--gantt", gantt
    )
    assert code == 3
    assert not out.exists() and not gantt.exists()
    hint = "" if debug else ", rerun with --debug for the traceback"  # not when it is shown
    line = f"internal error: RuntimeError: injected fault{hint}"
    assert line in stderr.replace("\n", " ")
    if debug:
        assert "Traceback" in stderr and "_boom" in stderr and "rerun" not in stderr
    else:
        assert "Traceback" not in stderr and stderr.strip().count("\n") == 0


def test_an_internal_error_of_several_lines_is_printed_on_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise ValueError("\n$\\badcmd$\n ^\nParseFatalException: Unknown symbol")

    monkeypatch.setattr("planner.solvers.dispatch.solve_greedy", boom)
    code, _, stderr = run("solve", small_instance(tmp_path), "--solver", "greedy")
    line = "internal error: ValueError: $\\badcmd$ ^ ParseFatalException: Unknown symbol, rerun"
    assert code == 3 and stderr.startswith(line) and stderr.strip().count("\n") == 0


def test_internal_error_while_exporting_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Gantt CSV fails after the schedule was made: the schedule JSON is not left
    behind either."""
    monkeypatch.setattr("planner.export.gantt_rows", _boom)
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    args = ["solve", small_instance(tmp_path), "--solver", "greedy", "-o", out, "--gantt", gantt]
    code, _, stderr = run(*args)
    assert code == 3 and "internal error: RuntimeError: injected fault" in stderr
    assert not out.exists() and not gantt.exists()


@pytest.mark.parametrize("solver", ["greedy:fifo", "cpsat", "milp"])
def test_solve_names_the_tightest_bound_next_to_the_gap(tmp_path: Path, solver: str) -> None:
    inst = small_instance(tmp_path)
    out = tmp_path / "s.json"
    code, stdout, _ = run("solve", inst, "--solver", solver, "--time-limit", "5", "-o", out)
    assert code == 0
    doc = json.loads(out.read_text())
    assert verify(read_instance(inst), schedule_from_dict(doc)) == []
    word = doc["info"]["bound_by"][next(iter(doc["objective"]))]
    assert word in ("path", "volume", "wspt", "lp", "config", "cpsat", "milp")
    assert f"({word}, gap " in stdout


@pytest.mark.parametrize("limit", ["0", "0.001"])
def test_auto_with_no_time_still_writes_a_verified_plan(tmp_path: Path, limit: str) -> None:
    # a dl batch with releases goes through the release plan's annealing, whose spent
    # budget was an OverflowError (exit 3) at these limits
    from planner.generate import generate

    inst = tmp_path / "dl.json"
    inst.write_text(json.dumps(generate("dl", 12, 2, 1)))
    out = tmp_path / "s.json"
    code, _, stderr = run("solve", inst, "--solver", "auto", "--time-limit", limit, "-o", out)
    assert code == 0, stderr
    assert verify(read_instance(inst), schedule_from_dict(json.loads(out.read_text()))) == []


@pytest.mark.parametrize("as_json", [True, False])
def test_a_reader_that_stops_early_is_exit_141_not_a_crash(tmp_path: Path, as_json: bool) -> None:
    # `plan solve ... | head`: the pipe closes before the tables (or JSON) are printed;
    # that was "internal error: BrokenPipeError" (exit 3) or rich's silent exit 1 ("no
    # feasible schedule"), after the schedule was written whole
    import subprocess
    import sys

    out = tmp_path / "s.json"
    args = [sys.executable, "-m", "planner", "solve", str(small_instance(tmp_path))]
    args += ["--solver", "greedy", "-o", str(out)] + (["--json"] if as_json else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before anything is printed
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, stderr
    assert "internal error" not in stderr
    doc = json.loads(out.read_text())
    assert verify(read_instance(small_instance(tmp_path)), schedule_from_dict(doc)) == []


@pytest.mark.parametrize("command", ["validate", "solve", "solve --nope"])
def test_an_error_whose_reader_stops_early_keeps_its_exit_code(
    tmp_path: Path, command: str
) -> None:
    # `plan import ... 2>&1 | head` on a bad file: the error message's pipe closed, and
    # the BrokenPipeError raised while printing it ended the process with exit 1 ("no
    # feasible schedule") instead of 2
    import subprocess
    import sys

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "name": "x", "jobs": [{"id": 3}]}))
    out = tmp_path / "s.json"
    args = [sys.executable, "-m", "planner", *command.split(), str(bad)]  # --nope: click's
    args += ["-o", str(out)] if command.startswith("solve") else []
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader goes away before the error is printed
    assert proc.wait(timeout=120) == 2
    assert not out.exists()


def test_objective_option_names_every_objective_and_refuses_repeats(tmp_path: Path) -> None:
    from planner.instance import OBJECTIVES

    code, text, _ = run("solve", "--help")
    flat = " ".join(text.split())
    assert code == 0 and all(name in flat for name in OBJECTIVES)
    out = tmp_path / "s.json"
    code, _, err = run("solve", DEMO, "--solver", "greedy", "--objective", "makespan,makespan",
                       "-o", out)  # fmt: skip
    assert code == 2 and "'makespan' is listed twice" in err and not out.exists()
    # an unknown name gets the instance's message, with its suggestion
    code, _, err = run("solve", DEMO, "--solver", "greedy", "--objective", "makspan", "-o", out)
    assert code == 2 and "'makspan' is not one of" in err and "did you mean 'makespan'" in err
    # spaces around the names are dropped
    code, _, err = run("solve", DEMO, "--solver", "greedy", "--objective",
                       " makespan , energy_kwh", "-o", out)  # fmt: skip
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert verify(read_instance(DEMO), schedule_from_dict(doc)) == []
    assert list(doc["objective"]) == ["makespan", "energy_kwh"]


@pytest.mark.parametrize("backend", ["cbc", "highs"])
def test_the_milp_name_a_schedule_carries_is_a_solver_spec(tmp_path: Path, backend: str) -> None:
    # a MILP schedule's solver is `milp:cbc` or `milp:highs`: given back to --solver (or
    # to bench's --solvers) it picks that back end, and wins over --milp-backend
    inst = small_instance(tmp_path)
    out = tmp_path / "s.json"
    other = "highs" if backend == "cbc" else "cbc"
    code, _, err = run("solve", inst, "--solver", f"milp:{backend}", "--milp-backend", other,
                       "--time-limit", "5", "-o", out)  # fmt: skip
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert verify(read_instance(inst), schedule_from_dict(doc)) == []
    assert doc["solver"] == f"milp:{backend}"
    code, _, err = run("solve", inst, "--solver", "milp:gurobi", "-o", tmp_path / "x.json")
    assert code == 2 and "unknown MILP back end 'gurobi': use cbc or highs" in err


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["solve", DEMO, "--solver", "cpsat:"], "solver 'cpsat:' names no rule after ':'"),
        (["solve", DEMO, "--solver", "greedy:"], "use greedy or greedy:RULE"),
        (["solve", DEMO, "--solver", "greedy", "--objective", ""], "--objective: empty"),
        (["solve", DEMO, "--solver", "greedy", "--objective", "makespan,"], "an empty name"),
        (["solve", DEMO, "--solver", "greedy", "--objective", ",makespan"], "an empty name"),
        (["simulate", DEMO, "--policy", "plan:"], "'plan:' names no solver"),
    ],
)
def test_an_empty_part_of_an_option_is_exit_2(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    # found by fuzzing: these ran as cpsat, greedy, the instance's objective and plan:auto
    out = tmp_path / "s.json"
    code, _, err = run(*args, "-o", str(out))
    assert code == 2 and fragment in err and not out.exists(), err


@pytest.mark.parametrize(
    "args, where",
    [
        (["solve", ""], "'INSTANCE'"),
        (["solve", DEMO, "--gantt", ""], "'--gantt'"),
        (["replan", DEMO, "PLAN", "--now", "2000", "--changes", ""], "'--changes'"),
        (["show", "PLAN", "--instance", ""], "'--instance'"),
        (["export", "PLAN", "--instance", ""], "'--instance'"),
        (["simulate", DEMO, "--policy", "fifo", "--gantt", ""], "'--gantt'"),
        (["bench", "", "--solvers", "greedy"], "'INSTANCES...'"),
        (["check", DEMO, ""], "'SCHEDULE'"),
    ],
)
def test_an_empty_name_for_a_file_is_exit_2_naming_its_option(
    tmp_path: Path, args: list[str], where: str
) -> None:
    # an empty --changes replanned with no changes and an empty --instance was no
    # instance (exit 0); an empty INSTANCE was ": $: file not found" (cli/params.FileName)
    plan = tmp_path / "plan.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", plan)[0] == 0
    assert verify(read_instance(DEMO), schedule_from_dict(json.loads(plan.read_text()))) == []
    out = tmp_path / (
        "g.html" if args[0] == "show" else "out.csv" if args[0] == "bench" else "o.json"
    )
    given = [plan if a == "PLAN" else a for a in args]
    code, _, err = run(*given, *(["-o", out] if args[0] != "check" else []))
    assert code == 2 and f"Invalid value for {where}: the file name is empty" in err, err
    assert not out.exists()


def test_an_empty_name_for_a_required_option_does_not_say_leave_it_out(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", plan)[0] == 0
    code, _, err = run("export", plan, "-o", "")
    assert code == 2 and "the file name is empty" in err and "leave the option out" not in err


def test_the_summary_shows_a_tiny_value_as_it_is() -> None:
    # the energy cost of a millisecond instance (3.7e-06) was printed as 0.00
    from planner.figures import figure

    assert [figure(3.7e-06), figure(-2e-05), figure(0.5), figure(1234.5678), figure(0.0)] == [
        "3.7e-06",
        "-2e-05",
        "0.50",
        "1,234.57",
        "0",
    ]


@pytest.mark.parametrize(
    "command", [["solve", "--solver", "greedy"], ["simulate", "--policy", "sjf"]]
)
def test_a_schedule_of_ours_that_breaks_the_rules_is_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    # a planner or engine bug exits 3, as every bug of ours, not 1 ("no feasible
    # schedule"); nothing is written (plan simulate said 1)
    from planner.verify.base import Violation

    def broken(*args: Any, **kw: Any) -> list[Violation]:
        return [Violation("R5", "uses 2 GPUs, the job has 1", "a2c-b")]

    monkeypatch.setattr("planner.verify.verify", broken)
    out = tmp_path / "s.json"
    code, _, err = run(command[0], str(DEMO), *command[1:], "-o", str(out))
    assert code == 3 and "R5" in err and not out.exists()


FILE_ONLY = [
    ["solve", DEMO, "--solver", "greedy", "--show", "-"],
    ["replan", DEMO, "PLAN", "--now", "100", "-o", "r.json", "--live", "-"],
    ["replan", DEMO, "PLAN", "--now", "100", "-o", "r.json", "--show", "-"],
    ["simulate", DEMO, "--policy", "fifo", "--gantt", "-"],
    ["simulate", DEMO, "--policy", "fifo", "--events", "-"],
    ["simulate", DEMO, "--policy", "fifo", "--show", "-"],
    ["show", "PLAN", "--instance", DEMO, "--png", "-"],
    ["show", "PLAN", "--instance", DEMO, "-o", "-", "--open"],
    ["bench", DEMO, "--solvers", "greedy", "-o", "-"],
    ["bench", DEMO, "--solvers", "greedy", "-o", "b.csv", "--report", "-"],
]


@pytest.mark.parametrize("args", FILE_ONLY, ids=lambda a: "-".join(map(str, a[:1] + a[-2:])))
def test_an_output_that_is_not_printed_is_not_written_as_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[Any]
) -> None:
    # they wrote a file named "-" and said "wrote -"
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plan.json"
    assert run("solve", DEMO, "--solver", "greedy", "-o", plan)[0] == 0
    code, _, err = run(*[plan if a == "PLAN" else a for a in args])
    assert code == 2 and ("file only" in err or "--open" in err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_simulate_and_show_print_to_standard_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("simulate", DEMO, "--policy", "sjf", "-o", "-")
    assert code == 0 and not (tmp_path / "-").exists()
    doc = json.loads(out)
    assert doc["solver"] == "simulate:sjf"
    assert verify(read_instance(DEMO), schedule_from_dict(doc)) == []
    (tmp_path / "s.json").write_text(out)
    code, page, _ = run("show", "s.json", "--instance", DEMO, "-o", "-")
    assert code == 0 and page.startswith("<!DOCTYPE html>") and "sjf" in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


@pytest.mark.parametrize("solver", ["greedy", "cpsat"])
def test_replan_before_a_zero_length_jobs_release(tmp_path: Path, solver: str) -> None:
    # The job has no work: replanning its plan in force dropped its only segment
    # ("internal error: IndexError", exit 3).
    inst = tmp_path / "z.json"
    inst.write_text(
        json.dumps(
            {
                "name": "z",
                "cluster": {"nodes": [{"name": "n", "gpus": 1}]},
                "jobs": [{"id": "z", "duration": 0, "gpus": 0, "release": 10}],
            }
        )
    )
    plan, out, live = tmp_path / "s.json", tmp_path / "r.json", tmp_path / "l.json"
    assert run("solve", inst, "--solver", "greedy", "-o", plan)[0] == 0
    code, _, err = run(
        "replan", inst, plan, "--now", "5", "--solver", solver, "-o", out, "--live", live
    )
    assert code == 0, err
    s = schedule_from_dict(json.loads(out.read_text()))
    assert verify(read_instance(live), s) == [] and [(a.start, a.end) for a in s.jobs] == [(10, 10)]


def test_replan_node_down_for_good_writes_a_readable_live_state(tmp_path: Path) -> None:
    # Without a horizon, a node down for good makes one: every job alone one after another
    # (1.2e12 here), which the live file held beyond the 1e12 an instance may hold, so
    # `plan check` refused the replan's own output (exit 2).
    inst = tmp_path / "h.json"
    jobs = [{"id": x, "duration": 600_000_000_000, "gpus": 1} for x in ("a", "b")]
    inst.write_text(
        json.dumps(
            {
                "name": "h",
                "cluster": {"nodes": [{"name": "n", "count": 3, "gpus": 1}]},
                "jobs": jobs,
            }
        )
    )
    changes = tmp_path / "c.json"
    changes.write_text(json.dumps({"nodes_down": ["n-0"]}))
    plan, out, live = tmp_path / "s.json", tmp_path / "r.json", tmp_path / "l.json"
    assert run("solve", inst, "--solver", "greedy", "-o", plan)[0] == 0
    args = ("--now", "1", "--changes", changes, "--solver", "greedy", "-o", out, "--live", live)
    code, _, err = run("replan", inst, plan, *args)
    assert code == 0, err
    assert run("check", live, out)[0] == 0


@pytest.mark.parametrize(
    "command",
    [["generate", "--jobs", "5000", "--nodes", "8"], ["solve", "--solver", "greedy"]],
    ids=["generate", "solve"],
)
def test_a_reader_that_stops_after_its_first_read_is_exit_141(
    tmp_path: Path, command: list[str]
) -> None:
    # `plan ... -o - | head -c 20`: the document is far larger than a pipe's buffer; one
    # large write to a pipe whose reader left after reading part of it wrote one buffer's
    # worth, raised nothing and exited 0, the rest of the document silently lost
    import subprocess
    import sys

    from planner.generate import generate

    inst = tmp_path / "big.json"
    inst.write_text(json.dumps(generate("dl", 1000, 8, 1)))  # a 150 KB schedule
    args = [sys.executable, "-m", "planner", command[0]]
    args += ([str(inst)] if command[0] == "solve" else []) + command[1:] + ["-o", "-"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(20)) == 20  # the reader reads a little, then goes away
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, stderr
    assert "internal error" not in stderr


@pytest.mark.parametrize("args", [["--help"], ["solve", "--help"], ["--version"]])
def test_help_to_a_closed_reader_is_exit_141_and_to_a_full_device_one_line(
    args: list[str],
) -> None:
    # what click writes itself: a closed pipe was click's exit 1 ("no feasible schedule"
    # here), a full device a traceback
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "planner", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before anything is printed
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, stderr
    assert stderr == ""
    if not Path("/dev/full").exists():
        return
    # buffered, as a user's terminal has it (this project's CI sets PYTHONUNBUFFERED, which
    # hid the exit's second failing flush: exit 120)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, env=env
        )
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        "error: cannot write standard output: No space left on device"
    ]


def test_a_command_with_standard_output_closed_or_full_keeps_its_exit_code() -> None:
    # `plan models >&-` (a daemon's closed stdout) ended in a traceback, exit 1, once the
    # entry point flushed what click wrote; `plan models > /dev/full` exits 3 (internal
    # error, one line), not 120 from the exit's own failing flush
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    closed = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "planner", "models"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert closed.returncode == 0, closed.stderr
    assert "Traceback" not in closed.stderr
    if not Path("/dev/full").exists():
        return
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "planner", "models"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, env=env,
        )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "No space left on device" in done.stderr


@pytest.mark.parametrize("command", ["solve", "simulate", "check"])
def test_an_error_exit_keeps_its_code_when_standard_error_is_gone_or_full(
    tmp_path: Path, command: str
) -> None:
    # `plan solve infeasible.json 2>&1 >/dev/null | head -0` exited 141 and, buffered,
    # `2>/dev/full` exited 120: the commands' own error exits (no schedule, missed
    # deadline, violations) keep their code as bad input's exit 2 does
    import subprocess
    import sys

    inst = small_instance(tmp_path, jobs=[{"id": "a", "duration": 5, "gpus": 1, "deadline": 3}])
    args = {
        "solve": ["solve", inst, "--solver", "greedy", "-o", tmp_path / "s.json"],
        "simulate": ["simulate", inst, "--policy", "fifo", "-o", tmp_path / "s.json"],
        "check": ["check", inst, tmp_path / "late.json"],
    }[command]
    late = {"version": 1, "instance": "small", "jobs": [
        {"id": "a", "start": 0, "end": 5, "placement": [{"node": "n-0", "gpus": [0]}]}
    ]}  # fmt: skip
    (tmp_path / "late.json").write_text(json.dumps(late))
    assert run(*args)[0] == 1  # the exit every case below must keep
    cmd = [sys.executable, "-m", "planner", *map(str, args)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp_path
    )
    assert proc.stderr is not None
    proc.stderr.close()  # the reader of the error message goes away before it is printed
    assert proc.wait(timeout=120) == 1
    assert not (tmp_path / "s.json").exists()
    if not Path("/dev/full").exists():
        return
    for unbuffered in (env, os.environ):
        with open("/dev/full", "w") as full:
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=full, env=unbuffered)
        assert done.returncode == 1


def test_a_usage_error_to_a_full_device_is_still_exit_2() -> None:
    # click's own usage message (an unknown option), buffered, to a full standard error
    # exited 120 from the exit's failing flush
    import subprocess
    import sys

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cmd = [sys.executable, "-m", "planner", "solve", "--no-such-option", str(DEMO)]
    for unbuffered in (env, os.environ):
        with open("/dev/full", "w") as full:
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=full, env=unbuffered)
        assert done.returncode == 2


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{missing}", "--json"],
        ["check", "{missing}", "{missing}", "--json"],
        ["export", "{missing}", "-o", "{out}", "--json"],
        ["solve", "{missing}", "--json"],
        ["solve", "{missing}", "-o", "-"],
        ["replan", "{missing}", "{missing}", "--now", "1", "--json"],
        ["simulate", "{missing}", "--policy", "fifo", "--json"],
        ["import", "muri", "{missing}", "-o", "{out}", "--json"],
    ],
    ids=lambda c: " ".join(c[:1] + [w for w in c[2:] if w.startswith("-")]),
)
def test_bad_input_with_json_prints_the_error_document(tmp_path: Path, command: list[str]) -> None:
    """Every command whose output is JSON says what was wrong in JSON too (`solve` and
    `replan` printed nothing: their --json came in their shared options)."""
    missing, out = tmp_path / "missing.json", tmp_path / "out.json"
    code, stdout, _ = run(*(w.format(missing=missing, out=out) for w in command))
    assert code == 2 and not out.exists()
    doc = json.loads(stdout)
    problems = [{"path": "$", "message": "file not found"}]
    assert doc == {"error": "bad input", "file": str(missing), "problems": problems}


@pytest.mark.parametrize(
    "command",
    [
        ["export", "{sched}", "-o", "-", "--json"],
        ["generate", "--family", "dl", "--jobs", "3", "--nodes", "1", "-o", "-", "--json"],
        ["import", "muri", "{missing}", "-o", "-", "--json"],
        ["simulate", "{inst}", "--policy", "fifo", "-o", "-", "--json"],
    ],
    ids=lambda c: c[0],
)
def test_dash_o_and_json_together_are_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    """Each prints its own thing on standard output (the output, or the JSON summary of
    writing it): one was dropped without a word (export printed CSV to a --json reader)."""
    inst, sched = small_instance(tmp_path), tmp_path / "s.json"
    assert run("solve", inst, "--solver", "greedy", "-o", sched)[0] == 0
    words = (w.format(sched=sched, inst=inst, missing=tmp_path / "none.csv") for w in command)
    code, stdout, stderr = run(*words)
    assert (code, stdout) == (2, "") and "-o - and --json both print" in stderr


def test_a_file_name_that_is_not_utf8_is_written_as_text(tmp_path: Path) -> None:
    """`café.json` named in Latin-1 reaches Python with a lone surrogate for é: `plan
    solve` wrote it into `info.instance_file` as `\\udce9`, and `plan check` then refused
    the schedule; an import named after such a file wrote a name `plan validate` refused,
    and `plan bench` crashed writing its row (exit 3)."""
    latin = tmp_path / "caf\udce9.json"
    shutil.copy(small_instance(tmp_path), latin)
    plan = tmp_path / "s.json"
    assert run("solve", latin, "--solver", "greedy", "-o", plan)[0] == 0
    assert json.loads(plan.read_text())["info"]["instance_file"].endswith("caf\ufffd.json")
    assert run("check", latin, plan)[0] == 0
    shop = tmp_path / "ft06\udcff.jss"
    shutil.copy(ROOT / "instances" / "jobshop" / "ft06.jss", shop)
    imported = tmp_path / "ft06.json"
    assert run("import", "jobshop", shop, "-o", imported)[0] == 0
    assert json.loads(imported.read_text())["name"] == "ft06\ufffd"
    assert run("validate", imported)[0] == 0
    folder, rows = tmp_path / "b", tmp_path / "r.csv"
    folder.mkdir()
    shutil.copy(latin, folder)
    for ran in ("1 run(s), 0 already", "0 run(s), 1 already"):  # the row is found again
        code, out, err = run("bench", folder, "--solvers", "greedy:fifo", "--time-limit", 1,
                             "--workers", 1, "-o", rows)  # fmt: skip
        assert code == 0 and ran in out + err, out + err
    assert "caf\ufffd.json" in rows.read_text(encoding="utf-8")


@pytest.mark.parametrize("placement", [{}, False, 0, ""])
def test_a_placement_that_is_not_a_list_is_refused(tmp_path: Path, placement: Any) -> None:
    """`{}`, `false`, `0` and `""` were read as no placement (`"x"` and 1 as not a list)."""
    from planner.schedule import ScheduleFormatError, schedule_from_dict

    inst = small_instance(tmp_path)
    plan = tmp_path / "s.json"
    assert run("solve", inst, "--solver", "greedy", "-o", plan)[0] == 0
    doc = json.loads(plan.read_text())
    doc["jobs"][0]["placement"] = placement
    with pytest.raises(ScheduleFormatError) as e:
        schedule_from_dict(doc)
    assert e.value.problems == [("jobs[0].placement", "not a list")]
    plan.write_text(json.dumps(doc))
    code, out, err = run("check", inst, plan)
    assert code == 2 and "jobs[0].placement: not a list" in out + err, out + err


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "--jobs", "3", "--nodes", "100001"],
        ["import", "muri", str(ROOT / "tests" / "data" / "muri" / "cluster_trace.csv"),
         "--nodes", "100001"],
    ],
)  # fmt: skip
def test_a_node_count_past_the_limit_is_an_option_error(tmp_path: Path, args: list[str]) -> None:
    """It was told as `<generated dl>: cluster.nodes[0].count: ...`, a JSON path of a file
    the user never wrote."""
    out = tmp_path / "x.json"
    code, stdout, stderr = run(*args, "-o", out)
    text = stdout + stderr
    assert code == 2 and "--nodes" in text and "100000" in text and "cluster." not in text
    assert not out.exists()
