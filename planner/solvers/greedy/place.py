"""Placement: the earliest feasible start and the GPUs of one unit (a job or a group).

`Cluster` holds every timeline of the instance (GPUs, node CPUs and memory, pools) and the
event times. `Cluster.find` scans candidate starts: the unit's earliest start and every
later event time (a unit that fits nowhere at some time can only fit once something ends),
and per node group returns the first start at which it fits; across node groups the
earliest end wins (then the earlier start, the faster group, the instance order).

Node choice for g <= GPUs per node: best fit, the node with the fewest free GPUs that
fits, then the lowest node index; its lowest free GPU indices. Multi-node units take the
lowest-indexed whole free nodes of one group.

Every candidate start probed and every node looked at is charged to a `WorkMeter`: the
serial engine's cost is quadratic in the queue, and `solve.py` stops it past a budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

from planner.durations import gpu_mem_fits
from planner.instance import Instance, Job, Node, NodeGroup
from planner.pools import PoolTimeline, StepProfile, pools_fit
from planner.schedule import Placement
from planner.solvers.greedy.fit import (
    gpu_reservations,
    late_reason,
    node_fits,
    pool_reservations,
)
from planner.solvers.greedy.timeline import Events, GpuTimeline


class OutOfWork(Exception):
    """The work budget of a `WorkMeter` is spent."""


class WorkMeter:
    """Counts work units (candidate starts probed, nodes looked at, queue entries read)
    and raises OutOfWork once more than `budget` are spent (None: no limit)."""

    def __init__(self, budget: int | None = None):
        self.budget = budget
        self.spent = 0

    def spend(self, units: int) -> None:
        self.spent += units
        if self.budget is not None and self.spent > self.budget:
            raise OutOfWork


class NodeOption(NamedTuple):
    """A node group a unit may run on (None for a GPU-less unit), with per-member
    durations there."""

    node_group: NodeGroup | None
    durations: tuple[int, ...]


@dataclass(frozen=True)
class PlacementUnit:
    """Jobs that start together on the same GPUs: one job, or an interleaving group.

    `options` lists (node group, per-member durations) it may run with; GPU-less units have
    one option with node group None.
    """

    members: tuple[Job, ...]
    gpus: int
    options: tuple[NodeOption, ...]


class _Candidate(NamedTuple):
    """The best node so far for a single-node unit (fewest free GPUs, lowest index)."""

    free: int
    node_index: int
    gpus: list[int]
    node: Node


@dataclass(frozen=True)
class PlacedOption:
    """A unit's start, per-member durations, GPUs and node group."""

    start: int
    durations: tuple[int, ...]
    placement: tuple[Placement, ...]
    node_group: str | None

    @property
    def end(self) -> int:
        return self.start + max(self.durations)


class Cluster:
    """Every timeline of the instance and the event times (see the module docstring)."""

    def __init__(self, instance: Instance, meter: WorkMeter | None = None):
        self.instance = instance
        self.meter = meter or WorkMeter()
        self.gpu: list[list[GpuTimeline]] = [
            [GpuTimeline() for _ in range(n.gpus)] for n in instance.nodes
        ]
        self.cpu: list[StepProfile | None] = [
            StepProfile() if n.group.cpus is not None else None for n in instance.nodes
        ]
        self.mem: list[StepProfile | None] = [
            StepProfile() if n.group.mem_gb is not None else None for n in instance.nodes
        ]
        self.events = Events()
        for r in instance.reservations:
            self.events.add(r.end)
        for index, per_gpu in gpu_reservations(instance).items():
            for timeline, held in zip(self.gpu[index], per_gpu, strict=True):
                timeline.reservations = held
        pool_res = pool_reservations(instance)
        self.pools = {p: PoolTimeline(cap, pool_res[p]) for p, cap in instance.pools.items()}
        self.nodes_by_group: dict[str, list[Node]] = {}
        for n in instance.nodes:
            self.nodes_by_group.setdefault(n.group.name, []).append(n)

    # ---- checks -------------------------------------------------------------------
    def _node_fits(
        self, node: Node, members: Sequence[Job], per_node: int, t: int, durs: Sequence[int]
    ) -> bool:
        hold = max(durs)
        profiles = {"cpu": self.cpu[node.index], "mem": self.mem[node.index]}

        def used(kind: str) -> float:
            prof = profiles[kind]
            return prof.max_over(t, t + hold) if prof is not None else 0.0

        return node_fits(node.group, members, per_node, used)

    def _free_gpus(
        self, node: Node, members: Sequence[Job], t: int, hold: int, need: int
    ) -> list[int]:
        """Indices of the node's GPUs free during [t, t + hold); stops early (returning a
        short list) once fewer than `need` can be free: busy nodes are the common case."""
        gpus = self.gpu[node.index]
        out: list[int] = []
        spare = len(gpus) - need  # how many busy GPUs we can afford
        for k, g in enumerate(gpus):
            if g.free(t, t + hold, members):
                out.append(k)
            else:
                spare -= 1
                if spare < 0:
                    break
        return out

    def _gpu_mem_ok(self, unit: PlacementUnit, ng: NodeGroup) -> bool:
        return gpu_mem_fits(self.instance, unit.members, ng.gpu_mem_gb)

    def _place_at(
        self, unit: PlacementUnit, ng: NodeGroup, t: int, durs: Sequence[int]
    ) -> tuple[Placement, ...] | None:
        hold = max(durs)
        nodes = self.nodes_by_group[ng.name]
        self.meter.spend(len(nodes))
        g = unit.gpus
        if g <= ng.gpus:
            best: _Candidate | None = None
            for node in nodes:
                free = self._free_gpus(node, unit.members, t, hold, g)
                if len(free) < g or (best is not None and len(free) >= best.free):
                    continue
                if not self._node_fits(node, unit.members, g, t, durs):
                    continue
                best = _Candidate(len(free), node.index, free[:g], node)
                if len(free) == g:
                    break  # a perfect fit cannot be beaten
            if best is None:
                return None
            return (Placement(best.node.name, tuple(best.gpus)),)
        need = g // ng.gpus
        chosen: list[Node] = []
        for node in nodes:
            if len(
                self._free_gpus(node, unit.members, t, hold, ng.gpus)
            ) == ng.gpus and self._node_fits(node, unit.members, ng.gpus, t, durs):
                chosen.append(node)
                if len(chosen) == need:
                    return tuple(Placement(n.name, tuple(range(ng.gpus))) for n in chosen)
        return None

    # ---- search -------------------------------------------------------------------
    def find(self, unit: PlacementUnit, lb: int, ub: int | None) -> tuple[PlacedOption | None, str]:
        """Earliest-ending placement with start in [lb, ub] meeting every member's
        deadline and the horizon; else (None, why)."""
        best: PlacedOption | None = None
        why = "it fits on no node"
        for ng, durs in unit.options:
            latest = self._latest_start(unit.members, durs)
            if ng is not None and not self._gpu_mem_ok(unit, ng):
                continue
            for t in chain((lb,), self.events.after(lb)):
                self.meter.spend(1)
                if ub is not None and t > ub:
                    why = f"strict priority: it must start by {ub}, before a lower-priority job"
                    break
                if latest is not None and t > latest:
                    why = late_reason(self.instance, unit.members, durs, t) or why
                    break
                if best is not None and t + max(durs) >= best.end:
                    break  # cannot end earlier than the best option found
                if not pools_fit(self.pools, unit.members, t, durs):
                    continue
                if ng is None:
                    best = PlacedOption(t, tuple(durs), (), None)
                    break
                pl = self._place_at(unit, ng, t, durs)
                if pl is not None:
                    best = PlacedOption(t, tuple(durs), pl, ng.name)
                    break
        return best, ("" if best is not None else why)

    def _latest_start(self, members: Sequence[Job], durs: Sequence[int]) -> int | None:
        latest: int | None = None
        for m, d in zip(members, durs, strict=True):
            for lim in (m.deadline, self.instance.horizon):
                if lim is not None:
                    latest = lim - d if latest is None else min(latest, lim - d)
        return latest

    def book(self, unit: PlacementUnit, opt: PlacedOption) -> None:
        t, durs = opt.start, opt.durations
        hold = max(durs)
        for p in opt.placement:
            node = self.instance.node_by_name[p.node]
            for k in p.gpus:
                self.gpu[node.index][k].book(t, t + hold)
            per_node = len(p.gpus)
            for m, d in zip(unit.members, durs, strict=True):
                cpu, mem = self.cpu[node.index], self.mem[node.index]
                if cpu is not None:
                    cpu.add(t, t + d, per_node * m.cpus_per_gpu)
                if mem is not None:
                    mem.add(t, t + d, per_node * m.mem_gb_per_gpu)
        for m, d in zip(unit.members, durs, strict=True):
            for name, amount in m.demand.items():
                pool = self.pools[name]
                pool.book(t, t + d, pool.job_class(m), amount)
            self.events.add(t + d)
        self.events.add(t + hold)
