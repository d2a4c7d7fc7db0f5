"""`plan bench --report`: the benchmark rows as one self-contained HTML page of pictures.

- Ratio to the baseline, per instance and solver: baseline objective / solver objective,
  the direction of the bench summary (> 1: better than the baseline).
- Dolan-Moré performance profile: per instance the best objective over the solvers; a
  solver's ratio there is its objective / the best (`ratio`: the relative gap + 1 when the
  best is negative; infinite when it has no verified schedule); its profile at tau is the
  share of instances where that ratio is <= tau.
- Solve time (wall seconds) against instance size (jobs).
- The rows themselves, as a table.

Only verified rows count towards objectives; repeats of one (instance, solver) are averaged.
Rows are plain mappings with the columns of the results CSV.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

import plotly.graph_objects as go

from planner.errors import InputError
from planner.figures import figure
from planner.jsonio import read_json
from planner.show.html import page, plotly_text

TABLE_COLUMNS = (
    "instance",
    "solver",
    "repeat",
    "status",
    "objective",
    "objective_value",
    "bound",
    "gap_to_bound",
    "wall_s",
    "verified",
    "error",
)


def objectives(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """solver -> instance -> mean objective value over verified repeats."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        v = r.get("objective_value")
        if r.get("verified") and v is not None and not math.isnan(float(v)):
            acc[(str(r["solver"]), str(r["instance"]))].append(float(v))
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (solver, inst), vals in acc.items():
        out[solver][inst] = fmean(vals)
    return dict(out)


def ratio(value: float, best: float) -> float:
    """How far `value` is from the `best` (minimised) value, as a factor >= 1: value / best
    when best > 0, 1 + (value - best) / |best| when best < 0 (an energy cost under negative
    prices: the same relative gap, where value / best would be below 1 or negative); at a
    best of 0 a tie is 1 and anything above has no scale: inf."""
    if best > 0:
        return value / best
    if best < 0:
        return 1.0 + (value - best) / -best
    return 1.0 if value <= best else math.inf


def performance_profile(
    per: Mapping[str, Mapping[str, float]], solvers: Sequence[str], instances: Sequence[str]
) -> dict[str, list[tuple[float, float]]]:
    """solver -> the steps (tau, share of instances within factor tau of the best)."""
    best = {}
    for inst in instances:
        vals = [per[s][inst] for s in solvers if inst in per.get(s, {})]
        if vals:
            best[inst] = min(vals)
    out = {}
    for s in solvers:
        rs = sorted(ratio(per[s][i], best[i]) if i in per.get(s, {}) else math.inf for i in best)
        finite = [r for r in rs if math.isfinite(r)]
        steps = [(r, (k + 1) / len(rs)) for k, r in enumerate(finite)]
        out[s] = steps
    return out


def instance_sizes(paths: Iterable[str]) -> dict[str, int]:
    """Instance path -> number of jobs, for the files that can be read."""
    out = {}
    for p in set(paths):
        try:
            jobs = read_json(p).get("jobs")
        except (InputError, AttributeError):
            continue
        if isinstance(jobs, list):
            out[p] = len(jobs)
    return out


def instance_labels(instances: Iterable[str]) -> dict[str, str]:
    """Each instance's name on the ratio chart's axis: its file's stem, or the path as given
    where two instances share a stem (one position per instance)."""
    names = list(dict.fromkeys(instances))
    stems = [Path(i).stem for i in names]
    return {i: s if stems.count(s) == 1 else i for i, s in zip(names, stems, strict=True)}


def _ratio_figure(
    per: Mapping[str, Mapping[str, float]], baseline: str, solvers: Sequence[str]
) -> go.Figure:
    fig = go.Figure()
    ref = per.get(baseline, {})
    label = instance_labels(i for s in solvers for i in per.get(s, {}))
    for s in solvers:
        insts = [i for i in per.get(s, {}) if ref.get(i) and per[s][i] > 0]
        fig.add_trace(
            go.Scatter(
                x=[plotly_text(label[i]) for i in insts],
                y=[ref[i] / per[s][i] for i in insts],
                text=[plotly_text(i) for i in insts],
                mode="markers",
                name=plotly_text(s),
                marker={"size": 9},
            )
        )
    fig.add_hline(y=1, line_dash="dot", line_color="#888")
    fig.update_layout(
        title=plotly_text(
            f"objective ratio {baseline} / solver per instance (> 1: better than {baseline})"
        ),
        yaxis_title="ratio",
        height=420,
    )
    return fig


def _profile_figure(profile: Mapping[str, Sequence[tuple[float, float]]]) -> go.Figure:
    fig = go.Figure()
    top = max((t for steps in profile.values() for t, _ in steps), default=1.0)
    for s, steps in profile.items():
        xs = [1.0] + [t for t, _ in steps] + [max(top, 1.0) * 1.05]
        ys = [0.0] + [v for _, v in steps] + [steps[-1][1] if steps else 0.0]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line_shape="hv", name=plotly_text(s)))
    fig.update_layout(
        title="performance profile: share of instances within factor tau of the best",
        xaxis={"title": "tau", "type": "log"},
        yaxis={"title": "share of instances", "range": [0, 1.05]},
        height=420,
    )
    return fig


def _time_figure(rows: Sequence[Mapping[str, Any]], sizes: Mapping[str, int]) -> go.Figure:
    fig = go.Figure()
    by_solver: dict[str, list[tuple[int, float, str]]] = defaultdict(list)
    for r in rows:
        n, w = sizes.get(str(r["instance"])), r.get("wall_s")
        if n is not None and w is not None and not math.isnan(float(w)):
            by_solver[str(r["solver"])].append((n, max(float(w), 1e-3), str(r["instance"])))
    for s, pts in by_solver.items():
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in pts],
                y=[p[1] for p in pts],
                text=[plotly_text(p[2]) for p in pts],
                mode="markers",
                name=plotly_text(s),
            )
        )
    fig.update_layout(
        title="solve time against instance size",
        xaxis={"title": "jobs", "type": "log"},
        yaxis={"title": "wall seconds", "type": "log"},
        height=420,
    )
    return fig


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        # six significant digits, but a large objective in full, as the summary has it
        return f"{v:.6g}" if abs(v) < 1e6 else figure(v)
    return html.escape(str(v))


def rows_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{c}</th>" for c in TABLE_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in TABLE_COLUMNS) + "</tr>"
        for r in rows
    )
    return f'<table class="rows"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def report_html(
    rows: Sequence[Mapping[str, Any]],
    baseline: str | None,
    solvers: Sequence[str],
    sizes: Mapping[str, int],
) -> str:
    """The whole report page; plotly.js is embedded once, in the first chart."""
    per = objectives(rows)
    instances = list(dict.fromkeys(str(r["instance"]) for r in rows))
    figures = []
    if baseline:
        figures.append(_ratio_figure(per, baseline, solvers))
    figures.append(_profile_figure(performance_profile(per, solvers, instances)))
    figures.append(_time_figure(rows, sizes))
    charts = "".join(
        f.to_html(full_html=False, include_plotlyjs=(k == 0), config={"displaylogo": False})
        for k, f in enumerate(figures)
    )
    style = (
        "<style>table.rows{border-collapse:collapse;font-size:12px}"
        "table.rows td,table.rows th{border:1px solid #ddd;padding:2px 6px}</style>"
    )
    intro = (
        f"<h1>benchmark: {len(instances)} instances, {len(solvers)} solvers, {len(rows)} runs</h1>"
    )
    return page("benchmark report", f"{style}{intro}{charts}<h2>rows</h2>{rows_table(rows)}")
