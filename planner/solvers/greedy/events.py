"""Event-driven list scheduling (parallel schedule generation): the engine for large
instances, O(n log n) in jobs.

Time only moves forward. At each event time (a release, a job's end, a group's GPUs coming
free, a reservation's end) the planner repeatedly starts the waiting job with the best list
position (`ranks`: 0 is first) that fits *now*, until none fits. Because everything booked
has started by now, a GPU that is free now stays free (only reservations can forbid it),
and node CPU/memory and pool usage can only fall: fitting "now" needs only current
counters, no timeline search.

Structures (why it is not quadratic):
- waiting jobs (released, predecessors ended, not started) sit in buckets by shape
  (priority under strict, GPU count, eligible node groups, pool need; `waiting.py`); each
  bucket is a min segment tree over its jobs sorted by release, holding list positions. A
  bucket is looked at only when some node of its groups has enough free GPUs (per node
  group, the number of nodes with each free-GPU count); each bucket's best rank is kept
  from one start to the next and recomputed only where a start changed it
  (`bucket_mins.py`);
- strict priority (R9): job b may start only if no released, unstarted job of higher
  priority was released no later than b. With m = the least release among those, b's
  candidates are the bucket's jobs released before m: a prefix of the tree;
- node choice (best fit, `occupancy.py`): per node group and free-GPU count a sorted list
  of nodes; the node with the fewest free GPUs that fits, then the lowest index;
- the `interleave` rule's queue estimates (the GPU-time ahead of a job, the weight behind
  it) are Fenwick sums over list positions of the waiting jobs (`waiting.py`).
Jobs that fit by shape but not in detail (a reservation, node CPU/memory, a pool) are set
aside until the next event.

Group forming follows `form.py`: the same cost comparison (`fit.GroupCost`), evaluated at
the current time; the fit rules are `fit.py`'s, shared with the serial engine.
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

from planner.durations import solo_duration
from planner.groups import CandidateGroup
from planner.instance import Instance, Job
from planner.pools import PoolTimeline, pools_fit
from planner.precedence import successors
from planner.schedule import Assignment, Group, Placement
from planner.solvers.greedy.bucket_mins import BucketMins
from planner.solvers.greedy.fit import (
    GroupCost,
    Span,
    late_reason,
    pool_reservations,
    same_priority_class,
)
from planner.solvers.greedy.form import too_uneven
from planner.solvers.greedy.occupancy import Occupancy
from planner.solvers.greedy.order import best_solo_duration
from planner.solvers.greedy.trees import INF
from planner.solvers.greedy.waiting import PoolNeed, ReleasedByPriority, WaitingJobs

_END, _FREE, _WAKE = 0, 1, 2
TIMED_OUT = "time limit"  # the reason of a run ended by its deadline
_Pl = list[tuple[int, list[int]]]  # placement: (node index, GPU indices) per node


@dataclass
class Result:
    """What one run produced: assignments by job index, groups, or a failure reason."""

    assignments: list[Assignment] | None
    groups: list[Group]
    reason: str = ""
    job: str = ""


class _GroupPick(NamedTuple):
    """A group to start now instead of one job: members (job indices), node group index,
    per-member durations, placement."""

    members: list[int]
    node_group: int
    durations: tuple[int, ...]
    placement: _Pl


class _SoloOption(NamedTuple):
    """A node group a job may run on alone (-1: GPU-less) and its duration there."""

    node_group: int
    duration: int


class _SoloPick(NamedTuple):
    """A job's earliest-ending solo option that fits now."""

    node_group: int  # -1: GPU-less
    duration: int
    placement: _Pl


def plan_in_order(
    instance: Instance,
    ranks: Sequence[int],
    interleave: bool,
    objective: str,
    cands: Sequence[CandidateGroup] = (),
    baseline: Mapping[str, int] | None = None,
    eff_prio: Mapping[str, int] | None = None,
    eager: bool = False,
    stop: threading.Event | None = None,
    deadline: float | None = None,
) -> Result:
    """Plan with list positions `ranks` (aligned with `instance.jobs`, distinct).
    `eager`: take the best admissible group whenever one fits, without the cost comparison
    (more throughput under overload; the improvement search tries both). `stop` set (Ctrl-C
    or SIGTERM): the run ends at its next event with no plan (reason "interrupted"); so
    it does past `deadline` (`time.perf_counter()`; reason TIMED_OUT)."""
    engine = _Engine(instance, ranks, interleave, objective, cands, baseline, eff_prio, eager)
    return engine.run(stop, deadline)


class _Engine:
    """One event-driven run: the state of the cluster and of the waiting jobs."""

    def __init__(
        self,
        instance: Instance,
        ranks: Sequence[int],
        interleave: bool,
        objective: str,
        cands: Sequence[CandidateGroup],
        baseline: Mapping[str, int] | None,
        eff_prio: Mapping[str, int] | None,
        eager: bool = False,
    ):
        self.inst = instance
        self.jobs = instance.jobs
        n = self.n = len(self.jobs)
        self.idx = {j.id: i for i, j in enumerate(self.jobs)}
        self.rank = list(ranks)
        self.by_rank = [0] * n
        for i, rk in enumerate(self.rank):
            self.by_rank[rk] = i
        self.strict = instance.priority_policy == "strict"
        self.objective, self.baseline = objective, baseline
        self.interleave, self.eager = interleave, eager
        self.eff_prio = eff_prio or {}
        self.total_gpus = sum(nd.gpus for nd in instance.nodes) or 1
        # the release R9 compares: a live state's queued jobs keep their own (Instance.arrival)
        self.arrive = [instance.arrival(j) for j in self.jobs]
        self._init_nodes()
        self._init_jobs()
        self.cands_of: dict[int, list[CandidateGroup]] = defaultdict(list)
        if interleave:
            for cg in cands:
                for jid in cg.jobs:
                    self.cands_of[self.idx[jid]].append(cg)
        self.preds_left = [len(set(j.after)) for j in self.jobs]
        succ = successors(instance)
        self.succ = [[self.idx[s] for s in succ[j.id]] for j in self.jobs]
        self.released = [False] * n
        self.started = [False] * n
        self.released_by_prio = ReleasedByPriority(self.jobs, self.started, self.arrive)
        released = self.released_by_prio if self.strict else None
        self.best = BucketMins(self.queue, self.occ, released)  # after every take above
        self.assign: list[Assignment | None] = [None] * n
        self.groups: list[Group] = []
        self.events: list[tuple[int, int, int, object]] = []
        self.seq = 0

    def _init_nodes(self) -> None:
        """Node occupancy (`occupancy.py`), reservation ends and pools."""
        instance = self.inst
        self.occ = Occupancy(instance)
        self.ng_index = self.occ.ng_index
        self.wake = [r.end for r in instance.reservations]
        pool_res = pool_reservations(instance)
        self.pools = {p: PoolTimeline(cap, pool_res[p]) for p, cap in instance.pools.items()}
        # the least demand per (pool, class) that failed at this round's instant
        self._pool_floor: dict[tuple[str, frozenset[int]], float] = {}

    def _init_jobs(self) -> None:
        """Per job its solo options (node group index or -1, duration) and best solo
        duration; the waiting jobs by shape (`waiting.py`)."""
        instance = self.inst
        self.opts: list[list[_SoloOption]] = []
        self.best_solo: list[int] = []
        for j in self.jobs:
            if j.gpus == 0:
                self.opts.append([_SoloOption(-1, solo_duration(instance, j))])
            else:
                self.opts.append(
                    [
                        _SoloOption(self.ng_index[g.name], solo_duration(instance, j, g.speed))
                        for g in instance.eligible_groups(j)
                    ]
                )
            self.best_solo.append(best_solo_duration(instance, j))
        # the order `_solo_now` tries them in, sorted once (stable: instance order on ties)
        self.opts_by_end = [sorted(o, key=lambda o: o.duration) for o in self.opts]
        keys = [
            (
                j.priority if self.strict else 0,
                j.gpus,
                tuple(o.node_group for o in self.opts[i]),
                self._need(j, self.opts[i]),
            )
            for i, j in enumerate(self.jobs)
        ]
        work = [j.gpus * b for j, b in zip(self.jobs, self.best_solo, strict=True)]
        self.queue = WaitingJobs(
            self.jobs, self.rank, keys, work, self.interleave, self.total_gpus, self.arrive
        )
        self.waiting = self.queue.member  # job i is in its bucket's tree

    def _need(self, job: Job, opts: Sequence[_SoloOption]) -> PoolNeed:
        if not opts or min(o.duration for o in opts) <= 0:
            return ()
        return tuple(
            sorted(
                (name, self.pools[name].job_class(job), amount)
                for name, amount in job.demand.items()
                if amount and name in self.pools
            )
        )

    def _push(self, t: int, kind: int, payload: object) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, payload))

    # ---- fitting now ----------------------------------------------------------------
    def _pools_fit_solo(self, i: int, t: int, d: int) -> bool:
        """`pools_fit` for job `i` alone from `t` for `d`. A demand that does not fit at `t`
        itself fails for every duration, and so does any larger one of the same class
        until the next start (`_pool_floor`, cleared then and at every round; buckets
        hold jobs of one demand, so `_round` parks the rest of the bucket):
        with a binding pool most waiting jobs fail there at every event. On `plan
        generate --family mixed --jobs 10000 --nodes 64 --seed 1` (power pool of 20 kW)
        greedy:srsf made 4.25 million pool checks, all but 11,231 of them failing, in
        about 60 s."""
        job = self.jobs[i]
        need = self.queue.bucket[i].need if d > 0 else ()
        if self._floored(need):
            return False
        if pools_fit(self.pools, (job,), t, (d,)):
            return True
        for name, cls, amount in need:
            if not self.pools[name].fits_at(t, cls, amount):
                key = (name, cls)
                self._pool_floor[key] = min(amount, self._pool_floor.get(key, math.inf))
        return False

    def _floored(self, need: PoolNeed) -> bool:
        """Whether a demand of `need` failed, or one no larger of its class did, now."""
        floor = self._pool_floor
        return bool(floor) and any(
            amount >= floor.get((name, cls), math.inf) for name, cls, amount in need
        )

    def _solo_now(self, i: int, t: int) -> tuple[_SoloPick | None, str]:
        """Earliest-ending solo option that fits now, and why none ever will ("": one may
        fit later)."""
        job = self.jobs[i]
        members = (job,)
        best = None
        late = ""
        n_late = 0
        for gi, d in self.opts_by_end[i]:
            why = late_reason(self.inst, members, (d,), t)
            if why is not None:
                late = late or why
                n_late += 1
                continue
            if not self._pools_fit_solo(i, t, d):
                continue
            if gi < 0:
                return _SoloPick(gi, d, []), ""
            pl = self.occ.place(gi, members, job.gpus, t, d)
            if pl is not None:
                best = _SoloPick(gi, d, pl)
                break
        # Time only moves forward: once every option ends too late, none ever fits.
        return best, (late if n_late == len(self.opts[i]) else "")

    # ---- booking --------------------------------------------------------------------
    def _start(
        self,
        members: list[int],
        durs: Sequence[int],
        t: int,
        pl: list[tuple[int, list[int]]],
        group_id: str | None,
    ) -> None:
        hold = max(durs)
        inst = self.inst
        placement = tuple(Placement(inst.nodes[node].name, tuple(gp)) for node, gp in pl)
        mjobs = [self.jobs[i] for i in members]
        for node, gp in pl:
            bits = 0
            for k in gp:
                bits |= 1 << k
            self.occ.take(node, bits, len(gp))
            if hold > 0:
                self._push(t + hold, _FREE, (node, bits, len(gp)))
            else:
                self.occ.give(node, bits, len(gp))
            self.occ.use(node, len(gp), mjobs, 1)
        for i, m, d in zip(members, mjobs, durs, strict=True):
            if self.waiting[i]:
                self.queue.leave(i)
            self.started[i] = True
            self.assign[i] = Assignment(m.id, t, t + d, placement, group_id)
            for name, amount in m.demand.items():
                pool = self.pools[name]
                pool.book(t, t + d, pool.job_class(m), amount)
            self._push(t + d, _END, (i, pl))

    def _end(self, i: int, pl: list[tuple[int, list[int]]]) -> None:
        m = self.jobs[i]
        for node, gp in pl:
            self.occ.use(node, len(gp), (m,), -1)
        for s in self.succ[i]:
            self.preds_left[s] -= 1
            if self.preds_left[s] == 0 and self.released[s]:
                self.queue.enter(s)

    # ---- main loop ------------------------------------------------------------------
    def run(self, stop: threading.Event | None = None, deadline: float | None = None) -> Result:
        order = sorted(range(self.n), key=lambda i: (self.jobs[i].release, self.rank[i]))
        ptr = 0
        for w in sorted(set(self.wake)):
            self._push(w, _WAKE, None)
        for end, node, bits, count in self.occ.held:  # GPUs held from the start
            self._push(end, _FREE, (node, bits, count))
        events = self.events
        while ptr < self.n or events:
            # a run of 20,000 mixed jobs on 8 nodes takes minutes: SIGTERM must not wait
            if stop is not None and stop.is_set():
                return Result(None, [], "interrupted")
            if deadline is not None and time.perf_counter() > deadline:
                return Result(None, [], TIMED_OUT)
            t = events[0][0] if events else INF
            if ptr < self.n:
                t = min(t, self.jobs[order[ptr]].release)
            while events and events[0][0] == t:
                _, _, kind, payload = heapq.heappop(events)
                if kind == _END:
                    end_i, end_pl = cast(tuple[int, _Pl], payload)
                    self._end(end_i, end_pl)
                elif kind == _FREE:
                    node, bits, k = cast(tuple[int, int, int], payload)
                    self.occ.give(node, bits, k)
            while ptr < self.n and self.jobs[order[ptr]].release <= t:
                i = order[ptr]
                ptr += 1
                self.released[i] = True
                if self.strict:
                    self.released_by_prio.release(i)
                if self.preds_left[i] == 0:
                    self.queue.enter(i)
            fail = self._round(t)
            if fail is not None:
                return fail
        if not all(self.started):
            return self._stuck()
        assert all(a is not None for a in self.assign)
        return Result([a for a in self.assign if a is not None], self.groups)

    def _round(self, t: int) -> Result | None:
        aside: list[int] = []
        # Each bucket's best rank is kept across starts (`bucket_mins.py`): only what a
        # start or a set-aside changed is recomputed. On 3,000 generated mixed jobs with
        # strict priorities (`plan generate --family mixed --jobs 3000 --nodes 32 --seed 1
        # --preemption`), which set about 30 jobs aside per round, greedy:srsf took 7.5 s
        # recomputing every bucket after each of them; on 10,000 (`--nodes 64`, no
        # preemption), with buckets split by pool demand, scanning the cached minima of
        # every bucket still took about half of 25 s. Kept across starts, on `plan generate
        # --family mixed --jobs 10000 --nodes 128 --seed 1` greedy:srsf recomputes 0.86
        # million bucket values instead of 6.7 million, and its run took 4.6 s of CPU
        # instead of 7.4 s (same plan; load 3 on 2 cores, 2026-12-06).
        best = self.best
        best.new_epoch()
        self._pool_floor.clear()  # a new instant
        try:
            while True:
                top = best.top()
                if top is None:
                    return None
                best_r, best_k = top
                i = self.by_rank[best_r]
                opt, late = self._solo_now(i, t)
                if opt is None:
                    if late:
                        job = self.jobs[i]
                        return Result(None, [], f"job {job.id}: {late}", job.id)
                    self.queue.set_aside(i)
                    aside.append(i)
                    if self._floored(self.queue.buckets[best_k].need):
                        best.park(best_k)  # its pool demand failed now
                    continue
                self.queue.leave(i)
                d, pl = opt.duration, opt.placement
                limits = best.limit
                pick = self._choose_group(i, t, d, limits) if self.cands_of.get(i) else None
                if pick is not None:
                    gid = f"g{len(self.groups) + 1}"
                    self.groups.append(Group(gid, tuple(self.jobs[m].id for m in pick.members)))
                    self._start(pick.members, pick.durations, t, pick.placement, gid)
                else:
                    self._start([i], (d,), t, pl, None)
                best.new_epoch()  # started jobs may lift strict-priority limits
                self._pool_floor.clear()
        finally:
            for i in aside:
                self.queue.restore(i)

    def _stuck(self) -> Result:
        left = sorted((i for i in range(self.n) if not self.started[i]), key=lambda i: self.rank[i])
        # Prefer a job that waits on predecessors: it is where R9 and `after` collide.
        blocked = [
            i for i in left if any(not self.started[self.idx[a]] for a in self.jobs[i].after)
        ]
        i = (blocked or left)[0]
        job = self.jobs[i]
        if self.strict and blocked:
            why = (
                "strict priority: it waits on its predecessors, which may not start before "
                "higher-priority jobs released no later than them"
            )
        elif self.strict and self.released_by_prio.limit(job.priority) <= self.arrive[i]:
            why = "strict priority: a higher-priority job released no later cannot start before it"
        elif any(not self.started[self.idx[a]] for a in job.after):
            why = "it waits on a precedence cycle"
        else:
            why = "it fits on no node"
        return Result(None, [], f"job {job.id}: {why}", job.id)

    # ---- interleaving (form.py's rule, at the current time) --------------------------
    def _choose_group(self, i: int, t: int, d: int, limits: dict[int, int]) -> _GroupPick | None:
        """The group to start now instead of job `i` alone (duration `d`), or None."""
        job = self.jobs[i]
        costs = GroupCost(
            self.objective, job, Span(t, t + d), self.queue, self.total_gpus, self.baseline
        )
        best: tuple[float, _GroupPick] | None = None
        for cg in self.cands_of[i]:
            if too_uneven(cg):
                continue
            members = [self.idx[m] for m in cg.jobs]
            if not self._admissible(i, members, limits):
                continue
            mjobs = [self.jobs[m] for m in members]
            cgi = self.ng_index[cg.node_group]
            pl = self._group_fits_now(mjobs, cgi, cg, t)
            if pl is None:
                continue
            for p in members:
                if p != i:
                    start = t + self.queue.ahead(p)
                    costs.partner_span(self.jobs[p], start, self.best_solo[p])
            ends = [float(t + dd) for dd in cg.durations]
            gain = costs.gain(mjobs, Span(t, t + cg.span), ends, cg.gpus)
            if (gain < 0 or self.eager) and (best is None or gain < best[0]):
                best = (gain, _GroupPick(members, cgi, tuple(cg.durations), pl))
        return None if best is None else best[1]

    def _admissible(self, i: int, members: Sequence[int], limits: dict[int, int]) -> bool:
        """Partners are waiting and, under strict priority, of the job's class and released
        before the strict-priority limit."""
        partners = [m for m in members if m != i]
        if not all(self.waiting[p] for p in partners):
            return False
        if not self.strict:
            return True
        job = self.jobs[i]
        pjobs = [self.jobs[p] for p in partners]
        if not same_priority_class(pjobs, job, self.eff_prio):
            return False
        lim = limits.get(job.priority)
        if lim is None:
            lim = limits[job.priority] = self.released_by_prio.limit(job.priority)
        return all(self.arrive[p] < lim for p in partners)

    def _group_fits_now(
        self, mjobs: Sequence[Job], cgi: int, cg: CandidateGroup, t: int
    ) -> _Pl | None:
        """The group's placement if it fits now (GPU memory, deadlines, pools, GPUs)."""
        if not self.occ.gpu_mem_ok(mjobs, cgi):
            return None
        if late_reason(self.inst, mjobs, cg.durations, t) is not None:
            return None
        if not pools_fit(self.pools, mjobs, t, cg.durations):
            return None
        return self.occ.place(cgi, mjobs, cg.gpus, t, cg.span)
