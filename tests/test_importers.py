"""PSPLIB and job-shop importers: counts, capacities, precedence, and the reader accepts
the result."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.importers.jobshop import JobshopFormatError, parse_jss
from planner.importers.psplib import PsplibFormatError, parse_sm
from planner.read import instance_from_dict, read_instance

ROOT = Path(__file__).resolve().parent.parent
# Job 18's precedence line is line 36: "  18        1          2          23  28"
SM = ROOT / "instances" / "psplib" / "j30" / "j3010_7.sm"


def test_ft06() -> None:
    d = parse_jss((ROOT / "instances" / "jobshop" / "ft06.jss").read_text(), "ft06")
    inst = instance_from_dict(d)
    assert len(inst.jobs) == 36
    assert inst.pools == {f"m{k}": 1 for k in range(6)}
    by_id = inst.job_by_id
    # first job line: "2 1 0 3 1 6 3 7 5 3 4 6"
    assert by_id["t0_0"].demand == {"m2": 1} and by_id["t0_0"].duration == 1
    assert by_id["t0_1"].demand == {"m0": 1} and by_id["t0_1"].after == ("t0_0",)
    assert by_id["t5_5"].after == ("t5_4",) and by_id["t5_5"].duration == 1
    assert all(j.gpus == 0 for j in inst.jobs)
    assert inst.objective == ("makespan",)


def test_jss_errors() -> None:
    with pytest.raises(JobshopFormatError, match="ends after 1 of the 2 job lines"):
        parse_jss("2 2\n0 1 1 2\n")
    with pytest.raises(JobshopFormatError) as e:
        parse_jss("1 2\n0 1 5 2\n")
    assert e.value.path == "line 2, field 3" and "machine 5 out of range" in e.value.message


@pytest.mark.parametrize(
    "text, path, fragment",
    [
        # a PSPLIB file: int() said "invalid literal for int() with base 10: '*****...'"
        (SM.read_text(), "line 1, field 1", "not a job-shop file"),
        ("1 2\n0 1 1 x\n", "line 2, field 4", "duration 'x' is not a whole number"),
        ("1 2\n0 1 1 -6\n", "line 2, field 4", "duration '-6' is negative"),
        ("1 2\n0 1 1\n", "line 2", "expected 2 (machine, duration) pairs, found 3"),
        # lines beyond the declared jobs were dropped without a word
        ("1 2\n0 1 1 2\n0 3 1 3\n", "line 3", "more job lines than the 1"),
        # named `jobs[0].duration` of the converted instance, not the line
        ("1 1\n0 1000000000001\n", "line 2, field 2", "duration 1000000000001 is larger"),
        # int() refused it at `$`: "use sys.set_int_max_str_digits()"
        ("1 1\n0 " + "9" * 5000 + "\n", "line 2, field 2", "'99999999999999999999...' is larger"),
    ],
)
def test_a_malformed_jss_names_the_line(text: str, path: str, fragment: str) -> None:
    with pytest.raises(JobshopFormatError) as e:
        parse_jss(text)
    assert e.value.path == path and fragment in e.value.message, e.value


def sm_edited(pattern: str, repl: str) -> str:
    """j3010_7.sm with one multiline regex substitution (which must match)."""
    text, n = re.subn(pattern, repl, SM.read_text(), count=1, flags=re.M)
    assert n == 1, pattern
    return text


def sm_without(*line_numbers: int) -> str:
    """j3010_7.sm without the given (1-based) lines."""
    lines = SM.read_text().splitlines(keepends=True)
    return "".join(x for no, x in enumerate(lines, 1) if no not in line_numbers)


@pytest.mark.parametrize(
    "text, path, fragment",
    [
        # non-numeric successors were skipped, losing the edge j18 -> j28
        (sm_edited(r"^(  18 +1 +2 +23 +)28$", r"\1x"), "line 36, field 5", "successor 'x'"),
        (sm_edited(r"^(  18 +1 +2 +23 +)28$", r"\1inf"), "line 36, field 5", "'inf' is not"),
        (sm_edited(r"^(  18 +1 +2 +23 +)28$", r"\1é"), "line 36, field 5", "'é' is not"),
        (sm_edited(r"^(  18 +1 +2 +23 +)28$", r"\1-28"), "line 36, field 5", "'-28' is negative"),
        # a count that disagrees with the successors listed was accepted
        (
            sm_edited(r"^(  18 +1 +)2( +23 +28)$", r"\g<1>5\2"),
            "line 36, field 3",
            "job 18 declares 5 successor(s) but lists 2",
        ),
        (sm_edited(r"^(  18 +1 +2 +23 +)28$", r"\1 33"), "line 36, field 5", "33 is not a job"),
        # truncated or dropped lines: "list index out of range", "zip() argument 2 is
        # shorter than argument 1", "0"
        ("".join(SM.read_text().splitlines(True)[:40]), "line 41", "ends in PRECEDENCE"),
        (sm_without(55), "line 55, field 1", "expected job 1, found job 2: REQUESTS/DUR"),
        (sm_without(36), "line 36, field 1", "expected job 18, found job 19: PRECEDENCE"),
        (sm_without(50), "line 50", "PRECEDENCE RELATIONS ends after 31 of the file's 32"),
        (sm_without(54), "line 54", "expected a line of '-'"),
        (sm_without(88), "$", "no 'RESOURCEAVAILABILITIES:' section"),
        (sm_without(90, 91), "line 90", "the file ends in RESOURCEAVAILABILITIES"),
        (sm_edited(r"^(  2 +1 +10 .*)$", r"\1 4"), "line 56", "expected 7 fields"),
        (sm_edited(r"^(   31 .*) 25$", r"\1"), "line 90", "(one per resource), found 3"),
        (sm_edited(r"\):  32$", "):  31"), "line 50", "expected the end of PRECEDENCE"),
        # refused after conversion, naming `jobs[1].demand.R1` and not the line
        (
            sm_edited(r"^(  3 +1 +7 +)7( .*)$", r"\g<1>70\2"),
            "line 57, field 4",
            "job 3 requests 70 of R1, more than the 31 available (line 90)",
        ),
        (
            sm_edited(r"^(   6 +1 +)1( +15)$", r"\g<1>2\2   3"),
            "line 24, field 5",
            "successor 3 of job 6 closes a cycle of successors: 3 -> 6 -> 3",
        ),
        (
            sm_edited(r"^(   6 +1 +1 +)15$", r"\g<1>6"),
            "line 24, field 4",
            "cycle of successors: 6 -> 6",
        ),
        # two columns of R1 made one pool, the second column's requests alone
        (sm_edited(r"^(jobnr.*)R 2", r"\1R 1"), "line 53", "resource R1 is listed twice"),
        (
            sm_edited(r"^(  2 +1 +)10( .*)$", r"\g<1>" + "9" * 5000 + r"\2"),
            "line 56, field 3",
            "duration '99999999999999999999...' is larger than the limit 1e+12",
        ),
        # named `jobs[0].duration` and `cluster.pools.R1` of the converted instance
        (
            sm_edited(r"^(  2 +1 +)10( .*)$", r"\g<1>1000000000001\2"),
            "line 56, field 3",
            "job 2: duration 1000000000001 is larger than the limit 1e+12",
        ),
        (
            sm_edited(r"^   31( .*) 25$", r"   1000000000001\1 25"),
            "line 90, field 1",
            "capacity of R1 1000000000001 is larger than the limit 1e+12",
        ),
        # through the supersource, dropped as a dummy: the instance said "j3 -> j6 -> j3"
        (sm_edited(r"^(   6 +1 +1 +)15$", r"\g<1>1"), "line 24, field 4", ": 1 -> 3 -> 6 -> 1"),
    ],
)
def test_a_malformed_sm_names_the_line(text: str, path: str, fragment: str) -> None:
    with pytest.raises(PsplibFormatError) as e:
        parse_sm(text)
    assert e.value.path == path and fragment in e.value.message, e.value


@pytest.mark.parametrize("kind", ["psplib", "jobshop"])
def test_import_of_a_malformed_file_names_file_and_line(tmp_path: Path, kind: str) -> None:
    src = tmp_path / "bad.sm"
    src.write_text(sm_edited(r"^(  18 +1 +2 +23 +)28$", r"\1x"))
    out = tmp_path / "x.json"
    r = CliRunner().invoke(main, ["import", kind, str(src), "-o", str(out)])
    line = "line 36, field 5: successor 'x'" if kind == "psplib" else "line 1, field 1: not a"
    assert r.exit_code == 2 and f"{src}: {line}" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_j30(tmp_path: Path) -> None:
    d = parse_sm((ROOT / "instances" / "psplib" / "j30" / "j301_1.sm").read_text(), "j301_1")
    # 32 activities including the dummy source and sink, which are dropped
    assert len(d["jobs"]) == 30
    assert d["cluster"]["pools"] == {"R1": 12, "R2": 13, "R3": 4, "R4": 12}
    path = tmp_path / "j301_1.json"
    path.write_text(json.dumps(d))
    inst = read_instance(path)
    by_id = inst.job_by_id
    assert by_id["j2"].duration == 8 and by_id["j2"].demand == {"R1": 4}
    # successors of 2 are 6, 11, 15; of 1 (dropped source) 2, 3, 4
    assert all("j2" in by_id[j].after for j in ("j6", "j11", "j15"))
    assert by_id["j2"].after == () and by_id["j3"].after == ()
    # job 20 follows 5, 11 and 18
    assert set(by_id["j20"].after) == {"j5", "j11", "j18"}
    assert all(j.gpus == 0 for j in inst.jobs)
    assert sum(len(j.after) for j in inst.jobs) == 48 - 3 - 3  # minus source and sink arcs


BRIDGED_SM = """\
jobs (incl. supersource/sink ):  4
PRECEDENCE RELATIONS:
jobnr.    #modes  #successors   successors
   1        1          1           3
   2        1          1           1
   3        1          1           4
   4        1          0
***
REQUESTS/DURATIONS:
jobnr. mode duration  R 1
------------------------------------------------------------------------
  1      1     0       0
  2      1     4       1
  3      1     5       1
  4      1     0       0
***
RESOURCEAVAILABILITIES:
  R 1
   1
"""


def test_a_dropped_dummy_keeps_the_order_it_stood_in() -> None:
    # Job 1 is a dummy (no duration, no request) yet waits for job 2 and job 3 waits for
    # it: dropping it dropped "3 after 2", and the two ran together on a 1-unit resource.
    inst = instance_from_dict(parse_sm(BRIDGED_SM, "bridged"))
    assert [j.id for j in inst.jobs] == ["j2", "j3"]
    assert inst.job_by_id["j3"].after == ("j2",)
