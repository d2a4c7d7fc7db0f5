"""Colours of the bars: by interleaving group, by priority or by tenant.

A picture is drawn with one layer per colour key (one WebGL trace in the HTML), so the
number of keys is kept small: groups take turns through a fixed palette in order of their
first start (neighbours in time differ), and every solo job shares one neutral colour, so
interleaving stands out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.instance import Instance

COLOUR_BY = ("group", "priority", "tenant")
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


def _by_priority(bars: Sequence[Any], instance: Instance) -> tuple[list[str], dict[str, str]]:
    jobs = instance.job_by_id
    prio = {b.job: jobs[b.job].priority for b in bars if b.job in jobs}
    levels = sorted(set(prio.values()))
    colours = {"unknown": UNKNOWN}
    for i, p in enumerate(levels):
        step = i * (len(RAMP) - 1) // max(1, len(levels) - 1)
        colours[f"priority {p}"] = RAMP[step]
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


def colour_keys(
    bars: Sequence[Any], instance: Instance | None, by: str
) -> tuple[list[str], dict[str, str]]:
    """A colour key per bar, and the colour of every key (only keys in use are kept)."""
    if by not in COLOUR_BY:
        raise ValueError(f"colour by {by}: use one of {', '.join(COLOUR_BY)}")
    if by == "group":
        keys, colours = _by_group(bars)
    elif instance is None:
        keys, colours = ["unknown"] * len(bars), {"unknown": UNKNOWN}
    elif by == "priority":
        keys, colours = _by_priority(bars, instance)
    else:
        keys, colours = _by_tenant(bars, instance)
    used = set(keys)
    return keys, {k: c for k, c in colours.items() if k in used}
