"""A policy that runs a batch plan (`partition.py`): groups of similar length, in Smith's
order, each kept to its last member's end.

Grouping pays through throughput: a pair runs each member at rate r = solo iteration /
group cycle, together r_a + r_b > 1 solo-jobs per unit of time, so the jobs waiting behind
it start sooner; its price is that every member runs slower. When the queue is long (all
jobs at time 0 on a busy cluster) the right groups are a planning problem of their own,
which `partition.Batcher` solves for the waiting jobs.

At each decision: if a waiting job is not in the plan (a release), the waiting jobs are
planned again (`Batcher.plan`, EVALS local-search moves, seeded); then what runs keeps its
GPUs and the plan's groups whose members all wait start first fit, in the plan's order
(backfilling: a group that does not fit is passed over). No run is ever stopped, so the
plan needs no preemption and is valid whether or not the instance enables it.
"""

from __future__ import annotations

from planner.simulate.engine import Policy, View
from planner.simulate.model import Decision, Want
from planner.simulate.packer import Packer
from planner.simulate.policies import jobs_of, placed_as, settle, until
from planner.solvers.preempt.partition import Batcher, Ids
from planner.solvers.preempt.policy import Keys

# Local-search moves per plan: on all-at-zero windows of 60 Muri jobs a plan costs well
# under a second (experiments/preemption_targets.py).
EVALS = 10_000
# Annealing heat of a first plan (partition._Search): on trace2's all-at-zero window of
# jobs 0-59 without preemption, 0.01 gives 1.12-1.18x sjf's avg JCT over three seeds,
# hill climbing (0) 1.11-1.12x.
HEAT = 0.01
# Moves per later plan (Replan), warm-started from the last one.
REPLAN_EVALS = 300


class BatchKeys(Keys):
    """`Keys` whose mode "batch" runs `Batch` (see `make` in search.py)."""

    @property
    def policy(self) -> str:
        return "batch" if self.mode == "batch" else Keys.policy.fget(self)  # type: ignore[attr-defined]


class Batch(Policy):
    """Runs the batch plan of the waiting jobs (module doc)."""

    preemptive = False

    def __init__(self, keys: Keys, evals: int = EVALS, seed: int = 0):
        self.name = "batch"
        self.keys, self.evals, self.seed = keys, evals, seed
        self.plan: list[Ids] = []
        self.planned: set[str] = set()

    def decide(self, view: View) -> Decision:
        waiting = sorted((s for s in view.jobs if s.run is None), key=self.keys.key)
        wait_ids = {s.id for s in waiting}
        if wait_ids - self.planned:
            self.plan = Batcher(view.instance, waiting).plan(self.evals, self.seed, HEAT)
            self.planned = set(wait_ids)
        by_id = {s.id: s for s in view.jobs}
        p = Packer(view.instance, view.now)
        wants = []
        for info in view.runs.values():
            p.book_running(info.placement, [by_id[a].job for a in info.members])
            wants.append(Want(info.members, info.placement))
        for g in self.plan:
            if not all(i in wait_ids for i in g):
                continue
            members = [by_id[i] for i in g]
            pl = p.place(jobs_of(members), until(view, members))
            if pl is not None:
                wants.append(Want(g, pl))
        return Decision(tuple(wants))


class Replan(Policy):
    """With preemption: at every decision all unfinished jobs are planned again from their
    remaining work (`Batcher.plan`, warm-started from the last plan, REPLAN_EVALS moves),
    and the plan's groups start first fit in its order; `settle` keeps an unchanged run on
    its GPUs, a changed one restarts (contract §8 restart costs)."""

    preemptive = True

    def __init__(self, keys: Keys, evals: int = EVALS, seed: int = 0):
        self.name = "batch"
        self.keys, self.evals, self.seed = keys, evals, seed
        self.plan: list[Ids] | None = None

    def decide(self, view: View) -> Decision:
        order = sorted(view.jobs, key=self.keys.key)
        if not order:
            return Decision(())
        b = Batcher(view.instance, order)
        if self.plan is None:
            self.plan = b.plan(self.evals, self.seed, HEAT)
        else:
            ids = {s.id for s in order}
            start = [g2 for g in self.plan if (g2 := tuple(i for i in g if i in ids))]
            seen = {i for g in start for i in g}
            start += [(s.id,) for s in order if s.id not in seen]
            self.plan = b.plan(REPLAN_EVALS, self.seed + len(ids), 0.0, start)
        by_id = {s.id: s for s in order}
        p = Packer(view.instance, view.now)
        chosen = []
        for g in self.plan:
            members = [by_id[i] for i in g]
            pl = p.place(jobs_of(members), until(view, members))
            if pl is not None:
                chosen.append(placed_as(members, pl))
        return Decision(settle(view, chosen))
