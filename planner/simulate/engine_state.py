"""The records of the simulation engine's state (contract §8 and §10): a run of one group on
one GPU set with its trajectory (`Run`), a copy of the engine's state to resume from
(`Snapshot`), the `Stopped` and `NotApplicable` exceptions and the progress callback
type (`Report`).

Separate from `planner.simulate.engine` (the event loop, `Engine`, and `simulate`) so that
each module holds one responsibility; the planners' search (`planner.solvers.preempt`)
resumes engine runs from these snapshots and catches `Stopped`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.durations import best_speed, solo_iteration_ms
from planner.instance import Instance, Job, NodeGroup
from planner.simulate.model import PlacementT, SimJob
from planner.simulate.trajectory import Trajectory

Report = Callable[[int, int, int], None]  # (simulated time, jobs done, jobs in all)


class JobViews:
    """What a decision's view shows of each released job (`SimJob`), made anew only when
    what it is made of changed: most of a long queue waits from one decision to the next,
    and making every job anew at every decision was a fifth of `plan simulate --policy
    tiresias` on Muri's trace4 (README "Simulating policies")."""

    def __init__(self, instance: Instance, blind: bool):
        self.instance = instance
        self.blind = blind
        self.seen: dict[str, tuple[tuple[Any, ...], SimJob]] = {}
        self.iteration_ms: dict[tuple[str, int], float] = {}  # on its fastest node group

    def of(
        self, job: Job, released: int, rem: float, att: int, run: int | None, since: int | None
    ) -> SimJob:
        """`job` (at the count it runs at) with `rem` iterations left (hidden from a blind
        policy), `att` time units attained, in `run` since `since` (None: waiting)."""
        made = (job, released, rem, att, run, since)
        old = self.seen.get(job.id)
        if old is not None and old[0] == made:
            return old[1]
        solo = None
        if not self.blind:
            solo = rem
            if job.model is not None:
                solo = rem * self._iteration_ms(job) / self.instance.unit_ms
        sj = SimJob(job, released, None if self.blind else rem, solo, att, run, since)
        self.seen[job.id] = (made, sj)
        return sj

    def _iteration_ms(self, job: Job) -> float:
        """`job`'s solo iteration at its count on its fastest node group (`best_speed`)."""
        key = (job.id, job.gpus)
        if key not in self.iteration_ms:
            gp = self.instance.gpu_profile(job)
            self.iteration_ms[key] = solo_iteration_ms(gp, best_speed(self.instance, job))
        return self.iteration_ms[key]


class Stopped(Exception):
    """The caller's stop event was set: the simulation ended before every job was done."""


class NotApplicable(ValueError):
    """The policy does not apply to the instance (`engine.inapplicable` says why)."""


@dataclass(frozen=True)
class Snapshot:
    """The engine's state at the top of its loop at time `t`, before that decision: a run
    resumed from it with a policy that decides as the recorded one did up to `t` gives the
    same schedule as a run from the start (the planner's search resumes from the last
    snapshot before the first release whose order it changed)."""

    t: int
    state: Mapping[str, Any]


@dataclass
class Run:
    rid: int
    placement: PlacementT
    node_group: NodeGroup | None  # None: a run on no GPUs (pool-only jobs)
    label: str | None
    epoch_ms: float
    traj: Trajectory
    seg_start: dict[str, int] = field(default_factory=dict)

    @property
    def members(self) -> list[str]:
        return sorted(self.traj.rem)
