"""The static batch problem: cut waiting jobs into interleaving groups and order them so
that the sum of weighted completion times is small, when every job is there at once.

A group runs its members from one start to their exact in-group ends
(`durations.member_elapsed_ms`) and holds its GPUs for its span (the last member's end,
contract §4). A plan is a list of groups; `Batcher.cost` estimates its total weighted
completion time by list scheduling the groups, in Smith's order (span x GPUs / the
members' weight, shortest first), on the cluster's GPUs taken as interchangeable lanes: a
group of c GPUs starts when c lanes are free. For jobs that fill whole nodes (Muri's 8-GPU
jobs on 8-GPU nodes) this is the list schedule the engine then runs.

`Batcher.plan` starts from consecutive groups of the jobs in the given order (dynamic
programming on the same estimate, as if each group delayed the jobs after it by its span x
its share of the cluster's GPUs) and improves it by a seeded local search: move one job to
another group or to a group of its own, or swap two jobs of the same GPU count between
groups; a move is kept when the estimate drops.

With releases (`release`: job id -> time units after the plan's start) a group may not start
before its last member's release, and Smith's order no longer fits: the estimate is then a
non-delay list schedule (`_dispatch`), each step starting the group that can start first,
ties to the smaller Smith ratio, and the search starts from every job alone (on Muri's
testbed that start's estimate is `greedy:srsf`'s plan, 113,742 s average JCT:
docs/PREEMPTION.md, "Releases known in advance").
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
import threading
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from planner.durations import group_admissible, member_elapsed_ms, solo_iteration_ms, stage_tuple
from planner.instance import Instance, Job
from planner.simulate.model import SimJob

Ids = tuple[str, ...]
# How far `Batcher.reorder` moves a group in one step.
REORDER_REACH = 5
# Moves between two looks at the stop event (about 10 ms on muri-testbed-100).
STOP_EVERY = 20


class Timed(NamedTuple):
    """A group of a plan with the start (time units after the plan's) and the nodes the
    estimate gives it."""

    ids: Ids
    start: float
    nodes: tuple[int, ...]


class Batcher:
    """The batch problem over `jobs` (taken in the given order) on `inst`'s cluster."""

    def __init__(
        self, inst: Instance, jobs: Sequence[SimJob], release: Mapping[str, float] | None = None
    ):
        self.inst = inst
        self.release = None if release is None else dict(release)
        self.jobs = list(jobs)
        self.by_id = {s.id: s for s in jobs}
        self.lanes = sum(n.gpus for n in inst.nodes)
        self.size = inst.interleaving.max_group if inst.interleaving.enabled else 1
        self._spans: dict[Ids, tuple[tuple[float, ...], float] | None] = {}
        self._ok: dict[tuple[int, tuple[str, ...]], bool] = {}
        self._eligible: dict[tuple[int, str | None], list[int]] = {}
        self._free0 = self._held() if release is not None else None

    # -- one group ------------------------------------------------------------------------
    def ends(self, ids: Ids) -> tuple[tuple[float, ...], float] | None:
        """(each member's end after the group's start, the members' total weight x ends
        summed) in time units; None if the jobs may not form a group."""
        key = tuple(sorted(ids))
        if key in self._spans:
            return self._spans[key]
        out = self._ends(key)
        self._spans[key] = out
        return out

    def _ends(self, ids: Ids) -> tuple[tuple[float, ...], float] | None:
        g = [self.by_id[i] for i in ids]
        if len(g) == 1:
            rest = g[0].remaining_solo or 0.0
            return (rest,), g[0].job.weight * rest
        if len(g) > self.size or not self._admissible([s.job for s in g]):
            return None
        speed = _speed(self.inst, g[0].job)
        gps = [self.inst.gpu_profile(s.job) for s in g]
        ms = member_elapsed_ms(
            [s.remaining_iters or 0.0 for s in g],  # type: ignore[misc]
            [stage_tuple(gp, speed) for gp in gps],
            [solo_iteration_ms(gp, speed) for gp in gps],
            self.inst.interleaving.overhead,
        )
        ends = tuple(e / self.inst.unit_ms for e in ms)
        return ends, sum(s.job.weight * e for s, e in zip(g, ends, strict=True))

    def _admissible(self, jobs: list[Job]) -> bool:
        key = (jobs[0].gpus, tuple(sorted(j.model or "" for j in jobs)))
        ok = self._ok.get(key)
        if ok is None:
            same = len({j.gpus for j in jobs}) == 1 and all(j.model for j in jobs)
            groups = [ng for ng in self.inst.node_groups if self.inst.misfit(jobs[0], ng) is None]
            ok = same and bool(groups)
            ok = ok and group_admissible(self.inst, jobs, groups[0].speed, groups[0].gpu_mem_gb)
            self._ok[key] = ok
        return ok

    # -- a plan ---------------------------------------------------------------------------
    def ordered(self, plan: Sequence[Ids]) -> list[Ids]:
        """The groups in Smith's order: span x GPUs / weight, smallest first."""
        return sorted(plan, key=lambda g: (self._ratio(g), min(g)))

    def _ratio(self, g: Ids) -> float:
        e = self.ends(g)
        span = max(e[0]) if e is not None else float("inf")
        w = sum(self.by_id[i].job.weight for i in g)
        return span * max(1, self.by_id[g[0]].gpus) / max(w, 1e-9)

    def cost(self, plan: Sequence[Ids], as_listed: bool = False) -> float:
        """Estimated total weighted completion time of the plan (module doc); its groups in
        Smith's order, or in the order given when `as_listed`."""
        timed = self.timed(plan, as_listed)
        if timed is None:
            return float("inf")
        total = 0.0
        for t in timed:
            e = self.ends(t.ids)
            assert e is not None
            total += e[1] + t.start * sum(self.by_id[i].job.weight for i in t.ids)
        return total

    def timed(self, plan: Sequence[Ids], as_listed: bool = False) -> list[Timed] | None:
        """The plan's groups in Smith's order with the start and the nodes (indices into
        `inst.nodes`) the estimate gives them; None if some group is not admissible.
        With releases, the non-delay list schedule (`_dispatch`) whatever the order."""
        if self.release is not None:
            return self._dispatch(plan)
        free = [[0.0] * n.gpus for n in self.inst.nodes]  # per node, GPU free times sorted
        out = []
        for g in plan if as_listed else self.ordered(plan):
            e = self.ends(g)
            if e is None:
                return None
            job = self.by_id[g[0]].job
            start, nodes = self._book(free, self._nodes(job), max(1, job.gpus), max(e[0]))
            out.append(Timed(g, start, nodes))
        return out

    def _dispatch(self, plan: Sequence[Ids]) -> list[Timed] | None:
        """Non-delay list schedule of the groups under releases (module doc): the group
        that can start first goes next, ties to the smaller Smith ratio, then member ids.

        Groups that need the same GPUs (count and eligible nodes) can start at the same
        time E, or at their release if later: per such class, the released ones wait in a
        heap by ratio and the others in release order, so a step costs a look at each
        class instead of each group."""
        assert self.release is not None and self._free0 is not None
        free = [list(lanes) for lanes in self._free0]
        classes: dict[tuple[int, tuple[int, ...]], _Class] = {}
        for g in plan:
            e = self.ends(g)
            if e is None:
                return None
            job = self.by_id[g[0]].job
            key = (max(1, job.gpus), tuple(self._nodes(job)))
            rel = max(self.release[i] for i in g)
            classes.setdefault(key, _Class()).pending.append((rel, self._ratio(g), g, max(e[0])))
        for cl in classes.values():
            cl.pending.sort()
        out = []
        for _ in range(len(plan)):
            best: tuple[float, float, Ids, tuple[int, tuple[int, ...]]] | None = None
            for key, cl in classes.items():
                at = cl.next(self._free_at(free, *key))
                if at is not None and (best is None or at[:3] < best[:3]):
                    best = (*at[:3], key)
            assert best is not None
            start_at, _, g, key = best
            span = classes[key].take(g)
            start, took = self._book(free, key[1], key[0], span, start_at)
            out.append(Timed(g, start, took))
        return out

    def _held(self) -> list[list[float]]:
        """Per node, its GPUs' free times before any group (sorted): the end of the GPU
        reservations that hold them (`is_release_batch` admits only reservations for nobody
        that start by the first release, such as a live state's running jobs,
        `planner.live.residual`), else 0."""
        index = {n.name: n.index for n in self.inst.nodes}
        free = [[0.0] * n.gpus for n in self.inst.nodes]
        for r in self.inst.reservations:
            for name in r.nodes:
                lanes = free[index[name]]
                held = len(lanes) if r.gpus is None else min(len(lanes), len(r.gpus))
                # the least-held GPUs take the hold (any GPUs of the node will do here)
                lanes[:held] = [max(x, float(r.end)) for x in lanes[:held]]
                lanes.sort()
        return free

    @staticmethod
    def _free_at(free: list[list[float]], c: int, nodes: tuple[int, ...]) -> float:
        """When `_book` finds c GPUs of `nodes` free (ignoring releases)."""
        fit = [free[i][c - 1] for i in nodes if len(free[i]) >= c]
        if fit:
            return min(fit)
        if not nodes:
            return float("inf")
        need = max(1, c // len(free[nodes[0]]))
        return sorted(free[i][-1] for i in nodes)[need - 1]

    def _nodes(self, job: Job) -> list[int]:
        """Indices of the nodes `job` may use (a multi-node job: its first node group's)."""
        key = (job.gpus, job.model)
        got = self._eligible.get(key)
        if got is None:
            groups = [g for g in self.inst.eligible_groups(job) if self.inst.misfit(job, g) is None]
            if job.gpus > min((g.gpus for g in groups), default=0):
                groups = groups[:1]
            names = {g.name for g in groups}
            got = [n.index for n in self.inst.nodes if n.group.name in names]
            self._eligible[key] = got
        return got

    @staticmethod
    def _book(
        free: list[list[float]], nodes: Sequence[int], c: int, span: float, at: float = 0.0
    ) -> tuple[float, tuple[int, ...]]:
        """Earliest start, not before `at`, of a c-GPU run on `nodes` of `free` (c GPUs of
        one node, or c / node size whole nodes), booked for `span`; with the nodes it
        takes."""
        fit = [i for i in nodes if len(free[i]) >= c]
        if fit:
            node = min(fit, key=lambda i: free[i][c - 1])
            start = max(at, free[node][c - 1])
            lanes = free[node]
            del lanes[:c]
            pos = bisect.bisect_left(lanes, start + span)
            lanes[pos:pos] = [start + span] * c
            return start, (node,)
        if not nodes:
            return float("inf"), ()
        need = max(1, c // len(free[nodes[0]]))
        took = sorted(nodes, key=lambda i: free[i][-1])[:need]
        start = max(at, max(free[i][-1] for i in took))
        for i in took:
            free[i] = [start + span] * len(free[i])
        return start, tuple(sorted(took))

    def consecutive(self) -> list[Ids]:
        """Dynamic programming over consecutive jobs of each GPU count (module doc)."""
        after = [0.0] * (len(self.jobs) + 1)
        for i in range(len(self.jobs) - 1, -1, -1):
            after[i] = after[i + 1] + self.jobs[i].job.weight
        pos = {s.id: i for i, s in enumerate(self.jobs)}
        by_k: dict[int, list[SimJob]] = {}
        for s in self.jobs:
            by_k.setdefault(s.gpus, []).append(s)
        out: list[Ids] = []
        for k, lst in by_k.items():
            share = max(1, k) / max(1, self.lanes)
            behind = [after[pos[s.id] + 1] * share for s in lst]
            out.extend(self._cut(lst, behind))
        return out

    def _cut(self, lst: Sequence[SimJob], behind: Sequence[float]) -> list[Ids]:
        n = len(lst)
        best = [0.0] + [float("inf")] * n
        cut = [0] * (n + 1)
        for j in range(1, n + 1):
            for m in range(1, min(self.size, j) + 1):
                ids = tuple(s.id for s in lst[j - m : j])
                e = self.ends(ids)
                if e is None:
                    continue
                c = best[j - m] + e[1] + max(e[0]) * behind[j - 1]
                if c < best[j]:
                    best[j], cut[j] = c, j - m
        out: list[Ids] = []
        j = n
        while j > 0:
            out.append(tuple(s.id for s in lst[cut[j] : j]))
            j = cut[j]
        return out[::-1]

    def plan(
        self,
        evals: int,
        seed: int = 0,
        heat: float = 0.0,
        start: list[Ids] | None = None,
        seconds: float | None = None,
        stop: threading.Event | None = None,
    ) -> list[Ids]:
        """`start` (default: consecutive groups) improved by `evals` annealing moves (or
        moves for `seconds`; none once `stop` is set; `heat` 0: hill climbing), in Smith's
        order, then reordered by `reorder`; the result is in the order to run
        (`cost(..., as_listed=True)`). With releases the default start is every job alone,
        and the order is the estimate's."""
        if start is None:
            start = self.consecutive() if self.release is None else [(s.id,) for s in self.jobs]
        plan = start
        rng = random.Random(seed)
        if self.size > 1 and len(self.jobs) > 1 and (evals > 0 or (seconds or 0.0) > 0.0):
            plan = _Search(self, plan, rng, heat).run(evals, seconds, stop)
        if self.release is not None:
            return plan  # `timed` orders it
        return self.reorder(self.ordered(plan), evals // 2, rng)

    def reorder(self, plan: list[Ids], evals: int, rng: random.Random) -> list[Ids]:
        """Hill climbing on the order: move one group up to REORDER_REACH places; kept when
        the estimate drops (Smith's order is best on one machine, not always on many
        nodes with mixed GPU counts)."""
        cur = self.cost(plan, as_listed=True)
        for _ in range(evals if len(plan) > 1 else 0):
            i = rng.randrange(len(plan))
            j = min(len(plan) - 1, max(0, i + rng.randint(-REORDER_REACH, REORDER_REACH)))
            if i == j:
                continue
            new = list(plan)
            new.insert(j, new.pop(i))
            c = self.cost(new, as_listed=True)
            if c < cur:
                cur, plan = c, new
        return plan


class _Search:
    """Simulated annealing over plans by moving or swapping jobs (module doc): a worse plan
    is taken with probability exp(-increase / temperature), the temperature falling
    geometrically from `heat` x the start's cost to a thousandth of that; the best plan
    seen is returned."""

    def __init__(self, b: Batcher, plan: list[Ids], rng: random.Random, heat: float):
        self.b, self.rng = b, rng
        self.groups = [list(g) for g in plan]
        self.cur = self.best_cost = b.cost(plan)
        self.best = [tuple(g) for g in plan]
        self.temp = heat * self.cur

    def run(
        self, evals: int, seconds: float | None = None, stop: threading.Event | None = None
    ) -> list[Ids]:
        """`evals` moves or, given `seconds`, moves until they are up (the temperature
        then falls with the time spent); either way no more once `stop` is set."""
        ids = [s.id for s in self.b.jobs]
        cool = 1e-3 ** (1.0 / max(1, evals))
        heat, t0 = self.temp, time.perf_counter()
        done = 0
        while True:
            if seconds is None:
                if done >= evals:
                    break
                self.temp *= cool
            else:
                # A budget already spent (0 or less: the caller's deadline has passed)
                # makes no move rather than a temperature of 1e-3 ** -inf.
                spent = (time.perf_counter() - t0) / seconds if seconds > 0 else 1.0
                if spent >= 1.0:
                    break
                self.temp = heat * 1e-3**spent
            done += 1
            if stop is not None and done % STOP_EVERY == 0 and stop.is_set():
                break
            x = self.rng.choice(ids)
            gx = next(i for i, g in enumerate(self.groups) if x in g)
            k = self.b.by_id[x].gpus
            others = [
                i for i, g in enumerate(self.groups) if i != gx and self.b.by_id[g[0]].gpus == k
            ]
            if others:
                self._try(x, gx, self.rng.choice(others + [-1]))  # -1: a group of its own
        return self.best

    def _try(self, x: str, gx: int, h: int) -> None:
        new = [list(g) for g in self.groups]
        new[gx].remove(x)
        if h < 0:
            if not new[gx]:
                return
            new.append([x])
        elif len(new[h]) < self.b.size and self.rng.random() < 0.5:
            new[h].append(x)
        else:
            y = self.rng.choice(new[h])
            new[h].remove(y)
            new[h].append(x)
            new[gx].append(y)
        new = [g for g in new if g]
        c = self.b.cost([tuple(g) for g in new])
        worse = c - self.cur
        if worse < 0 or (self.temp > 0 and self.rng.random() < math.exp(-worse / self.temp)):
            self.cur, self.groups = c, new
            if c < self.best_cost:
                self.best_cost, self.best = c, [tuple(g) for g in new]


class _Class:
    """`Batcher._dispatch`'s groups of one GPU class: `pending` (release, ratio, ids, span)
    sorted, `i` the first not yet released by the class's free time, `ready` a heap of
    the released ones by (ratio, ids)."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, float, Ids, float]] = []
        self.i = 0
        self.ready: list[tuple[float, Ids, float]] = []

    def next(self, free_at: float) -> tuple[float, float, Ids] | None:
        """(start, ratio, ids) of the class's best group if the GPUs free at `free_at`."""
        while self.i < len(self.pending) and self.pending[self.i][0] <= free_at:
            rel, ratio, g, span = self.pending[self.i]
            heapq.heappush(self.ready, (ratio, g, span))
            self.i += 1
        if self.ready:
            return free_at, self.ready[0][0], self.ready[0][1]
        if self.i < len(self.pending):
            rel, ratio, g, _ = self.pending[self.i]
            return rel, ratio, g
        return None

    def take(self, g: Ids) -> float:
        """Remove group g (the one `next` named) and return its span."""
        if self.ready and self.ready[0][1] == g:
            return heapq.heappop(self.ready)[2]
        span = self.pending[self.i][3]
        self.i += 1
        return span


def _speed(inst: Instance, job: Job) -> float:
    """The speed of the first node group that can run `job` (as Muri's matching)."""
    return next((ng.speed for ng in inst.node_groups if inst.misfit(job, ng) is None), 1.0)
