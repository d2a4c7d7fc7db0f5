"""PSPLIB and job-shop importers: counts, capacities, precedence, and the reader accepts
the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.importers.jobshop import JobshopFormatError, parse_jss
from planner.importers.psplib import parse_sm
from planner.read import instance_from_dict, read_instance

ROOT = Path(__file__).resolve().parent.parent


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
    with pytest.raises(JobshopFormatError):
        parse_jss("2 2\n0 1 1 2\n")
    with pytest.raises(JobshopFormatError):
        parse_jss("1 2\n0 1 5 2\n")


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
