"""`plan show`, `plan solve --show` and `plan bench --report`: the records drawn, the files
written, bad input. The pictures in a real browser are tested in test_show_browser.py."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from show_cases import INSTANCE, SCHEDULE, rows, write_case

from planner.cli import main
from planner.instance import Instance
from planner.metrics import metrics
from planner.read import read_instance
from planner.schedule import schedule_from_dict, schedule_to_dict
from planner.show.data import NO_GPU, ShowData, show_data
from planner.show.report import performance_profile, ratio
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "instances" / "demo.json"
TINY = ROOT / "tests" / "data" / "bench"


def run(*args: Any) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), (
        r.exception
    )
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def case(tmp_path: Path) -> tuple[Instance, ShowData]:
    inst_path, _ = write_case(tmp_path)
    inst = read_instance(inst_path)
    return inst, show_data(SCHEDULE, inst)


def test_the_hand_written_schedule_is_valid(case: tuple[Instance, ShowData]) -> None:
    inst, _ = case
    sched = schedule_from_dict(SCHEDULE)
    assert verify(inst, sched) == []
    got = metrics(inst, sched)
    assert {k: got[k] for k in SCHEDULE["metrics"]} == SCHEDULE["metrics"]


def test_one_bar_per_job_segment_and_node(case: tuple[Instance, ShowData]) -> None:
    _, data = case
    got = {(b.job, b.segment, "" if b.node == NO_GPU else b.node) for b in data.bars}
    assert len(data.bars) == len(rows(SCHEDULE)) == 8
    assert got == rows(SCHEDULE)
    second = next(b for b in data.bars if b.job == "a" and b.segment == 1)
    assert (second.node, second.gpus, second.start, second.end) == ("n-1", (2, 3), 60, 90)
    # GPU g of node n-1 sits on row offset + g; the lanes keep the instance's node order.
    assert [lane.node for lane in data.lanes] == ["n-0", "n-1", NO_GPU]
    n1 = data.lanes[1]
    assert second.runs == ((n1.offset + 2, n1.offset + 3),)


def test_group_members_share_a_colour_and_solo_jobs_differ(
    case: tuple[Instance, ShowData],
) -> None:
    _, data = case
    key = {b.job: b.key for b in data.bars}
    assert key["g1"] == key["g2"]
    assert data.colours[key["g1"]] != data.colours[key["d"]]
    assert key["a"] == key["d"] == "solo"


def test_colour_by_tenant_and_priority(case: tuple[Instance, ShowData]) -> None:
    inst, _ = case
    by_tenant = {b.job: b.key for b in show_data(SCHEDULE, inst, "tenant").bars}
    assert by_tenant["g1"] == by_tenant["a"] == "tenant t1"
    assert by_tenant["g2"] == by_tenant["b"] == "tenant t2"
    by_prio = show_data(SCHEDULE, inst, "priority")
    keys = {b.job: b.key for b in by_prio.bars}
    assert keys["a"] == "priority 1" and keys["d"] == "priority 0"
    assert by_prio.colours["priority 1"] != by_prio.colours["priority 0"]


@pytest.mark.parametrize("colour_by", ["priority", "tenant", "gpus"])  # groups: no legend
def test_the_legend_names_every_colour_drawn(
    case: tuple[Instance, ShowData], colour_by: str
) -> None:
    """Tenant t2's bars all follow another bar on their rows, so all have the second
    shade: the page's legend had only "tenant t1" where the PNG had both (show/html.py)."""
    from planner.show.html import figure

    inst, _ = case
    data = show_data(SCHEDULE, inst, colour_by)
    fig = figure(data)
    named = [t.name for t in fig.data if t.meta == "bars" and t.showlegend]
    assert sorted(named) == sorted({b.key for b in data.bars}), named


@pytest.mark.parametrize("levels", [2, 7, 10, 40])
def test_each_priority_level_has_a_colour_of_its_own(levels: int) -> None:
    # taken from a ramp of seven, levels 0 and 1 of ten were one colour (show/colours.py)
    from types import SimpleNamespace

    from planner.read import instance_from_dict
    from planner.show.colours import colour_keys

    doc = {
        "name": "levels",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 1}]},
        "jobs": [{"id": f"j{k}", "duration": 1, "gpus": 1, "priority": k} for k in range(levels)],
    }
    inst = instance_from_dict(doc, file="levels")
    bars = [SimpleNamespace(job=f"j{k}", group=None) for k in range(levels)]
    keys, colours = colour_keys(bars, inst, "priority")
    assert keys == [f"priority {k}" for k in range(levels)]
    assert len({colours[k] for k in keys}) == levels


def test_colour_by_gpu_count(case: tuple[Instance, ShowData]) -> None:
    """Each bar takes the count its segment runs at (all its nodes' GPUs), as an elastic
    job's chosen count (contract §12) would show; counts differ in colour."""
    inst, _ = case
    expected: dict[tuple[str, int], int] = {}
    for entry in SCHEDULE["jobs"]:
        for i, seg in enumerate(entry.get("segments") or [entry]):
            expected[(entry["id"], i)] = sum(len(p["gpus"]) for p in seg["placement"])
    data = show_data(SCHEDULE, inst, "gpus")
    assert data.bars
    for b in data.bars:
        count = expected[(b.job, b.segment)]
        assert b.key == ("1 GPU" if count == 1 else f"{count} GPUs")
    assert len(set(data.colours.values())) == len({b.key for b in data.bars})


def _at(curve: Any, t: float) -> float:
    value = 0.0
    for time, v in zip(curve.times, curve.values, strict=True):
        if time <= t:
            value = v
    return value


def test_without_the_instance_the_curve_says_it_is_a_share_of_the_gpus_drawn(
    case: tuple[Instance, ShowData],
) -> None:
    # the cluster's size is unknown without the instance: the curve is not contract §6's
    # gpu_utilization (busy / cluster GPUs x makespan) and is named for what it is
    _, with_instance = case
    assert with_instance.utilisation.name == "GPU utilisation"
    drawn = show_data(SCHEDULE, None)
    gpus = sum(lane.rows for lane in drawn.lanes if lane.node != NO_GPU)
    assert drawn.utilisation.name == f"share of the {gpus} GPUs drawn"
    assert "a share of the GPUs drawn" in dict(drawn.header)["instance"]


def test_utilisation_counts_a_groups_gpus_once(case: tuple[Instance, ShowData]) -> None:
    _, data = case
    # t=10: a (2 GPUs), group G (2 shared GPUs), d (2) -> 6 of 8
    assert _at(data.utilisation, 10) == pytest.approx(6 / 8)
    # t=45: a's first segment is over, G and d run -> 4; t=55: only G -> 2; t=70: G and a -> 4
    assert _at(data.utilisation, 45) == pytest.approx(4 / 8)
    assert _at(data.utilisation, 55) == pytest.approx(2 / 8)
    assert _at(data.utilisation, 70) == pytest.approx(4 / 8)
    assert _at(data.utilisation, 120) == pytest.approx(1.0)
    assert _at(data.utilisation, 150) == 0.0


def test_pool_usage_and_reservations(case: tuple[Instance, ShowData]) -> None:
    _, data = case
    used, held = data.pools
    assert _at(used, 10) == pytest.approx(0.7)  # c (3) and d (4) of 10
    assert _at(used, 40) == pytest.approx(0.4)
    assert _at(held, 10) == pytest.approx(0.2)
    assert _at(held, 60) == 0.0
    (box,) = data.boxes
    lane = data.lanes[0]
    assert (box.id, box.start, box.end, box.rows) == (
        "maint",
        160,
        200,
        (lane.offset + 2, lane.offset + 3),
    )
    assert data.span == 200


@pytest.mark.parametrize("horizon", [None, 20000])
def test_a_node_down_for_good_does_not_stretch_the_time_axis(
    tmp_path: Path, horizon: int | None
) -> None:
    # `plan replan` marks the node down up to the horizon (the instance's, or one it sets,
    # + 1: 16,502 here), and the axis ran there: the plan, ending at 3,000, filled 15-18%
    # of the chart (show/data.py).
    doc: dict[str, Any] = {
        "version": 1,
        "name": "down",
        "cluster": {"nodes": [{"name": "n", "count": 8, "gpus": 1}]},
        "jobs": [{"id": f"j{i}", "duration": 1000, "gpus": 1} for i in range(16)],
        **({"horizon": horizon} if horizon else {}),
    }
    inst, plan, changes = tmp_path / "i.json", tmp_path / "s.json", tmp_path / "c.json"
    inst.write_text(json.dumps(doc))
    changes.write_text(json.dumps({"nodes_down": ["n-7"]}))
    assert run("solve", inst, "--solver", "greedy", "-o", plan)[0] == 0
    replanned, live = tmp_path / "r.json", tmp_path / "live.json"
    args = ("--now", 500, "--changes", changes, "--solver", "greedy")
    assert run("replan", inst, plan, *args, "-o", replanned, "--live", live)[0] == 0
    doc = json.loads(replanned.read_text())
    live_instance = read_instance(live)
    assert verify(live_instance, schedule_from_dict(doc)) == []
    (mark,) = live_instance.reservations
    assert live_instance.horizon is not None and mark.end >= live_instance.horizon
    data = show_data(doc, live_instance)
    assert data.span == doc["metrics"]["makespan"] == 3000
    (box,) = data.boxes
    assert (box.start, box.end) == (500, 3000)


def test_a_reservation_past_the_horizon_after_the_plan_is_drawn_whole(tmp_path: Path) -> None:
    # cut to the end of the rest, one starting after it had no width left and stretched
    # the axis to its start; and the page left its axis to plotly, which ran it to the
    # end of a pool reservation past the horizon (show/data._fit_axis, show/html.py)
    from planner.show.html import figure

    doc = copy.deepcopy(INSTANCE)
    doc["horizon"] = 86400
    doc["reservations"][0].update(start=50000, end=90000)
    doc["reservations"][1].update(end=10**6)
    inst_path = tmp_path / "i.json"
    inst_path.write_text(json.dumps(doc))
    inst = read_instance(inst_path)
    assert verify(inst, schedule_from_dict(SCHEDULE)) == []
    data = show_data(SCHEDULE, inst)
    (box,) = data.boxes
    assert (box.start, box.end) == (50000, 90000) and data.span == 90000
    assert list(figure(data).layout.xaxis.range) == [0, 90000 * 1.01]


def test_pool_curves_have_a_colour_each_and_no_flat_held_line(tmp_path: Path) -> None:
    # job shop and RCPSP charts: four colours in turn for a dozen pools, and a flat
    # "held by reservations" line for every pool nothing reserves (show/data.py, html.py)
    from planner.show.html import figure

    doc = copy.deepcopy(INSTANCE)
    doc["cluster"]["pools"] = {**doc["cluster"]["pools"], **{f"m{k}": 4 for k in range(8)}}
    for k, job in enumerate(doc["jobs"]):
        job["demand"] = {**job.get("demand", {}), f"m{k}": 1}
    inst_path = tmp_path / "i.json"
    inst_path.write_text(json.dumps(doc))
    inst = read_instance(inst_path)
    assert verify(inst, schedule_from_dict(SCHEDULE)) == []
    data = show_data(SCHEDULE, inst)
    names = [c.name for c in data.pools]
    assert [n for n in names if "held" in n] == ["power_kw held by reservations"]
    assert len(names) == 9 + 1
    fig = figure(data)
    used = [t.line.color for t in fig.data if str(t.name).endswith(" in use")]
    assert len(used) == 9 and len(set(used)) == 9


def test_hover_text_names_everything(case: tuple[Instance, ShowData]) -> None:
    _, data = case
    text = next(b.text for b in data.bars if b.job == "a" and b.segment == 1)
    assert "<b>a</b> (segment 1)" in text
    assert "n-1 GPU 2-3: start 60, end 90 s" in text
    assert "JCT 90 s" in text and "deadline 300" in text and "release 0" in text
    g2 = next(b.text for b in data.bars if b.job == "g2")
    assert "vgg16, 2 GPU(s)" in g2 and "group G: g1, g2" in g2 and "JCT 60 s" in g2
    assert "(segment" not in g2


def test_without_instance_the_schedule_is_still_drawn() -> None:
    data = show_data(SCHEDULE, None, "tenant")
    assert {(b.job, b.segment) for b in data.bars} >= {("a", 0), ("a", 1), ("c", 0)}
    assert set(data.colours) == {"unknown"} and not data.boxes and not data.pools
    assert [lane.node for lane in data.lanes] == ["n-0", "n-1", NO_GPU]


def test_plan_show_writes_a_self_contained_page_and_a_png(tmp_path: Path) -> None:
    _, sched = write_case(tmp_path)
    page, png = tmp_path / "out" / "g.html", tmp_path / "out" / "g.png"
    code, _, err = run("show", sched, "-o", page, "--png", png, "--colour-by", "tenant")
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert "<script src=" not in text and "<link" not in text
    assert "Plotly.newPlot" in text and "tenant t1" in text
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plan_show_draws_a_schedule_that_breaks_the_rules(tmp_path: Path) -> None:
    inst_path, _ = write_case(tmp_path)
    doc = copy.deepcopy(SCHEDULE)
    doc["jobs"][5]["placement"] = [{"node": "n-0", "gpus": [0, 1]}]  # d on a's GPUs
    inst = read_instance(inst_path)
    assert {v.rule for v in verify(inst, schedule_from_dict(doc))} >= {"R6"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = run("show", bad, "--instance", inst_path, "-o", tmp_path / "g.html")
    assert code == 0, err


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["jobs"][0].update(segments="soon"), "jobs[0].segments"),
        (lambda d: d["jobs"][0]["segments"][1].pop("end"), "jobs[0].segments[1].end"),
        (lambda d: d["jobs"][2].update(placement=[{"node": 3}]), "jobs[2].placement[0]"),
    ],
)
def test_bad_schedule_exits_2_naming_the_path(tmp_path: Path, change: Any, path: str) -> None:
    doc = copy.deepcopy(SCHEDULE)
    change(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    page = tmp_path / "g.html"
    code, _, err = run("show", bad, "-o", page)
    assert code == 2 and path in err and str(bad) in err
    assert not page.exists()


def test_plan_show_checks_its_outputs_before_drawing(tmp_path: Path) -> None:
    _, sched = write_case(tmp_path)
    before = sched.read_bytes()
    page, blocker = tmp_path / "g.html", tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = run("show", sched, "-o", page, "--png", blocker / "g.png")
    assert code == 2 and str(blocker / "g.png") in err and not page.exists()
    both = tmp_path / "g"  # a name neither a page's nor a picture's (check_pictures)
    code, _, err = run("show", sched, "-o", both, "--png", both)
    assert code == 2 and "same file" in err and not both.exists()
    code, _, err = run("show", sched, "-o", sched)
    assert code == 2 and "input file" in err and sched.read_bytes() == before


@pytest.mark.parametrize(
    ("text", "message"),
    [('{"jobs": [NaN]}', "NaN"), ("[" * 100_000, "nested deeper"), (b"\xff{}", "UTF-8")],
)
def test_plan_show_reads_through_the_safe_reader(
    tmp_path: Path, text: str | bytes, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    page = tmp_path / "g.html"
    code, _, err = run("show", bad, "-o", page)
    assert code == 2 and message in err and str(bad) in err and not page.exists()


def test_plan_solve_show_is_one_of_its_outputs(tmp_path: Path) -> None:
    out, blocker = tmp_path / "s.json", tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = run("solve", DEMO, "--solver", "greedy", "-o", out, "--show", blocker / "g")
    assert code == 2 and str(blocker / "g") in err and not out.exists()
    code, _, err = run("solve", DEMO, "--solver", "greedy", "-o", out, "--show", out)
    assert code == 2 and "same file" in err and not out.exists()


def test_plan_show_needs_an_output(tmp_path: Path) -> None:
    _, sched = write_case(tmp_path)
    code, _, err = run("show", sched)
    assert code == 2 and "-o" in err


@pytest.mark.parametrize(
    "command",
    [
        ["solve", "{i}", "--solver", "greedy"],
        ["replan", "{i}", "{d}/plan.json", "--now", "100", "--live", "{d}/live.json"],
        ["simulate", "{i}", "--policy", "fifo"],  # wrote nothing and said "wrote"
    ],
)
def test_show_writes_the_page_of_what_the_command_made(tmp_path: Path, command: list[str]) -> None:
    run("solve", DEMO, "--solver", "greedy", "-o", tmp_path / "plan.json")
    out, page = tmp_path / "s.json", tmp_path / "g.html"
    args = [a.format(i=DEMO, d=tmp_path) for a in command]
    code, _, err = run(*args, "-o", out, "--show", page)
    assert code == 0, err
    assert f"wrote {page}" in " ".join(err.split())
    doc = json.loads(out.read_text(encoding="utf-8"))
    instance = tmp_path / "live.json" if command[0] == "replan" else DEMO
    assert not verify(read_instance(instance), schedule_from_dict(doc))
    text = page.read_text(encoding="utf-8")
    start = text.index('id="gantt-bars">') + len('id="gantt-bars">')
    bars = json.loads(text[start : text.index("</script>", start)])
    texts = ["<br>".join(bars["L"][k] for k in t) for t in bars["t"]]  # lines by number
    named = {t.split("</b>")[0].removeprefix("<b>") for t in texts}
    assert named == {j["id"] for j in doc["jobs"]}  # every job has its hover text


def test_ratio_and_performance_profile() -> None:
    per = {"A": {"i1": 10.0, "i2": 20.0, "i3": 0.0}, "B": {"i1": 12.0, "i2": 10.0}}
    profile = performance_profile(per, ["A", "B"], ["i1", "i2", "i3"])
    # best: i1 10 (A), i2 10 (B), i3 0 (A; B has no verified schedule there)
    assert profile["A"] == [(1.0, 1 / 3), (1.0, 2 / 3), (2.0, 1.0)]
    assert profile["B"] == [(1.0, 1 / 3), (1.2, 2 / 3)]
    assert ratio(0.0, 0.0) == 1.0 and math.isinf(ratio(1.0, 0.0))
    # a negative best (energy_cost under negative prices): the relative gap, not inf
    assert ratio(-8.0, -8.0) == 1.0 and ratio(-4.0, -8.0) == 1.5 and ratio(2.0, -8.0) == 2.25
    neg = {"A": {"i1": -8.0}, "B": {"i1": -4.0}}
    assert performance_profile(neg, ["A", "B"], ["i1"])["B"] == [(1.5, 1.0)]


def test_plan_bench_report(tmp_path: Path) -> None:
    report, results = tmp_path / "r.html", tmp_path / "r.csv"
    code, _, err = run(
        "bench", TINY, "--solvers", "greedy:fifo,greedy:srsf", "--workers", "1",
        "--time-limit", "5", "-o", results, "--report", report,
    )  # fmt: skip
    assert code == 0, err
    text = report.read_text(encoding="utf-8")
    assert "performance profile" in text and "solve time against instance size" in text
    table = text[text.index('<table class="rows">') :]
    assert table.count("<tr>") == 1 + 2 * len(list(TINY.glob("*.json")))  # header + rows
    assert "<script src=" not in text


def test_shades_alternate_along_a_row_and_groups_share_one(
    case: tuple[Instance, ShowData],
) -> None:
    _, data = case
    shade = {(b.job, b.segment, b.node): b.shade for b in data.bars}
    assert shade[("g1", 0, "n-1")] == shade[("g2", 0, "n-1")]
    # On GPUs 0-1 of n-0: a's first segment, then b
    assert shade[("b", 0, "n-0")] == 1 - shade[("a", 0, "n-0")]
    # On GPUs 0-1 of n-1: the group, then b
    assert shade[("b", 0, "n-1")] == 1 - shade[("g1", 0, "n-1")]


def _facts(page: Path) -> str:
    """The header table of a `plan show` page."""
    text = page.read_text(encoding="utf-8")
    start = text.index('<table class="facts">')
    return text[start : text.index("</table>", start)]


@pytest.mark.parametrize(
    ("field", "value", "path", "problem"),
    [
        ("metrics", {"makespan": "x", "avg_jct": 5}, "metrics.makespan", "got string"),
        ("metrics", {"makespan": None, "avg_jct": 5}, "metrics.makespan", "got null"),
        ("metrics", {"makespan": {"a": 1}, "avg_jct": 5}, "metrics.makespan", "got object"),
        ("metrics", {"makespan": True, "avg_jct": 5}, "metrics.makespan", "got boolean"),
        ("metrics", {"makespan": 10**400, "avg_jct": 5}, "metrics.makespan", "too large"),
        ("metrics", [1], "metrics", "expected an object, got array"),
        ("metrics", "x", "metrics", "expected an object, got string"),
        ("objective", [1, 2], "objective", "expected an object, got array"),
        ("objective", "x", "objective", "expected an object, got string"),
        ("objective", {"total_weighted_jct": "x"}, "objective.total_weighted_jct", "string"),
        ("objective", {"total_weighted_jct": None}, "objective.total_weighted_jct", "null"),
        ("lower_bound", {"total_weighted_jct": "x"}, "lower_bound.total_weighted_jct", "string"),
    ],
)
def test_a_bad_objective_bound_or_metric_is_left_out_of_the_header(
    tmp_path: Path, field: str, value: Any, path: str, problem: str
) -> None:
    """`plan check` and `plan export` ignore these informational fields, so `plan show`
    draws the schedule, notes the bad value (file, JSON path, problem) and leaves it out
    of the header; the good values are still shown."""
    inst, _ = write_case(tmp_path)
    doc = {**copy.deepcopy(SCHEDULE), field: value}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert not verify(read_instance(inst), schedule_from_dict(doc))  # check accepts it
    page, png = tmp_path / "g.html", tmp_path / "g.png"
    code, _, err = run("show", bad, "--instance", inst, "-o", page, "--png", png)
    assert code == 0, err
    assert f"{bad}: {path}: expected " in err and problem in err and "left out" in err
    facts = _facts(page)
    assert png.read_bytes()[:4] == b"\x89PNG"
    if field == "metrics":
        assert "makespan" not in facts
        assert ("avg_jct" in facts) == isinstance(value, dict)
        assert "objective total_weighted_jct</td><td>470 (bound 400, gap 14.89%)" in facts
    elif field == "objective":
        assert "objective" not in facts and "<td>makespan</td><td>150</td>" in facts
    else:
        assert "objective total_weighted_jct</td><td>470</td>" in facts  # no bound, no gap


def test_the_header_shows_large_figures_in_full_as_the_summary_does(tmp_path: Path) -> None:
    # a makespan of 1,234,567 ms was shown as 1.23457e+06 (rounded to 1,234,570)
    inst, _ = write_case(tmp_path)
    doc = copy.deepcopy(SCHEDULE)
    doc["metrics"] = {**doc["metrics"], "makespan": 1234567, "avg_jct": 2345678.25}
    doc["objective"] = {"total_weighted_jct": 12345678.0}
    doc["lower_bound"] = {"total_weighted_jct": 1234567.5}
    big = tmp_path / "big.json"
    big.write_text(json.dumps(doc), encoding="utf-8")
    page = tmp_path / "g.html"
    code, _, err = run("show", big, "--instance", inst, "-o", page)
    assert code == 0, err
    facts = _facts(page)
    assert "<td>makespan</td><td>1,234,567</td>" in facts
    assert "<td>avg_jct</td><td>2,345,678.25</td>" in facts
    assert "<td>12,345,678 (bound 1,234,567.50, gap 90.00%)</td>" in facts
    assert "e+" not in facts


def test_the_ratio_chart_gives_instances_of_one_file_name_a_position_each() -> None:
    # a/x.json and b/x.json were both drawn at "x"
    from planner.show.report import instance_labels

    labels = instance_labels(["a/x.json", "b/x.json", "c/y.json", "a/x.json"])
    assert labels == {"a/x.json": "a/x.json", "b/x.json": "b/x.json", "c/y.json": "y"}


def test_the_bench_report_gives_plotly_file_names_as_written() -> None:
    from planner.show.report import _ratio_figure, _time_figure

    per = {"greedy": {"R&amp;D/<b>x.json": 10.0}, "cpsat": {"R&amp;D/<b>x.json": 5.0}}
    ratio = _ratio_figure(per, "greedy", ["greedy", "cpsat"])
    assert list(ratio.data[1].x) == ["&lt;b&gt;x"]
    assert list(ratio.data[1].text) == ["R&amp;amp;D/&lt;b&gt;x.json"]
    row = {"instance": "<i>y</i>.json", "solver": "greedy", "wall_s": 1.0}
    assert list(_time_figure([row], {"<i>y</i>.json": 3}).data[0].text) == [
        "&lt;i&gt;y&lt;/i&gt;.json"
    ]


def test_the_bench_report_shows_large_objectives_in_full() -> None:
    from planner.show.report import rows_table

    row = {"instance": "a.json", "solver": "greedy", "objective_value": 1234567.0,
           "gap_to_bound": 0.0123456789, "wall_s": 0.5}  # fmt: skip
    table = rows_table([row])
    assert "<td>1,234,567</td>" in table and "<td>0.0123457</td>" in table
    assert "e+" not in table


@pytest.mark.parametrize("column", ["gap_to_bound", "objective_value", "avg_jct"])
@pytest.mark.parametrize("value", ["inf", "1e999", "-inf"])
def test_a_bench_report_of_an_edited_results_file_with_infinity_is_drawn(
    tmp_path: Path, column: str, value: str
) -> None:
    """The results reader takes "inf" (float()), and the report then stopped at
    "internal error: OverflowError" (exit 3) in `figures.figure`'s int()."""
    import csv as csv_module

    report, results = tmp_path / "r.html", tmp_path / "r.csv"
    args = ("bench", TINY, "--solvers", "greedy:fifo,greedy:srsf", "--workers", "1")
    assert run(*args, "--time-limit", "5", "-o", results)[0] == 0
    with results.open(newline="") as f:
        rows = list(csv_module.reader(f))
    assert {r[rows[0].index("verified")] for r in rows[1:]} == {"true"}
    rows[2][rows[0].index(column)] = value
    with results.open("w", newline="") as f:
        csv_module.writer(f, lineterminator="\n").writerows(rows)
    code, _, err = run(*args, "--time-limit", "5", "-o", results, "--report", report)
    assert code == 0 and report.stat().st_size > 0, err
    if column != "avg_jct":  # not a column of the report's table
        assert f"<td>{value.replace('1e999', 'inf')}</td>" in report.read_text(encoding="utf-8")


@pytest.mark.parametrize("at_segment", [False, True])
def test_a_placement_without_gpus_is_drawn_as_no_placement(
    tmp_path: Path, at_segment: bool
) -> None:
    """A placement item with an empty `gpus` list holds no GPU (`plan check` reports R5):
    it draws nothing, other items of the same placement keep their bars, and a placement
    of such items only is drawn in the `(no GPU)` lane."""
    inst, _ = write_case(tmp_path)
    doc = copy.deepcopy(SCHEDULE)
    if at_segment:  # a's first segment: no GPUs on n-0 (contract §8)
        doc["jobs"][0]["segments"][0]["placement"] = [{"node": "n-0", "gpus": []}]
    else:  # d: no GPUs on n-0, two on n-1
        doc["jobs"][5]["placement"] = [
            {"node": "n-0", "gpus": []},
            {"node": "n-1", "gpus": [2, 3]},
        ]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert "R5" in {v.rule for v in verify(read_instance(inst), schedule_from_dict(doc))}
    for given in (["--instance", inst], []):  # without the instance too
        page = tmp_path / "g.html"
        code, _, err = run("show", bad, *given, "-o", page, "--png", tmp_path / "g.png")
        assert code == 0, err
        assert page.exists()
    data = show_data(doc, None)
    job, segment = ("a", 0) if at_segment else ("d", 0)
    bars = {(b.node, b.gpus) for b in data.bars if (b.job, b.segment) == (job, segment)}
    assert bars == ({(NO_GPU, ())} if at_segment else {("n-1", (2, 3))})
    assert {lane.node for lane in data.lanes} == {"n-0", "n-1", NO_GPU}


@pytest.mark.parametrize(
    "command, fragment",
    [
        (["show", "{s}", "-o", "{d}/g.png"], "-o writes the HTML page; for a picture use --png"),
        (["show", "{s}", "--png", "{d}/g.HTML"], "--png writes a PNG picture"),
        (["solve", "{i}", "--solver", "greedy", "-o", "{d}/s.json", "--show", "{d}/g.png"],
         "--show writes the HTML page; for a picture use plan show SCHEDULE --png"),
        (["simulate", "{i}", "--policy", "fifo", "-o", "{d}/s.json", "--show", "{d}/g.png"],
         "--show writes the HTML page"),
    ],
)  # fmt: skip
def test_a_page_under_a_pictures_name_is_refused(
    tmp_path: Path, command: list[str], fragment: str
) -> None:
    # `-o g.png` wrote an HTML page under a picture's name; now exit 2 and nothing written
    inst, sched = write_case(tmp_path)
    args = [a.format(s=sched, i=inst, d=tmp_path) for a in command]
    code, _, stderr = run(*args)
    assert code == 2 and fragment in " ".join(stderr.split()), stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [inst.name, sched.name]


def _other_instance(tmp_path: Path, rename: str) -> Path:
    """The show case's instance with job `a` renamed to `rename` and another name."""
    doc = copy.deepcopy(INSTANCE)
    doc["name"] = "another"
    doc["jobs"][0]["id"] = rename
    path = tmp_path / "other.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["show", "export"])
def test_an_instance_without_the_schedules_jobs_is_refused(tmp_path: Path, command: str) -> None:
    """Drawn or exported with an instance that lacks its jobs, a schedule would get another
    instance's models and tenants: exit 2 naming the job, nothing written."""
    _, sched = write_case(tmp_path)
    other = _other_instance(tmp_path, "zz")
    out = tmp_path / ("g.html" if command == "show" else "g.csv")
    code, _, err = run(command, sched, "--instance", other, "-o", out)
    assert code == 2 and "jobs[0].id: job a is not in the instance" in err and str(other) in err
    assert not out.exists()


@pytest.mark.parametrize("command", ["show", "export"])
def test_a_recorded_instance_without_the_jobs_is_left_out(tmp_path: Path, command: str) -> None:
    """The instance file the schedule records was overwritten by another: drawn or exported
    without it, with a note."""
    inst, sched = write_case(tmp_path)
    inst.write_text(_other_instance(tmp_path, "zz").read_text(encoding="utf-8"))
    out = tmp_path / ("g.html" if command == "show" else "g.csv")
    code, _, err = run(command, sched, "-o", out)
    assert code == 0 and "job a is not in the instance" in err and "left out" in err
    if command == "export":
        assert {r.split(",")[8] for r in out.read_text().splitlines()[1:]} == {""}  # no model


@pytest.mark.parametrize("command", ["show", "export"])
def test_a_recorded_relative_path_is_found_from_the_schedules_folder(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schedule made in `sub/` records its instance as typed there, `../case-instance.json`;
    shown from another folder the instance was left out (only the cwd and the bare name
    beside the schedule were tried)."""
    _, sched = write_case(tmp_path)
    sub, elsewhere = tmp_path / "sub", tmp_path / "a" / "b"  # ../ from b is not tmp_path
    sub.mkdir()
    elsewhere.mkdir(parents=True)
    doc = json.loads(sched.read_text(encoding="utf-8"))
    doc["info"]["instance_file"] = "../case-instance.json"
    (sub / "s.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    out = tmp_path / ("g.html" if command == "show" else "g.csv")
    code, _, err = run(command, sub / "s.json", "-o", out)
    assert code == 0 and "left out" not in err, err
    if command == "export":
        assert "vgg16" in out.read_text()


@pytest.mark.parametrize("command", ["show", "export"])
def test_an_instance_typed_relative_to_another_folder_is_found_from_the_schedules(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan solve inst/i.json -o out/s.json` recorded only "inst/i.json": from `out/` or
    any other folder the instance was left out, with its tenants, models and priorities.
    A copy of the whole project, its instance edited, shows the copy's."""
    project = tmp_path / "proj"
    (project / "inst").mkdir(parents=True)
    (project / "out").mkdir()
    inst, _ = write_case(project / "inst")
    monkeypatch.chdir(project)
    typed = inst.relative_to(project)
    assert run("solve", typed, "--solver", "greedy", "-o", Path("out") / "s.json")[0] == 0
    doc = json.loads((project / "out" / "s.json").read_text())
    assert doc["info"]["instance_file"] == str(typed)
    assert doc["info"]["instance_relative"] == str(Path("..") / typed)
    assert verify(read_instance(inst), schedule_from_dict(doc)) == []
    copy_ = tmp_path / "copy"
    shutil.copytree(project, copy_)
    edited = json.loads((copy_ / typed).read_text())
    edited["jobs"][1]["tenant"] = "edited"
    (copy_ / typed).write_text(json.dumps(edited))
    for where, tenant in ((project, ",t1,"), (copy_, ",edited,")):
        for folder in (where / "out", tmp_path.parent):
            monkeypatch.chdir(folder)
            out = tmp_path / ("g.html" if command == "show" else "g.csv")
            code, _, err = run(command, where / "out" / "s.json", "-o", out)
            assert code == 0 and "no instance file" not in err, err
            if command == "export":
                assert tenant in out.read_text()


@pytest.mark.parametrize("recorded", ["x" * 300 + ".json", "a\u0000b.json"])
@pytest.mark.parametrize("command", ["show", "export"])
def test_a_recorded_path_that_cannot_be_looked_up_is_left_out(
    tmp_path: Path, command: str, recorded: str
) -> None:
    """The recorded instance is used when readable: a name too long for the file system
    was "internal error: OSError: [Errno 36] File name too long", exit 3."""
    _, sched = write_case(tmp_path)
    doc = json.loads(sched.read_text(encoding="utf-8"))
    doc["info"]["instance_file"] = recorded
    sched.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / ("g.html" if command == "show" else "g.csv")
    code, _, err = run(command, sched, "-o", out)
    assert code == 0 and "no instance file" in err and out.exists(), err


@pytest.mark.parametrize("command", ["show", "export"])
def test_a_recorded_instance_that_is_broken_is_left_out_with_a_note(
    tmp_path: Path, command: str
) -> None:
    """Used when readable (`--help`): a broken file of the recorded name was exit 2; given
    with --instance it still is."""
    inst, sched = write_case(tmp_path)
    inst.write_text("{", encoding="utf-8")
    out = tmp_path / ("g.html" if command == "show" else "g.csv")
    code, _, err = run(command, sched, "-o", out)
    assert code == 0 and "malformed JSON" in err and "instance left out" in err, err
    assert out.exists()
    out.unlink()
    assert run(command, sched, "--instance", inst, "-o", out)[0] == 2 and not out.exists()


@pytest.mark.parametrize("command", ["show", "export"])
def test_an_instance_of_another_name_is_used_with_a_note(tmp_path: Path, command: str) -> None:
    _, sched = write_case(tmp_path)
    other = _other_instance(tmp_path, "a")  # same jobs, another name
    out = tmp_path / ("g.html" if command == "show" else "g.csv")
    code, _, err = run(command, sched, "--instance", other, "-o", out)
    assert code == 0 and "plans instance 'show-case'" in err and "'another'" in err
    if command == "export":
        assert "vgg16" in out.read_text()


def test_hover_gives_the_count_each_segment_runs_at() -> None:
    """An elastic job (contract §12) runs at the size of its segment's placement, not at the
    first count its instance lists: the greedy plan of the demo runs some of them at
    another count, and each bar's hover names the count its own segment runs at."""
    from conftest import run_verified

    inst = read_instance(DEMO)
    sched = run_verified(inst, "greedy")
    doc = schedule_to_dict(sched, {}, {})
    data = show_data(doc, inst)
    placed = {
        (entry["id"], i): sum(len(p["gpus"]) for p in seg["placement"])
        for entry in doc["jobs"]
        for i, seg in enumerate(entry.get("segments") or [entry])
    }
    moved = [b for b in data.bars if placed[(b.job, b.segment)] != inst.job_by_id[b.job].gpus]
    assert moved, "the demo's greedy plan no longer runs an elastic job at another count"
    for b in data.bars:
        assert f", {placed[(b.job, b.segment)]} GPU(s), " in b.text, b.text


def test_without_instance_the_hover_leaves_the_jct_out() -> None:
    """JCT is end - release (contract §6); without the instance the release is unknown, so
    the hover leaves the JCT out rather than show the end as one."""
    data = show_data(SCHEDULE, None)
    assert data.bars
    for b in data.bars:
        assert "JCT" not in b.text and f"end {b.end}" in b.text


def test_a_placement_off_the_cluster_is_drawn_in_sight_with_a_note(tmp_path: Path) -> None:
    """`plan show` draws a schedule as given (README), but a GPU index past its node's
    count, or a node the instance does not have, is named in a note (file and JSON path),
    and its lane is widened so the bar is seen and counts in the utilisation as drawn."""
    inst_path, good = write_case(tmp_path)
    inst = read_instance(inst_path)
    doc = copy.deepcopy(SCHEDULE)
    doc["jobs"][0]["segments"][1]["placement"] = [{"node": "n-1", "gpus": [2, 9]}]
    doc["jobs"][5]["placement"] = [{"node": "zz-9", "gpus": [0, 1]}]
    assert {"R5"} <= {v.rule for v in verify(inst, schedule_from_dict(doc))}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = run("show", bad, "--instance", inst_path, "-o", tmp_path / "g.html")
    assert code == 0, err
    assert f"{bad}: jobs[0].segments[1].placement[0].gpus[1]: node n-1 has no GPU 9" in err
    assert f"{bad}: jobs[5].placement[0].node: node zz-9 is not in the instance" in err
    data = show_data(doc, inst)
    lane = {ln.node: ln for ln in data.lanes}
    bar = next(b for b in data.bars if b.job == "a" and b.segment == 1)
    assert max(r for _, r in bar.runs) < lane["n-1"].offset + lane["n-1"].rows
    assert lane["n-1"].rows == 10 and lane["zz-9"].rows == 2
    # The schedule as the instance has it is not noted.
    code, _, err = run("show", good, "--instance", inst_path, "-o", tmp_path / "h.html")
    assert code == 0 and "has no GPU" not in err and "not in the instance" not in err


def test_a_mistyped_gpu_index_under_a_whole_node_reservation_draws_in_bounded_memory(
    tmp_path: Path,
) -> None:
    """GPU 10^8 on a node a reservation covers whole: the box went over the widened lane
    row by row, 9 GB, and under a 3 GB cap `plan show` was "internal error: MemoryError"
    (exit 3); without the reservation the same file drew in 2 s (show/data._boxes)."""
    import resource
    import subprocess
    import sys

    doc = copy.deepcopy(INSTANCE)
    doc["reservations"][0].pop("gpus")
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps(doc))
    sched = copy.deepcopy(SCHEDULE)
    sched["jobs"][5]["placement"] = [{"node": "n-0", "gpus": [2, 10**8]}]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(sched))
    assert {"R5"} <= {v.rule for v in verify(read_instance(inst), schedule_from_dict(sched))}

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    out = tmp_path / "g.html"
    command = [sys.executable, "-m", "planner", "show", str(bad), "--instance", str(inst)]
    done = subprocess.run(
        [*command, "-o", str(out)], preexec_fn=cap, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0 and "has no GPU 100000000" in done.stderr, done.stderr
    assert out.stat().st_size > 0
    data = show_data(sched, read_instance(inst))
    (box,) = data.boxes
    lane = next(ln for ln in data.lanes if ln.node == "n-0")
    assert box.rows == (lane.offset, lane.offset + lane.rows - 1) and lane.rows == 10**8 + 1


def _named(tmp_path: Path, tenant: str, name: str, reservation: str, pool: str) -> Instance:
    """The show case with user-chosen names where the pictures draw them: the instance, a
    tenant, a reservation and the pool."""
    doc = copy.deepcopy(INSTANCE)
    doc["name"] = name
    doc["jobs"][0]["tenant"] = tenant
    doc["reservations"][0]["id"] = reservation
    doc["cluster"]["pools"] = {pool: 10}
    doc["reservations"][1]["pool"] = pool
    for job in doc["jobs"]:
        if "demand" in job:
            job["demand"] = {pool: job["demand"]["power_kw"]}
    path = tmp_path / "named.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return read_instance(path)


def test_the_png_draws_names_with_dollars_and_emoji_as_written(tmp_path: Path) -> None:
    """matplotlib reads text between two `$` as mathematics: an unknown command in a name
    was an internal error, and a glyph missing from its font a warning on stderr."""
    from planner.show.png import as_written, gantt_png, png_figure

    inst = _named(tmp_path, "$\\badcmd$ \U0001f680", "pay $5 or $6_x^2", "r$\\x$", "_p$\\y$")
    data = show_data({**SCHEDULE, "instance": inst.name}, inst, "tenant")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Glyph")
        warnings.filterwarnings("error", "No artists with labels")
        assert gantt_png(data)[:8] == b"\x89PNG\r\n\x1a\n"
    with as_written():
        fig = png_figure(data)
        FigureCanvasAgg(fig).draw()
        drawn = {t.get_text() for t in fig.findobj(Text)}
    assert fig.get_suptitle().startswith("pay $5 or $6_x^2: by hand")
    assert {"tenant $\\badcmd$ \U0001f680", "r$\\x$ (nobody)", "_p$\\y$ in use"} <= drawn


@pytest.mark.parametrize("name", ["power_kw", "p" * 75])
def test_the_pngs_pool_legend_names_a_lone_pool_and_keeps_the_panels_wide(
    tmp_path: Path, name: str
) -> None:
    # one pool and no pool reservation: one curve, and the legend (drawn only for two or
    # more) left it unnamed; a 75-character name beside the panel took 40% of the width
    from planner.show.png import as_written, png_figure

    doc = copy.deepcopy(INSTANCE)
    doc["reservations"] = doc["reservations"][:1]  # the GPU reservation only
    doc["cluster"]["pools"] = {name: 10}
    for job in doc["jobs"]:
        if "demand" in job:
            job["demand"] = {name: job["demand"]["power_kw"]}
    inst_path = tmp_path / "i.json"
    inst_path.write_text(json.dumps(doc))
    inst = read_instance(inst_path)
    assert verify(inst, schedule_from_dict(SCHEDULE)) == []
    data = show_data(SCHEDULE, inst)
    assert [c.name for c in data.pools] == [f"{name} in use"]
    with as_written():
        fig = png_figure(data)
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        legend = fig.axes[2].get_legend()
        assert legend is not None
        assert [t.get_text() for t in legend.get_texts()][0].startswith(name[:30])
        gantt = fig.axes[0].get_window_extent(renderer)
    assert gantt.width > 0.8 * fig.get_window_extent(renderer).width


def test_the_pngs_legend_leaves_the_title_line_in_sight(tmp_path: Path) -> None:
    """The title line holds the objective, bound and gap; a legend of several rows above
    the chart covered it."""
    from planner.show.png import as_written, png_figure

    doc = copy.deepcopy(SCHEDULE)
    inst = _named(tmp_path, "t1", "show-case", "maint", "power_kw")
    data = show_data(doc, inst, "tenant")
    more = {f"tenant number {k}": c for k, c in enumerate(list(data.colours.values()) * 10)}
    many = {**data.colours, **more}
    data = dataclasses.replace(data, colours=many)
    with as_written():
        fig = png_figure(data)
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        title = fig._suptitle.get_window_extent(renderer)  # type: ignore[union-attr]
        legend = fig.legends[0].get_window_extent(renderer)
        charts = [ax.get_window_extent(renderer) for ax in fig.axes]
    assert not title.overlaps(legend) and not any(c.overlaps(legend) for c in charts)


def test_the_page_gives_plotly_names_as_written(tmp_path: Path) -> None:
    """Plotly reads tags and entities in legends, tick labels and text: a tenant "<b>ops</b>"
    was drawn bold, "R&amp;D" as "R&D" (tests/test_show_browser.py sees the drawn text)."""
    from planner.show.html import figure

    inst = _named(tmp_path, "<b>ops</b>", "n", "R&amp;D", "p<br>q")
    fig = figure(show_data(SCHEDULE, inst, "tenant"))
    names = {t.name for t in fig.data}
    assert {"tenant &lt;b&gt;ops&lt;/b&gt;", "p&lt;br&gt;q in use"} <= names
    labels = [t for t in fig.data if t.name == "reservation labels"][0]
    assert list(labels.text) == ["R&amp;amp;D (nobody)"]
