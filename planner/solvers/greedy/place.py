"""Placement: the earliest feasible start and the GPUs of one unit (a job or a group).

`Cluster` holds every timeline of the instance (GPUs, node CPUs and memory, pools) and the
event times. `Cluster.find` scans candidate starts: the unit's earliest start and every
later event time (a unit that fits nowhere at some time can only fit once something ends),
and per node group returns the first start at which it fits; across node groups the
earliest end wins (then the earlier start, the faster group, the instance order).

Node choice for g <= GPUs per node: best fit, the node with the fewest free GPUs that
fits, then the lowest node index; its lowest free GPU indices. Multi-node units take the
lowest-indexed whole free nodes of one group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.durations import gpu_mem_fits
from planner.instance import Instance, Job, Node, NodeGroup
from planner.schedule import Placement
from planner.solvers.greedy.timeline import (
    Events,
    GpuTimeline,
    PoolTimeline,
    StepProfile,
    pools_fit,
)

_TOL = 1e-9


@dataclass(frozen=True)
class Unit:
    """Jobs that start together on the same GPUs: one job, or an interleaving group.

    `options` lists (node group, per-member durations) it may run with; GPU-less units have
    one option with node group None.
    """

    members: tuple[Job, ...]
    gpus: int
    options: tuple[tuple[NodeGroup | None, tuple[int, ...]], ...]


@dataclass(frozen=True)
class Option:
    start: int
    durations: tuple[int, ...]
    placement: tuple[Placement, ...]
    node_group: str | None

    @property
    def end(self) -> int:
        return self.start + max(self.durations)


class Cluster:
    def __init__(self, instance: Instance):
        self.instance = instance
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
        pool_res: dict[str, list] = {p: [] for p in instance.pools}
        for r in instance.reservations:
            self.events.add(r.end)
            if r.pool is not None:
                pool_res[r.pool].append((r.start, r.end, r.amount, r.admits))
                continue
            for name in r.nodes:
                node = instance.node_by_name[name]
                idx = r.gpus if r.gpus is not None else range(node.gpus)
                for k in idx:
                    self.gpu[node.index][k].reservations.append((r.start, r.end, r.admits))
        self.pools = {p: PoolTimeline(cap, pool_res[p]) for p, cap in instance.pools.items()}
        self.nodes_by_group: dict[str, list[Node]] = {}
        for n in instance.nodes:
            self.nodes_by_group.setdefault(n.group.name, []).append(n)

    # ---- checks -------------------------------------------------------------------
    def _node_fits(
        self, node: Node, members: Sequence[Job], per_node: int, t: int, durs: Sequence[int]
    ) -> bool:
        hold = max(durs)
        for prof, cap, attr in (
            (self.cpu[node.index], node.group.cpus, "cpus_per_gpu"),
            (self.mem[node.index], node.group.mem_gb, "mem_gb_per_gpu"),
        ):
            if prof is None or cap is None:
                continue
            need = sum(per_node * getattr(m, attr) for m in members)
            if need and prof.max_over(t, t + hold) + need > cap + _TOL:
                return False
        return True

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

    def _gpu_mem_ok(self, unit: Unit, ng: NodeGroup) -> bool:
        return gpu_mem_fits(self.instance, unit.members, ng.gpu_mem_gb)

    def _place_at(
        self, unit: Unit, ng: NodeGroup, t: int, durs: Sequence[int]
    ) -> tuple[Placement, ...] | None:
        hold = max(durs)
        nodes = self.nodes_by_group[ng.name]
        g = unit.gpus
        if g <= ng.gpus:
            best: tuple[int, int, list[int], Node] | None = None
            for node in nodes:
                free = self._free_gpus(node, unit.members, t, hold, g)
                if len(free) < g or (best is not None and len(free) >= best[0]):
                    continue
                if not self._node_fits(node, unit.members, g, t, durs):
                    continue
                best = (len(free), node.index, free[:g], node)
                if len(free) == g:
                    break  # a perfect fit cannot be beaten
            if best is None:
                return None
            return (Placement(best[3].name, tuple(best[2])),)
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
    def find(self, unit: Unit, lb: int, ub: int | None) -> tuple[Option | None, str]:
        """Earliest-ending placement with start in [lb, ub] meeting every member's
        deadline and the horizon; else (None, why)."""
        best: Option | None = None
        why = "it fits on no node"
        for ng, durs in unit.options:
            latest = self._latest_start(unit.members, durs)
            if ng is not None and not self._gpu_mem_ok(unit, ng):
                continue
            for t in [lb, *self.events.after(lb)]:
                if ub is not None and t > ub:
                    why = f"strict priority: it must start by {ub}, before a lower-priority job"
                    break
                if latest is not None and t > latest:
                    why = self._late_reason(unit.members, durs, t)
                    break
                if best is not None and t + max(durs) >= best.end:
                    break  # cannot end earlier than the best option found
                if not pools_fit(self.pools, unit.members, t, durs):
                    continue
                if ng is None:
                    best = Option(t, tuple(durs), (), None)
                    break
                pl = self._place_at(unit, ng, t, durs)
                if pl is not None:
                    best = Option(t, tuple(durs), pl, ng.name)
                    break
        return best, ("" if best is not None else why)

    def _latest_start(self, members: Sequence[Job], durs: Sequence[int]) -> int | None:
        latest: int | None = None
        for m, d in zip(members, durs, strict=True):
            for lim in (m.deadline, self.instance.horizon):
                if lim is not None:
                    latest = lim - d if latest is None else min(latest, lim - d)
        return latest

    def _late_reason(self, members: Sequence[Job], durs: Sequence[int], t: int) -> str:
        for m, d in zip(members, durs, strict=True):
            if m.deadline is not None and t + d > m.deadline:
                return f"deadline {m.deadline} of job {m.id} cannot be met (earliest end {t + d})"
        return f"horizon {self.instance.horizon} passed (earliest end {t + max(durs)})"

    def book(self, unit: Unit, opt: Option) -> None:
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
