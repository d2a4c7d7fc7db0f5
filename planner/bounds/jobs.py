"""The per-job quantities of `planner.bounds` (ingredients 1 and 2: least durations,
least GPU-time shares, earliest starts and ends) and the bounds they give per resource
(ingredients 3-7); `JobBounds` computes them once per instance, on the floors per node
group of `planner.bounds.floors` (ingredient 1). Every step is argued in `planner.bounds`'
module docstring."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from planner.bounds.config import X_COLUMNS, ConfigJobs, config_lp
from planner.bounds.delivery import SAFE, SCHEMES, below_rounding, config_types, solo_work
from planner.bounds.floors import JobFloors, JobKind
from planner.bounds.lp import LP_ITERATIONS, grid, lp_out_of_time, weighted_completion_lp
from planner.bounds.starts import earliest_starts
from planner.bounds.volume import mean_busy_bound, slot_room, volume_bound
from planner.instance import Instance, Job
from planner.precedence import heads_tails

# The interval LP (ingredient 6) runs up to this many jobs; above, its size and time grow
# past what a bound computed on every solve may cost.
LP_MAX_JOBS = 2000
# HiGHS solves to a relative tolerance of about 1e-7; shave more than that.
LP_SAFE = 1.0 - 1e-5

# (job indices, amount each job holds, its minimum amount x time, capacity, capacity changes)
Resource = tuple[np.ndarray, np.ndarray, np.ndarray, float, list[tuple[float, float]]]


def _scale(per_unit: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Rows of per-unit figures times each job's multiplier; inf ("not eligible") stays
    inf for a zero-length job instead of becoming nan."""
    with np.errstate(invalid="ignore"):
        out = per_unit * mult[:, None]
    return np.asarray(np.where(np.isnan(out), np.inf, out))


class JobBounds:
    """Ingredients 1-7 of `planner.bounds` on one instance.

    An elastic job (contract §12) gets, per node group, the least duration and GPU-time
    floors over its counts (and every count's node groups), so `p`, `head` and `end` hold
    whatever count a plan chooses (`earliest_ends`; tests/test_elastic.py). On a GPU
    resource it holds at most its largest count (`gpus`, the rate cap of ingredient 4),
    solo at least its smallest count for at least its least solo duration (ingredient 6's
    solo mode, `_least_share`), and its mode times are the least over its counts. The
    configuration LP (7) prices group types per count and is skipped for elastic
    instances."""

    def __init__(self, inst: Instance, iterations: int = LP_ITERATIONS, starts: bool = True):
        self.inst = inst
        self.starts = starts  # heads with ingredients 2a and 2b (`bounds.starts`)
        self.iterations = iterations
        jobs = inst.jobs
        self.n = len(jobs)
        self.index = {j.id: i for i, j in enumerate(jobs)}
        self.floors = JobFloors(inst)
        self.group_names = [g.name for g in inst.node_groups]
        cache: dict[tuple[object, ...], int] = {}
        self.kinds: list[JobKind] = []
        kind_of = np.empty(self.n, dtype=int)
        mult = np.ones(self.n)
        fixed = np.zeros(self.n)  # duration of jobs that use no GPU
        for i, j in enumerate(jobs):
            key = (j.model, j.gpu_counts, j.node_types, j.cpus_per_gpu, j.mem_gb_per_gpu)
            k = cache.get(key)
            if k is None:
                k = cache[key] = len(self.kinds)
                self.kinds.append(self.floors.kind(j))
            kind_of[i] = k
            if j.model is not None:
                mult[i] = j.iterations or 0
            else:
                mult[i] = j.duration or 0
                fixed[i] = j.duration or 0
        self.kind_of, self.mult = kind_of, mult
        ng = len(self.group_names)
        self.eligible = (
            self._per_kind([k.eligible for k in self.kinds])[kind_of]
            if self.n
            else np.zeros((0, ng), dtype=bool)
        )
        if self.n and self.kinds:
            dur = _scale(self._per_kind([k.dur for k in self.kinds])[kind_of], mult)
            with np.errstate(invalid="ignore"):
                p_grp = np.ceil(dur * SAFE - 1e-9)
            p = np.where(
                self.eligible.any(axis=1),
                np.min(np.where(self.eligible, p_grp, np.inf), axis=1, initial=np.inf),
                fixed,
            )
            self.p = np.where(np.isfinite(p), p, fixed)
            self._p_group = np.where(self.eligible, p_grp, np.inf)
            least = np.min(np.where(self.eligible, dur * SAFE, np.inf), axis=1, initial=np.inf)
            self.least = np.where(np.isfinite(least), least, fixed)
        else:
            self.p = np.zeros(self.n)
            self._p_group = np.full((self.n, ng), np.inf)
            self.least = np.zeros(self.n)
        self.gpus = np.array([max(j.gpu_counts) for j in jobs], dtype=float)
        # the least share of its largest count an elastic job holds (1: a fixed count)
        self._least_share = np.array(
            [min(j.gpu_counts) / max(j.gpu_counts) if j.gpus else 1.0 for j in jobs]
        )
        self.release = np.array([j.release for j in jobs], dtype=float)
        self.weight = np.array([j.weight for j in jobs], dtype=float)
        self.head, self.tail = self._critical_path()
        self.end = self.head + self.p  # earliest possible end of each job

    def shares(self, scheme: int) -> np.ndarray:
        """n x node groups: least GPU x time units of each job there (inf: not eligible)."""
        per = self._per_kind([k.shares[scheme] for k in self.kinds])[self.kind_of]
        return _scale(per, self.mult)

    def _per_kind(self, rows: list[Any]) -> np.ndarray:
        """Job kinds x node groups (reshaped explicitly: there may be no node groups)."""
        return np.array(rows).reshape(len(self.kinds), len(self.group_names))

    @cached_property
    def _mode_times(self) -> tuple[np.ndarray, np.ndarray]:
        """Per job, its least duration running solo and its least duration if every
        iteration ran in an interleaving group (inf when it never can), in time units,
        over its eligible node groups (ingredient 6); an elastic job's over its counts."""
        solo, grouped = np.full(self.n, np.inf), np.full(self.n, np.inf)
        per_kind: dict[int, tuple[float, float]] = {}
        unit = self.inst.unit_ms
        for i, j in enumerate(self.inst.jobs):
            k = int(self.kind_of[i])
            if k not in per_kind:
                per_kind[k] = (np.inf, np.inf)
                if j.model is None:
                    per_kind[k] = (1.0, np.inf)
                for jc in [j.fixed_at(c) for c in j.gpu_counts] if j.model is not None else []:
                    for g in self.inst.eligible_groups(jc):
                        s_it, g_it = self.floors.iteration_times(jc, g)
                        old = per_kind[k]
                        per_kind[k] = (min(old[0], s_it / unit), min(old[1], g_it / unit))
            a, b = per_kind[k]
            m = self.mult[i]  # a zero-length job: 0, never inf x 0
            solo[i], grouped[i] = (a * m * SAFE if m else 0.0), (b * m * SAFE if m else 0.0)
        return solo, grouped

    # ---- ingredient 2: critical path -------------------------------------------------
    def _critical_path(self) -> tuple[np.ndarray, np.ndarray]:
        ids = [j.id for j in self.inst.jobs]
        head, tail = heads_tails(self.inst, dict(zip(ids, self.p.tolist(), strict=True)))
        if self.starts:  # R8 and R10 against reservations (2a), R9 (2b)
            raised = earliest_starts(self.inst, self.p, self._p_group, self.eligible)
        else:
            raised = np.array([head[i] for i in ids], dtype=float)
        return raised, np.array([tail[i] for i in ids], dtype=float)

    # ---- resources: (capacity rate over time, jobs, amounts, volumes) ------------------
    def _families(self) -> list[np.ndarray]:
        """Node-group masks to take volume bounds on: all, each one, each eligible set."""
        ng = len(self.group_names)
        seen: dict[tuple[bool, ...], None] = {(True,) * ng: None}
        for i in range(ng):
            seen.setdefault(tuple(i == k for k in range(ng)), None)
        for k in self.kinds:
            if len(seen) >= 64:
                break
            if k.eligible.any():
                seen.setdefault(tuple(bool(x) for x in k.eligible), None)
        return [np.array(m, dtype=bool) for m in seen]

    def _gpu_resources(self) -> Iterable[tuple[int, Resource]]:
        """Per node-group family and share scheme: (family number, (job indices, GPUs per
        job, minimum GPU-time per job, GPU capacity, capacity changes [(time, delta)]))."""
        inst = self.inst
        shares = [self.shares(k) for k in range(len(SCHEMES))]
        uses = self.eligible.any(axis=1)
        for f, fam in enumerate(self._families()):
            inside = uses & ~(self.eligible & ~fam).any(axis=1)
            idx = np.flatnonzero(inside)
            if not len(idx):
                continue
            cap = float(
                sum(g.count * g.gpus for g, on in zip(inst.node_groups, fam, strict=True) if on)
            )
            names = {n for n, on in zip(self.group_names, fam, strict=True) if on}
            events = self._gpu_blocked(names, [inst.jobs[i] for i in idx])
            for sh in shares:
                vol = np.min(np.where(fam, sh[idx], np.inf), axis=1)
                yield f, (idx, self.gpus[idx], vol, cap, events)

    def _gpu_blocked(self, fam: set[str], jobs: list[Job]) -> list[tuple[float, float]]:
        """Capacity changes from GPUs of `fam` reserved for none of `jobs` (union per GPU)."""
        per_gpu: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
        for r in self.inst.reservations:
            if r.pool is not None or not r.nodes or r.end <= r.start:
                continue
            if any(r.admits.admits(j) for j in jobs):
                continue
            for name in r.nodes:
                node = self.inst.node_by_name.get(name)
                if node is None or node.group.name not in fam:
                    continue
                ids = r.gpus if r.gpus is not None else range(node.gpus)
                for k in ids:
                    if 0 <= k < node.gpus:
                        per_gpu[(name, k)].append((r.start, r.end))
        events: list[tuple[float, float]] = []
        for ivs in per_gpu.values():
            ivs.sort()
            cs, ce = ivs[0]
            for s, e in ivs[1:]:
                if s > ce:
                    events += [(cs, -1.0), (ce, 1.0)]
                    cs, ce = s, e
                else:
                    ce = max(ce, e)
            events += [(cs, -1.0), (ce, 1.0)]
        return events

    def _pool_resources(self) -> Iterable[Resource]:
        inst = self.inst
        for pool, cap in inst.pools.items():
            members = [i for i, j in enumerate(inst.jobs) if j.demand.get(pool, 0.0) > 0]
            if not members:
                continue
            jobs = [inst.jobs[i] for i in members]
            idx = np.array(members, dtype=int)
            amount = np.array([j.demand[pool] for j in jobs], dtype=float)
            events: list[tuple[float, float]] = []
            for r in inst.reservations:
                if r.pool != pool or r.end <= r.start or r.amount <= 0:
                    continue
                if any(r.admits.admits(j) for j in jobs):
                    continue
                events += [(r.start, -r.amount), (r.end, r.amount)]
            yield idx, amount, amount * self.p[idx], float(cap), events

    # ---- objectives -----------------------------------------------------------------
    def path_makespan(self) -> float:
        """Ingredient 2 alone for the makespan."""
        best = float(np.max(self.end + self.tail)) if self.n else 0.0
        return float(math.ceil(best * SAFE - 1e-9)) if best > 0 else 0.0

    def path_tardiness(self) -> float:
        """Ingredient 2 alone for the weighted tardiness."""
        due = np.array([j.due if j.due is not None else np.inf for j in self.inst.jobs])
        return float(np.sum(self.weight * np.maximum(0.0, self.end - due))) if self.n else 0.0

    def makespan(self) -> float:
        if self.n == 0:
            return 0.0
        best = float(np.max(self.end + self.tail))
        for idx, _, vol, cap, events in self.resources:
            best = max(best, volume_bound(self.head[idx], vol, cap, events))
        return float(math.ceil(best * SAFE - 1e-9)) if best > 0 else 0.0

    @cached_property
    def _gpu_list(self) -> list[tuple[int, Resource]]:
        return list(self._gpu_resources())

    @cached_property
    def resources(self) -> list[Resource]:
        """Every resource and share scheme (the volume bounds are cheap)."""
        return [r for _, r in self._gpu_list] + list(self._pool_resources())

    @cached_property
    def lp_resources(self) -> list[Resource]:
        """For the costlier weighted-completion bound: per node-group family the scheme
        with the most volume, and every pool."""
        best: dict[int, Resource] = {}
        for f, r in self._gpu_list:
            if f not in best or float(r[2].sum()) > float(best[f][2].sum()):
                best[f] = r
        return list(best.values()) + list(self._pool_resources())

    def _completion(self, sel: np.ndarray, resources: Sequence[Resource]) -> list[float]:
        """Lower bounds on sum of w_j C_j over the jobs selected by the mask `sel`: the
        per-job one first, then one per resource."""
        w = self.weight
        per_job = w * self.end
        base = float(per_job[sel].sum())
        out = [base]
        for idx, amount, vol, cap, _ in resources:
            keep = sel[idx]
            if cap <= 0 or not keep.any():
                out.append(base)
                continue
            i, v = idx[keep], vol[keep]
            lp = mean_busy_bound(self.head[i], v / cap, w[i])
            lp += float(np.sum(w[i] * v / (2 * amount[keep])))
            here = float(per_job[i].sum())
            out.append(base - here + max(here, lp * SAFE))
        return out

    @cached_property
    def _jct_parts(self) -> list[float]:
        return self._completion(np.ones(self.n, dtype=bool), self.lp_resources)

    def weighted_jct_named(self) -> tuple[float, str]:
        """The weighted JCT bound and the name of the ingredient that gives it: "path"
        (ingredient 2), "wspt" (4) or "lp" (6)."""
        if self.n == 0:
            return 0.0, "path"
        cands = [(self._jct_parts[0], "path"), (max(self._jct_parts), "wspt")]
        cands += [(v, "lp") for v in self._interval_lp_parts]
        cands += [(v, "config") for v in self._config_lp_parts]
        best, name = max(cands, key=lambda c: c[0])
        if name == "wspt" and best <= self._jct_parts[0]:
            name = "path"
        # the per-job bound without the sums' cancellation; the others lose what it costs
        path = float(np.sum(self.weight * (self.end - self.release)))
        offset = float(np.sum(self.weight * self.release))
        other = below_rounding(best - offset, best + offset)
        return (max(0.0, other), name) if other > path else (max(0.0, path), "path")

    @cached_property
    def _interval_lp_parts(self) -> list[float]:
        """Ingredient 6 per resource: sum of w_j C_j over all jobs (the LP for the
        resource's jobs, the per-job bound for the rest); empty when skipped."""
        w, per_job = self.weight, self.weight * self.end
        total = float(per_job.sum())
        out: list[float] = []
        if self.n > LP_MAX_JOBS:
            return out
        for idx, amount, vol, cap, events in self.lp_resources:
            keep = (vol > 0) & (amount > 0) & np.isfinite(vol)
            if cap <= 0 or not keep.any() or lp_out_of_time():
                continue
            i, v = idx[keep], vol[keep]
            solo_t, group_t = self._mode_times[0][i], self._mode_times[1][i]
            modes = [  # for a pool the scale of _least_share is only weaker
                (amount[keep] * self._least_share[i] * solo_t, solo_t),
                (np.where(np.isfinite(group_t), v, np.inf), group_t),
            ]
            points = grid(self.head[i], v, np.minimum(solo_t, group_t), cap, len(modes))
            room = slot_room(points, cap, events)
            lp = weighted_completion_lp(
                self.head[i], modes, self.end[i], w[i], points, room, self.iterations
            )
            if lp is not None:
                out.append(total - float(per_job[i].sum()) + lp * LP_SAFE)
        return out

    # ---- ingredient 7: the configuration LP ------------------------------------------
    @cached_property
    def _config_lp_parts(self) -> list[float]:
        """Ingredient 7 per node-group family: sum of w_j C_j over all jobs (the LP for the
        family's jobs, the per-job bound for the rest); empty when skipped."""
        per_job = self.weight * self.end
        total = float(per_job.sum())
        out: list[float] = []
        if self.n > LP_MAX_JOBS or not self.inst.interleaving.enabled or self.inst.elastic:
            return out
        fams = self._families()
        done: set[int] = set()
        for f, (idx, _, _, cap, events) in self._gpu_list:
            if f in done or cap <= 0 or lp_out_of_time():  # its types take seconds too
                continue
            done.add(f)
            lp = self._config_family(idx, fams[f], cap, events)
            if lp is not None:
                out.append(total - float(per_job[idx].sum()) + lp * LP_SAFE)
        return out

    def _config_family(
        self, idx: np.ndarray, fam: np.ndarray, cap: float, events: list[tuple[float, float]]
    ) -> float | None:
        """Ingredient 7 on one family: sum of w_j C_j over its jobs (the LP, with e_j for
        jobs of no work), or None when none of them can group or the LP is skipped."""
        inst = self.inst
        on = self.eligible[idx].any(axis=0) & fam  # the family's node groups its jobs use
        groups = [g for g, u in zip(inst.node_groups, on, strict=True) if u]
        speed = max(g.speed for g in groups)
        mems = [g.gpu_mem_gb for g in groups]
        mem = None if any(x is None for x in mems) else max(x for x in mems if x is not None)
        partners = [inst.jobs[i] for i in np.flatnonzero((self.eligible & on).any(axis=1))]
        types = config_types(inst, partners, speed, mem)
        jobs = [inst.jobs[i] for i in idx]
        work = np.array([solo_work(inst, j, speed) for j in jobs])
        rho = np.array([types.best.get((j.gpus, j.model or ""), 0.0) for j in jobs])
        cls = np.array([types.classes.get((j.gpus, j.model or ""), -1) for j in jobs])
        keep = work > 0
        if not (rho[keep] > 0).any():
            return None
        i = idx[keep]
        cj = ConfigJobs(
            self.head[i],
            self.end[i],
            self.weight[i],
            work[keep],
            self.gpus[i],
            np.where(rho[keep] > 0, cls[keep], -1),
            rho[keep],
        )
        least = cj.work / np.maximum(1.0, cj.rho)
        points = grid(cj.head, cj.work * cj.gpus, least, cap, 2, X_COLUMNS)
        room = slot_room(points, cap, events)
        lp = config_lp(cj, types.gpus, types.rates, points, room, self.iterations)
        if lp is None:
            return None
        return lp + float(np.sum(self.weight[idx[~keep]] * self.end[idx[~keep]]))

    def weighted_tardiness(self) -> float:
        if self.n == 0:
            return 0.0
        due = np.array([j.due if j.due is not None else np.inf for j in self.inst.jobs])
        w = self.weight
        late = w * np.maximum(0.0, self.end - due)
        best = float(late.sum())
        has = np.isfinite(due) & (w > 0)
        if not has.any():
            return best
        # The two resources that bound the weighted completion best for all jobs.
        gains = self._jct_parts[1:]
        top = sorted(range(len(gains)), key=lambda r: -gains[r])[:2]
        chosen = [self.lp_resources[r] for r in top]
        for theta in sorted(set(np.quantile(due[has], [0.25, 0.5, 0.75, 1.0]).tolist())):
            sel = has & (due <= theta)
            rest = float(late[~sel].sum()) - float(np.sum(w[sel] * due[sel]))
            best = max(best, max(self._completion(sel, chosen)) + rest)
        return best
