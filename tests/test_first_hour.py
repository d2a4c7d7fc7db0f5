"""What a new user meets first: the demo shows interleaving, and `plan check` on the
schedule of another instance says so before listing violations."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from planner.cli import main

HOSTILE = Path(__file__).resolve().parent / "hostile" / "files"
DEMO = Path(__file__).resolve().parent.parent / "instances" / "demo.json"


def test_demo_forms_interleaving_groups(tmp_path: Path) -> None:
    """The headline feature is visible in the demo from the greedy start on (CP-SAT and
    auto are warm-started from it)."""
    from planner.read import read_instance
    from planner.schedule import schedule_from_dict
    from planner.verify import verify

    out = tmp_path / "s.json"
    args = ["solve", str(DEMO), "--solver", "greedy", "-o", str(out), "--jobs"]
    r = CliRunner().invoke(main, args, env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert len(doc["groups"]) >= 1
    assert verify(read_instance(DEMO), schedule_from_dict(doc)) == []
    # the job table (make demo prints it) names each member's group
    cells = {line.split()[0]: line.split() for line in r.stdout.splitlines() if line.strip()}
    for g in doc["groups"]:
        assert all(cells[m][3] == g["id"] for m in g["jobs"])


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


def test_bench_resumes_only_rows_of_the_same_time_limit_and_seed(tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"

    def bench(*extra: str) -> dict[str, object]:
        args = ["bench", str(HOSTILE / "good.json"), "--solvers", "greedy:fifo"]
        r = CliRunner().invoke(main, [*args, "--workers", "1", "-o", str(out), "--json", *extra])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)

    assert bench("--time-limit", "1")["skipped"] == 0
    assert bench("--time-limit", "1")["skipped"] == 1  # the same run: resumed
    assert bench("--time-limit", "2")["skipped"] == 0  # another limit: run again
    assert bench("--time-limit", "2", "--seed", "5")["skipped"] == 0  # another seed
    rows = out.read_text().splitlines()
    assert len(rows) == 1 + 3


def test_plainly_infeasible_instances_name_the_job_with_every_solver(solver: str) -> None:
    """A job that cannot end before the horizon: every solver names it, not only greedy."""
    r = CliRunner().invoke(
        main,
        ["solve", str(HOSTILE / "horizon-short.json"), "--solver", solver] + ["--time-limit", "2"],
    )
    assert r.exit_code == 1, r.output
    assert "no schedule exists: job a: horizon 10 passed" in r.stderr, (solver, r.stderr)


def test_deadline_is_named_too() -> None:
    from planner.read import instance_from_dict
    from planner.solvers.plain import plain_infeasibility

    doc = json.loads((HOSTILE / "good.json").read_text())
    doc["jobs"][3]["deadline"] = 7  # released at 5, lasts 10
    reason = plain_infeasibility(instance_from_dict(doc, file="x"))
    assert reason == "job d: deadline 7 passed (earliest end 15)"


def _priority_against_after(tmp_path: Path) -> Path:
    """c runs after a, but has the higher priority and is released no later: strict R9
    wants c to start no later than a."""
    doc = json.loads((HOSTILE / "good.json").read_text())
    doc["jobs"][2]["priority"] = 1
    path = tmp_path / "r9-after.json"
    path.write_text(json.dumps(doc))
    return path


def test_strict_priority_against_after_is_named_by_every_solver(
    tmp_path: Path, solver: str
) -> None:
    from planner.read import instance_from_dict
    from planner.solvers.plain import plain_infeasibility

    path = _priority_against_after(tmp_path)
    why = "job c: strict priority (R9) has it start no later than a"
    doc = json.loads(path.read_text())
    assert (plain_infeasibility(instance_from_dict(doc, file="x")) or "").startswith(why)
    out = tmp_path / "s.json"
    args = ["solve", str(path), "--solver", solver, "--time-limit", "2", "-o", str(out)]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 1, r.output
    assert why in r.stderr, (solver, r.stderr)
    assert json.loads(r.stdout)["status"] == "infeasible", solver
    # released after a, or without strict priority, c may wait for a: no conflict
    for change in ({"jobs": {"release": 1}}, {"policy": {"priority": "none"}}):
        other = json.loads(path.read_text())
        if "jobs" in change:
            other["jobs"][2].update(change["jobs"])
        else:
            other["policy"] = change["policy"]
        assert plain_infeasibility(instance_from_dict(other, file="x")) is None


def test_simulate_names_the_conflict_and_writes_nothing(tmp_path: Path) -> None:
    path = _priority_against_after(tmp_path)
    out = tmp_path / "realized.json"
    r = CliRunner().invoke(main, ["simulate", str(path), "--policy", "fifo", "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert "no schedule exists: job c: strict priority (R9)" in r.stderr
    assert not out.exists()


def test_help_has_examples_of_real_commands() -> None:
    from planner.cli import EXAMPLES

    r = CliRunner().invoke(main, ["--help"])
    assert "Examples" in r.output
    lines = [ln.split() for ln in EXAMPLES.splitlines() if ln.strip().startswith("plan ")]
    assert len(lines) >= 5 and all(words[1] in main.commands for words in lines)


def test_help_examples_work_in_an_empty_folder(tmp_path: Path, monkeypatch) -> None:
    """An installed `plan` has no instances/: the examples make their own, and each runs
    on what the ones before it wrote (those on a trace need the user's; `plan bench` named
    instances/bench, which only a clone has)."""
    from planner.cli import EXAMPLES
    from planner.read import read_instance, read_schedule
    from planner.verify import verify

    monkeypatch.chdir(tmp_path)
    ran = []
    for line in EXAMPLES.splitlines():
        words = line.split()
        if not words or words[0] != "plan" or words[1] in ("import", "simulate"):
            continue
        r = CliRunner().invoke(main, words[1:])
        assert r.exit_code == 0, (line, r.output)
        ran.append(words[1])
    assert ran[0] == "generate" and {"solve", "check", "show", "bench"} <= set(ran)
    inst = read_instance("demo.json")
    assert verify(inst, read_schedule("plan.json")) == []
    assert Path("gantt.csv").stat().st_size > 0 and Path("gantt.html").stat().st_size > 0
    assert "verified" in Path("results.csv").read_text().splitlines()[0]


def test_models_never_cuts_a_model_name() -> None:
    r = CliRunner().invoke(main, ["models"], terminal_width=60, env={"COLUMNS": "60"})
    assert "shufflenet_v2_x1_0" in r.output


def test_job_table_says_why_each_job_waited() -> None:
    from planner.read import instance_from_dict
    from planner.schedule import Assignment, Placement, Schedule
    from planner.verify import verify
    from planner.waits import job_rows

    inst = instance_from_dict(
        {
            "name": "why",
            "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 4}]},
            "policy": {"priority": "strict"},
            "jobs": [
                {"id": "held", "duration": 5, "gpus": 4},
                {"id": "next", "duration": 3, "gpus": 1, "after": ["held"]},
                {"id": "big", "duration": 2, "gpus": 4, "priority": 1},
                {"id": "low", "duration": 2, "gpus": 4},
                {"id": "late", "duration": 1, "gpus": 1, "release": 30},
            ],
            "reservations": [{"id": "r", "start": 0, "end": 10, "nodes": ["n-0"], "for": None}],
        },
        file="why",
    )
    all_gpus = (Placement("n-0", (0, 1, 2, 3)),)
    sched = Schedule(
        "why",
        "hand",
        "feasible",
        jobs=(
            Assignment("big", 10, 12, all_gpus),
            Assignment("held", 12, 17, all_gpus),
            Assignment("next", 17, 20, (Placement("n-0", (0,)),)),
            Assignment("low", 20, 22, all_gpus),
            Assignment("late", 30, 31, (Placement("n-0", (1,)),)),
        ),
    )
    assert verify(inst, sched) == []
    why = {r.job: (r.wait, r.why) for r in job_rows(inst, sched)}
    assert why == {
        "big": (10, "reservation r"),
        "held": (12, "capacity (big ended)"),
        "next": (17, "predecessor held"),
        "low": (20, "capacity (next ended)"),
        "late": (0, ""),
    }


def test_a_job_held_only_by_the_present_is_not_said_to_wait_for_capacity(
    tmp_path: Path,
) -> None:
    """An added job, released at 0, starts at `now` (50) on a GPU free all along: the
    table said "capacity" (planner/waits.py)."""
    from planner.read import read_instance
    from planner.schedule import schedule_from_dict
    from planner.verify import verify
    from planner.waits import job_rows

    doc = {
        "version": 1,
        "name": "now",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]},
        "jobs": [{"id": "a", "duration": 100, "gpus": 1}],
    }
    inst, plan, changes = tmp_path / "i.json", tmp_path / "s.json", tmp_path / "c.json"
    inst.write_text(json.dumps(doc))
    changes.write_text(json.dumps({"add": [{"id": "x", "duration": 10, "gpus": 1}]}))
    runner = CliRunner()
    r = runner.invoke(main, ["solve", str(inst), "--solver", "greedy", "-o", str(plan)])
    assert r.exit_code == 0, r.output
    out, live = tmp_path / "r.json", tmp_path / "live.json"
    args = ["replan", str(inst), str(plan), "--now", "50", "--changes", str(changes)]
    r = runner.invoke(main, [*args, "--solver", "greedy", "-o", str(out), "--live", str(live)])
    assert r.exit_code == 0, r.output
    state, sched = read_instance(live), schedule_from_dict(json.loads(out.read_text()))
    assert verify(state, sched) == []
    why = {row.job: (row.start, row.wait, row.why) for row in job_rows(state, sched)}
    assert why["x"] == (50, 50, "the present (now 50)")
    assert "the present (now 50)" in r.stdout


def test_a_job_held_for_its_groups_partner_names_the_group() -> None:
    """`g` (released 0) starts at 500 with `p`, released then, on a node idle all along:
    the table said "capacity" (planner/waits.py)."""
    from planner.durations import group_member_durations
    from planner.read import instance_from_dict
    from planner.schedule import Assignment, Group, Placement, Schedule
    from planner.verify import verify
    from planner.waits import job_rows

    inst = instance_from_dict(
        {
            "name": "partner",
            "cluster": {"nodes": [{"name": "v100", "count": 1, "gpus": 8, "gpu_type": "V100"}]},
            "interleaving": {"enabled": True, "max_group": 2},
            "jobs": [
                {"id": "g", "model": "gpt2", "gpus": 4, "iterations": 400},
                {"id": "p", "model": "dqn", "gpus": 4, "iterations": 400, "release": 500},
            ],
        },
        file="partner",
    )
    ends = group_member_durations(inst, inst.jobs)
    where = (Placement("v100-0", (0, 1, 2, 3)),)
    sched = Schedule(
        "partner",
        "hand",
        "feasible",
        jobs=(
            Assignment("g", 500, 500 + ends[0], where, group="g1"),
            Assignment("p", 500, 500 + ends[1], where, group="g1"),
        ),
        groups=(Group("g1", ("g", "p")),),
    )
    assert verify(inst, sched) == []
    why = {r.job: (r.wait, r.why) for r in job_rows(inst, sched)}
    assert why == {"g": (500, "group g1 (p released)"), "p": (0, "")}


def test_a_live_states_running_and_done_jobs_started_before_now(tmp_path: Path) -> None:
    """A done or running job of a live state started when it did as given: the table
    said it waited for "capacity" on an idle cluster (planner/waits.py)."""
    from planner.read import read_instance
    from planner.schedule import schedule_from_dict
    from planner.verify import verify
    from planner.waits import job_rows

    doc = {
        "version": 1,
        "name": "history",
        "now": 50,
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 4}]},
        "jobs": [
            {
                "id": "d",
                "duration": 20,
                "gpus": 1,
                "state": "done",
                "started": 10,
                "ended": 30,
                "placement": [{"node": "n-0", "gpus": [0]}],
            },
            {
                "id": "r",
                "duration": 100,
                "gpus": 1,
                "state": "running",
                "started": 20,
                "placement": [{"node": "n-0", "gpus": [1]}],
            },
            {"id": "w", "duration": 10, "gpus": 1},
        ],
    }
    inst, out = tmp_path / "live.json", tmp_path / "s.json"
    inst.write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["solve", str(inst), "--solver", "greedy", "-o", str(out)])
    assert r.exit_code == 0, r.output
    state, sched = read_instance(inst), schedule_from_dict(json.loads(out.read_text()))
    assert verify(state, sched) == []
    why = {row.job: (row.wait, row.why) for row in job_rows(state, sched)}
    assert why == {
        "d": (10, "started before now"),
        "r": (20, "started before now"),
        "w": (50, "the present (now 50)"),
    }


def test_job_table_names_a_price_drop_when_energy_cost_is_the_objective() -> None:
    from planner.read import instance_from_dict
    from planner.schedule import Assignment, Placement, Schedule
    from planner.verify import verify
    from planner.waits import job_rows

    doc = {
        "name": "price",
        "cluster": {
            "nodes": [{"name": "n", "count": 2, "gpus": 1, "gpu_busy_w": 300}],
            "power_price": [{"start": 0, "end": 10, "price": 1.0},
                            {"start": 10, "end": 20, "price": 0.5}],
        },
        "objective": ["energy_cost"],
        "jobs": [
            {"id": "first", "duration": 10, "gpus": 1},
            {"id": "after", "duration": 2, "gpus": 1},
            {"id": "held", "duration": 4, "gpus": 1},
        ],
    }  # fmt: skip
    sched = Schedule(
        "price",
        "hand",
        "feasible",
        jobs=(
            Assignment("first", 0, 10, (Placement("n-0", (0,)),)),
            Assignment("after", 10, 12, (Placement("n-0", (0,)),)),
            Assignment("held", 10, 14, (Placement("n-1", (0,)),)),
        ),
    )
    inst = instance_from_dict(doc, file="price")
    assert verify(inst, sched) == []
    why = {r.job: r.why for r in job_rows(inst, sched)}
    # a job ending on its node is named first; nothing but the price held `held` back
    assert why == {"first": "", "after": "capacity (first ended)", "held": "price (drops to 0.5)"}
    plain = instance_from_dict({**doc, "objective": ["makespan"]}, file="price")
    assert {r.job: r.why for r in job_rows(plain, sched)}["held"] == "capacity"


def test_solve_prints_the_job_table_for_small_instances() -> None:
    r = CliRunner().invoke(main, ["solve", str(HOSTILE / "good.json"), "--solver", "greedy"])
    assert r.exit_code == 0 and "why it waited" in r.stdout
    assert "the schedule was not written" in r.stderr


def test_live_line_shows_elapsed_over_limit_between_reports() -> None:
    from planner.cli.terminal import StatusLine
    from planner.solvers import Progress

    line = StatusLine(limit_s=30)
    assert str(line.__rich__()).strip().endswith("/ 30s  solving…")
    line.last = Progress(incumbent=200.0, bound=150.0)
    text = str(line.__rich__())
    assert "/ 30s" in text and "gap 25.00%" in text


def test_live_bound_never_exceeds_the_final_one() -> None:
    """One consistent gap: the bound the live line shows follows the final lower bound's
    rule (the larger of planner.bounds and the solver's own bound when that is a proof).
    The demo's CP-SAT model has pruned candidate groups, so its own bound is no proof."""
    from planner.read import read_instance
    from planner.solvers import SolveOptions
    from planner.solvers.cpsat import solve_cpsat
    from planner.solvers.options import Progress
    from planner.verify import verify

    inst = read_instance(DEMO)
    seen: list[Progress] = []
    sched = solve_cpsat(inst, SolveOptions(time_limit=3, progress=seen.append))
    assert sched.status in ("optimal", "feasible") and verify(inst, sched) == []
    first = inst.objective[0]
    assert sched.lower_bound is not None
    shown = [p.bound for p in seen if p.message == first]
    assert shown and all(b is not None and b <= sched.lower_bound[first] for b in shown)


def test_job_table_gives_a_preempted_jobs_nodes_and_counts_in_turn(tmp_path: Path) -> None:
    """The table gave a resumed job its first segment's node with its last end."""
    from show_cases import SCHEDULE, write_case

    from planner.read import read_instance
    from planner.schedule import schedule_from_dict
    from planner.verify import verify
    from planner.waits import _in_turn, job_rows

    inst = read_instance(write_case(tmp_path)[0])
    sched = schedule_from_dict(SCHEDULE)  # a: n-0 from 0 to 40, then n-1 from 60 to 90
    assert verify(inst, sched) == []
    rows = {r.job: r for r in job_rows(inst, sched)}
    assert (rows["a"].nodes, rows["a"].gpus, rows["a"].end) == ("n-0 → n-1", "2", 90)
    assert _in_turn(["2", "1"]) == "2 → 1" and _in_turn(["x", "x"]) == "x"
    assert _in_turn(["n-0", "n-0", "n-1", "n-0"]) == "n-0 → n-1 → n-0"
    assert (rows["g1"].nodes, rows["g1"].gpus, rows["g1"].group) == ("n-1", "2", "G")
    assert rows["b"].nodes == "n-0,n-1" and rows["d"].group == ""


def test_the_readme_python_block_runs_as_written(tmp_path: Path, monkeypatch) -> None:
    """README, "From Python": the block runs from a clone's top folder and writes the plan
    and its Gantt CSV, which `planner.verify` accepts as read back."""
    import os
    import re

    from planner.read import read_instance
    from planner.schedule import schedule_from_dict
    from planner.verify import verify

    top = DEMO.parent.parent
    text = (top / "README.md").read_text()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    block = block.replace('"instances/demo.json"', repr(os.fspath(DEMO)))
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert verify(read_instance(DEMO), schedule_from_dict(doc)) == []
    assert (tmp_path / "plan.csv").read_text().startswith("job,")
