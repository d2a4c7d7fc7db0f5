"""Ingredient 1 of `planner.bounds`: each job's floors per node group (least duration and
least GPU-time per share scheme, per iteration or time unit), and the least solo and
grouped iteration times that ingredient 6's modes use. `JobFloors` computes them once per
instance and kind of job (`JobKind`), with the group enumeration of `planner.bounds.delivery`
cached per GPU count and speed.

Separate from `planner.bounds.jobs` (the critical path, the resources and the bounds per
objective, which `JobBounds` builds on these floors) so that each module holds one
responsibility. Every step is argued in `planner.bounds`' module docstring."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from planner.bounds.delivery import SAFE, SCHEMES, enumerate_groups
from planner.durations import solo_iteration_ms, stage_tuple
from planner.instance import Instance, Job, NodeGroup


def group_load(k: int, data: float, gpu: float, net: float) -> float:
    """L_k(j): a lower bound on TT of any k-group containing a job with these stages."""
    return gpu + net + (data if k <= 3 else 0.95 * data)


class JobKind:
    """What the bounds need of all jobs of one kind (same model, GPUs, node limits), per
    node group and per unit of `mult` (an iteration of a profiled job, a time unit of an
    explicit one). `inf` marks node groups the kind cannot use."""

    __slots__ = ("eligible", "dur", "shares")

    def __init__(self, eligible: np.ndarray, dur: np.ndarray, shares: list[np.ndarray]):
        self.eligible = eligible  # bool per node group
        self.dur = dur  # least duration, time units
        self.shares = shares  # per scheme A, B, C: least GPU x time units


class JobFloors:
    """Ingredient 1 of `planner.bounds` on one instance: the floors of each kind of job per
    node group (`kind`) and its iteration times (`iteration_times`)."""

    def __init__(self, inst: Instance):
        self.inst = inst
        jobs = inst.jobs
        # Group sizes a job might share a GPU set in: only with another profiled job of the
        # same GPU count, at most max_group.
        per_gpus: dict[int, int] = defaultdict(int)
        self.models_by_gpus: dict[int, list[str]] = defaultdict(list)
        self.model_weight: dict[tuple[int, str], float] = defaultdict(float)
        for j in jobs:
            model = j.model
            if model is None:
                continue
            for c in j.gpu_counts:  # an elastic job may group at each of its counts
                self.model_weight[(c, model)] += c * (j.iterations or 0)
                per_gpus[c] += 1
                if model not in self.models_by_gpus[c]:
                    self.models_by_gpus[c].append(model)
        self.group_sizes: dict[int, tuple[int, ...]] = {}
        il = inst.interleaving
        for g, cnt in per_gpus.items():
            top = min(il.max_group, cnt) if il.enabled else 1
            self.group_sizes[g] = tuple(k for k in range(2, top + 1) if k in il.overhead)
        self.exact: dict[tuple[int, float], dict[str, tuple[float, list[float]]]] = {}
        self.group_names = [g.name for g in inst.node_groups]

    # ---- ingredient 1: per-job floors ------------------------------------------------
    def _per_iteration_floor(self, j: Job, g: NodeGroup) -> tuple[float, list[float]]:
        """(duration floor, GPU-time floors of schemes A, B, C) per iteration, in ms."""
        gp = self.inst.gpu_profile(j)
        solo = solo_iteration_ms(gp, g.speed)
        d, gpu, net = gp.stages.data, gp.stages.gpu / g.speed, gp.stages.net
        ov = self.inst.interleaving.overhead
        dur, shares = solo, [solo, solo, solo]
        for k in self.group_sizes.get(j.gpus, ()):
            lk = group_load(k, d, gpu, net)
            dur = min(dur, ov[k] * lk)
            for i, v in enumerate((gpu, lk / k, (gpu + lk / k) / 2)):
                shares[i] = min(shares[i], ov[k] * v)
        exact = self._exact_floors(j.gpus, g.speed).get(j.model or "")
        if exact is not None:  # both are valid; the enumeration is never weaker
            dur = max(dur, min(solo, exact[0]))
            shares = [max(a, min(solo, b)) for a, b in zip(shares, exact[1], strict=True)]
        return dur, shares

    def _exact_floors(self, gpus: int, speed: float) -> dict[str, tuple[float, list[float]]]:
        """Per model: the least cycle, and per-member GPU-time per scheme, over every
        multiset of 2..max_group models that jobs with this GPU count use (a superset of
        the groups and phase sub-groups that can occur). Skipped beyond 10 models."""
        key = (gpus, speed)
        if key not in self.exact:
            models = self.models_by_gpus.get(gpus, [])
            sizes = self.group_sizes.get(gpus, ())
            table: dict[str, tuple[float, list[float]]] = {}
            if sizes and len(models) <= 10:
                gps = [self.inst.profiles[m].by_gpus[gpus] for m in models]
                table = enumerate_groups(
                    models,
                    [stage_tuple(gp, speed) for gp in gps],
                    sizes,
                    self.inst.interleaving.overhead,
                    [solo_iteration_ms(gp, speed) for gp in gps],
                    [self.model_weight[(gpus, m)] for m in models],
                )
            self.exact[key] = table
        return self.exact[key]

    def kind(self, j: Job) -> JobKind:
        """The job's floors per node group; an elastic job's are the least over its counts
        (each count's floors hold for a plan that runs it at that count)."""
        if not j.elastic:
            return self._kind_at(j)
        each = [self._kind_at(j.fixed_at(c)) for c in j.gpu_counts]
        return JobKind(
            np.logical_or.reduce([k.eligible for k in each]),
            np.minimum.reduce([k.dur for k in each]),
            [np.minimum.reduce([k.shares[s] for k in each]) for s in range(len(SCHEMES))],
        )

    def _kind_at(self, j: Job) -> JobKind:
        ok = {g.name for g in self.inst.eligible_groups(j)}
        ng = len(self.group_names)
        eligible = np.array([name in ok for name in self.group_names], dtype=bool)
        dur = np.full(ng, np.inf)
        shares = [np.full(ng, np.inf) for _ in SCHEMES]
        unit = self.inst.unit_ms
        for gi, g in enumerate(self.inst.node_groups):
            if not eligible[gi]:
                continue
            if j.model is None:  # per time unit of its explicit duration
                dur[gi] = 1.0
                for arr in shares:
                    arr[gi] = float(j.gpus)
                continue
            d, per_it = self._per_iteration_floor(j, g)
            dur[gi] = d / unit
            for arr, v in zip(shares, per_it, strict=True):
                arr[gi] = j.gpus * v * SAFE / unit
        return JobKind(eligible, dur, shares)

    def iteration_times(self, j: Job, g: NodeGroup) -> tuple[float, float]:
        """(solo iteration time, least cycle of any group holding j), ms, on `g`."""
        gp = self.inst.gpu_profile(j)
        solo = solo_iteration_ms(gp, g.speed)
        d, gpu, net = gp.stages.data, gp.stages.gpu / g.speed, gp.stages.net
        ov = self.inst.interleaving.overhead
        sizes = self.group_sizes.get(j.gpus, ())
        cycle = min((ov[k] * group_load(k, d, gpu, net) for k in sizes), default=math.inf)
        exact = self._exact_floors(j.gpus, g.speed).get(j.model or "")
        if exact is not None and sizes:
            cycle = max(cycle, exact[0])
        return solo, cycle
