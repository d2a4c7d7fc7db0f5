"""The interactive Gantt chart: one self-contained HTML file drawn by plotly.

plotly.js is embedded in the page (`include_plotlyjs=True`), so the file opens with no
network. To stay usable at 10,000 jobs the chart uses few WebGL traces: two filled
`scattergl` traces per colour key (alternating shades, so that touching bars stay apart)
hold all its bars as rectangles separated by gaps.
Reservations, lane shading and the curves under the chart are a handful of traces more.

Hover: plotly finds hover targets only at data points, which a long bar does not have
where the mouse is. So the page carries the bars' rectangles and texts as JSON, and a
small script (`HOVER_JS`) looks up the bars under the mouse (binary search in its GPU row;
every member of a group there) and shows their texts in a tooltip; it draws nothing on
the chart.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from planner.show.colours import pool_styles, shaded
from planner.show.data import Bar, Box, Curve, ShowData

DIV_ID = "gantt"
HALF = 0.42  # half the height of a GPU row that a bar covers


def _rects(runs: Sequence[tuple[int, int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Rectangles (x0, x1, first row, last row) as one closed polygon each, NaN between."""
    x = np.full(len(runs) * 6, np.nan)
    y = np.full(len(runs) * 6, np.nan)
    for i, (x0, x1, r0, r1) in enumerate(runs):
        y0, y1 = r0 - HALF, r1 + HALF
        x[6 * i : 6 * i + 5] = (x0, x1, x1, x0, x0)
        y[6 * i : 6 * i + 5] = (y0, y0, y1, y1, y0)
    return x, y


def plotly_text(name: str) -> str:
    """A name as plotly draws it as written: it reads tags (<b>, <br>, <a href>) and entities
    (&amp;) in legends, tick labels and text, so a tenant "<b>ops</b>" was drawn bold and
    "R&amp;D" as "R&D" (tests/test_show.py). Plotly turns the escapes back into the text."""
    return html.escape(name, quote=False)


def _bar_traces(bars: Sequence[Bar], colours: dict[str, str], legend: bool) -> list[go.Scattergl]:
    """One trace per colour key and shade. No outlines: thin WebGL lines around 10,000
    polygons made zoom and pan several times slower (scripts/show_render.py); the
    alternating shade keeps neighbouring bars apart instead."""
    by_key: dict[tuple[str, int], list[tuple[int, int, int, int]]] = defaultdict(list)
    for b in bars:
        by_key[(b.key, b.shade)].extend((b.start, b.end, r0, r1) for r0, r1 in b.runs)
    out = []
    for key, colour in colours.items():
        # the key's legend entry on its first trace: a key drawn only in the second shade
        # had none (tests/test_show.py -k legend_names)
        shades = [shade for shade in (0, 1) if (key, shade) in by_key]
        for shade in shades:
            runs = by_key[(key, shade)]
            wide = [r for r in runs if r[0] < r[1]]
            x, y = _rects(wide)
            traces = [
                go.Scattergl(
                    x=x, y=y, mode="lines", fill="toself", fillcolor=shaded(colour, shade),
                    line={"width": 0},
                )
            ] if wide else []  # fmt: skip
            if len(wide) < len(runs):  # zero-length jobs: a line of 2 px, seen at any zoom
                x, y = _instants([r for r in runs if r[0] == r[1]])
                traces.append(
                    go.Scattergl(
                        x=x, y=y, mode="lines", line={"width": 2, "color": shaded(colour, shade)}
                    )
                )
            for t in traces:
                first = shade == shades[0] and t is traces[0]
                t.update(name=plotly_text(key), hoverinfo="skip", legendgroup=key, meta="bars")
                t.update(showlegend=legend and first)
                out.append(t)
    return out


def _instants(runs: Sequence[tuple[int, int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Zero-length bars (x, x, first row, last row) as vertical lines, NaN between."""
    x = np.full(len(runs) * 3, np.nan)
    y = np.full(len(runs) * 3, np.nan)
    for i, (x0, _, r0, r1) in enumerate(runs):
        x[3 * i : 3 * i + 2] = (x0, x0)
        y[3 * i : 3 * i + 2] = (r0 - HALF, r1 + HALF)
    return x, y


def _bar_index(bars: Sequence[Bar]) -> str:
    """The bars' rectangles and hover texts as JSON for the hover script. A text is its
    lines' numbers in one table of distinct lines (`L`): a job's segments repeat most of
    theirs, and whole texts were 50 of the 84 MB of a page of 205,912 rectangles."""
    table: dict[str, int] = {}
    runs = [
        (b.start, b.end, r0, r1, [table.setdefault(x, len(table)) for x in b.text.split("<br>")])
        for b in bars
        for r0, r1 in b.runs
    ]
    cols = ("x0", "x1", "r0", "r1", "t")
    doc: dict[str, list[Any]] = {c: [r[k] for r in runs] for k, c in enumerate(cols)}
    doc["L"] = list(table)
    # "</" would end the script element early; "<\/" reads the same in JSON.
    return json.dumps(doc, separators=(",", ":")).replace("</", "<\\/")


def _box_traces(boxes: Sequence[Box]) -> list[go.Scatter | go.Scattergl]:
    if not boxes:
        return []
    x, y = _rects([(b.start, b.end, *b.rows) for b in boxes])
    shade = go.Scattergl(
        x=x,
        y=y,
        mode="lines",
        fill="toself",
        fillcolor="rgba(60,60,60,0.22)",
        line={"color": "rgba(60,60,60,0.8)", "width": 1, "dash": "dash"},
        name="reservations",
        hoverinfo="skip",
    )
    first = {b.id: b for b in sorted(boxes, key=lambda b: (b.rows[0], b.start), reverse=True)}
    labels = go.Scatter(
        x=[b.start for b in first.values()],
        y=[b.rows[0] - HALF for b in first.values()],
        mode="text",
        text=[plotly_text(b.label) for b in first.values()],
        textposition="bottom right",
        textfont={"size": 10, "color": "#333"},
        hovertext=[
            f"reservation {plotly_text(b.label)}: {b.start} to {b.end}" for b in first.values()
        ],
        hoverinfo="text",
        showlegend=False,
        name="reservation labels",
    )
    return [shade, labels]


def _lane_shading(data: ShowData) -> go.Scattergl:
    runs = [(0, data.span, lane.offset, lane.offset + lane.rows - 1) for lane in data.lanes[::2]]
    x, y = _rects(runs)
    return go.Scattergl(
        x=x,
        y=y,
        mode="lines",
        fill="toself",
        fillcolor="rgba(0,0,0,0.035)",
        line={"width": 0},
        hoverinfo="skip",
        showlegend=False,
        name="lanes",
    )


def _curve(c: Curve, colour: str, dash: str = "solid") -> go.Scattergl:
    return go.Scattergl(
        x=np.array(c.times, dtype=float),
        y=100 * np.array(c.values, dtype=float),
        mode="lines",
        line={"shape": "hv", "color": colour, "dash": dash, "width": 1.5},
        name=plotly_text(c.name),
        # the trace's name, not the text of it: "%{...}" in a pool's name is no template
        hovertemplate="%{y:.1f}% from %{x}<extra>%{fullData.name}</extra>",
    )


def figure(data: ShowData) -> go.Figure:
    """The Gantt chart, with GPU utilisation and pool usage (when there are pools) under it."""
    rows_total = sum(lane.rows + 1 for lane in data.lanes)
    gantt_px = int(min(1600, max(320, 7 * rows_total)))
    heights = [gantt_px, 170] + ([150] if data.pools else [])
    fig = make_subplots(
        rows=len(heights),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.04 * 1000 / sum(heights),
        row_heights=[h / sum(heights) for h in heights],
    )
    # Reservations over the bars: jobs a reservation admits may run under its shade.
    fig.add_trace(_lane_shading(data), row=1, col=1)
    for t in _bar_traces(data.bars, dict(data.colours), legend=data.colour_by != "group"):
        fig.add_trace(t, row=1, col=1)
    for t in _box_traces(data.boxes):
        fig.add_trace(t, row=1, col=1)
    fig.add_trace(_curve(data.utilisation, "#1f77b4").update(showlegend=False), row=2, col=1)
    for c, colour, held in pool_styles(data.pools):
        fig.add_trace(_curve(c, colour, "dot" if held else "solid"), row=3, col=1)
    _layout(fig, data, rows_total, sum(heights), len(heights))
    return fig


def _layout(fig: go.Figure, data: ShowData, rows_total: int, height: int, n_rows: int) -> None:
    fig.update_layout(
        height=height + 90,
        margin={"l": 90, "r": 20, "t": 30, "b": 50},
        hovermode="closest",
        hoverdistance=12,
        plot_bgcolor="white",
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0},
        dragmode="zoom",
    )
    fig.update_yaxes(
        row=1,
        col=1,
        range=[rows_total - 0.5, -1],
        tickvals=[lane.offset + (lane.rows - 1) / 2 for lane in data.lanes],
        ticktext=[plotly_text(lane.node) for lane in data.lanes],
        tickfont={"size": 10},
        showgrid=False,
        zeroline=False,
        title=None,
    )
    fig.update_yaxes(row=2, col=1, title="GPUs busy %", rangemode="tozero", gridcolor="#eee")
    if data.pools:
        fig.update_yaxes(row=3, col=1, title="pools %", rangemode="tozero", gridcolor="#eee")
    # the axis `show_data` chose, as the PNG's: left to plotly, a pool reservation past the
    # horizon stretched it again (tests/test_show.py -k down_for_good)
    fig.update_xaxes(gridcolor="#eee", zeroline=False, range=[0, data.span * 1.01])
    fig.update_xaxes(row=n_rows, col=1, title=f"time ({data.time_unit})")


STYLE = """
body{font-family:system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 8px}
table.facts{border-collapse:collapse;font-size:13px;margin-bottom:8px}
table.facts td{padding:2px 12px 2px 0;vertical-align:top}
table.facts td:first-child{color:#555}
p.help{font-size:12px;color:#666;margin:4px 0}
#gantt-tip{position:absolute;display:none;pointer-events:none;background:#fff;
border:1px solid #999;border-radius:3px;padding:4px 6px;font-size:12px;z-index:10;
box-shadow:0 1px 4px rgba(0,0,0,.2);white-space:nowrap}
#gantt-tip hr{border:0;border-top:1px solid #ccc;margin:4px 0}
"""

HOVER_JS = """
(function () {
  var gd = document.getElementById("gantt");
  var tip = document.getElementById("gantt-tip");
  var B = JSON.parse(document.getElementById("gantt-bars").textContent);
  var rows = {};
  for (var i = 0; i < B.x0.length; i++) {
    for (var r = B.r0[i]; r <= B.r1[i]; r++) { (rows[r] = rows[r] || []).push(i); }
  }
  Object.keys(rows).forEach(function (r) {
    rows[r].sort(function (a, b) { return B.x0[a] - B.x0[b]; });
  });
  function find(x, row, tol) {
    var L = rows[row], lo = 0, hi, last = -1;
    if (!L) { return []; }
    hi = L.length - 1;
    while (lo <= hi) {
      var m = (lo + hi) >> 1;
      if (B.x0[L[m]] <= x + tol) { last = m; lo = m + 1; } else { hi = m - 1; }
    }
    // Bars of one GPU row overlap only within a group: every member there is named
    // (one member shadowed the others); look back over a few.
    var hits = [];
    for (var k = last; k >= 0 && k > last - 64; k--) {
      var a = B.x0[L[k]], b = B.x1[L[k]];
      // a zero-length bar, drawn 2 px wide, is hit within a few pixels of its time
      if ((a <= x && x < b) || (a === b && Math.abs(x - a) <= tol)) { hits.push(L[k]); }
    }
    return hits.sort(function (a, b) { return a - b; });
  }
  function hide() { tip.style.display = "none"; }
  gd.addEventListener("mousemove", function (ev) {
    var fl = gd._fullLayout;
    if (!fl || !fl.xaxis || !fl.yaxis) { return hide(); }
    var xa = fl.xaxis, ya = fl.yaxis, box = gd.getBoundingClientRect();
    var px = ev.clientX - box.left - xa._offset, py = ev.clientY - box.top - ya._offset;
    if (px < 0 || py < 0 || px > xa._length || py > ya._length) { return hide(); }
    var x = xa.p2d(px), y = ya.p2d(py), hit = [];
    // A bar over several GPU rows also covers the gaps between them.
    [Math.floor(y), Math.ceil(y)].forEach(function (row) {
      var js = find(x, row, Math.abs(xa.p2d(px + 3) - x)).filter(function (j) {
        return B.r0[j] - HALF <= y && y <= B.r1[j] + HALF;
      });
      if (!hit.length) { hit = js; }
    });
    if (!hit.length) { return hide(); }
    tip.innerHTML = hit.map(function (j) {
      return B.t[j].map(function (k) { return B.L[k]; }).join("<br>");
    }).join("<hr>");
    tip.style.display = "block";
    // Beside the mouse, on its left near the window's right edge (the tip was squeezed
    // to a word a line and ran off the page there).
    var right = window.scrollX + document.documentElement.clientWidth;
    var left = ev.pageX + 14;
    if (left + tip.offsetWidth > right) {
      left = Math.max(window.scrollX, ev.pageX - 14 - tip.offsetWidth);
    }
    tip.style.left = left + "px";
    tip.style.top = ev.pageY + 14 + "px";
  });
  gd.addEventListener("mouseleave", hide);
})();
"""


def header_html(rows: Sequence[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="facts">{cells}</table>'


def page(title: str, body: str) -> str:
    """A whole HTML document around `body` (which carries its own scripts)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def gantt_html(data: ShowData) -> str:
    """The self-contained HTML page of the chart."""
    chart = figure(data).to_html(
        full_html=False,
        include_plotlyjs=True,
        div_id=DIV_ID,
        config={"scrollZoom": True, "displaylogo": False, "responsive": True},
        # Lets a browser test or a timing script see when the first render is done.
        post_script=f"window.ganttRendered = performance.now(); // {DIV_ID}",
    )
    n_bars = len(data.bars)
    help_line = (
        f"{n_bars} bars (one per job, segment and node); lanes are nodes, rows inside are "
        "GPUs. Drag to zoom, shift-drag or the pan tool to pan, double-click to reset."
    )
    hover = (
        f'<div id="gantt-tip"></div>'
        f'<script type="application/json" id="gantt-bars">{_bar_index(data.bars)}</script>'
        f"<script>{HOVER_JS.replace('HALF', str(HALF))}</script>"
    )
    body = (
        f"<h1>{html.escape(data.title)}</h1>{header_html(data.header)}"
        f'<p class="help">{html.escape(help_line)}</p>{chart}{hover}'
    )
    return page(data.title, body)
