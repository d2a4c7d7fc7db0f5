"""Which GPUs are free at a decision point, and first-fit placement on them.

A job with `g` GPUs, `g` at most a node's, takes `g` free GPUs of the first node (in
instance order) that has them; a bigger job takes `g / gpus-per-node` wholly free nodes of
one node group (contract R5) that every job allows, and a group only where it is admissible
(§4, R7: `runs_on`). Node CPU and memory are counted, and pool demands from now to the
run's horizon (R8, with pool reservations by the subset rule of `planner.pools`). GPUs of
a reservation are usable only by jobs it admits (R10), while it is active or before it
starts if the run would reach it.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.durations import group_admissible
from planner.instance import Instance, Job, Node, NodeGroup, Reservation
from planner.pools import PoolTimeline, pools_fit
from planner.schedule import Placement

PlacementT = tuple[Placement, ...]
# The end booked for a run that keeps going (`book_running`): later than any instant.
FOREVER = 2**62


class Packer:
    def __init__(self, instance: Instance, now: int):
        self.instance = instance
        self.now = now
        self.free: list[set[int]] = [set(range(n.gpus)) for n in instance.nodes]
        self._nfree = sum(n.gpus for n in instance.nodes)  # kept equal to the free GPUs
        # node group -> at least the most free GPUs one of its nodes has (`_find`)
        self._most: dict[str, int] = {}
        # (node group, g) -> how many of its first nodes have fewer than g free GPUs (`_scan`)
        self._short: dict[tuple[str, int], int] = {}
        self.cpus: list[float] = [0.0] * len(instance.nodes)
        self.mem: list[float] = [0.0] * len(instance.nodes)
        self._res = [r for r in instance.reservations if r.pool is None and r.end > now]
        # kept by the instance, not by this packer: a decision makes up to three packers
        # and every decision asked anew (muri-s on 3,000 generated jobs: `group_admissible`
        # was 7.3 of 65 profiled seconds)
        self._runs_on = instance.runs_on_memo
        self._pools = {
            name: PoolTimeline(cap, [r for r in instance.reservations if r.pool == name])
            for name, cap in instance.pools.items()
        }
        # whether a run's end (`until` of `place` and `take`) matters here: only
        # reservations of GPUs and pools look at it
        self.reads_until = bool(self._res or self._pools)

    # -- pools (R8) ---------------------------------------------------------------------
    def _pools_fit(self, jobs: Sequence[Job], until: int) -> bool:
        """Whether `jobs`' pool demands fit from now to `until` beside what is booked."""
        return not self._pools or pools_fit(
            self._pools, jobs, self.now, [until - self.now] * len(jobs)
        )

    def _book_pools(self, jobs: Sequence[Job], until: int) -> None:
        for name, pool in self._pools.items():
            for j in jobs:
                if j.demand.get(name):
                    pool.book(self.now, until, pool.job_class(j), j.demand[name])

    # -- reservations -------------------------------------------------------------------
    def _blocked(self, node: Node, jobs: Sequence[Job], until: int) -> set[int]:
        out: set[int] = set()
        for r in self._res:
            if node.name not in r.nodes or r.start >= until:
                continue
            if all(r.admits.admits(j) for j in jobs):
                continue
            out |= set(range(node.gpus)) if r.gpus is None else set(r.gpus)
        return out

    def blocked_now(self, placement: PlacementT, jobs: Sequence[Job]) -> bool:
        """True if a reservation active now forbids `jobs` some GPU of `placement`."""
        for p in placement:
            node = self.instance.node_by_name[p.node]
            if set(p.gpus) & self._blocked(node, jobs, self.now + 1):
                return True
        return False

    # -- capacity -----------------------------------------------------------------------
    def runs_on(self, ng: NodeGroup, jobs: Sequence[Job]) -> bool:
        """Whether `jobs` (one job, or a group) may run on nodes of `ng`: every job allows
        it (R5: `node_types`, size, CPUs, memory) and a group is admissible there
        (contract §4 at the group's speed and GPU memory, R7). Policies choose groups and
        keep runs where they are; this is what no placement gets past."""
        key: tuple[str, tuple[tuple[str, int], ...]]
        if len(jobs) == 1:  # speed: most runs are one job (the same key)
            key = (ng.name, ((jobs[0].id, jobs[0].gpus),))
        else:
            key = (ng.name, tuple((j.id, j.gpus) for j in jobs))
        ok = self._runs_on.get(key)
        if ok is None:
            ok = all(ng in self.instance.eligible_groups(j) for j in jobs)
            if ok and len(jobs) > 1:
                ok = group_admissible(self.instance, jobs, ng.speed, ng.gpu_mem_gb)
            self._runs_on[key] = ok
        return ok

    def _node_ok(self, node: Node, jobs: Sequence[Job], k: int) -> bool:
        g = node.group
        if g.cpus is None and g.mem_gb is None:
            return True
        cpus = sum(j.cpus_per_gpu for j in jobs) * k
        mem = sum(j.mem_gb_per_gpu for j in jobs) * k
        if g.cpus is not None and self.cpus[node.index] + cpus > g.cpus + 1e-9:
            return False
        return g.mem_gb is None or self.mem[node.index] + mem <= g.mem_gb + 1e-9

    def _usable(self, node: Node, jobs: Sequence[Job], until: int) -> set[int]:
        if not self._res:
            return self.free[node.index]
        return self.free[node.index] - self._blocked(node, jobs, until)

    def take(self, placement: PlacementT, jobs: Sequence[Job], until: int) -> bool:
        """Book exactly `placement` for `jobs` if all of it is usable; else change nothing."""
        nodes = [self.instance.node_by_name[p.node] for p in placement]
        if any(not self.runs_on(node.group, jobs) for node in nodes):
            return False
        for node, p in zip(nodes, placement, strict=True):
            if not set(p.gpus) <= self._usable(node, jobs, until):
                return False
            if not self._node_ok(node, jobs, len(p.gpus)):
                return False
        if not self._pools_fit(jobs, until):
            return False
        for node, p in zip(nodes, placement, strict=True):
            self._book(node, jobs, p.gpus)
        self._book_pools(jobs, until)
        return True

    def book_running(self, placement: PlacementT, jobs: Sequence[Job]) -> None:
        """Book a run that keeps going whatever it overlaps (non-preemptive policies): its
        pool demand as if it never ended."""
        for p in placement:
            self._book(self.instance.node_by_name[p.node], jobs, p.gpus)
        self._book_pools(jobs, FOREVER)

    def _book(self, node: Node, jobs: Sequence[Job], gpus: Sequence[int]) -> None:
        before = len(self.free[node.index])
        self.free[node.index] -= set(gpus)
        self._nfree -= before - len(self.free[node.index])
        g = node.group  # a node's CPUs and memory are counted where `_node_ok` reads them
        if g.cpus is not None:
            self.cpus[node.index] += sum(j.cpus_per_gpu for j in jobs) * len(gpus)
        if g.mem_gb is not None:
            self.mem[node.index] += sum(j.mem_gb_per_gpu for j in jobs) * len(gpus)

    def place(
        self, jobs: Sequence[Job], until: int, groups: Sequence[NodeGroup] | None = None
    ) -> PlacementT | None:
        """First-fit placement of `jobs` (one job, or a group sharing one GPU set); booked.
        An elastic job alone (contract §12) runs at the first count of `counts_to_try`
        that fits now; the placement's size is the count chosen."""
        for c in counts_to_try(jobs):
            at_c = [j.at_count(c) for j in jobs]
            found = self._place_at(at_c, c, until, groups)
            if found is not None:
                return found
        return None

    def _place_at(
        self, jobs: Sequence[Job], g: int, until: int, groups: Sequence[NodeGroup] | None
    ) -> PlacementT | None:
        if g > self._nfree:  # speed: a full cluster answers at once (long queues)
            return None
        if not self._pools_fit(jobs, until):
            return None
        if g == 0:  # pools only
            self._book_pools(jobs, until)
            return ()
        allowed = groups if groups is not None else self.instance.node_groups
        for ng in allowed:
            if not self.runs_on(ng, jobs):
                continue
            found = self._find(ng, jobs, g, until)
            if found is not None:
                for node, gpus in found:
                    self._book(node, jobs, gpus)
                self._book_pools(jobs, until)
                return tuple(Placement(n.name, tuple(gs)) for n, gs in found)
        return None

    def _find(
        self, ng: NodeGroup, jobs: Sequence[Job], g: int, until: int
    ) -> list[tuple[Node, list[int]]] | None:
        """`_scan`, unless no node of `ng` can have the GPUs. A packer's free GPUs only
        shrink, so the most free on one node, counted when a scan fails, bounds every
        later scan: on a nearly full cluster most placements fail, and each scanned every
        node (fifo on 10,000 generated jobs: `_find` was 20 of 127 profiled seconds).
        Counted when a scan fails, not at every booking: srsf-p fills an empty cluster at
        each decision, and a count after each of its placements would cost it a scan."""
        if self._most.get(ng.name, ng.gpus) < min(g, ng.gpus):
            return None  # no node has g free GPUs (or is wholly free): the scan finds none
        found = self._scan(ng, jobs, g, until)
        if found is None:
            nodes = self.instance.nodes_of(ng)
            self._most[ng.name] = max((len(self.free[n.index]) for n in nodes), default=0)
        return found

    def _scan(
        self, ng: NodeGroup, jobs: Sequence[Job], g: int, until: int
    ) -> list[tuple[Node, list[int]]] | None:
        """The first node of `ng` with `g` usable GPUs (`g` at most a node's), or the first
        `g / gpus-per-node` wholly usable nodes."""
        nodes = self.instance.nodes_of(ng)
        free = self.free
        each = min(g, ng.gpus)  # the GPUs each node must have free
        need = g // ng.gpus  # nodes wholly taken (when g > ng.gpus)
        whole: list[tuple[Node, list[int]]] = []
        # the free GPUs only shrink, so a node with fewer than `each` free is never looked
        # at again for `each`: srsf-p fills an empty cluster at each decision, first fit
        # from the first node (3,000 generated jobs on 128 nodes: `_scan` was the packer's
        # most)
        key = (ng.name, each)
        lead = self._short.get(key, 0)
        for i in range(lead, len(nodes)):
            node = nodes[i]
            if len(free[node.index]) < each:
                if i == lead:
                    lead += 1
                    self._short[key] = lead
                continue  # speed: `_usable` is a subset of the free GPUs
            usable = self._usable(node, jobs, until)
            if len(usable) < each or not self._node_ok(node, jobs, each):
                continue
            if g <= ng.gpus:
                return [(node, sorted(usable)[:g])]
            whole.append((node, list(range(node.gpus))))
            if len(whole) == need:
                return whole
        return None

    @property
    def free_gpus(self) -> int:
        return self._nfree

    def cannot_fit(self, jobs: Sequence[Job]) -> bool:
        """True when `place(jobs, ...)` must fail: each count it would try needs more GPUs
        than are free. Policies ask first, to pass over a long queue on a full cluster
        without working out how long each run must be clear (`policies.until`)."""
        least = fewest_gpus(jobs[0]) if len(jobs) == 1 else jobs[0].gpus  # `counts_to_try`
        return least > self._nfree


def count_of(placement: PlacementT) -> int:
    """The GPU count a run on `placement` runs at: the placement's size (contract §12)."""
    return sum(len(p.gpus) for p in placement)


def fewest_gpus(job: Job) -> int:
    """The fewest GPUs `place([job], ...)` tries, the least of `counts_to_try([job])`
    (`cannot_fit` asks it too)."""
    return min(job.gpus, *job.gpu_counts)


def counts_to_try(jobs: Sequence[Job]) -> list[int]:
    """The counts a run may start at, in order of preference. A job alone: its default
    count, then its other allowed counts ascending. A group: its members' default count,
    the one its admissibility was judged at (groups pair jobs of one default count)."""
    first = jobs[0].gpus
    if len(jobs) > 1:
        return [first]
    return [first, *sorted(set(jobs[0].gpu_counts) - {first})]


def reservation_times(instance: Instance) -> list[int]:
    """Starts and ends of reservations (of GPUs or of a pool): the engine decides again at
    each of them."""
    out: set[int] = set()
    r: Reservation
    for r in instance.reservations:
        out.update((r.start, r.end))
    return sorted(out)
