"""What `plan show` draws, as plain records built from a schedule document and, when
available, its instance: lanes (one per node, a row per GPU), bars (one per job, segment
and node), reservation boxes, the header table, GPU utilisation and pool usage over time.

Both pictures (`planner.show.html`, `planner.show.png`) draw these records, so they agree.
Nothing here checks the schedule: it is drawn as given.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from planner.checker import kind
from planner.errors import gpus_phrase
from planner.figures import figure
from planner.instance import Instance, Job
from planner.replan import DOWN
from planner.show.colours import alternate, colour_keys
from planner.show.segments import ShownSegment, Slot, document_segments

NO_GPU = "(no GPU)"  # the lane of jobs that hold only pools


class Lane(NamedTuple):
    """A node's band of rows: GPU `g` is drawn on row `offset + g`."""

    node: str
    offset: int
    rows: int


class Bar(NamedTuple):
    job: str
    segment: int
    node: str
    gpus: tuple[int, ...]
    start: int
    end: int
    group: str | None
    runs: tuple[tuple[int, int], ...]  # rows covered, as (first, last) runs of adjacent GPUs
    key: str  # colour key (group, priority or tenant)
    text: str  # hover text
    shade: int = 0  # 0 or 1, alternating along a GPU row (`colours.alternate`)


class Box(NamedTuple):
    """A reservation's GPUs on one node, shaded over [start, end)."""

    id: str
    label: str
    start: int
    end: int
    rows: tuple[int, int]


@dataclass(frozen=True)
class Curve:
    """A step curve: value `values[i]` holds from `times[i]` to `times[i + 1]`."""

    name: str
    times: tuple[int, ...]
    values: tuple[float, ...]
    held: bool = False  # a pool's amount held by reservations (drawn dotted, its pool's colour)


@dataclass(frozen=True)
class ShowData:
    title: str
    time_unit: str
    header: tuple[tuple[str, str], ...]
    lanes: tuple[Lane, ...]
    bars: tuple[Bar, ...]
    boxes: tuple[Box, ...]
    colours: Mapping[str, str]  # colour key -> CSS colour
    colour_by: str
    utilisation: Curve  # share of the cluster's GPUs busy
    pools: tuple[Curve, ...]  # per pool: share of its capacity in use, then what is held
    span: int  # the time axis ends here: the last bar or reservation end (`_fit_axis`)


def runs_of(gpus: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Sorted GPU indices as (first, last) runs of consecutive indices."""
    out: list[tuple[int, int]] = []
    for g in sorted(set(gpus)):
        if out and out[-1][1] == g - 1:
            out[-1] = (out[-1][0], g)
        else:
            out.append((g, g))
    return tuple(out)


def gpus_per_node(instance: Instance) -> dict[str, int]:
    return {n.name: n.gpus for n in instance.nodes}


def off_the_cluster(segments: Iterable[ShownSegment], instance: Instance) -> list[tuple[str, str]]:
    """(JSON path, text) of each placement item on a node the instance does not have, and
    of each GPU index past its node's count: drawn all the same (`_lanes`), with a note."""
    sizes = gpus_per_node(instance)
    out = []
    for s in segments:
        for slot in s.placement:
            if slot.node not in sizes:
                out.append((f"{slot.path}.node", f"node {slot.node} is not in the instance"))
                continue
            for g, gpu in enumerate(slot.gpus):
                if not 0 <= gpu < sizes[slot.node]:
                    out.append((f"{slot.path}.gpus[{g}]", f"node {slot.node} has no GPU {gpu}"))
    return out


def _lanes(instance: Instance | None, segments: Sequence[ShownSegment]) -> list[Lane]:
    """A lane per instance node, in the instance's order; nodes the schedule names that the
    instance does not know follow. A lane is as wide as its node, or as the highest GPU
    index used on it when that is past the node's count, so that what is drawn is seen
    (`plan show` notes such placements: `off_the_cluster`)."""
    sizes = gpus_per_node(instance) if instance is not None else {}
    for s in segments:
        for p in s.placement:
            sizes[p.node] = max(sizes.get(p.node, 0), max(p.gpus, default=0) + 1)
    lanes, offset = [], 0
    for node, rows in sizes.items():
        lanes.append(Lane(node, offset, rows))
        offset += rows + 1  # one empty row between nodes
    return lanes


def _no_gpu_rows(segments: Sequence[ShownSegment]) -> dict[tuple[str, int], int]:
    """Rows for segments without placement: first fit, so overlapping ones stack."""
    row_end: list[int] = []
    out = {}
    for s in sorted((s for s in segments if not s.placement), key=lambda s: (s.start, s.job)):
        row = next((i for i, e in enumerate(row_end) if e <= s.start), len(row_end))
        if row == len(row_end):
            row_end.append(s.end)
        row_end[row] = s.end
        out[(s.job, s.segment)] = row
    return out


def _fmt_gpus(gpus: Sequence[int]) -> str:
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs_of(gpus))


def hover_text(
    s: ShownSegment, slot: Slot, job: Job | None, members: Sequence[str], unit: str, last_end: int
) -> str:
    """job, model, GPUs, start, end, JCT, group members, segment, release, deadline; as
    HTML, names escaped. Without the instance (`job` None) what only it knows is left out."""
    e = html.escape
    multi = s.segment > 0 or last_end != s.end
    lines = [f"<b>{e(s.job)}</b>" + (f" (segment {s.segment})" if multi else "")]
    if job is not None:
        what = e(job.model) if job.model else f"duration {job.duration} {unit}"
        tenant = e(job.tenant or "none")
        # The count this segment runs at, not the first count an elastic job lists.
        lines.append(f"{what}, {s.gpu_count} GPU(s), priority {job.priority}, tenant {tenant}")
    where = f"{e(slot.node)} GPU {_fmt_gpus(slot.gpus)}" if slot.gpus else "no GPU"
    lines.append(f"{where}: start {s.start}, end {s.end} {unit}")
    if job is not None:  # JCT is end - release (contract §6): unknown without the instance
        lines.append(f"JCT {last_end - job.release} {unit}")
    if s.group is not None:
        lines.append(f"group {e(s.group)}: {e(', '.join(members))}")
    if job is not None:
        deadline = "none" if job.deadline is None else job.deadline
        due = "none" if job.due is None else job.due
        lines.append(f"release {job.release}, deadline {deadline}, due {due}")
    return "<br>".join(lines)


def _bars(
    segments: Sequence[ShownSegment],
    lanes: Sequence[Lane],
    instance: Instance | None,
    members: Mapping[str, Sequence[str]],
    unit: str,
) -> list[Bar]:
    jobs = instance.job_by_id if instance is not None else {}
    offset = {lane.node: lane.offset for lane in lanes}
    last_end: dict[str, int] = {}
    for s in segments:
        last_end[s.job] = max(s.end, last_end.get(s.job, s.end))
    no_gpu = _no_gpu_rows(segments)
    out = []
    for s in segments:
        slots = s.placement or (Slot(NO_GPU, ()),)
        for slot in slots:
            if slot.gpus:
                base = offset[slot.node]
                runs = tuple((base + a, base + b) for a, b in runs_of(slot.gpus))
            else:
                row = offset[NO_GPU] + no_gpu[(s.job, s.segment)]
                runs = ((row, row),)
            job, mates = jobs.get(s.job), members.get(s.group or "", ())
            text = hover_text(s, slot, job, mates, unit, last_end[s.job])
            out.append(
                Bar(s.job, s.segment, slot.node, slot.gpus, s.start, s.end, s.group, runs, "", text)
            )
    return out


def _boxes(instance: Instance | None, lanes: Sequence[Lane]) -> list[Box]:
    if instance is None:
        return []
    by_node = {lane.node: lane for lane in lanes}
    out = []
    for r in instance.reservations:
        who = sorted(r.admits.tenants | r.admits.jobs)
        label = f"{r.id} ({'for ' + ', '.join(who) if who else 'nobody'})"
        for node in r.nodes:
            lane = by_node.get(node)
            if lane is None:
                continue
            # a whole node is one run: its lane may be widened to a mistyped GPU index of
            # 10^8, whose rows one by one took 9 GB (tests/test_show.py -k mistyped)
            whole = ((0, lane.rows - 1),)
            for a, b in runs_of(r.gpus) if r.gpus is not None else whole:
                out.append(Box(r.id, label, r.start, r.end, (lane.offset + a, lane.offset + b)))
    return out


def _fit_axis(
    boxes: list[Box], bars: Sequence[Bar], instance: Instance | None
) -> tuple[list[Box], int]:
    """The boxes as drawn and where the time axis ends: at the last bar's or box's end,
    except that a node down for good (a reservation ending past the instance's horizon,
    or `plan replan`'s mark of a failed node ending at it, README "Replanning") is drawn
    only to the end of the rest: to its horizon it squeezed the plan into a sliver."""
    horizon = instance.horizon if instance is not None else None
    endless = {b for b in boxes if horizon is not None and _for_good(b, horizon)}
    rest = max([1, *(b.end for b in bars), *(b.end for b in boxes if b not in endless)])
    # one that starts after the rest ends is drawn whole, as before: cut there, it had no
    # width left (tests/test_show.py -k past_the_horizon)
    endless = {b for b in endless if b.start < rest}
    span = max([rest, *(b.end for b in boxes if b not in endless)])
    return [b._replace(end=span) if b in endless else b for b in boxes], span


def _for_good(box: Box, horizon: int) -> bool:
    return box.end > horizon or (box.id.startswith(DOWN) and box.end == horizon)


def step_curve(name: str, deltas: Mapping[int, float], scale: float) -> Curve:
    """The running sum of `deltas` (time -> change) as a step curve, divided by `scale`."""
    times, values, level = [], [], 0.0
    for t in sorted(deltas):
        level += deltas[t]
        times.append(t)
        values.append(level / scale if scale else 0.0)
    return Curve(name, tuple(times), tuple(values))


def _utilisation(bars: Sequence[Bar], total_gpus: int, name: str) -> Curve:
    """Busy GPUs over time, a share of `total_gpus`; a GPU shared by a group's members
    counts once."""
    spans: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for b in bars:
        for g in b.gpus:
            spans[(b.node, g)].append((b.start, b.end))
    deltas: dict[int, float] = defaultdict(float)
    for intervals in spans.values():
        intervals.sort()
        cur_s, cur_e = intervals[0]
        for s, e in [*intervals[1:], (None, None)]:
            if s is not None and e is not None and s <= cur_e:
                cur_e = max(cur_e, e)
                continue
            deltas[cur_s] += 1
            deltas[cur_e] -= 1
            if s is not None and e is not None:
                cur_s, cur_e = s, e
    return step_curve(name, deltas, total_gpus)


def _pools(instance: Instance | None, segments: Sequence[ShownSegment]) -> list[Curve]:
    """Per pool: demand of running segments, and the amount reservations hold (for a pool
    some reservation holds), as shares of the pool's capacity."""
    if instance is None:
        return []
    out = []
    jobs = instance.job_by_id
    for pool, capacity in instance.pools.items():
        used: dict[int, float] = defaultdict(float)
        for s in segments:
            job = jobs.get(s.job)
            amount = job.demand.get(pool, 0.0) if job is not None else 0.0
            if amount and s.end > s.start:
                used[s.start] += amount
                used[s.end] -= amount
        held: dict[int, float] = defaultdict(float)
        for r in instance.reservations:
            if r.pool == pool:
                held[r.start] += r.amount
                held[r.end] -= r.amount
        out.append(step_curve(f"{pool} in use", used, capacity))
        if held:  # a flat line at 0 for every pool nothing reserves crowded the panel
            curve = step_curve(f"{pool} held by reservations", held, capacity)
            out.append(replace(curve, held=True))
    return out


HEADER_MAPS = ("objective", "lower_bound", "metrics")  # name -> number (contract §6)


def header_numbers(
    doc: Mapping[str, Any],
) -> tuple[dict[str, dict[str, float]], list[tuple[str, str]]]:
    """The numbers of the schedule's `objective`, `lower_bound` and `metrics`, by field and
    name, and (JSON path, problem) for every value left out. These fields only inform:
    `plan check` and `plan export` ignore them, so a bad one is left out of the header
    instead of refusing the schedule (README, `plan show`)."""
    values: dict[str, dict[str, float]] = {key: {} for key in HEADER_MAPS}
    left_out: list[tuple[str, str]] = []
    for key in HEADER_MAPS:
        raw = doc.get(key)
        if raw is None:
            continue
        if not isinstance(raw, dict):
            left_out.append((key, f"expected an object, got {kind(raw)}"))
            continue
        for name, v in raw.items():
            path = f"{key}.{name}"
            if isinstance(v, bool) or not isinstance(v, int | float):
                left_out.append((path, f"expected a number, got {kind(v)}"))
                continue
            try:
                values[key][name] = float(v)
            except OverflowError:  # an integer beyond any float
                left_out.append((path, "expected a number, got an integer too large to show"))
    return values, left_out


def _utilisation_name(instance: Instance | None, drawn: int) -> str:
    """Without the instance the cluster's size is unknown: the curve is a share of the GPUs
    drawn, not the `gpu_utilization` of contract §6, and says so."""
    return "GPU utilisation" if instance is not None else f"share of the {gpus_phrase(drawn)} drawn"


def _header(doc: Mapping[str, Any], instance: Instance | None) -> list[tuple[str, str]]:
    rows = [("solver", str(doc.get("solver", ""))), ("status", str(doc.get("status", "")))]
    values, _ = header_numbers(doc)
    for name, value in values["objective"].items():
        bound = values["lower_bound"].get(name)
        text = figure(value)
        if bound is not None and value:
            text += f" (bound {figure(bound)}, gap {100 * (value - bound) / abs(value):.2f}%)"
        rows.append((f"objective {name}", text))
    for name, value in values["metrics"].items():
        shown = f"{100 * value:.1f}%" if name == "gpu_utilization" else figure(value)
        rows.append((name, shown))
    rows.append(("jobs", str(len(doc.get("jobs") or []))))
    rows.append(("groups", str(len(doc.get("groups") or []))))
    if instance is None:
        rows.append(
            (
                "instance",
                "not given: models, priorities and reservations not shown, and the curve is "
                "a share of the GPUs drawn, not of the cluster's",
            )
        )
    return rows


def show_data(
    doc: Mapping[str, Any], instance: Instance | None, colour_by: str = "group"
) -> ShowData:
    """The records of the picture of schedule document `doc`; ValueError lists shape
    problems as 'path: text'."""
    segments, problems = document_segments(doc)
    if problems:
        raise ValueError("; ".join(f"{p}: {m}" for p, m in problems))
    members: dict[str, list[str]] = defaultdict(list)
    for s in segments:
        if s.group is not None and s.job not in members[s.group]:
            members[s.group].append(s.job)
    lanes = _lanes(instance, segments)
    if any(not s.placement for s in segments):
        rows = max(_no_gpu_rows(segments).values()) + 1
        lanes.append(Lane(NO_GPU, sum(lane.rows + 1 for lane in lanes), rows))
    unit = instance.time_unit if instance is not None else "time units"
    bars = _bars(segments, lanes, instance, members, unit)
    keys, colours = colour_keys(bars, instance, colour_by)
    shades = alternate(bars)
    bars = [b._replace(key=k, shade=s) for b, k, s in zip(bars, keys, shades, strict=True)]
    total = sum(lane.rows for lane in lanes if lane.node != NO_GPU)
    boxes, span = _fit_axis(_boxes(instance, lanes), bars, instance)
    return ShowData(
        title=f"{doc.get('instance', '')}: {doc.get('solver', '')}",
        time_unit=unit,
        header=tuple(_header(doc, instance)),
        lanes=tuple(lanes),
        bars=tuple(bars),
        boxes=tuple(boxes),
        colours=colours,
        colour_by=colour_by,
        utilisation=_utilisation(bars, total, _utilisation_name(instance, total)),
        pools=tuple(_pools(instance, segments)),
        span=span,
    )
