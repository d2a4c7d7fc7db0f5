"""R5: every segment on valid nodes and GPUs, at one of its job's GPU counts."""

from __future__ import annotations

from planner.instance import Instance, Job, Node
from planner.schedule import Assignment
from planner.verify.base import (
    Key,
    Violation,
    gpus_text,
    is_int,
    job_for,
    piece_count,
    piece_key,
)


def check_count_field(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    """A job entry's `gpus`, when given, is its first segment's count (contract §12)."""
    for jid, a in ok.items():
        first = a.pieces()[0]
        if a.gpus is not None and a.gpus != piece_count(first):
            msg = f"gpus is {a.gpus}, the first segment runs at {gpus_text(piece_count(first))}"
            out.append(Violation("R5", msg, jid, time=a.start))


def check_r5(inst: Instance, pieces: list[Assignment], out: list[Violation]) -> set[Key]:
    placed: set[Key] = set()
    told: set[str] = set()  # done jobs given without placement that the schedule places
    for a in pieces:
        n0 = len(out)
        j = inst.job_by_id[a.id]
        live = j.live
        if live is not None and live.state == "done" and not live.placement:
            if a.placement and a.id not in told:
                told.add(a.id)
                msg = "done job given without placement: the schedule must give it none"
                out.append(Violation("R5", msg, a.id))
            continue
        if j.elastic and a.placement and piece_count(a) not in j.gpu_counts:
            allowed = ", ".join(map(str, j.gpu_counts))
            msg = f"runs at {gpus_text(piece_count(a))}, the job may run at {allowed}"
            out.append(Violation("R5", msg, a.id, time=a.start))
            continue
        _placement(inst, job_for(inst, a), a, out)
        if len(out) == n0:
            placed.add(piece_key(a))
    return placed


def _placement(inst: Instance, j: Job, a: Assignment, out: list[Violation]) -> None:
    def bad(msg: str, node: str | None = None, gpu: int | None = None) -> None:
        out.append(Violation("R5", msg, j.id, node, gpu, a.start))

    if j.gpus == 0:
        if a.placement:
            bad("a job with 0 GPUs must have no placement")
        return
    if not a.placement:
        bad(f"needs {gpus_text(j.gpus)} but has no placement")
        return
    n0 = len(out)
    nodes: list[Node] = []
    for p in a.placement:
        node = inst.node_by_name.get(p.node)
        if node is None:
            bad("unknown node", p.node)
            continue
        nodes.append(node)
        for gi in p.gpus:
            if not (is_int(gi) and 0 <= gi < node.gpus):
                bad(f"GPU index {gi} does not exist (the node has {node.gpus})", p.node, gi)
        if len(set(p.gpus)) != len(p.gpus):
            bad("a GPU is listed twice", p.node)
    if len(out) > n0:
        return  # the counts below would only repeat these faults
    names = [p.node for p in a.placement]
    if len(set(names)) != len(names):
        bad("a node appears twice in the placement")
        return
    groups = {n.group.name for n in nodes}
    if len(groups) > 1:
        bad(f"nodes of different node groups ({', '.join(sorted(groups))})")
        return
    ng = nodes[0].group
    if j.node_types is not None and ng.name not in j.node_types:
        bad(f"node group {ng.name} is not in node_types ({', '.join(j.node_types)})", nodes[0].name)
    if j.gpus <= ng.gpus:
        if len(a.placement) != 1:
            fits = f"a job of {gpus_text(j.gpus)} fits one {ng.gpus}-GPU node"
            bad(f"{fits} but {len(a.placement)} nodes are used")
        elif len(set(a.placement[0].gpus)) != j.gpus:
            bad(
                f"uses {gpus_text(len(set(a.placement[0].gpus)))}, the job has {j.gpus}",
                a.placement[0].node,
            )
        return
    if j.gpus % ng.gpus:
        bad(f"{j.gpus} GPUs is not a whole number of {ng.gpus}-GPU nodes")
        return
    want = j.gpus // ng.gpus
    if len(a.placement) != want:
        bad(f"needs {want} whole {ng.name} nodes, uses {len(a.placement)}")
    full = set(range(ng.gpus))
    for p in a.placement:
        if set(p.gpus) != full:
            bad("a multi-node job must use every GPU of each node", p.node)
