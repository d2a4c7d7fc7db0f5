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

from planner.instance import NodeGroup
from planner.simulate.model import PlacementT
from planner.simulate.trajectory import Trajectory

Report = Callable[[int, int, int], None]  # (simulated time, jobs done, jobs in all)


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
