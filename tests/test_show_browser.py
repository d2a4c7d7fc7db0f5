"""`plan show` pages in a real browser: headless Chromium (Debian's package) driven by
Playwright for Python. Assertions are on the rendered page: plotly's drawn traces, pixels
of the screenshot, the hover tooltip, console messages and network requests.

Skipped when Chromium or Playwright is missing, except in CI (`CI=true`), where that fails.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from show_cases import INSTANCE, SCHEDULE, rows, write_case

from planner.read import read_instance
from planner.show.colours import shaded
from planner.show.data import show_data

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _need(ok: bool, what: str) -> None:
    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing; CI must run the browser tests")
    pytest.skip(f"{what} is missing")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _need(CHROMIUM.exists(), str(CHROMIUM))
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need(False, "playwright (Python)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


class Rendered:
    """A page opened in the browser, with what it said and asked for."""

    def __init__(self, browser: Any, html: Path, width: int = 1400):
        self.page = browser.new_page(viewport={"width": width, "height": 1000})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(html.as_uri())
        self.page.wait_for_function("window.ganttRendered !== undefined", timeout=60_000)
        self.page.wait_for_timeout(300)

    def eval(self, js: str, *args: Any) -> Any:
        return self.page.evaluate(js, *args)

    def pixel_of(self, x: float, row: float) -> tuple[float, float]:
        """Page coordinates of data point (x, row) of the Gantt chart."""
        return tuple(  # type: ignore[return-value]
            self.eval(
                """([x, y]) => {
                  const gd = document.getElementById('gantt'), fl = gd._fullLayout;
                  const box = gd.getBoundingClientRect();
                  return [box.left + fl.xaxis._offset + fl.xaxis.d2p(x),
                          box.top + fl.yaxis._offset + fl.yaxis.d2p(y)];
                }""",
                [x, row],
            )
        )

    def screenshot(self, path: Path) -> Any:
        from PIL import Image

        data = self.page.screenshot(path=str(path))
        return Image.open(io.BytesIO(data)).convert("RGB")


POLYGONS_JS = """() => {
  const gd = document.getElementById('gantt');
  return gd._fullData.filter(t => t.meta === 'bars').map(t => {
    let n = 0;
    for (const v of t.x) { if (v === null || Number.isNaN(v)) n++; }
    return [t.name, t.fillcolor, n];
  });
}"""


def _plan(*args: Any) -> None:
    cmd = [sys.executable, "-m", "planner", *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def case(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("show")
    inst_path, sched = write_case(folder)
    html = folder / "case.html"
    _plan("show", sched, "-o", html)
    r = Rendered(browser, html)
    r.folder = folder  # type: ignore[attr-defined]
    r.data = show_data(SCHEDULE, read_instance(inst_path))  # type: ignore[attr-defined]
    yield r
    r.page.close()


def test_one_drawn_bar_per_job_segment_and_node(case: Any) -> None:
    drawn = case.eval(POLYGONS_JS)
    # Every GPU set in the case is contiguous, so each bar is exactly one polygon.
    assert sum(n for _, _, n in drawn) == len(rows(SCHEDULE)) == 8


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))


def _close(a: tuple[int, ...], b: tuple[int, ...], tol: int = 14) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def test_group_members_share_a_colour_on_screen(case: Any) -> None:
    shot = case.screenshot(case.folder / "case.png")
    n1 = case.data.lanes[1]
    centre_row = n1.offset + 0.5  # GPUs 0-1 of n-1, where group G runs
    bar = {b.job: b for b in case.data.bars}
    group = shaded(case.data.colours[bar["g1"].key], bar["g1"].shade)
    solo = shaded(case.data.colours["solo"], bar["d"].shade)
    both = shot.getpixel(tuple(round(v) for v in case.pixel_of(30, centre_row)))
    g1_alone = shot.getpixel(tuple(round(v) for v in case.pixel_of(80, centre_row)))
    d = shot.getpixel(tuple(round(v) for v in case.pixel_of(25, case.data.lanes[0].offset + 2.5)))
    assert _close(both, _rgb(group)) and _close(g1_alone, _rgb(group))
    assert _close(d, _rgb(solo)) and not _close(d, _rgb(group))


def test_hover_names_the_job_and_segment(case: Any) -> None:
    n1 = case.data.lanes[1]
    case.page.mouse.move(*case.pixel_of(75, n1.offset + 2.5))  # a, segment 1: 60-90 on GPUs 2-3
    tip = case.page.locator("#gantt-tip")
    tip.wait_for(state="visible", timeout=5_000)
    text = tip.inner_text()
    assert text.startswith("a (segment 1)") and "n-1 GPU 2-3" in text
    case.page.mouse.move(*case.pixel_of(75, n1.offset + 0.5))  # g1 alone at 75
    assert case.page.locator("#gantt-tip").inner_text().startswith("g1")
    case.page.mouse.move(*case.pixel_of(55, n1.offset + 2.5))  # a's gap: nothing there
    tip.wait_for(state="hidden", timeout=5_000)


def test_hover_names_every_member_of_a_group(case: Any) -> None:
    # g1 shadowed g2 where both run: g2's end and JCT were shown nowhere (show/html.py)
    n1 = case.data.lanes[1]
    case.page.mouse.move(*case.pixel_of(30, n1.offset + 0.5))  # group G, 0-60 on GPUs 0-1
    tip = case.page.locator("#gantt-tip")
    tip.wait_for(state="visible", timeout=5_000)
    lines = tip.inner_text().splitlines()
    assert lines[0].startswith("g1") and any(line.startswith("g2") for line in lines)


@pytest.mark.parametrize("width", [800, 1400])
def test_the_tooltip_of_the_last_bar_stays_in_the_window_on_few_lines(
    case: Any, browser: Any, width: int
) -> None:
    # At the right edge the tip was squeezed to a word a line and ran off the page.
    r = Rendered(browser, case.folder / "case.html", width)
    try:
        n0 = case.data.lanes[0]
        tip = r.page.locator("#gantt-tip")
        sizes = []
        for x in (101, 149.5):  # job b, 100-150 on every GPU: the chart's middle, its end
            r.page.mouse.move(*r.pixel_of(x, n0.offset + 0.5))
            tip.wait_for(state="visible", timeout=5_000)
            assert tip.inner_text().startswith("b")
            sizes.append(tip.bounding_box())
        middle, edge = sizes
        assert edge["x"] >= 0 and edge["x"] + edge["width"] <= width
        assert edge["height"] == middle["height"] and edge["width"] == middle["width"]
    finally:
        r.page.close()


def test_no_console_error_and_no_network(case: Any) -> None:
    assert case.errors == []
    assert [u for u in case.requests if not u.startswith("file:")] == []


def test_screenshot_is_not_blank(case: Any) -> None:
    from PIL import ImageStat

    shot = case.screenshot(case.folder / "case.png")
    stat = ImageStat.Stat(shot.convert("L"))
    assert stat.var[0] > 500  # a white page has variance 0
    assert len(shot.getcolors(maxcolors=1 << 20) or []) > 20


def test_a_planned_schedule_renders_every_bar(browser: Any, tmp_path: Path) -> None:
    inst, sched, html = tmp_path / "i.json", tmp_path / "s.json", tmp_path / "g.html"
    _plan("generate", "--family", "dl", "--jobs", 300, "--nodes", 8, "--seed", 3, "-o", inst)
    # plan solve verifies the schedule before it writes it (exit 1 otherwise).
    _plan("solve", inst, "--solver", "greedy", "-o", sched, "--show", html)
    doc = json.loads(sched.read_text(encoding="utf-8"))
    data = show_data(doc, read_instance(inst))
    r = Rendered(browser, html)
    try:
        drawn = r.eval(POLYGONS_JS)
        assert sum(n for _, _, n in drawn) == sum(len(b.runs) for b in data.bars)
        assert len(data.bars) == len(rows(doc))
        assert r.errors == []
        r.screenshot(tmp_path / "planned.png")
    finally:
        r.page.close()


def test_a_zero_length_job_is_drawn_and_hovered(browser: Any, tmp_path: Path) -> None:
    # start == end drew a rectangle of no width: nothing to see or hover (show/html.py)
    doc = {
        "version": 1,
        "name": "instant",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]},
        "jobs": [
            {"id": "a", "duration": 100, "gpus": 1},
            {"id": "b", "duration": 200, "gpus": 1},
            {"id": "z", "duration": 0, "gpus": 1, "release": 150},
        ],
    }
    inst, sched, html = tmp_path / "i.json", tmp_path / "s.json", tmp_path / "g.html"
    inst.write_text(json.dumps(doc), encoding="utf-8")
    # plan solve verifies the schedule before it writes it (exit 1 otherwise).
    _plan("solve", inst, "--solver", "greedy", "-o", sched, "--show", html)
    plan = json.loads(sched.read_text(encoding="utf-8"))
    z = next(j for j in plan["jobs"] if j["id"] == "z")
    assert z["start"] == z["end"] == 150  # alone on its GPU row there
    data = show_data(plan, read_instance(inst))
    r = Rendered(browser, html)
    try:
        drawn = r.eval(POLYGONS_JS)
        assert sum(n for _, _, n in drawn) == len(data.bars) == 3
        shot = r.screenshot(tmp_path / "instant.png")
        zbar = next(b for b in data.bars if b.job == "z")
        colour = _rgb(shaded(data.colours[zbar.key], zbar.shade))
        x, y = r.pixel_of(150, zbar.runs[0][0])
        seen = [shot.getpixel((round(x) + dx, round(y))) for dx in (-1, 0, 1)]
        assert any(_close(c, colour, tol=40) for c in seen), (seen, colour)
        r.page.mouse.move(x + 1, y)
        tip = r.page.locator("#gantt-tip")
        tip.wait_for(state="visible", timeout=5_000)
        assert tip.inner_text().startswith("z")
        r.page.mouse.move(*r.pixel_of(150, -0.6))  # above the first GPU row: no bar there
        tip.wait_for(state="hidden", timeout=5_000)
        assert r.errors == []
    finally:
        r.page.close()


def test_names_are_drawn_as_written(browser: Any, tmp_path: Path) -> None:
    """Plotly reads tags and entities in legends, tick labels and text: the page hands it
    names escaped, so it draws them as they are written."""
    doc = copy.deepcopy(INSTANCE)
    doc["jobs"][0]["tenant"] = "<b>ops</b>"
    doc["jobs"][1]["tenant"] = "R&amp;D"
    doc["cluster"]["nodes"][0]["name"] = "gpu<br>x"
    doc["reservations"][0].update(id="<i>m</i>", nodes=["gpu<br>x-0"])
    inst, sched, html = tmp_path / "i.json", tmp_path / "s.json", tmp_path / "g.html"
    inst.write_text(json.dumps(doc), encoding="utf-8")
    moved = json.dumps(SCHEDULE).replace('"n-0"', '"gpu<br>x-0"').replace('"n-1"', '"gpu<br>x-1"')
    sched.write_text(moved, encoding="utf-8")
    _plan("show", sched, "--instance", inst, "-o", html, "--colour-by", "tenant")
    r = Rendered(browser, html)
    try:
        drawn = r.eval(
            """() => ['.legendtext', '.ytick text', '.textpoint text'].map(
                 s => Array.from(document.querySelectorAll('#gantt ' + s), e => e.textContent))"""
        )
        legend, ticks, labels = drawn
        assert {"tenant <b>ops</b>", "tenant R&amp;D"} <= set(legend)
        assert [t for t in ticks if t.startswith("gpu")] == ["gpu<br>x-0", "gpu<br>x-1"]
        assert "<i>m</i> (nobody)" in labels
        assert r.errors == []
    finally:
        r.page.close()
