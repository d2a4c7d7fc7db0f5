"""Online simulation of scheduling policies (contract §8 progress, §10 `plan simulate`)."""

from __future__ import annotations

from planner.simulate.engine import Policy, View, simulate
from planner.simulate.model import Decision, EventRecord, Segment, SimJob, SimResult, Want
from planner.simulate.muri import Muri
from planner.simulate.output import result_to_schedule_dict
from planner.simulate.policies import ListPolicy, PreemptivePolicy, Tiresias

POLICIES = ("fifo", "sjf", "srsf", "priority", "srtf", "srsf-p", "tiresias", "muri-s", "muri-l")


def make_policy(name: str) -> Policy:
    """A fresh policy object for one of `POLICIES` (policies may keep state across decisions)."""
    if name in ("fifo", "sjf", "srsf", "priority"):
        return ListPolicy(name)
    if name in ("srtf", "srsf-p"):
        return PreemptivePolicy(name)
    if name == "tiresias":
        return Tiresias()
    if name in ("muri-s", "muri-l"):
        return Muri(name)
    raise ValueError(f"unknown policy '{name}' (one of {', '.join(POLICIES)})")


__all__ = [
    "POLICIES",
    "Decision",
    "EventRecord",
    "Policy",
    "Segment",
    "SimJob",
    "SimResult",
    "View",
    "Want",
    "make_policy",
    "result_to_schedule_dict",
    "simulate",
]
