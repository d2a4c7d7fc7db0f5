"""Fit rules shared by the two greedy engines (serial `serial.py`/`place.py` and
event-driven `events.py`), so that they cannot drift apart:

- `node_fits`: node CPUs and memory (R5) for the members placed `per_node` GPUs on a node;
- `late_reason`: the one message for a deadline or the horizon missed in the rule's order;
- `gpu_reservations` / `pool_reservations`: the reservations (R10) indexed per GPU of a
  node and per pool, kept as `Reservation` records; `blocks` says whether one of them
  forbids a unit's GPUs during an interval;
- `same_priority_class`: under strict priority, who may be pulled into a group with a job;
- `GroupCost`: the cost comparison of `form.py` (group versus the job alone and its
  partners later), shared by both engines, each giving its own queue estimates
  (`QueueEstimates`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Protocol

from planner.instance import Instance, Job, NodeGroup, Reservation, over


def node_fits(
    group: NodeGroup, members: Sequence[Job], per_node: int, used: Callable[[str], float]
) -> bool:
    """Whether the node's CPUs and memory hold the members' demand on top of `used("cpu")`
    / `used("mem")` (asked only for a resource the node limits and the members need)."""
    for cap, attr, kind in (
        (group.cpus, "cpus_per_gpu", "cpu"),
        (group.mem_gb, "mem_gb_per_gpu", "mem"),
    ):
        if cap is None:
            continue
        need = sum(per_node * getattr(m, attr) for m in members)
        if need and over(used(kind) + need, cap):
            return False
    return True


def late_reason(
    instance: Instance, members: Sequence[Job], durations: Sequence[int], t: int
) -> str | None:
    """Why the members starting at `t` miss a deadline or the horizon, else None."""
    for m, d in zip(members, durations, strict=True):
        if m.deadline is not None and t + d > m.deadline:
            # in this rule's order: another order may meet it (then the status is unknown)
            return f"deadline {m.deadline} of job {m.id} missed in this order (it ends at {t + d})"
    hz = instance.horizon
    if hz is not None and t + max(durations) > hz:
        return f"horizon {hz} passed in this order (a job ends at {t + max(durations)})"
    return None


def gpu_reservations(instance: Instance) -> dict[int, list[list[Reservation]]]:
    """Node index -> per GPU, the reservations holding it (nodes without none left out)."""
    out: dict[int, list[list[Reservation]]] = {}
    for r in instance.reservations:
        if r.pool is not None:
            continue
        for name in r.nodes:
            node = instance.node_by_name[name]
            per_gpu = out.setdefault(node.index, [[] for _ in range(node.gpus)])
            for k in r.gpus if r.gpus is not None else range(node.gpus):
                per_gpu[k].append(r)
    return out


def pool_reservations(instance: Instance) -> dict[str, list[Reservation]]:
    """Pool name -> its reservations, in instance order."""
    out: dict[str, list[Reservation]] = {p: [] for p in instance.pools}
    for r in instance.reservations:
        if r.pool is not None:
            out[r.pool].append(r)
    return out


def blocks(r: Reservation, t0: int, t1: int, members: Sequence[Job]) -> bool:
    """Whether reservation `r` overlaps [t0, t1) and fails to admit some member."""
    return r.start < t1 and t0 < r.end and not all(r.admits.admits(m) for m in members)


def same_priority_class(partners: Sequence[Job], job: Job, eff_prio: Mapping[str, int]) -> bool:
    """Under strict priority, partners share the job's priority and are not raised by
    successors, so pulling them forward cannot break R9 for jobs placed later."""
    return all(
        p.priority == job.priority and eff_prio[p.id] == eff_prio[job.id] == job.priority
        for p in partners
    )


def cost(objective: str, ends: Sequence[tuple[Job, float]]) -> float:
    """Sum of w * end (makespan: unit weights); weighted tardiness puts its term first."""
    if objective == "makespan":
        return sum(e for _, e in ends)
    total = sum(j.weight * e for j, e in ends)
    if objective == "total_weighted_tardiness":
        tard = sum(j.weight * max(0.0, e - j.due) for j, e in ends if j.due is not None)
        return tard * 1e6 + total
    return total


class QueueEstimates(Protocol):
    """What the waiting queue looks like from one job (form.py's fluid estimates)."""

    def wait(self, job: Job) -> float:
        """GPU-time of the waiting jobs ahead of `job`, divided by the cluster's GPUs."""
        ...

    def behind(self, job: Job, exclude: Sequence[str]) -> float:
        """Total weight of the waiting jobs behind `job`, except `exclude` (job ids)."""
        ...


class Span(NamedTuple):
    """A start and an end (estimated or planned)."""

    start: float
    end: float


class GroupCost:
    """form.py's comparison for one job `job` that would start alone over `solo`:
    `gain(...)` is the group's cost minus the cost of the job alone and its partners
    later (negative: the group pays). Partner estimates are cached across candidates."""

    def __init__(
        self,
        objective: str,
        job: Job,
        solo: Span,
        queue: QueueEstimates,
        total_gpus: int,
        baseline: Mapping[str, int] | None,
    ):
        self.objective, self.job, self.solo, self.queue = objective, job, solo, queue
        self.total_gpus, self.baseline = total_gpus, baseline
        self.partner: dict[str, Span] = {}

    def partner_span(self, p: Job, earliest: float, duration: float) -> Span:
        """Partner `p`'s solo run if not grouped now: from `earliest`, but ending no earlier
        than in the same order planned without groups (the baseline)."""
        span = self.partner.get(p.id)
        if span is None:
            end = earliest + duration
            if self.baseline is not None:
                end = max(end, float(self.baseline[p.id]))
            span = self.partner[p.id] = Span(end - duration, end)
        return span

    def gain(self, members: Sequence[Job], group: Span, ends: Sequence[float], gpus: int) -> float:
        """Cost of the group (members ending at `ends`, GPUs held over `group`) minus the
        cost of the alternative; partner spans must be estimated first."""
        job, solo = self.job, self.solo
        partners = [m for m in members if m.id != job.id]
        grouped = cost(self.objective, list(zip(members, ends, strict=True)))
        alone = cost(
            self.objective, [(job, solo.end), *((p, self.partner[p.id].end) for p in partners)]
        )
        # What the queue pays: the group holds its GPUs longer than the job alone, now,
        # delaying the jobs waiting behind it; in exchange each partner's own run (later)
        # disappears, which helps the jobs waiting behind that partner.
        ids = [m.id for m in members]
        share = gpus / self.total_gpus
        hold, solo_d = group.end - group.start, solo.end - solo.start
        extern = share * (hold - solo_d) * self.queue.behind(job, ids)
        for p in partners:
            span = self.partner[p.id]
            extern -= share * (span.end - span.start) * self.queue.behind(p, ids)
        grouped += extern
        return grouped - alone
