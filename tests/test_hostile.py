"""The hostile corpus (tests/hostile/cases.txt): every case ends with its exit code, prints
no traceback, and a failed run changes no file in its folder."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.batch.results import COLUMNS
from planner.cli import main

HERE = Path(__file__).resolve().parent / "hostile"
DEPTH = 100_000  # far beyond Python's recursion limit


def load_cases() -> list[tuple[int, list[str]]]:
    cases = []
    for line in (HERE / "cases.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            code, *args = shlex.split(line)
            cases.append((int(code), args))
    return cases


CASES = load_cases()


def make_folder(tmp: Path) -> Path:
    """A copy of the corpus files plus the ones not worth storing: deep nesting, a FIFO
    and a folder where a file is expected."""
    work = tmp / "work"
    shutil.copytree(HERE / "files", work)
    (work / "deep.json").write_text("[" * DEPTH + "]" * DEPTH)
    (work / "deep-object.json").write_text('{"a":' * DEPTH + "1" + "}" * DEPTH)
    (work / "deep-schedule.json").write_text('{"jobs": ' + "[" * DEPTH + "]" * DEPTH + "}")
    # A field over csv's 128 KiB limit, in a bench results file and in a trace.
    huge = '"' + "x" * 140_000 + '"\n'
    (work / "bench-huge-field.csv").write_text(",".join(COLUMNS) + "\n" + huge)
    trace_header = (work / "trace.csv").read_text().splitlines()[0]
    (work / "trace-huge-field.csv").write_text(trace_header + "\n" + huge)
    os.mkfifo(work / "fifo.json")
    (work / "folder").mkdir()
    return work


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry below `folder`: the content hash of files, the kind of the rest."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_fifo():
            out[rel] = "fifo"
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_in(folder: Path, args: list[str]) -> tuple[int, str]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        r = CliRunner().invoke(main, args)
    finally:
        os.chdir(old)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        trace = "".join(traceback.format_exception(*r.exc_info)) if r.exc_info else ""
        pytest.fail(f"plan {shlex.join(args)} raised {r.exception!r}\n{trace}")
    return r.exit_code, r.output


def test_corpus_is_large() -> None:
    assert len(CASES) >= 60
    commands = {args[0] for _, args in CASES}
    assert {"validate", "solve", "check", "export", "import", "generate", "bench"} <= commands


@pytest.mark.parametrize(("code", "args"), CASES, ids=[shlex.join(a) for _, a in CASES])
def test_case(tmp_path: Path, code: int, args: list[str]) -> None:
    folder = make_folder(tmp_path)
    before = snapshot(folder)
    got, output = run_in(folder, args)
    assert "Traceback" not in output
    assert got == code, f"plan {shlex.join(args)}: exit {got}, expected {code}\n{output}"
    assert not (folder / "-").exists(), "'-' is standard output, never a file"
    if code != 0:
        assert snapshot(folder) == before, "a failed run changed files"
    out = args[args.index("-o") + 1] if "-o" in args else "-"
    if code == 0 and out.endswith(".json"):  # what a command wrote is read back
        again = ["check", args[1], out] if args[0] == "solve" else ["validate", out]
        got, output = run_in(folder, again)
        assert got == 0, f"plan {shlex.join(again)}: exit {got}\n{output}"
