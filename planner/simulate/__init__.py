"""Online simulation of scheduling policies (contract §8 progress, §10 `plan simulate`): the
event-driven engine and the policies that need no planner. The named policies of `plan
simulate`, with `plan[:SOLVER]` (`planner.solvers.rolling`), are in `planner.online`."""

from __future__ import annotations

from planner.simulate.engine import inapplicable, simulate
from planner.simulate.engine_state import NotApplicable, Stopped
from planner.simulate.model import (
    Decision,
    EventRecord,
    Policy,
    SimJob,
    SimResult,
    SimSegment,
    View,
    Want,
)
from planner.simulate.output import result_to_schedule_dict

__all__ = [
    "Decision",
    "EventRecord",
    "NotApplicable",
    "Policy",
    "SimSegment",
    "SimJob",
    "SimResult",
    "Stopped",
    "View",
    "Want",
    "inapplicable",
    "result_to_schedule_dict",
    "simulate",
]
