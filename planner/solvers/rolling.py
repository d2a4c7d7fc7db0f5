"""`plan[:SOLVER]` (contract §10): rolling-horizon planning with any solver.

Without preemption in the instance, at a decision point the policy builds the live state
of contract §9 from what it sees (running runs with their placement, group and progress;
released waiting jobs; done and unreleased jobs are left out, so a waiting job's
predecessors are all done and `after` is dropped) and plans it with SOLVER within `budget`
seconds (`planner.solvers.solve`). It starts the groups the plan starts now; running jobs
stay where they are. A plan is made only when a job the last plan did not know is
waiting; otherwise the last plan is followed (a completion frees the GPUs the plan
expected). No plan is made while no waiting job fits the free GPUs. When a plan fails (no
schedule in the budget), the decision falls back to `srsf` list scheduling.

With preemption enabled, §9 lets a plan stop every running job at `now` and resume it
later, so every decision plans all released jobs afresh, each with the work it has left,
released at `now`, in an instance WITH preemption and the instance's restart costs
(`forecast.plan_instance`): `auto` then runs the preemptive planner (Muri's engine as
the start, then a search over its order, planner.solvers.preempt). The groups the plan
runs at `now` (its first segments) run — a run the plan keeps whole stays on its GPUs
without a restart (`settle`) — and every other running job is stopped. Options, measured
on cluster_trace.csv with experiments/rolling_forecast.py (README, Simulating policies):
`window`/`repeats` add phantom copies of the recent arrivals as a forecast
(`forecast.phantoms`), `follow` plans only at arrivals and follows the plan at the
completions between them, `trust` (DEFAULT_TRUST) keeps the planner's own online rule
(`policy.REGROUP`: Muri's matching, groups re-formed for throughput) unless the plan beats
that rule's engine start by that share. A plan that fails falls back to `srsf-p`.

Either way the solver sees the running jobs and at most `cap` waiting jobs (the smallest
remaining GPU-time first): the others wait for a later plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planner.instance import Instance, Job, Live, Preemption
from planner.metrics import objective_values
from planner.schedule import Schedule
from planner.simulate.forecast import (
    Followed,
    next_start,
    phantoms,
    plan_instance,
    remaining_jobs,
    starts_now,
)
from planner.simulate.model import Decision, PlacementT, Policy, SimJob, View, Want
from planner.simulate.packer import Packer
from planner.simulate.policies import KEYS, ListPolicy, first_fit, kept_packer, settle
from planner.solvers.dispatch import parse_spec, solve
from planner.solvers.options import SolveOptions
from planner.solvers.preempt.policy import REGROUP, KeyedMuri

# Waiting jobs given to one plan: with 8 nodes per job that is a few hundred placement
# options, the size `auto` still hands to CP-SAT at a 1 s budget (README, Choosing a
# solver); not tuned further.
DEFAULT_CAP = 40
# No forecast by default: on cluster_trace.csv (experiments/rolling_forecast.py, one run
# each, 1 s budget) plan:auto gave avg JCT 127,508 s and 131,022 s without phantoms,
# 139,030 s with a 100,000 s window and 143,434 s with it repeated 3 times (muri-s:
# 120,101 s).
DEFAULT_WINDOW = 0
# On a preemptive instance the plan's decision replaces the planner's own online rule
# (`policy.REGROUP`) only when the plan beats that rule's engine start by this share of the
# objective. On cluster_trace.csv (experiments/rolling_forecast.py --windows 0, 1 s per
# plan, one run each, avg JCT): share 0 116,705 s; 0.05 115,747 s; 0.2 110,314 s, the rule
# itself (muri-s: 120,101 s): a plan of the known jobs sees a future without arrivals and
# trades throughput for finishing them, which loses on an overloaded trace. Once the rule
# admitted better-mixing waiting jobs into its groups (`regroup.admit`), share 0.2 gave
# 102,554 s, 1.03 s of policy time per decision (the rule alone: 103,034 s).
DEFAULT_TRUST = 0.2
# A followed plan still holds when a job ends at most this many time units before its
# planned end (the plan rounds the work left up to whole iterations).
FOLLOW_SLACK = 2

Start = tuple[int, PlacementT, str | None]  # a planned job's start, placement, group label


class RollingHorizon(Policy):
    """Plan the live state with SOLVER at each decision point; start what the plan starts."""

    def __init__(
        self,
        solver: str = "auto",
        budget: float = 1.0,
        cap: int = DEFAULT_CAP,
        window: int = DEFAULT_WINDOW,
        preempt: bool = True,
        repeats: int = 1,
        follow: bool = False,
        trust: float = DEFAULT_TRUST,
    ):
        parse_spec(solver)
        self.name = f"plan:{solver}"
        self.solver = solver
        self.budget = budget
        self.cap = cap
        self.window = window
        self.preempt = preempt
        self.repeats = repeats
        self.follow = follow
        self._followed: Followed | None = None
        self.trust = trust
        self._base: Policy | None = None  # what `trust` falls back on
        self.plans = 0
        self._planned: frozenset[str] = frozenset()
        self._starts: dict[str, Start] = {}
        self._fallback = ListPolicy("srsf")

    def decide(self, view: View) -> Decision:
        if view.instance.preemption.enabled:
            self.preemptive = True  # the engine may stop what the plan does not start now
            return self._afresh(view)
        packer = kept_packer(view)
        keep = [Want(info.members, info.placement) for info in view.runs.values()]
        waiting = [s for s in view.jobs if s.run is None]
        if not waiting or packer.free_gpus < min(s.gpus for s in waiting):
            return Decision(tuple(keep))
        fresh = any(s.id not in self._planned for s in waiting)
        if fresh and not self._plan(view, waiting):
            return self._fallback.decide(view)
        starts, wake, stuck = self._due(view, packer, {s.id for s in waiting})
        if stuck and not fresh:  # the cluster went another way than the plan: plan again
            if not self._plan(view, waiting):
                return self._fallback.decide(view)
            packer = kept_packer(view)
            starts, wake, _ = self._due(view, packer, {s.id for s in waiting})
        return Decision(tuple(keep) + starts, wake)

    def _solve(self, inst: Instance) -> Schedule:
        self.plans += 1
        return solve(inst, self.solver, SolveOptions(time_limit=self.budget, seed=0, workers=1))

    def _afresh(self, view: View) -> Decision:
        """Preemptive: plan every released job from now, with preemption and a forecast of
        the jobs to come (`forecast.py`); run what the plan runs now."""
        if self._followed is not None:
            groups = self._followed.groups_at(view, FOLLOW_SLACK)
            if groups is not None:
                return Decision(settle(view, groups), self._followed.wake(view.now))
            self._followed = None
        running = [s for s in view.jobs if s.run is not None]
        waiting = sorted((s for s in view.jobs if s.run is None), key=KEYS["srsf"])
        chosen = running + waiting[: self.cap]
        if not chosen:
            return Decision(())
        extra = phantoms(view, self.window, self.cap, self.repeats)
        jobs = remaining_jobs(view, chosen) + extra
        plan = plan_instance(view, jobs, self.preempt)
        sched = self._solve(plan)
        if sched.status not in ("optimal", "feasible"):
            order = sorted(view.jobs, key=KEYS["srsf-p"])
            return Decision(settle(view, first_fit(view, order)))
        if self.trust > 0 and not gains(plan, sched, self.trust):
            self._followed = None
            return self._fallback_policy().decide(view)
        if self.follow:
            until = min((j.release for j in extra), default=None)
            self._followed = Followed(sched, frozenset(s.id for s in chosen), until)
        now = starts_now(sched, view.now, chosen)
        return Decision(settle(view, now), next_start(sched, view.now, chosen, extra))

    def _fallback_policy(self) -> Policy:
        """The preemptive planner's regroup policy (Muri's matching, groups re-formed for
        throughput), the planner's own online rule; it needs only what the view shows."""
        if self._base is None:
            self._base = KeyedMuri(REGROUP)
        return self._base

    def _plan(self, view: View, waiting: Sequence[SimJob]) -> bool:
        chosen = sorted(waiting, key=KEYS["srsf"])[: self.cap]
        sched = self._solve(live_state(view, chosen))
        if sched.status not in ("optimal", "feasible"):
            return False
        self._planned = frozenset(s.id for s in chosen)
        self._starts = planned_starts(sched, self._planned)
        return True

    def _due(
        self, view: View, packer: Packer, waiting: set[str]
    ) -> tuple[tuple[Want, ...], int | None, bool]:
        """The planned groups due by now whose GPUs are free, the next planned start, and
        whether a group due by now could not start."""
        groups: dict[tuple[int, PlacementT, str], list[str]] = {}
        wake = None
        for a, (start, pl, label) in self._starts.items():
            if a not in waiting:
                continue
            if start > view.now:
                wake = start if wake is None else min(wake, start)
                continue
            groups.setdefault((start, pl, label or a), []).append(a)
        out = []
        stuck = False
        for (_start, pl, _label), members in sorted(groups.items(), key=lambda kv: kv[0][0]):
            jobs = [view.instance.job_by_id[a] for a in members]
            if packer.blocked_now(pl, jobs) or not packer.take(pl, jobs, view.now + 1):
                stuck = True
                continue
            out.append(Want(tuple(sorted(members)), pl))
        return tuple(out), wake, stuck


def gains(plan: Instance, sched: Schedule, share: float) -> bool:
    """Whether the plan's first objective is at least `share` below that of the preemptive
    planner's regroup engine start (its Muri start without interleaving). True for a plan
    of another solver, which does not say; false when the preemptive planner has neither
    start (the time limit cut them), as nothing shows that the plan beats the rule."""
    preempt = sched.info.get("preempt")
    if preempt is None:
        return True
    starts = preempt.get("start_objective", {})
    start = starts.get("engine muri-s+regroup", starts.get("engine"))
    if start is None:
        return False
    name = plan.objective[0]
    return objective_values(plan, sched, [name])[name] <= (1.0 - share) * start


def live_state(view: View, waiting: Sequence[SimJob]) -> Instance:
    """The §9 live instance at `view.now`: the running jobs (placement, group, progress) and
    the given waiting jobs; preemption off, as the policy keeps what runs."""
    jobs: list[Job] = []
    for s in view.jobs:
        if s.run is None:
            continue
        info = view.runs[s.run]
        placement = tuple((p.node, tuple(p.gpus)) for p in info.placement)
        done = s.job.work - (s.remaining_iters or 0.0)
        live = Live("running", info.started, None, placement, info.label, max(0.0, done))
        jobs.append(replace(s.job, after=(), live=live))
    jobs.extend(replace(s.job, after=()) for s in waiting)
    inst = view.instance
    return replace(
        inst, jobs=tuple(jobs), now=view.now, preemption=Preemption(False, 0), horizon=None
    )


def planned_starts(sched: Schedule, ids: frozenset[str]) -> dict[str, Start]:
    """Start, placement and group label of every planned waiting job."""
    return {a.id: (a.start, tuple(a.placement), a.group) for a in sched.jobs if a.id in ids}
