"""Why each job of a schedule started when it did: the per-job table of `plan solve`.

A job that starts after its release waited for something; the first of these that holds
at its start is named (the question an operator asks first; a live state's running and
done jobs started before `now` as given, and say so):
- a predecessor ending exactly then (`after`),
- a reservation that does not admit the job ending exactly then, on a node it uses or on
  a pool it draws from,
- strict priority: a higher-priority job released no later starting exactly then (R9),
- the present: a live state's `now` (contract §9: nothing not yet running starts before
  it), when the job starts exactly then,
- its interleaving group: a co-member released exactly then (the group starts together),
- capacity: a job sharing a node with it ending exactly then (named),
- a price: with `energy_cost` an objective, the price dropping exactly then (contract
  §12: a plan may hold a job back for a cheaper hour),
- otherwise capacity: GPUs, CPUs, memory or a pool held by running jobs.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from planner.energy import PriceCurve, price_curve
from planner.instance import Instance, Job
from planner.schedule import Assignment, Schedule


class JobRow(NamedTuple):
    job: str
    nodes: str
    gpus: str
    start: int
    end: int
    wait: int
    why: str
    group: str = ""  # the interleaving group it runs in ("" when alone)


class _Moments:
    """The schedule's assignments by id, by start and by end: a waiting job's reasons are
    the jobs starting or ending at its start, found without a scan of every assignment
    (at 10,000 jobs the scans took 4.2 s of `plan solve --jobs`)."""

    def __init__(self, schedule: Schedule):
        self.by_id = {a.id: a for a in schedule.jobs}
        self.starting: dict[int, list[Assignment]] = defaultdict(list)
        self.ending: dict[int, list[Assignment]] = defaultdict(list)
        for a in self.by_id.values():
            self.starting[a.start].append(a)
            self.ending[a.end].append(a)


def job_rows(instance: Instance, schedule: Schedule) -> list[JobRow]:
    """One row per scheduled job, in start order."""
    at = _Moments(schedule)
    # a price drop is a reason only when the plan prices energy (one curve for every job)
    curve = price_curve(instance) if "energy_cost" in instance.objective else None
    rows = []
    for a in sorted(schedule.jobs, key=lambda a: (a.start, a.id)):
        job = instance.job_by_id.get(a.id)
        release = job.release if job is not None else 0
        if job is None or a.start <= release:
            why = ""
        elif job.live is not None:  # a live state's running or done job: given, not planned
            why = "started before now"
        else:
            why = _why(instance, job, a, at, curve)
        pieces = a.pieces()
        grouped = any(q.group is not None for q in pieces)
        rows.append(
            JobRow(
                job=a.id,
                nodes=_in_turn(",".join(p.node for p in q.placement) or "-" for q in pieces),
                gpus=_in_turn(str(sum(len(p.gpus) for p in q.placement)) for q in pieces),
                start=a.start,
                end=a.end,
                wait=max(0, a.start - release),
                why=why,
                group=_in_turn(q.group or "-" for q in pieces) if grouped else "",
            )
        )
    return rows


def _in_turn(values: Iterable[str]) -> str:
    """A preempted job's nodes, GPU count or group in its segments' order where they
    change ("a-1 → b-0"): the first segment's alone hid where it resumed."""
    return " → ".join(value for value, _ in itertools.groupby(values))


def _why(
    instance: Instance,
    job: Job,
    a: Assignment,
    at: _Moments,
    curve: PriceCurve | None,
) -> str:
    preds = [p for p in job.after if p in at.by_id and at.by_id[p].end == a.start]
    if preds:
        return f"predecessor {', '.join(sorted(preds))}"
    nodes = {p.node for p in a.placement}
    for r in instance.reservations:
        touches = bool(nodes & set(r.nodes)) or (r.pool is not None and r.pool in job.demand)
        if r.end == a.start and touches and not r.admits.admits(job):
            return f"reservation {r.id}"
    if instance.priority_policy == "strict":
        ahead = [
            b.id
            for b in (instance.job_by_id.get(s.id) for s in at.starting.get(a.start, ()))
            if b is not None and b.priority > job.priority and b.release <= job.release
        ]
        if ahead:
            return f"priority ({', '.join(sorted(ahead)[:3])})"
    if a.start == instance.now > job.release:
        return f"the present (now {instance.now})"
    partners = sorted(
        b.id
        for b in (instance.job_by_id.get(s.id) for s in at.starting.get(a.start, ()))
        if a.group is not None
        and b is not None
        and b.id != job.id
        and at.by_id[b.id].group == a.group
        and b.release == a.start
    )
    if partners:
        return f"group {a.group} ({', '.join(partners[:3])} released)"
    ended = sorted(
        b.id
        for b in at.ending.get(a.start, ())
        if b.id != a.id and nodes & {p.node for p in b.placement}
    )
    if ended:
        return f"capacity ({', '.join(ended[:3])} ended)"
    if curve is not None:
        price = curve.price_at(a.start)
        if price < curve.price_at(a.start - 1):
            return f"price (drops to {price:g})"
    return "capacity"
