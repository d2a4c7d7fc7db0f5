"""The list and preemptive policies of contract §10 (all but Muri's, in `muri`).

Non-preemptive (`fifo`, `sjf`, `srsf`, `priority`): what runs keeps running; waiting jobs
are taken in the rule's order and started where they fit now, a job that does not fit is
passed over (backfilling). Preemptive (`srtf`, `srsf-p`, `tiresias`): every decision
re-takes all jobs in the rule's order, first fit on the whole cluster, and stops what no
longer fits; `settle` then keeps every chosen run on the GPUs it already has.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from planner.durations import restart_units
from planner.instance import Job
from planner.simulate.model import Decision, Policy, SimJob, View, Want
from planner.simulate.packer import FOREVER, Packer, PlacementT, count_of, fewest_gpus

Key = Callable[[SimJob], tuple[float | int | str, ...]]


def until(view: View, members: Sequence[SimJob], preemptive: bool = True) -> int:
    """How far ahead a run must be clear of reservations. A run that cannot be stopped
    (`preemptive=False`, or an instance without preemption) must be clear for its members'
    remaining solo times summed (a group's cycle is below that sum); blind, of every later
    reservation. A preemptive policy re-decides when a reservation starts and stops what
    it must, so its run need only be clear for more than the restarts it pays: its own,
    when it resumes now, and the one that stop will cost (at most the run's own restart
    and remaining time, room to finish; blind, those alone). On a plan whose makespan a
    far reservation did not reach, waiting for the whole run to fit before it made the
    plan up to 29% worse; with less room, a segment made no progress
    (`tests/test_simulate.py`)."""
    rest = [m.remaining_solo for m in members]
    if not (preemptive and view.instance.preemption.enabled):
        if any(r is None for r in rest):
            return FOREVER
        # and a resumed member's restart first (a live state's stopped job): without it,
        # fifo resumed one that ran 1 unit into a hold (`tests/test_simulate_cli.py`)
        paid = [_paid(m, restart_units(view.instance, m.job)) for m in members if m.attained]
        return view.now + max(1, max(paid, default=0) + math.ceil(sum(r or 0.0 for r in rest)))
    # each member's restart cost worked out once (it was three times: `until` runs twice
    # for every run a preemptive decision places)
    costs = [restart_units(view.instance, m.job) for m in members]
    paid = [_paid(m, c) for m, c in zip(members, costs, strict=True)]
    need = max(p + c for p, c in zip(paid, costs, strict=True)) + 1
    if all(r is not None for r in rest):
        # or room to finish: the restart it pays now, then the work it has left
        need = min(need, max(paid) + math.ceil(sum(r or 0.0 for r in rest)))
    return view.now + max(1, need)


def end_on(p: Packer, view: View, members: Sequence[SimJob], preemptive: bool = True) -> int:
    """`until` for a run placed on `p`, worked out only where `p` reads it (`reads_until`:
    reservations or pools); elsewhere any end places the same. srsf-p on 3,000 generated
    jobs (`plan generate --family dl --jobs 3000 --nodes 128 --preemption`, no
    reservation, no pool) worked `until` out about 1.5 million times."""
    return until(view, members, preemptive) if p.reads_until else FOREVER


def _paid(m: SimJob, cost: int) -> int:
    """The restart a member whose restart costs `cost` pays if its run starts now: none for
    a first start or a run that goes on (`m.run`), its restart cost for a resume (contract
    §8)."""
    return cost if m.attained and m.run is None else 0


Runs = list[tuple[PlacementT, list[Job]]]


def running_runs(view: View) -> Runs:
    """Every running run's placement and jobs."""
    by_id = {s.id: s for s in view.jobs if s.run is not None}
    return [(info.placement, [by_id[a].job for a in info.members]) for info in view.runs.values()]


def packer_with(view: View, runs: Runs) -> Packer:
    """A packer with the GPUs, CPUs, memory and pools of `runs` taken."""
    p = Packer(view.instance, view.now)
    for placement, jobs in runs:
        p.book_running(placement, jobs)
    return p


def kept_packer(view: View) -> Packer:
    """A packer with every running run taken (what a policy that stops nothing places
    around)."""
    return packer_with(view, running_runs(view))


def jobs_of(members: Sequence[SimJob]) -> list[Job]:
    return [m.job for m in members]


def try_place(
    p: Packer, view: View, members: Sequence[SimJob], preemptive: bool = True
) -> PlacementT | None:
    """`members` placed first fit on `p` (booked), or None. A run that cannot fit is
    passed over before `until` is worked out: on a full cluster most of a long queue is
    (`tests/test_simulate_work.py`)."""
    jobs = jobs_of(members)
    if p.cannot_fit(jobs):
        return None
    return p.place(jobs, end_on(p, view, members, preemptive))


def placed_as(members: Sequence[SimJob], placement: PlacementT) -> list[SimJob]:
    """The members as placed: an elastic job's `job` at the count the placement gives, so
    `settle` places it at that count (contract §12)."""
    c = count_of(placement)
    return [replace(m, job=m.job.at_count(c)) if m.job.elastic else m for m in members]


def _current(view: View, grp: Sequence[SimJob]) -> PlacementT | None:
    """The GPUs the group holds now: all its members in one run, at the count chosen."""
    rid = grp[0].run
    if rid is None or any(m.run != rid for m in grp):
        return None
    pl = view.runs[rid].placement
    return pl if count_of(pl) == grp[0].gpus else None


def settle(view: View, chosen: Sequence[Sequence[SimJob]]) -> tuple[Want, ...]:
    """Placements for the chosen groups: a group whose members all belong to one current run
    keeps that run's GPUs; the others are placed first fit, largest first. If that fails
    (fragmentation), everything is placed again largest first, each preferring its current
    GPUs; a group that still does not fit is left out."""
    p = Packer(view.instance, view.now)
    done: dict[int, Want] = {}
    rest: list[int] = []
    for i, grp in enumerate(chosen):
        pl = _current(view, grp)
        if pl is not None and p.take(pl, jobs_of(grp), end_on(p, view, grp)):
            done[i] = Want(tuple(m.id for m in grp), pl)
            continue
        rest.append(i)
    rest.sort(key=lambda i: -chosen[i][0].gpus)
    for i in rest:
        pl2 = p.place(jobs_of(chosen[i]), end_on(p, view, chosen[i]))
        if pl2 is None:
            return _settle_again(view, chosen)
        done[i] = Want(tuple(m.id for m in chosen[i]), pl2)
    return tuple(done[i] for i in sorted(done))


def _settle_again(view: View, chosen: Sequence[Sequence[SimJob]]) -> tuple[Want, ...]:
    p = Packer(view.instance, view.now)
    out: list[Want] = []
    for grp in sorted(chosen, key=lambda g: -g[0].gpus):
        jobs, end = jobs_of(grp), end_on(p, view, grp)
        rid = grp[0].run
        pl = view.runs[rid].placement if rid is not None else None
        if pl is not None and count_of(pl) != grp[0].gpus:
            pl = None  # the group starts at another count (contract §12)
        if pl is None or not p.take(pl, jobs, end):
            pl = p.place(jobs, end)
        if pl is not None:
            out.append(Want(tuple(m.id for m in grp), pl))
    return tuple(out)


def first_fit(view: View, order: Iterable[SimJob]) -> list[list[SimJob]]:
    """The jobs that fit, taken in `order` on the whole cluster (a job that does not fit is
    passed over), each as a group of one."""
    p = Packer(view.instance, view.now)
    # once fewer GPUs are free than any job can run at, every later job is passed over
    # (`try_place`): `order` need not be taken further (`in_order` sorts no more of it)
    low = min((fewest_gpus(s.job) for s in view.jobs), default=0)
    out = []
    for sj in order:
        if p.free_gpus < low:
            break
        pl = try_place(p, view, [sj])
        if pl is not None:
            out.append(placed_as([sj], pl))
    return out


def in_order(jobs: Sequence[SimJob], keys: Sequence[Any]) -> Iterator[SimJob]:
    """`jobs` in the order of their `keys` (all different: each ends with the job's id),
    taken one at a time from a heap: `first_fit` stops once the cluster is full, and most of
    a long queue is then never sorted."""
    heap = [(k, i) for i, k in enumerate(keys)]
    heapq.heapify(heap)
    while heap:
        yield jobs[heapq.heappop(heap)[1]]


def _rest(sj: SimJob) -> float:
    return sj.remaining_solo if sj.remaining_solo is not None else math.inf


KEYS: dict[str, Key] = {
    "fifo": lambda s: (s.released, s.job.release, s.id),
    "sjf": lambda s: (_rest(s), s.released, s.id),
    "srsf": lambda s: (_rest(s) * max(1, s.gpus), s.released, s.id),
    "priority": lambda s: (
        -s.job.priority,
        s.job.due if s.job.due is not None else math.inf,
        s.released,
        s.id,
    ),
    "srtf": lambda s: (_rest(s), s.released, s.id),
    "srsf-p": lambda s: (_rest(s) * max(1, s.gpus), s.released, s.id),
}


class ListPolicy(Policy):
    """Non-preemptive list scheduling with backfilling."""

    def __init__(self, name: str):
        self.name = name
        self.key = KEYS[name]

    def decide(self, view: View) -> Decision:
        p = kept_packer(view)
        wants = [Want(info.members, info.placement) for info in view.runs.values()]
        # a job needing more GPUs than are free now is passed over (`try_place`: the free
        # GPUs only shrink as jobs start), so it is left out before the sort
        free = p.free_gpus
        waiting = sorted(
            (s for s in view.jobs if s.run is None and fewest_gpus(s.job) <= free), key=self.key
        )
        for sj in waiting:
            pl = try_place(p, view, [sj], preemptive=False)
            if pl is not None:
                wants.append(Want((sj.id,), pl))
        return Decision(tuple(wants))


class PreemptivePolicy(Policy):
    """`srtf` / `srsf-p`: shortest remaining (GPU-)time first, re-decided at every event."""

    preemptive = True

    def __init__(self, name: str):
        self.name = name
        self.key = KEYS[name]

    def decide(self, view: View) -> Decision:
        order = in_order(view.jobs, [self.key(s) for s in view.jobs])
        return Decision(settle(view, first_fit(view, order)))


class Tiresias(Policy):
    """Discretised least-attained-service (blind, preemptive): a job starts in queue 0 and
    moves down one queue each time its attained GPU-time passes the next threshold (GPU
    seconds; Muri's simulator uses 3250 for its first queue); queues are served in order,
    inside a queue the jobs that run keep going first, then the others by the time they
    entered the queue. The policy asks for a
    decision when a running job will pass its threshold."""

    name = "tiresias"
    preemptive = True
    blind = True

    def __init__(self, thresholds: Sequence[float] = (3250.0,)):
        self.thresholds = tuple(sorted(thresholds))
        self.limits = self.thresholds  # in time units x GPUs, set per instance
        self.entered: dict[str, tuple[int, int]] = {}  # job -> (queue, time it entered)
        self.asked: dict[str, SimJob] = {}  # job -> the view of it `_queue` last placed

    def _queue(self, sj: SimJob, now: int) -> tuple[int, int]:
        old = self.entered.get(sj.id)
        if old is not None and self.asked.get(sj.id) is sj:
            return old  # the same view of the job as last time (it waited): the same queue
        self.asked[sj.id] = sj
        q = bisect.bisect_right(self.limits, sj.attained_gpu)  # the thresholds passed
        if old is None or old[0] != q:
            old = (q, now if old is not None else sj.released)
            self.entered[sj.id] = old
        return old

    def decide(self, view: View) -> Decision:
        per_unit = view.instance.unit_ms / 1000.0
        self.limits = tuple(x / per_unit for x in self.thresholds)
        qs = [self._queue(s, view.now) for s in view.jobs]
        keys = [
            (q, s.run is None, entered, s.released, s.id)
            for s, (q, entered) in zip(view.jobs, qs, strict=True)
        ]
        wants = settle(view, first_fit(view, in_order(view.jobs, keys)))
        wake = None
        running = {a for w in wants for a in w.jobs}
        for s, (q, _) in zip(view.jobs, qs, strict=True):
            if s.id in running and q < len(self.limits):
                need = (self.limits[q] - s.attained_gpu) / max(1, s.gpus)
                at = view.now + max(1, math.ceil(need))
                wake = at if wake is None else min(wake, at)
        return Decision(wants, wake)
