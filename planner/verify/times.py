"""The rules about when: R2 (release, deadline, horizon), the live state's history
(contract §9), R4 (precedence), R9 (strict priority) and R10 (GPU reservations)."""

from __future__ import annotations

from collections import defaultdict

from planner.instance import Instance
from planner.schedule import Assignment
from planner.verify.base import Violation, valid_gpus

# --- R2: release, deadline, horizon -------------------------------------------------


def check_r2(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    for jid, a in ok.items():
        j = inst.job_by_id[jid]
        if a.start < j.release:
            out.append(
                Violation(
                    "R2", f"starts at {a.start} before its release {j.release}", jid, time=a.start
                )
            )
        if j.deadline is not None and a.end > j.deadline:
            out.append(
                Violation("R2", f"ends at {a.end} after its deadline {j.deadline}", jid, time=a.end)
            )
        if inst.horizon is not None and a.end > inst.horizon:
            out.append(
                Violation(
                    "R2", f"ends at {a.end} after the horizon {inst.horizon}", jid, time=a.end
                )
            )


# --- Live state (contract §9): what runs or ran is kept as given --------------------


def check_live(
    inst: Instance,
    ok: dict[str, Assignment],
    members: dict[str, list[Assignment]],
    out: list[Violation],
) -> None:
    for jid, a in ok.items():
        j = inst.job_by_id[jid]
        if j.live is None:
            if a.start < inst.now:
                msg = f"starts at {a.start}, before now {inst.now}, yet it was waiting"
                out.append(Violation("R2", msg, jid, time=a.start))
            continue
        first = a.pieces()[0]
        if first.start != j.live.started:
            msg = f"{j.state} since {j.live.started}, but starts at {first.start}"
            out.append(Violation("R2", msg, jid, time=first.start))
        given = tuple(sorted((n, tuple(sorted(g))) for n, g in j.live.placement))
        has = tuple(sorted((p.node, tuple(sorted(p.gpus))) for p in first.placement))
        # a done job given without placement is R5's (`verify.placement.check_r5`): once
        if given != has and (j.live.placement or j.live.ended is None):
            out.append(Violation("R5", f"{j.state} job: placement differs from the given one", jid))
        if first.group != j.live.group:
            msg = f"{j.state} job: group {first.group} differs from the given {j.live.group}"
            out.append(Violation("R5", msg, jid))
        if j.live.ended is not None and len(a.pieces()) > 1:
            msg = (
                f"done job is given as one interval [{j.live.started}, {j.live.ended}) "
                f"(contract §9), but the schedule gives it {len(a.pieces())} segments"
            )
            out.append(Violation("R2", msg, jid, time=a.end))
        elif j.live.ended is not None and a.end != j.live.ended:
            msg = f"done job ended at {j.live.ended}, but the schedule ends it at {a.end}"
            out.append(Violation("R2", msg, jid, time=a.end))
        elif j.live.ended is None and first.end < inst.now:
            msg = f"running job's segment ends at {first.end}, before now {inst.now}"
            out.append(Violation("R2", msg, jid, time=first.end))
    _check_live_groups(inst, members, out)


def _check_live_groups(
    inst: Instance, members: dict[str, list[Assignment]], out: list[Violation]
) -> None:
    """A given group label holds exactly its given members (no newcomer joins it)."""
    given: dict[str, set[str]] = defaultdict(set)
    for j in inst.jobs:
        if j.live is not None and j.live.group is not None:
            given[j.live.group].add(j.id)
    for label, ids in given.items():
        for p in members.get(label, []):
            if p.id not in ids:
                formed = ", ".join(sorted(ids))
                msg = f"joins group {label}, formed before now from {formed}"
                out.append(Violation("R5", msg, p.id, time=p.start))


# --- R4: precedence -----------------------------------------------------------------


def check_r4(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    for jid, b in ok.items():
        for pred in inst.job_by_id[jid].after:
            a = ok.get(pred)
            if a is not None and b.start < a.end:
                out.append(
                    Violation(
                        "R4",
                        f"starts at {b.start} before {pred} ends at {a.end}",
                        jid,
                        time=b.start,
                    )
                )


# --- R9: strict priority ------------------------------------------------------------


def check_r9(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    """For each job b, the job a with priority > b's, release <= b's and the latest start.

    Jobs are taken in release order; a Fenwick tree over priority ranks (reversed, so a
    prefix is "priority greater than") keeps the latest start seen: O(n log n). The release
    is `Instance.arrival`: a job's own, which a live state's residual keeps in `arrived`.
    """
    released = {j: inst.arrival(inst.job_by_id[j]) for j in ok}
    ids = sorted(ok, key=released.__getitem__)
    prios = sorted({inst.job_by_id[j].priority for j in ids}, reverse=True)
    rank = {p: i + 1 for i, p in enumerate(prios)}  # 1 = highest priority
    size = len(prios)
    tree: list[tuple[int, str]] = [(-(2**62), "")] * (size + 1)

    def update(i: int, val: tuple[int, str]) -> None:
        while i <= size:
            if val > tree[i]:
                tree[i] = val
            i += i & -i

    def query(i: int) -> tuple[int, str]:  # max over ranks 1..i
        best = (-(2**62), "")
        while i > 0:
            if tree[i] > best:
                best = tree[i]
            i -= i & -i
        return best

    k = 0
    while k < len(ids):
        rel = released[ids[k]]
        batch = []
        while k < len(ids) and released[ids[k]] == rel:
            batch.append(ids[k])
            k += 1
        for jid in batch:  # equal releases count: release(a) <= release(b)
            update(rank[inst.job_by_id[jid].priority], (ok[jid].start, jid))
        for jid in batch:
            b = inst.job_by_id[jid]
            if b.live is not None:
                continue  # running or done: its start is history (contract §9)
            start_a, a = query(rank[b.priority] - 1)
            if a and start_a > ok[jid].start:
                pa = inst.job_by_id[a].priority
                out.append(
                    Violation(
                        "R9",
                        f"starts at {ok[jid].start} (priority {b.priority}) before {a} "
                        f"(priority {pa}, released at {released[a]}) starts at "
                        f"{start_a}",
                        jid,
                        time=ok[jid].start,
                    )
                )


# --- R10: GPU reservations ----------------------------------------------------------


def check_r10(inst: Instance, pieces: list[Assignment], out: list[Violation]) -> None:
    by_node: dict[str, list[tuple[Assignment, set[int]]]] = defaultdict(list)
    for a in pieces:
        if a.end > a.start:
            for n, gs in valid_gpus(inst, a).items():
                by_node[n].append((a, gs))
    for r in inst.reservations:
        if r.pool is not None or r.end <= r.start:
            continue
        for n in r.nodes:
            node = inst.node_by_name.get(n)
            if node is None:
                continue
            reserved = set(r.gpus) if r.gpus is not None else set(range(node.gpus))
            for a, gs in by_node.get(n, []):
                jid = a.id
                hit = gs & reserved
                if not hit or a.end <= r.start or a.start >= r.end:
                    continue
                if r.admits.admits(inst.job_by_id[jid]):
                    continue
                out.append(
                    Violation(
                        "R10",
                        f"uses GPU(s) {', '.join(map(str, sorted(hit)))} reserved by {r.id} "
                        f"[{r.start}, {r.end}), which does not admit it",
                        jid,
                        n,
                        min(hit),
                        max(a.start, r.start),
                    )
                )
