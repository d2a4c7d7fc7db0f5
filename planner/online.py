"""The named policies of `plan simulate` (contract §10) and of `plan bench`'s
`simulate:POLICY`: the engine's own (`planner.simulate`) and `plan[:SOLVER]`, the rolling
horizon that plans with a solver at each decision (`planner.solvers.rolling`). Above both
packages, so that the engine never imports the planners that run it."""

from __future__ import annotations

import threading
import time

from planner.instance import Instance
from planner.schedule import Schedule, schedule_from_dict
from planner.simulate.engine import require_applicable, simulate
from planner.simulate.model import Policy
from planner.simulate.muri import Muri
from planner.simulate.output import result_to_schedule_dict
from planner.simulate.policies import ListPolicy, PreemptivePolicy, Tiresias
from planner.solvers.preempt.policy import online_regroup
from planner.solvers.rolling import RollingHorizon

POLICIES = (
    "fifo", "sjf", "srsf", "priority", "srtf", "srsf-p", "tiresias", "muri-s", "muri-l", "regroup",
)  # fmt: skip


def make_policy(name: str, *, budget: float = 1.0, blind: bool = False) -> Policy:
    """A fresh policy object for one of `POLICIES` or `plan[:SOLVER]` (policies may keep
    state across decisions). `budget`: seconds per plan of `plan[:SOLVER]`; `blind` hides
    the jobs' iterations from the policy (contract §10 `--blind`)."""
    pol = _policy(name, budget)
    if blind and not pol.blind:
        if isinstance(pol, RollingHorizon):
            raise ValueError(f"policy '{name}' plans with the jobs' iterations: it cannot be blind")
        pol.blind = True
    return pol


SPEC_PREFIX = "simulate:"  # a solver spec that names a policy (plan bench)


def check_spec(spec: str) -> str:
    """The policy of a `simulate:POLICY` solver spec; ValueError if it names none."""
    if not spec.startswith(SPEC_PREFIX):
        raise ValueError(f"{spec!r} is not simulate:POLICY")
    name = spec[len(SPEC_PREFIX) :]
    make_policy(name)
    return name


def infeasible_reason(instance: Instance) -> str | None:
    """Why no policy can run every job of `instance`, or None: strict priority and `after`
    contradict each other, or, without preemption, a running job of a live state cannot
    keep its segment (a reservation takes its GPUs before it ends; with preemption the
    engine stops it at now)."""
    from planner.live.residual import kept_clash
    from planner.solvers.plain import priority_after_conflict

    reason = priority_after_conflict(instance)
    if reason is None and instance.is_live and not instance.preemption.enabled:
        reason = kept_clash(instance)
    return reason


def simulate_spec(
    instance: Instance, spec: str, *, budget: float = 1.0, stop: threading.Event | None = None
) -> Schedule:
    """The realized schedule of `simulate:POLICY` on `instance` as a `Schedule` (what
    `plan bench` measures like any planner's), `infeasible` with the reason when no policy
    can run every job (`infeasible_reason`); `NotApplicable` for a preemptive policy on
    an instance without preemption, `Stopped` once `stop` is set."""
    pol = make_policy(check_spec(spec), budget=budget)
    require_applicable(instance, pol)  # first, as `plan simulate` says it first
    reason = infeasible_reason(instance)
    if reason is not None:
        return Schedule(instance.name, spec, "infeasible", info={"reason": reason})
    t0 = time.perf_counter()
    res = simulate(instance, pol, stop=stop)
    doc = result_to_schedule_dict(instance, res, time.perf_counter() - t0)
    return schedule_from_dict(doc)


def _policy(name: str, budget: float) -> Policy:
    if name in ("fifo", "sjf", "srsf", "priority"):
        return ListPolicy(name)
    if name in ("srtf", "srsf-p"):
        return PreemptivePolicy(name)
    if name == "tiresias":
        return Tiresias()
    if name in ("muri-s", "muri-l"):
        return Muri(name)
    if name == "regroup":
        return online_regroup()
    head, colon, solver = name.partition(":")
    if head == "plan":
        from planner.errors import UsageError

        if colon and not solver:
            raise ValueError("'plan:' names no solver after ':': use plan or plan:SOLVER")
        try:
            return RollingHorizon(solver or "auto", budget)
        except UsageError as e:
            raise ValueError(str(e)) from None
    raise ValueError(f"unknown policy '{name}' (one of {', '.join(POLICIES)}, plan[:SOLVER])")
