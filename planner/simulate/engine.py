"""The event-driven, preemptive, rate-based simulation (contract §8 progress, §10 loop).

Time runs in integer time units. Decisions happen at releases, at the first integer time
unit at or after a completion, at reservation starts and ends, every `interval` units when
given, and when the policy asks (`Decision.wake`). Between decisions every run (a group
on one GPU set) progresses by its precomputed trajectory; a member leaves its co-runners at
the exact instant its work is done and its segment is reported ending at the next integer.
The records of the engine's state (a run, a snapshot, `Stopped`) are in
`planner.simulate.engine_state`.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from planner.durations import (
    ceil_units,
    group_cycle,
    restart_units,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import Instance, Job, NodeGroup
from planner.live.resume import stop_times
from planner.live.running import progress_at
from planner.schedule import Placement
from planner.simulate.engine_state import (
    JobViews,
    NotApplicable,
    Report,
    Run,
    Snapshot,
    Stopped,
)
from planner.simulate.model import (
    Decision,
    EventRecord,
    PlacementT,
    Policy,
    RunInfo,
    SimJob,
    SimResult,
    SimSegment,
    View,
    Want,
)
from planner.simulate.packer import Packer, count_of, reservation_times
from planner.simulate.priority import PriorityGate
from planner.simulate.trajectory import state_at, trajectory

# Engine fields a snapshot copies (one level deep; segments, runs, preds and the arrival
# heap are copied by `_snapshot` itself, the rest are numbers or immutable).
_DICTS = ("as_run", "rem", "attained", "active", "done", "job_run")
_SCALARS = (
    "next_rid",
    "next_label",
    "preemptions",
    "policy_seconds",
    "decisions",
    "wake",
    "stopped_at_now",
)


class Engine:
    def __init__(
        self,
        instance: Instance,
        policy: Policy,
        *,
        interval: int | None = None,
        keep_events: bool = False,
        progress: Report | None = None,
        stop: threading.Event | None = None,
    ):
        self.inst = instance
        self.policy = policy
        self.interval = interval
        self.keep_events = keep_events
        self.progress = progress
        self.stop = stop
        self.unit = instance.unit_ms
        self.jobs = {j.id: j for j in instance.jobs}
        # each job as its current (or last) segment runs it: at that segment's count (§12)
        self.as_run: dict[str, Job] = dict(self.jobs)
        self.rem: dict[str, float] = {j.id: j.work for j in instance.jobs}
        self.segments: dict[str, list[SimSegment]] = {j.id: [] for j in instance.jobs}
        self.attained: dict[str, int] = dict.fromkeys(self.jobs, 0)
        # job -> release, for the released jobs not done, in release order: what a
        # decision sees (walking the done ones too made each decision cost O(jobs so far):
        # `plan simulate` of 5,000 generated jobs with fifo took 52.0 s, 36.9 s after this
        # change, README "Simulating policies")
        self.active: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.job_run: dict[str, int] = {}
        self.runs: dict[int, Run] = {}
        self.next_rid = 0
        self.next_label = 0
        self.preemptions = 0
        self.policy_seconds = 0.0
        self.decisions = 0
        self.events: list[EventRecord] = []
        self.waiting_preds = {j.id: set(j.after) for j in instance.jobs}
        self.succs: dict[str, list[str]] = {j.id: [] for j in instance.jobs}
        for j in instance.jobs:
            for a in j.after:
                self.succs[a].append(j.id)
        self.arrivals = [(j.release, j.id) for j in instance.jobs if not j.after]
        self.labels: set[str] = set()  # a live state's group labels, not to be reused
        self.views = JobViews(instance, policy.blind)
        # job -> its view, for the active jobs in `active`'s order, kept between decisions
        # (`_view`); None: made anew at the next decision (the start, a restored snapshot)
        self.sims: dict[str, SimJob] | None = None
        self.stale: set[str] = set()  # jobs stopped since the last view: remade then
        self.wake: int | None = None
        # a live state's running jobs the engine stops at `now` (_present), listed in the
        # first decision's event with what the policy stops (README, `--events`)
        self.stopped_at_now: tuple[str, ...] = ()
        if instance.is_live:
            self._present()
        heapq.heapify(self.arrivals)
        self.fixed_times = reservation_times(instance)
        self.gate = PriorityGate(instance)

    # -- a live state (contract §9) -----------------------------------------------------
    def _present(self) -> None:
        """Start from the instance's present: done jobs as they ran, running jobs as runs
        of their group (or alone) on their GPUs since `started`, with the work §9 leaves
        them at `now`; waiting jobs arrive at `now` at the earliest, and the first decision
        is at `now`, where a preemptive policy may stop a running job (its segment then
        ends at `now`; it resumes later with its restart cost)."""
        inst, now = self.inst, self.inst.now
        units: dict[str, list[Job]] = {}
        for j in inst.jobs:
            if j.live is None:
                continue
            if j.live.group is not None:
                self.labels.add(j.live.group)
            place = tuple(Placement(n, g) for n, g in j.live.placement)
            if j.state == "done":
                assert j.live.ended is not None
                self.done[j.id] = j.live.ended
                self.rem[j.id] = 0.0
                self.segments[j.id].append(
                    SimSegment(j.live.started, j.live.ended, place, j.live.group)
                )
                for b in self.succs[j.id]:
                    self.waiting_preds[b].discard(j.id)
                continue
            self.active[j.id] = j.release
            units.setdefault(j.live.group or "~solo:" + j.id, []).append(j)
        done_by = progress_at(inst, now)
        for members in units.values():
            first = members[0].live
            assert first is not None
            place = tuple(Placement(n, g) for n, g in first.placement)
            for j in members:
                self.as_run[j.id] = j.run_at(count_of(place))
                self.rem[j.id] = max(0.0, j.work - done_by.get(j.id, 0.0))
            restarts = dict.fromkeys((j.id for j in members), 0.0)  # §9: its first segment
            self._open(now, place, first.group, restarts, first.started)
        if inst.preemption.enabled:
            # §9: the plan may end a running segment at now. One on GPUs that a reservation
            # takes from now (a node down, `plan replan`) ends there whatever the policy:
            # no policy may run it on. Under a policy that stops no job (it makes no
            # decision when the reservation begins), so does one that a reservation would
            # cut later (`live.resume.stop_times`); a preemptive policy stops it when the
            # reservation begins. Under a policy that stops no job its co-members run on
            # without it (at the smaller group's rates: one that then meets a reservation
            # is in `stop_times` too); a preemptive policy gets the whole run back to
            # re-form: letting them run on made `greedy`'s plan of a live state 12% longer
            # (README, "Co-members of a job that a reservation stops")
            keep = self.policy.preemptive
            stop = set() if keep else set(stop_times(inst, at_now=True))
            free = Packer(inst, now)
            for run in list(self.runs.values()):
                if keep:
                    jobs = [self.as_run[a] for a in run.members]
                    leave = run.members if free.blocked_now(run.placement, jobs) else []
                else:
                    blocked = free.blocked_now
                    leave = [
                        a
                        for a in run.members
                        if a in stop or blocked(run.placement, [self.as_run[a]])
                    ]
                if leave:
                    self._stop(run, leave, now)
                    self.stopped_at_now += tuple(leave)
        waiting = {j.id for j in inst.jobs if j.live is None}
        self.arrivals = [
            (max(j.release, now), j.id)
            for j in inst.jobs
            if j.id in waiting and not self.waiting_preds[j.id]
        ]
        self.wake = now

    # -- progress -----------------------------------------------------------------------
    def _its(self, ng: NodeGroup | None) -> Callable[[Sequence[str]], Mapping[str, float]]:
        inst = self.inst
        speed = ng.speed if ng is not None else 1.0

        def cycle(active: Sequence[str]) -> Mapping[str, float]:
            jobs = [self.as_run[a] for a in active]
            if len(jobs) == 1:
                j = jobs[0]
                if j.model is None:
                    return {j.id: self.unit}
                return {j.id: solo_iteration_ms(inst.gpu_profile(j), speed)}
            stages = [stage_tuple(inst.gpu_profile(j), speed) for j in jobs]
            c = group_cycle(stages, inst.interleaving.overhead)
            return dict.fromkeys(active, c)

        return cycle

    def _state(self, run: Run, t: int) -> tuple[dict[str, float], dict[str, float]]:
        return state_at(run.traj, t * self.unit - run.epoch_ms)

    def _retraj(
        self,
        run: Run,
        t: int,
        rem: Mapping[str, float],
        rst: Mapping[str, float],
        at_ms: float | None = None,
    ) -> None:
        """`run` goes on from the state `rem`, `rst` of `t`, or of the instant `at_ms` when
        that is later (`_finish_until`). An epoch already past `t` stays: the state read
        there (`_state`) is its own, so it is not counted twice."""
        run.epoch_ms = max(t * self.unit, run.epoch_ms) if at_ms is None else at_ms
        run.traj = trajectory(rem, rst, self._its(run.node_group))

    # -- snapshots ----------------------------------------------------------------------
    def _snapshot(self, t: int) -> Snapshot:
        state: dict[str, Any] = {k: dict(getattr(self, k)) for k in _DICTS}
        state.update((k, getattr(self, k)) for k in _SCALARS)
        state["segments"] = {a: list(v) for a, v in self.segments.items()}
        state["runs"] = {r: replace(x, seg_start=dict(x.seg_start)) for r, x in self.runs.items()}
        state["waiting_preds"] = {a: set(v) for a, v in self.waiting_preds.items()}
        state["arrivals"] = list(self.arrivals)
        state["events"] = list(self.events)
        return Snapshot(t, state)

    def _restore(self, snap: Snapshot) -> None:
        st = snap.state
        for k in (*_DICTS, *_SCALARS, "arrivals", "events"):
            v = st[k]
            setattr(self, k, dict(v) if k in _DICTS else list(v) if isinstance(v, list) else v)
        self.segments = {a: list(v) for a, v in st["segments"].items()}
        self.runs = {r: replace(x, seg_start=dict(x.seg_start)) for r, x in st["runs"].items()}
        self.waiting_preds = {a: set(v) for a, v in st["waiting_preds"].items()}
        self.sims = None
        self.gate.reset()

    # -- the loop -----------------------------------------------------------------------
    def run(
        self, start: Snapshot | None = None, record: list[Snapshot] | None = None, every: int = 1
    ) -> SimResult:
        """Simulate to the end, from `start` if given; with `record`, a snapshot is appended
        every `every` decisions."""
        if start is not None:
            self._restore(start)
        # a live state's first decision is at `now` (§9): reservation times and interval
        # ticks before it are past
        t = self._next_time(self.inst.now - 1) if start is None else start.t
        while t is not None:
            if record is not None and self.decisions % every == 0:
                record.append(self._snapshot(t))
            self._finish_until(t)
            self._release_until(t)
            self._decide(t)
            if self.stop is not None and self.stop.is_set():
                raise Stopped(f"stopped at simulated time {t}")
            if self.progress is not None:
                self.progress(t, len(self.done), len(self.jobs))
            t = self._next_time(t)
        unfinished = [j for j in self.jobs if j not in self.done]
        if unfinished:
            raise RuntimeError(
                f"simulation stopped with {len(unfinished)} job(s) never run "
                f"(first: {unfinished[0]}): the policy left them waiting with nothing running"
            )
        return self._result()

    def _next_time(self, t: int) -> int | None:
        cands: list[int] = []
        if self.arrivals:
            cands.append(max(self.arrivals[0][0], t + 1))
        for run in self.runs.values():
            first = min(run.traj.finish.values())
            cands.append(max(t + 1, ceil_units(run.epoch_ms + first, self.unit)))
        if self.wake is not None and self.wake > t:
            cands.append(self.wake)
        waiting = len(self.active) > len(self.job_run)
        if (cands or waiting) and self.fixed_times:
            later = [x for x in self.fixed_times if x > t]
            if later:
                cands.append(later[0])
        # Ticks only while something can change: with nothing running and nothing to come,
        # waiting jobs would wait forever.
        if self.interval and cands:
            cands.append((t // self.interval + 1) * self.interval)
        return min(cands) if cands else None

    def _finish_until(self, t: int) -> None:
        t_ms = t * self.unit
        for rid in list(self.runs):
            run = self.runs[rid]
            # a member ends at `t` when its end rounds to `t` (the rule `_next_time` wakes
            # by); an absolute margin in ms freed a GPU a unit early under time unit "ms"
            # (R6) and a unit late under "min" (tests/test_simulate.py, the unit tests)
            ended = [
                a
                for a, f in run.traj.finish.items()
                if ceil_units(run.epoch_ms + f, self.unit) <= t
            ]
            if not ended:
                continue
            # the co-runners' state once the last of them is done, which may be a hair
            # after `t` (within the ceiling's tolerance): read at `t`, they lost the work
            # of that hair, many iterations under a vanishingly small group cycle (R3)
            at = max(t_ms - run.epoch_ms, max(run.traj.finish[a] for a in ended))
            rem, rst = state_at(run.traj, at)
            for a in ended:
                # a member whose work took less than the ceiling's tolerance still lasts a
                # unit (R1), also in a run whose epoch is not 0 (`durations.ceil_units`)
                end = max(
                    run.seg_start[a] + 1, ceil_units(run.epoch_ms + run.traj.finish[a], self.unit)
                )
                self._close(run, a, end)
                self.done[a] = end
                del self.active[a]
                if self.sims is not None:
                    del self.sims[a]
                self.rem[a] = 0.0
                del self.job_run[a]
                for b in self.succs[a]:
                    self.waiting_preds[b].discard(a)
                    if not self.waiting_preds[b]:
                        heapq.heappush(self.arrivals, (max(self.jobs[b].release, end), b))
                rem.pop(a)
                rst.pop(a)
            if rem:
                self._retraj(run, t, rem, rst, at_ms=run.epoch_ms + at)
            else:
                del self.runs[rid]

    def _release_until(self, t: int) -> None:
        while self.arrivals and self.arrivals[0][0] <= t:
            rel, a = heapq.heappop(self.arrivals)
            self.active[a] = rel
            if self.sims is not None:
                self.sims[a] = self._sim(a, t, {})  # waiting: no run, no live work

    def _close(self, run: Run, a: str, end: int) -> None:
        start = run.seg_start.pop(a)
        self.attained[a] += end - start
        self.segments[a].append(SimSegment(start, end, run.placement, run.label))

    # -- decisions ----------------------------------------------------------------------
    def _view(self, t: int) -> View:
        live: dict[str, float] = {}
        for run in self.runs.values():
            left, _ = self._state(run, t)
            live.update(left)
        if self.sims is None:
            self.sims = {a: self._sim(a, t, live) for a in self.active}
        else:
            # a waiting job's view changes only when it is released (`_release_until`) or
            # stopped; a running one's at every decision. Remaking every job's view at every
            # decision grew with decisions x queue (README "Simulating policies")
            for a in self.stale:
                if a in self.sims:
                    self.sims[a] = self._sim(a, t, live)
            for a in self.job_run:
                self.sims[a] = self._sim(a, t, live)
        self.stale.clear()
        runs = {
            rid: RunInfo(tuple(r.members), r.placement, r.label, min(r.seg_start.values()))
            for rid, r in self.runs.items()
        }
        return View(self.inst, t, tuple(self.sims.values()), runs)

    def _sim(self, a: str, t: int, live: Mapping[str, float]) -> SimJob:
        """The view of active job `a` at `t` (`live`: the running jobs' work left)."""
        rid = self.job_run.get(a)
        # a running job is seen at its current count, so the packer keeps that count
        # unless it is stopped (contract §12: the count changes only at a restart)
        j = self.jobs[a] if rid is None else self.as_run[a]
        att = self.attained[a]
        since = None if rid is None else self.runs[rid].seg_start[a]
        if since is not None:
            att += t - since
        return self.views.of(j, self.active[a], live.get(a, self.rem[a]), att, rid, since)

    def _decide(self, t: int) -> None:
        view = self._view(t)
        hidden: set[str] = set()
        spent = 0.0
        while True:
            t0 = time.perf_counter()
            dec = self.policy.decide(view)
            spent += time.perf_counter() - t0
            firsts = [a for w in dec.wants for a in w.jobs if not self._started(a)]
            blocked = self.gate.blocked(t, self._started, firsts)
            if not blocked.intersection(firsts):
                break
            # R9 (priority.py): the policy decides again without the jobs held back
            hidden |= blocked
            view = replace(view, jobs=tuple(s for s in view.jobs if s.id not in hidden))
        self.policy_seconds += spent
        self.decisions += 1
        self.wake = dec.wake
        started, stopped = self._apply(t, dec)
        stopped, self.stopped_at_now = self.stopped_at_now + stopped, ()
        if self.keep_events:
            groups = tuple(tuple(w.jobs) for w in dec.wants if len(w.jobs) > 1)
            self.events.append(EventRecord(t, started, stopped, groups, spent))

    def _started(self, a: str) -> bool:
        return bool(self.segments[a]) or a in self.job_run

    def _apply(self, t: int, dec: Decision) -> tuple[tuple[str, ...], tuple[str, ...]]:
        keep: dict[int, set[str]] = {}
        starts = []
        for w in dec.wants:
            rid = self.job_run.get(w.jobs[0])
            run = self.runs.get(rid) if rid is not None else None
            same = (
                run is not None
                and run.placement == w.placement
                and rid not in keep
                and all(self.job_run.get(a) == rid for a in w.jobs)
            )
            if same and run is not None:
                keep[run.rid] = set(w.jobs)
            else:
                starts.append(w)
        stopped = self._stop_unkept(t, keep)
        for w in starts:
            self._start(t, w)
        return tuple(a for w in starts for a in w.jobs), tuple(stopped)

    def _stop_unkept(self, t: int, keep: Mapping[int, set[str]]) -> list[str]:
        stopped: list[str] = []
        for rid in list(self.runs):
            run = self.runs[rid]
            stay = keep.get(rid, set())
            leave = [a for a in run.members if a not in stay]
            if not leave:
                continue
            if not self.policy.preemptive:
                raise RuntimeError(f"policy {self.policy.name} stopped {leave[0]} at {t}")
            self._stop(run, leave, t)
            stopped += leave
        return stopped

    def _stop(self, run: Run, leave: Sequence[str], t: int) -> None:
        """End the segments of `leave` (members of `run`) at `t`, with the work left."""
        rem, rst = self._state(run, t)
        for a in leave:
            self._close(run, a, t)
            self.rem[a] = rem.pop(a)
            rst.pop(a)
            del self.job_run[a]
            self.stale.add(a)
            self.preemptions += 1
        if rem:
            self._retraj(run, t, rem, rst)
        else:
            del self.runs[run.rid]

    def _start(self, t: int, w: Want) -> None:
        label = None
        if len(w.jobs) > 1:
            self.next_label += 1
            while f"g{self.next_label}" in self.labels:
                self.next_label += 1
            label = f"g{self.next_label}"
        count = count_of(w.placement)
        rst = {}
        for a in w.jobs:
            j = self.as_run[a] = self.jobs[a].run_at(count)
            # contract §8: the profile's restart_ms at the new count, else the instance's
            again = bool(self.segments[a])
            rst[a] = restart_units(self.inst, j) * self.unit if again else 0.0
        self._open(t, w.placement, label, rst, t)

    def _open(
        self, t: int, placement: PlacementT, label: str | None, rst: Mapping[str, float], since: int
    ) -> None:
        """A run from `t` of the jobs of `rst` (each with its restart cost) on `placement`,
        their segments starting at `since` (`t`, or a live state's `started`)."""
        ng = self.inst.node_by_name[placement[0].node].group if placement else None
        run = Run(self.next_rid, placement, ng, label, 0.0, trajectory({}, {}, lambda a: {}))
        self.next_rid += 1
        self._retraj(run, t, {a: self.rem[a] for a in rst}, rst)
        for a in rst:
            run.seg_start[a] = since
            self.job_run[a] = run.rid
        self.runs[run.rid] = run

    def _result(self) -> SimResult:
        info = {
            "policy": self.policy.name,
            "decisions": self.decisions,
            "preemptions": self.preemptions,
            "policy_seconds": round(self.policy_seconds, 3),
        }
        segs = {a: tuple(s) for a, s in self.segments.items()}
        return SimResult(self.inst.name, self.policy.name, segs, info, tuple(self.events))


def inapplicable(instance: Instance, policy: Policy) -> str | None:
    """Why `policy` cannot run on `instance` (after its name), or None: a preemptive
    policy needs `policy.preemption.enabled` (contract §8)."""
    if policy.preemptive and not instance.preemption.enabled:
        return "preempts jobs, but the instance does not enable policy.preemption"
    return None


def require_applicable(instance: Instance, policy: Policy) -> None:
    """NotApplicable (`inapplicable`'s reason) unless `policy` can run on `instance`."""
    why = inapplicable(instance, policy)
    if why is not None:
        raise NotApplicable(f"policy {policy.name} {why}")


def simulate(
    instance: Instance,
    policy: Policy,
    *,
    interval: int | None = None,
    events: bool = False,
    progress: Report | None = None,
    stop: threading.Event | None = None,
    start: Snapshot | None = None,
    record: list[Snapshot] | None = None,
    every: int = 1,
) -> SimResult:
    """Run `policy` online over `instance` (contract §10) and return every job's segments.
    Restart costs are the instance's (`durations.restart_units`); a preemptive policy needs
    `policy.preemption.enabled` (NotApplicable otherwise). `progress` is told the simulated time
    and the jobs done after every decision; once `stop` is set the run raises `Stopped`.
    `start` / `record` / `every`: resume from a snapshot, and record snapshots (`Engine.run`)."""
    if interval is not None and interval < 1:
        raise ValueError("interval must be at least one time unit")
    require_applicable(instance, policy)
    eng = Engine(
        instance, policy, interval=interval, keep_events=events, progress=progress, stop=stop
    )
    return eng.run(start, record, every)


__all__ = ["Engine", "inapplicable", "simulate"]
