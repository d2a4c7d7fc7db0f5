"""Records of the online simulation (contract §8 and §10): what a policy sees (`View`),
what it asks for (`Decision`), what the engine reports, and the `Policy` base every policy
derives from (so that policies need only these records, not the engine).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.instance import Instance, Job
from planner.schedule import Placement

PlacementT = tuple[Placement, ...]


@dataclass(frozen=True)
class SimSegment:
    """One stretch of a job on one GPU set; `group` labels its interleaving group (None: solo)."""

    start: int
    end: int
    placement: PlacementT
    group: str | None = None


@dataclass(frozen=True)
class SimJob:
    """A released, unfinished job as a policy sees it at a decision point.

    `remaining_iters` and `remaining_solo` (time units run alone) are None for a blind
    policy; `attained` is the time units it has held GPUs so far (restarts included), and
    `attained_gpu` the same times its GPU count; `since`, when it runs, is when its current
    segment began.
    """

    job: Job
    released: int
    remaining_iters: float | None
    remaining_solo: float | None
    attained: int
    run: int | None  # id of the run (group on a GPU set) it belongs to now, None if waiting
    since: int | None = None

    @property
    def id(self) -> str:
        return self.job.id

    @property
    def gpus(self) -> int:
        return self.job.gpus

    @property
    def attained_gpu(self) -> int:
        return self.attained * max(1, self.job.gpus)


@dataclass(frozen=True)
class Want:
    """One group (a single job or an interleaving group) a policy wants running, and where."""

    jobs: tuple[str, ...]
    placement: PlacementT


@dataclass(frozen=True)
class Decision:
    """A policy's answer: the groups to run from now on, and an optional extra decision time."""

    wants: tuple[Want, ...]
    wake: int | None = None


@dataclass(frozen=True)
class EventRecord:
    """One decision point of the event log (contract §10 `--events`)."""

    time: int
    started: tuple[str, ...]
    stopped: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    policy_seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "started": list(self.started),
            "stopped": list(self.stopped),
            "groups": [list(g) for g in self.groups],
            "policy_seconds": round(self.policy_seconds, 6),
        }


def events_jsonl(events: Iterable[EventRecord]) -> str:
    """The event log (contract §10 `--events`): one JSON object per decision and line
    (JSON Lines), never NaN, like every JSON file the tool writes."""
    return "".join(json.dumps(e.to_dict(), allow_nan=False) + "\n" for e in events)


@dataclass(frozen=True)
class SimResult:
    """Per job its segments in order; `info` = {policy, decisions, preemptions, policy_seconds}."""

    instance: str
    policy: str
    segments: Mapping[str, tuple[SimSegment, ...]]
    info: Mapping[str, Any]
    events: tuple[EventRecord, ...] = field(default_factory=tuple)


class Policy:
    """Base of every policy: `decide` sees the released, unfinished jobs at `now`."""

    name = "policy"
    preemptive = False
    blind = False

    def decide(self, view: View) -> Decision:
        raise NotImplementedError


@dataclass(frozen=True)
class RunInfo:
    members: tuple[str, ...]  # jobs whose segments are still running
    placement: PlacementT
    label: str | None
    started: int = 0  # when the run (its members' segments) began


@dataclass(frozen=True)
class View:
    """What a policy sees at a decision point."""

    instance: Instance
    now: int
    jobs: tuple[SimJob, ...]
    runs: Mapping[int, RunInfo]
