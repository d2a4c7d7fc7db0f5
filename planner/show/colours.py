"""Colours of the bars: by interleaving group, by priority, by tenant or by GPU count (the
count each segment runs at, which the planner chooses for an elastic job, contract §12).

A picture is drawn with one layer per colour key (one WebGL trace in the HTML), so the
number of keys is kept small: groups take turns through a fixed palette in order of their
first start (neighbours in time differ), and every solo job shares one neutral colour, so
interleaving stands out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.errors import gpus_phrase
from planner.instance import Instance

COLOUR_BY = ("group", "priority", "tenant", "gpus")
# A 20-colour qualitative palette (the "tab20" order, dark shades first).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#dbdb8d",
    "#9edae5",
    "#637939",
)
SOLO = "#8a9bb0"  # solo jobs when colouring by group
UNKNOWN = "#b0b0b0"  # no instance to say the priority or tenant
# Low to high priority: light to dark (a sequential ramp).
RAMP = ("#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")


def _by_group(bars: Sequence[Any]) -> tuple[list[str], dict[str, str]]:
    first: dict[str, int] = {}
    for b in bars:
        if b.group is not None:
            first[b.group] = min(b.start, first.get(b.group, b.start))
    turn = {g: i % len(PALETTE) for i, g in enumerate(sorted(first, key=lambda g: (first[g], g)))}
    keys = ["solo" if b.group is None else f"groups, colour {turn[b.group] + 1}" for b in bars]
    colours = {"solo": SOLO}
    colours.update({f"groups, colour {i + 1}": c for i, c in enumerate(PALETTE)})
    return keys, colours


def _on_ramp(t: float) -> str:
    """The colour at `t` in [0, 1] along RAMP, blended between its stops: picked from the
    stops, ten levels had only seven colours (0 and 1 alike; tests/test_show.py -k
    priority_level)."""
    x = t * (len(RAMP) - 1)
    k = min(int(x), len(RAMP) - 2)
    a, b = _rgb(RAMP[k]), _rgb(RAMP[k + 1])
    return "#" + "".join(f"{round(u + (v - u) * (x - k)):02x}" for u, v in zip(a, b, strict=True))


def _rgb(colour: str) -> list[int]:
    """ "#rrggbb" as its three channels."""
    return [int(colour[k : k + 2], 16) for k in (1, 3, 5)]


def _by_priority(bars: Sequence[Any], instance: Instance) -> tuple[list[str], dict[str, str]]:
    jobs = instance.job_by_id
    prio = {b.job: jobs[b.job].priority for b in bars if b.job in jobs}
    levels = sorted(set(prio.values()))
    colours = {"unknown": UNKNOWN}
    for i, p in enumerate(levels):
        colours[f"priority {p}"] = _on_ramp(i / max(1, len(levels) - 1))
    keys = [f"priority {prio[b.job]}" if b.job in prio else "unknown" for b in bars]
    return keys, colours


def _by_tenant(bars: Sequence[Any], instance: Instance) -> tuple[list[str], dict[str, str]]:
    jobs = instance.job_by_id
    tenant = {b.job: jobs[b.job].tenant for b in bars if b.job in jobs}
    names = sorted({t for t in tenant.values() if t is not None})
    colours = {"unknown": UNKNOWN, "no tenant": SOLO}
    colours.update({f"tenant {t}": PALETTE[i % len(PALETTE)] for i, t in enumerate(names)})
    keys = []
    for b in bars:
        if b.job not in tenant:
            keys.append("unknown")
        else:
            t = tenant[b.job]
            keys.append("no tenant" if t is None else f"tenant {t}")
    return keys, colours


def _by_count(bars: Sequence[Any]) -> tuple[list[str], dict[str, str]]:
    """A segment's count is its GPUs summed over its nodes' bars."""
    count: dict[tuple[str, int], int] = {}
    for b in bars:
        count[(b.job, b.segment)] = count.get((b.job, b.segment), 0) + len(b.gpus)
    keys = [gpus_phrase(count[(b.job, b.segment)]) for b in bars]
    sizes = sorted(set(count.values()))
    colours = {gpus_phrase(n): PALETTE[i % len(PALETTE)] for i, n in enumerate(sizes)}
    return keys, colours


def colour_keys(
    bars: Sequence[Any], instance: Instance | None, by: str
) -> tuple[list[str], dict[str, str]]:
    """A colour key per bar, and the colour of every key (only keys in use are kept)."""
    if by not in COLOUR_BY:
        raise ValueError(f"colour by {by}: use one of {', '.join(COLOUR_BY)}")
    if by == "group":
        keys, colours = _by_group(bars)
    elif by == "gpus":
        keys, colours = _by_count(bars)
    elif instance is None:
        keys, colours = ["unknown"] * len(bars), {"unknown": UNKNOWN}
    elif by == "priority":
        keys, colours = _by_priority(bars, instance)
    else:
        keys, colours = _by_tenant(bars, instance)
    used = set(keys)
    return keys, {k: c for k, c in colours.items() if k in used}


def alternate(bars: Sequence[Any]) -> list[int]:
    """A shade (0 or 1) per bar that alternates along each GPU row, so that bars of one
    colour that follow each other stay apart without outlines (outlines are costly to
    draw at 10,000 bars). A group's members, which share rows and a start, share a shade."""
    last: dict[int, int] = {}  # row -> shade of the latest bar on it
    by_group: dict[tuple[str, int], int] = {}
    out = [0] * len(bars)
    for i in sorted(range(len(bars)), key=lambda i: (bars[i].start, bars[i].job)):
        b = bars[i]
        row = b.runs[0][0]
        if b.group is not None and (b.group, b.start) in by_group:
            shade = by_group[(b.group, b.start)]
        else:
            shade = 1 - last.get(row, 1)
        if b.group is not None:
            by_group[(b.group, b.start)] = shade
        for r0, r1 in b.runs:
            for r in range(r0, r1 + 1):
                last[r] = shade
        out[i] = shade
    return out


def shaded(colour: str, shade: int) -> str:
    """`colour` (#rrggbb), 15% darker when `shade` is 1."""
    if not shade:
        return colour
    return "#" + "".join(f"{round(c * 0.85):02x}" for c in _rgb(colour))


def pool_styles(curves: Sequence[Any]) -> list[tuple[Any, str, bool]]:
    """Each pool curve with its pool's colour (one of PALETTE's twenty in turn: four had
    job-shop charts repeat them) and whether it is what reservations hold (dotted)."""
    out, pool = [], -1
    for c in curves:
        pool += 0 if c.held else 1
        out.append((c, PALETTE[pool % len(PALETTE)], c.held))
    return out
