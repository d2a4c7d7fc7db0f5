"""What a new user meets first: `plan check` on the schedule of another instance says so
before listing violations."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from planner.cli import main

HOSTILE = Path(__file__).resolve().parent / "hostile" / "files"


def test_check_names_the_other_instance_first() -> None:
    r = CliRunner().invoke(
        main, ["check", str(HOSTILE / "good.json"), str(HOSTILE / "other.schedule.json")]
    )
    assert r.exit_code == 1
    first = r.stderr.splitlines()[0]
    assert "schedule of instance 'other', not 'good'" in first
    assert "violation" in r.stderr.splitlines()[1]


def test_check_json_reports_both_names() -> None:
    r = CliRunner().invoke(
        main,
        ["check", "--json", str(HOSTILE / "good.json"), str(HOSTILE / "other.schedule.json")],
    )
    doc = json.loads(r.stdout)
    assert (doc["instance"], doc["schedule_instance"], doc["valid"]) == ("good", "other", False)
