"""The safe reader (planner/jsonio.py) and the output set (planner/outputs.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import planner.jsonio as jsonio
import planner.outputs as outputs
from planner.cli import main
from planner.errors import InputError, UsageError
from planner.read import read_instance
from planner.schedule import schedule_from_dict
from planner.verify import verify

HOSTILE = Path(__file__).resolve().parent / "hostile" / "files"
GOOD = HOSTILE / "good.json"


def problem(e: pytest.ExceptionInfo[InputError]) -> str:
    return e.value.problems[0].message


def test_depth_scan_ignores_brackets_inside_strings() -> None:
    text = json.dumps({"a": "[[[[{{{{" * 100, "b": [[1]]})
    assert jsonio.nesting_depth(text) == 3
    assert jsonio.loads(text, "x")["b"] == [[1]]


@pytest.mark.parametrize("depth", [jsonio.MAX_DEPTH + 1, 100_000])
def test_deep_json_is_an_input_error_not_a_recursion_error(depth: int) -> None:
    with pytest.raises(InputError) as e:
        jsonio.loads("[" * depth + "]" * depth, "deep.json")
    assert "nested deeper" in problem(e)


def test_depth_at_the_limit_parses() -> None:
    d = jsonio.MAX_DEPTH
    assert jsonio.nesting_depth("[" * d + "]" * d) == d
    jsonio.loads("[" * d + "]" * d, "ok.json")


def test_invalid_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_bytes(b'{"name": "ab\xffc"}')
    with pytest.raises(InputError) as e:
        jsonio.read_json(f)
    assert problem(e) == "not valid UTF-8 at byte offset 12"


@pytest.mark.parametrize(
    ("text", "where", "why"),
    [
        ("NaN", "$", "NaN is not a JSON number"),
        ("[1, Infinity]", "$[1]", "Infinity is not a JSON number"),
        ('{"a": {"b": -Infinity}}', "a.b", "-Infinity is not a JSON number"),
        ('[{"x": 1e999}]', "$[0].x", "1e999 is too large for a number"),
    ],
)
def test_non_finite_numbers_are_refused_at_their_path(text: str, where: str, why: str) -> None:
    with pytest.raises(InputError) as e:
        jsonio.loads(text, "x.json")
    assert [(p.path, p.message) for p in e.value.problems] == [(where, why)]


def test_every_unreadable_value_is_named_at_once() -> None:
    text = '{"jobs": [{"id": "a", "gpus": 1, "gpus": 2}, {"id": "\\ud800", "w": NaN}], "n": 1e400}'
    with pytest.raises(InputError) as e:
        jsonio.loads(text, "x.json")
    assert [p.path for p in e.value.problems] == [
        "jobs[0].gpus",
        "jobs[1].id",
        "jobs[1].w",
        "n",
    ]
    assert e.value.problems[0].message == 'key "gpus" appears twice in the object'


def test_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_FILE_BYTES", 10)
    f = tmp_path / "big.json"
    f.write_text("[" + "1," * 10 + "1]")
    with pytest.raises(InputError) as e:
        jsonio.read_json(f)
    assert "limit" in problem(e)


@pytest.mark.parametrize("path", ["/dev/zero", "."])
def test_non_regular_files_are_refused(path: str) -> None:
    with pytest.raises(InputError) as e:
        jsonio.read_bytes(path)
    assert "not a regular file" in problem(e)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    with pytest.raises(InputError):
        jsonio.read_text(tmp_path / "p")


def test_writer_refuses_nan() -> None:
    with pytest.raises(ValueError):
        jsonio.dumps({"x": float("nan")})
    with pytest.raises(TypeError):  # as json.dumps does
        jsonio.dumps({(1, 2): 3})


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_writer_reads_back_as_written(value: Any) -> None:
    assert json.loads(jsonio.dumps(value)) == value


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_SCALARS.filter(lambda k: not isinstance(k, str)), _VALUES))
def test_writer_names_keys_that_are_not_strings_as_json_does(value: dict[Any, Any]) -> None:
    assert json.loads(jsonio.dumps({"d": value, **value})) == json.loads(
        json.dumps({"d": value, **value})
    )


def test_a_schedule_is_written_a_job_per_line(tmp_path: Path) -> None:
    """The writer keeps a job on one line: a large realized schedule is written by the C
    encoder (jsonio.py) and reads line by line."""
    demo = Path(__file__).resolve().parents[1] / "instances" / "demo.json"
    out = tmp_path / "s.json"
    r = CliRunner().invoke(main, ["solve", str(demo), "--solver", "greedy", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    doc = json.loads(text)
    assert verify(read_instance(demo), schedule_from_dict(doc)) == []
    lines = text.splitlines()
    first = lines.index(' "jobs": [') + 1
    jobs = [json.loads(x.strip().rstrip(",")) for x in lines[first : first + len(doc["jobs"])]]
    assert jobs == doc["jobs"] and len(jobs) == 27 and lines[first + 27] == " ],"
    assert lines[0] == "{" and text.endswith("}\n")


def test_check_outputs_refusals(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for out, inputs, why in [
        (str(tmp_path / "file" / "x.json"), [], "not a folder"),
        (str(tmp_path), [], "directory"),
        ("/proc/x.json", [], "system folder"),
        (str(tmp_path / "file"), [str(tmp_path / "file")], "input file"),
    ]:
        with pytest.raises(UsageError, match=why):
            outputs.check_outputs([out], inputs)
    with pytest.raises(UsageError, match="same file"):
        outputs.check_outputs([str(tmp_path / "a"), str(tmp_path / "." / "a")])
    os.link(tmp_path / "file", tmp_path / "link")
    with pytest.raises(UsageError, match="input file"):  # a hard link is the same file
        outputs.check_outputs([str(tmp_path / "link")], [str(tmp_path / "file")])
    (tmp_path / "link").unlink()
    outputs.check_outputs([str(tmp_path / "new" / "deeper" / "a.json")])  # folders are made
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # the probe left nothing


@pytest.mark.parametrize("where", ["{long}.json", "new/{long}/plan.json"])
def test_a_name_too_long_is_exit_2(tmp_path: Path, where: str) -> None:
    # was exit 3 ("internal error: OSError: File name too long"); under a new folder the
    # folder was made before the write failed
    out = tmp_path / where.format(long="b" * 300)
    demo = Path(__file__).resolve().parent.parent / "instances" / "demo.json"
    r = CliRunner().invoke(main, ["solve", str(demo), "--solver", "greedy", "-o", str(out)])
    assert r.exit_code == 2, r.output
    assert "cannot write" in r.output and "nothing was written" in r.output
    assert list(tmp_path.iterdir()) == []


def test_read_only_folder_is_refused(tmp_path: Path) -> None:
    # root writes into a folder of mode 555: it is made immutable instead (chattr +i)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if os.geteuid() == 0 and not chattr("+i", ro):
        pytest.skip("root writes into read-only folders, and chattr +i is not available here")
    try:
        with pytest.raises(UsageError, match="not writable"):
            outputs.check_outputs([str(ro / "g.csv")])
    finally:
        if os.geteuid() == 0:
            chattr("-i", ro)
        ro.chmod(0o755)


def test_the_output_set_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Gantt write fails after the schedule's temporary file was written: neither
    existing file is replaced and no temporary file is left."""
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    out.write_text("old schedule")
    gantt.write_text("old gantt")
    real = outputs._write_temp
    calls: list[Path] = []

    def failing(target: Path, text: str) -> str:
        calls.append(target)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(target, text)

    monkeypatch.setattr(outputs, "_write_temp", failing)
    r = CliRunner().invoke(
        main, ["solve", str(GOOD), "--solver", "greedy", "-o", str(out), "--gantt", str(gantt)]
    )
    assert r.exit_code == 2, r.output
    assert "No space left on device" in r.output and str(gantt) in r.output
    assert out.read_text() == "old schedule" and gantt.read_text() == "old gantt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv", "s.json"]


@pytest.mark.parametrize("failing", ["g.csv", "p.png"])
def test_a_rename_that_fails_puts_back_the_files_renamed_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """Every file of the set was written; renaming one into place fails (an existing file
    that cannot be replaced): the ones renamed before it get their old content back, a new
    one is removed, and the error names the path (exit 2, not an internal error)."""
    old = {"s.json": "old schedule", "g.csv": "old gantt"}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    real = os.replace
    tried: list[str] = []

    def replace(src: Any, dst: Any) -> None:
        tried.append(Path(dst).name)
        if tried.count(failing) == 1 and tried[-1] == failing:
            raise PermissionError(1, "Operation not permitted", str(dst))
        real(src, dst)

    monkeypatch.setattr(outputs.os, "replace", replace)
    files = {str(tmp_path / n): "new" for n in ("s.json", "g.csv", "p.png")}
    with pytest.raises(UsageError, match="Operation not permitted") as e:
        outputs.write_all(files)
    assert str(tmp_path / failing) in str(e.value)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == old


def chattr(flag: str, path: Path) -> bool:
    import subprocess

    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except OSError:
        return False


def test_an_output_that_cannot_be_replaced_is_refused_before_solving(tmp_path: Path) -> None:
    """An immutable existing output (`chattr +i`, root only): exit 2 naming it before the
    solve, and the set's other output untouched."""
    out, gantt = tmp_path / "s.json", tmp_path / "g.csv"
    out.write_text("old schedule")
    gantt.write_text("old gantt")
    if not chattr("+i", gantt):
        pytest.skip("chattr +i is not available here (needs root and a file system with it)")
    try:
        r = CliRunner().invoke(
            main, ["solve", str(GOOD), "--solver", "greedy", "-o", str(out), "--gantt", str(gantt)]
        )
    finally:
        chattr("-i", gantt)
    assert r.exit_code == 2, r.output
    assert str(gantt) in r.output and "cannot be replaced" in r.output
    assert out.read_text() == "old schedule" and gantt.read_text() == "old gantt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv", "s.json"]


def test_output_paths_are_checked_before_solving(monkeypatch: pytest.MonkeyPatch) -> None:
    import planner.solvers

    def no_solve(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("solved although the output cannot be written")

    monkeypatch.setattr(planner.solvers, "solve", no_solve)
    r = CliRunner().invoke(main, ["solve", str(GOOD), "-o", "/proc/plan.json"])
    assert r.exit_code == 2 and "/proc/plan.json" in r.output


def test_export_instance_typo_is_an_error(tmp_path: Path) -> None:
    g = tmp_path / "g.csv"
    r = CliRunner().invoke(
        main,
        ["export", str(HOSTILE / "good.schedule.json"), "--gantt", str(g), "--instance", "typo"],
    )
    assert r.exit_code == 2 and "typo" in r.output and not g.exists()


@pytest.mark.parametrize("solver", ["greedy", "greedy:fifo", "cpsat", "milp", "auto"])
def test_empty_instance_is_an_optimal_empty_plan(tmp_path: Path, solver: str) -> None:
    out = tmp_path / "s.json"
    r = CliRunner().invoke(
        main,
        ["solve", str(HOSTILE / "empty-jobs.json"), "--solver", solver, "--time-limit", "1"]
        + ["-o", str(out)],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["status"] == "optimal" and doc["jobs"] == []
    # a complete plan, with zero for every value (`plan simulate` wrote the same; solve
    # wrote empty objective and metrics)
    assert set(doc["objective"].values()) == {0.0} and doc["objective"]
    assert doc["metrics"]["makespan"] == 0 and set(doc["metrics"].values()) == {0.0}
    inst = read_instance(HOSTILE / "empty-jobs.json")
    assert verify(inst, schedule_from_dict(doc)) == []


def test_numeric_limits_refuse_what_would_overflow() -> None:
    for name, path in [
        ("weight-1e306.json", "jobs[3].weight"),
        ("weight-1e9.json", "jobs[3].weight"),
        ("pool-1e308.json", "cluster.pools.power_kw"),
        ("duration-1e13.json", "jobs[3].duration"),
        ("speed-tiny.json", "jobs[0]"),
    ]:
        with pytest.raises(InputError) as e:
            read_instance(HOSTILE / name)
        assert path in [p.path for p in e.value.problems], name


def test_a_symbolic_link_named_as_an_output_is_replaced_not_followed(tmp_path: Path) -> None:
    """`-o link` puts the new file in the link's place, as a rename does: what it pointed
    to is untouched (so a link left in a shared folder cannot aim the write elsewhere)."""
    real, links = tmp_path / "real", tmp_path / "links"
    real.mkdir()
    links.mkdir()
    (real / "s.json").write_text("old schedule")
    (links / "s.json").symlink_to("../real/s.json")
    (links / "g.csv").symlink_to("../real/new.csv")  # dangling
    r = CliRunner().invoke(
        main,
        ["solve", str(GOOD), "--solver", "greedy", "-o", str(links / "s.json"),
         "--gantt", str(links / "g.csv")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert not (links / "s.json").is_symlink() and not (links / "g.csv").is_symlink()
    doc = json.loads((links / "s.json").read_text())
    assert verify(read_instance(GOOD), schedule_from_dict(doc)) == []
    assert (links / "g.csv").read_text().startswith("job,")
    assert [p.name for p in real.iterdir()] == ["s.json"]
    assert (real / "s.json").read_text() == "old schedule"


def test_a_link_is_judged_as_itself_before_solving(tmp_path: Path) -> None:
    """The checks look at what is replaced, the link and its folder: a link in a folder
    that takes no new file is refused before the solve (it was refused only after it), a
    link to a file that cannot be replaced is not (the file is not written)."""
    fixed, free = tmp_path / "fixed", tmp_path / "free"
    fixed.mkdir()
    free.mkdir()
    (free / "s.json").write_text("old schedule")
    (fixed / "s.json").symlink_to("../free/s.json")
    (free / "l.json").symlink_to("s.json")
    if not chattr("+i", fixed):
        pytest.skip("chattr +i is not available here (needs root and a file system with it)")
    try:
        chattr("+i", free / "s.json")
        refused = CliRunner().invoke(
            main, ["solve", str(GOOD), "--solver", "greedy", "-o", str(fixed / "s.json")]
        )
        taken = CliRunner().invoke(
            main, ["solve", str(GOOD), "--solver", "greedy", "-o", str(free / "l.json")]
        )
    finally:
        chattr("-i", free / "s.json")
        chattr("-i", fixed)
    assert refused.exit_code == 2 and "is not writable" in refused.output, refused.output
    assert "plan for" not in refused.output  # before the solve
    assert taken.exit_code == 0, taken.output
    assert not (free / "l.json").is_symlink()
    assert (free / "s.json").read_text() == "old schedule"
    doc = json.loads((free / "l.json").read_text())
    assert verify(read_instance(GOOD), schedule_from_dict(doc)) == []


def test_an_interrupted_encoding_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A signal while a big page is encoded (before its temporary file is written): the
    folder holds nothing new."""

    class Stopped(str):
        def encode(self, *args: Any, **kw: Any) -> bytes:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        outputs.write_all({str(tmp_path / "g.html"): Stopped("<html>")})
    assert list(tmp_path.iterdir()) == []


def test_a_link_to_an_input_named_as_an_output_is_refused(tmp_path: Path) -> None:
    """Replacing the link would leave the input alone, but whoever names it means that
    file: refused as the input itself is."""
    inp = tmp_path / "in.json"
    inp.write_text(GOOD.read_text())
    (tmp_path / "l.json").symlink_to("in.json")
    with pytest.raises(UsageError, match="it is the input file"):
        outputs.check_outputs([str(tmp_path / "l.json")], [str(inp)])


@pytest.mark.parametrize("name", ["y/..", "nodir/", "nodir/.", "."])
def test_an_output_name_that_names_a_folder_is_refused_before_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # "y/.." was checked as a file named "..": the solve ran, then the write failed
    # (EBUSY) and left the folder y it had made; "nodir/" was written as a file "nodir"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="it is a directory|it names a folder"):
        outputs.check_outputs([name])
    assert list(tmp_path.iterdir()) == []


def test_a_bench_results_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """The results file is read and appended to as runs finish: through a link, the file
    it points to was changed, then the link replaced."""
    theirs = tmp_path / "theirs.csv"
    theirs.write_text("kept")
    (tmp_path / "mine.csv").symlink_to("theirs.csv")
    r = CliRunner().invoke(
        main, ["bench", str(GOOD), "--solvers", "greedy:fifo", "-o", str(tmp_path / "mine.csv")]
    )
    assert r.exit_code == 2 and "it is a symbolic link" in r.output, r.output
    assert theirs.read_text() == "kept" and (tmp_path / "mine.csv").is_symlink()
