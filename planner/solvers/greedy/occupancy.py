"""What the cluster holds now, for the event engine (`events.py`): free GPUs per node as
bit masks, per node group the nodes by free-GPU count (best fit: the node with the fewest
free GPUs that fits, then the lowest index), node CPU and memory in use, and the GPU
reservations each node's GPUs must respect. The engine's time only moves forward and
everything booked has started, so a GPU free now stays free (only reservations can forbid
it) and fitting "now" needs only these counters."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence

from planner.durations import gpu_mem_fits
from planner.instance import Instance, Job, NodeGroup, Reservation
from planner.solvers.greedy.fit import blocks, gpu_reservations, node_fits

Placement = list[tuple[int, list[int]]]  # (node index, GPU indices) per node


class _NodeGroupState:
    """Free-GPU bookkeeping of one node group: per free count, the sorted local indices."""

    def __init__(self, ng: NodeGroup, nodes: list[int]):
        self.ng = ng
        self.G = ng.gpus
        self.nodes = nodes  # global node indices, local index = position
        self.lists: list[list[int]] = [[] for _ in range(ng.gpus + 1)]
        self.lists[ng.gpus] = list(range(len(nodes)))

    def move(self, local: int, old: int, new: int) -> None:
        lst = self.lists[old]
        del lst[bisect.bisect_left(lst, local)]
        bisect.insort(self.lists[new], local)

    def can_fit(self, g: int) -> bool:
        if g <= self.G:
            lists = self.lists
            return any(lists[c] for c in range(g, self.G + 1))
        return len(self.lists[self.G]) >= g // self.G


class Occupancy:
    """Free GPUs, CPU and memory of every node at the engine's current time."""

    def __init__(self, instance: Instance):
        self.inst = instance
        self.ng_index = {g.name: k for k, g in enumerate(instance.node_groups)}
        per_group: dict[str, list[int]] = defaultdict(list)
        for nd in instance.nodes:
            per_group[nd.group.name].append(nd.index)
        self.ngs = [_NodeGroupState(g, per_group[g.name]) for g in instance.node_groups]
        self.local = [0] * len(instance.nodes)
        for st in self.ngs:
            for loc, ni in enumerate(st.nodes):
                self.local[ni] = loc
        self.node_ng = [self.ng_index[nd.group.name] for nd in instance.nodes]
        self.free_mask = [(1 << nd.gpus) - 1 for nd in instance.nodes]
        self.free_cnt = [nd.gpus for nd in instance.nodes]
        self.cpu_used = [0.0] * len(instance.nodes)
        self.mem_used = [0.0] * len(instance.nodes)
        self.touched: set[int] = set()  # node groups whose free GPUs changed (bucket_mins.py)
        self.held: list[tuple[int, int, int, int]] = []  # (end, node, bits, count)
        held = self._hold_from_the_start(gpu_reservations(instance))
        self.node_res: list[list[list[Reservation]] | None] = [
            held.get(nd.index) for nd in instance.nodes
        ]
        self.special = [
            self.node_res[nd.index] is not None
            or nd.group.cpus is not None
            or nd.group.mem_gb is not None
            for nd in instance.nodes
        ]

    def _hold_from_the_start(
        self, per_node: dict[int, list[list[Reservation]]]
    ) -> dict[int, list[list[Reservation]]]:
        """A reservation for nobody that begins by the first release holds its GPUs as a
        running job would: they are taken now and given back at its end (`held`, which the
        engine turns into events), and `_usable` no longer scans it. A live state's running
        jobs are such reservations (`live.residual._held`); scanned at every try, they made the
        greedy part of a 2,000-job `plan replan` take most of its 56 s (README "Replanning
        a schedule under way"). The per-GPU reservations left, by node (none: absent)."""
        first = min((j.release for j in self.inst.jobs), default=0)
        out: dict[int, list[list[Reservation]]] = {}
        for node, per_gpu in per_node.items():
            ends: dict[int, int] = defaultdict(int)  # end -> mask of the GPUs held until then
            kept: list[list[Reservation]] = []
            for k, rs in enumerate(per_gpu):
                end = first
                kept.append([])
                for r in rs:
                    if r.start <= first and not (r.admits.tenants or r.admits.jobs):
                        end = max(end, r.end)
                    else:
                        kept[-1].append(r)
                if end > first:
                    ends[end] |= 1 << k
            for end, bits in sorted(ends.items()):
                count = bits.bit_count()
                self.take(node, bits, count)
                self.held.append((end, node, bits, count))
            if any(kept):
                out[node] = kept
        return out

    def can_fit(self, gi: int, g: int) -> bool:
        """Whether some node (or k whole nodes) of node group `gi` has `g` GPUs free."""
        return self.ngs[gi].can_fit(g)

    def _usable(self, node: int, members: Sequence[Job], t: int, hold: int, need: int) -> list[int]:
        mask = self.free_mask[node]
        res = self.node_res[node]
        out: list[int] = []
        k = 0
        while mask and len(out) < need:
            if mask & 1 and (
                res is None or not any(blocks(r, t, t + hold, members) for r in res[k])
            ):
                out.append(k)
            mask >>= 1
            k += 1
        return out

    def _node_ok(self, node: int, members: Sequence[Job], per_node: int) -> bool:
        used = {"cpu": self.cpu_used[node], "mem": self.mem_used[node]}
        return node_fits(self.inst.nodes[node].group, members, per_node, used.__getitem__)

    def place(self, gi: int, members: Sequence[Job], g: int, t: int, hold: int) -> Placement | None:
        st = self.ngs[gi]
        G = st.G
        special = self.special
        if g <= G:
            for c in range(g, G + 1):
                for loc in st.lists[c]:
                    node = st.nodes[loc]
                    if special[node] and not self._node_ok(node, members, g):
                        continue
                    gp = self._usable(node, members, t, hold, g)
                    if len(gp) == g:
                        return [(node, gp)]
            return None
        k = g // G
        chosen: list[tuple[int, list[int]]] = []
        for loc in st.lists[G]:
            node = st.nodes[loc]
            if special[node] and not self._node_ok(node, members, G):
                continue
            gp = self._usable(node, members, t, hold, G)
            if len(gp) == G:
                chosen.append((node, gp))
                if len(chosen) == k:
                    return chosen
        return None

    def gpu_mem_ok(self, members: Sequence[Job], gi: int) -> bool:
        """Whether `members` fit in GPU memory together on node group `gi`."""
        ng = self.ngs[gi].ng
        if ng.gpu_mem_gb is None or len(members) == 1:
            return True  # a solo job's memory was checked on input (eligible groups)
        return gpu_mem_fits(self.inst, members, ng.gpu_mem_gb)

    def take(self, node: int, bits: int, k: int) -> None:
        """Mark the `k` GPUs of mask `bits` on `node` busy."""
        self._set_free(node, self.free_mask[node] & ~bits, -k)

    def give(self, node: int, bits: int, k: int) -> None:
        """Mark the `k` GPUs of mask `bits` on `node` free again."""
        self._set_free(node, self.free_mask[node] | bits, k)

    def _set_free(self, node: int, mask: int, change: int) -> None:
        old = self.free_cnt[node]
        self.free_mask[node] = mask
        self.free_cnt[node] = old + change
        gi = self.node_ng[node]
        self.ngs[gi].move(self.local[node], old, old + change)
        self.touched.add(gi)

    def use(self, node: int, per_node: int, members: Sequence[Job], sign: int) -> None:
        """Book (`sign` 1) or free (-1) the CPUs and memory `members` take on `node`."""
        for m in members:
            self.cpu_used[node] += sign * per_node * m.cpus_per_gpu
            self.mem_used[node] += sign * per_node * m.mem_gb_per_gpu
