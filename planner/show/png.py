"""The static picture of the Gantt chart (PNG) through matplotlib, for reports and CI.

It draws the records of `planner.show.data` like the HTML page: a lane per node with a row
per GPU, bars coloured by the same keys, reservations hatched, utilisation and pool usage
under the chart. Only matplotlib's object API with the Agg canvas is used, so nothing
depends on (or changes) a global backend or a display.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Sequence

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from planner.show.colours import pool_styles, shaded
from planner.show.data import Curve, ShowData

HALF = 0.42


def _rect(x0: float, x1: float, r0: int, r1: int) -> list[tuple[float, float]]:
    y0, y1 = r0 - HALF, r1 + HALF
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _gantt(ax: Axes, data: ShowData) -> None:
    polys, faces = [], []
    for b in data.bars:
        for r0, r1 in b.runs:
            polys.append(_rect(b.start, b.end, r0, r1))
            faces.append(shaded(data.colours[b.key], b.shade))
    ax.add_collection(PolyCollection(polys, facecolors=faces, edgecolors="white", linewidths=0.3))
    instants = [(b, r0, r1) for b in data.bars if b.start == b.end for r0, r1 in b.runs]
    if instants:  # zero-length jobs: a line, where a polygon has no width
        ax.vlines(
            [b.start for b, _, _ in instants],
            [r0 - HALF for _, r0, _ in instants],
            [r1 + HALF for _, _, r1 in instants],
            colors=[shaded(data.colours[b.key], b.shade) for b, _, _ in instants],
            linewidths=1.5,
        )
    boxes = [_rect(x.start, x.end, *x.rows) for x in data.boxes]
    if boxes:
        ax.add_collection(
            PolyCollection(
                boxes, facecolors=(0.35, 0.35, 0.35, 0.25), edgecolors="0.25", hatch="//"
            )
        )
    labelled = set()
    for x in sorted(data.boxes, key=lambda x: (x.start, x.rows[0])):
        if x.id not in labelled:
            labelled.add(x.id)
            ax.text(x.start, x.rows[0] - HALF, x.label, fontsize=7, va="top", ha="left")
    rows_total = sum(lane.rows + 1 for lane in data.lanes)
    ax.set_xlim(0, data.span * 1.01)
    ax.set_ylim(rows_total - 0.5, -1)
    ax.set_yticks(
        [lane.offset + (lane.rows - 1) / 2 for lane in data.lanes],
        [lane.node for lane in data.lanes],
        fontsize=max(4, min(8, 600 // max(1, len(data.lanes)))),
    )
    for lane in data.lanes[::2]:
        ax.axhspan(lane.offset - 0.5, lane.offset + lane.rows - 0.5, color="0.96", zorder=0)


def _curves(ax: Axes, curves: Sequence[Curve], label: str, legend: bool = False) -> None:
    lines = [
        ax.step(c.times, [100 * v for v in c.values], where="post", lw=1, color=colour,
                linestyle=":" if held else "-")[0]
        for c, colour, held in pool_styles(curves)
    ]  # fmt: skip
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if legend:
        # labels given with their lines: matplotlib leaves out a `label=` starting with "_"
        # (a pool named "_p" had no legend and a warning on stderr). Beside the panel when
        # many (a dozen entries inside it covered the curves), names cut at 40 characters
        # (a long one there narrowed every panel): tests/test_show.py -k pool_legend
        names = [c.name if len(c.name) <= 40 else c.name[:39] + "…" for c in curves]
        if len(curves) > 4:
            ax.legend(lines, names, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        else:
            ax.legend(lines, names, fontsize=7, loc="upper right")


def png_figure(data: ShowData, width_in: float = 12.0) -> Figure:
    """The chart as a matplotlib figure (inside `as_written`, which `gantt_png` gives)."""
    rows_total = sum(lane.rows + 1 for lane in data.lanes)
    gantt_in = min(16.0, max(3.0, rows_total * 0.07))
    heights = [gantt_in, 1.4] + ([1.2] if data.pools else [])
    fig = Figure(figsize=(width_in, sum(heights) + 1.0), dpi=100, layout="constrained")
    axes = fig.subplots(len(heights), 1, sharex=True, height_ratios=heights)
    _gantt(axes[0], data)
    _curves(axes[1], [data.utilisation], "GPUs busy %")
    if data.pools:
        _curves(axes[2], data.pools, "pools %", legend=True)
    axes[-1].set_xlabel(f"time ({data.time_unit})")
    if data.colour_by != "group":
        # Under the chart: above it, a legend of two rows or more covered the title line
        # and its figures (tests/test_show.py).
        handles = [Patch(facecolor=c, label=k) for k, c in data.colours.items()]
        fig.legend(handles=handles, loc="outside lower center", ncols=min(6, len(handles)))
    facts = dict(data.header)
    gap = next((v for k, v in data.header if k.startswith("objective")), "")
    fig.suptitle(f"{data.title} ({facts.get('status', '')})  {gap}", fontsize=10, x=0.01, ha="left")
    return fig


@contextlib.contextmanager
def as_written() -> Iterator[None]:
    """Names drawn as written: matplotlib reads the text between two `$` as mathematics
    (an instance named "cost $\\x$" was an internal error, "$5 or $6" lost its dollars),
    and a character its font lacks is drawn as a box without a warning on stderr."""
    with rc_context({"text.parse_math": False}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Glyph .* missing from", UserWarning)
        yield


def gantt_png(data: ShowData, width_in: float = 12.0) -> bytes:
    """The chart as PNG bytes."""
    buf = io.BytesIO()
    with as_written():
        FigureCanvasAgg(png_figure(data, width_in)).print_png(buf)
    return buf.getvalue()
