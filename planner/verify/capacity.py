"""The rules about sharing: holders (a solo job, or a whole group), R6 (GPU
exclusivity), R7 (node CPU / memory, per-GPU memory) and R8 (pools, with reservations)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from planner.durations import group_gpu_mem
from planner.instance import Instance, Reservation
from planner.schedule import Assignment
from planner.verify.base import Violation, some_names, valid_gpus

_TOL = 1e-9  # float slack on capacities, relative: `_over`


def _over(load: float, cap: float) -> bool:
    """`load` passes `cap` by more than float rounding (a relative `_TOL` of the larger:
    an absolute one let 2e-10 pass 1e-10 and refused 20,000,000.3 + 0.1 on 20,000,000.4)."""
    return load > cap + _TOL * max(abs(cap), abs(load))


# --- holders (R6, R7) ---------------------------------------------------------------


@dataclass(frozen=True)
class Holder:
    """A solo job or a whole group holding GPUs over [start, end)."""

    label: str  # "job x" or "group g (a, b)"
    job: str  # a representative job id (the solo job, or the group's first member)
    start: int
    end: int
    gpus: dict[str, frozenset[int]]  # node -> GPU indices (valid ones only)
    members: tuple[str, ...]


def holders_of(
    inst: Instance, pieces: list[Assignment], members: dict[str, list[Assignment]]
) -> list[Holder]:
    out: list[Holder] = []
    for a in pieces:
        if a.group is None and a.placement:
            gp = valid_gpus(inst, a)
            out.append(
                Holder(
                    f"job {a.id}",
                    a.id,
                    a.start,
                    a.end,
                    {n: frozenset(g) for n, g in gp.items()},
                    (a.id,),
                )
            )
    for gid, segs in members.items():
        union: dict[str, set[int]] = defaultdict(set)
        for p in segs:
            for n, g in valid_gpus(inst, p).items():
                union[n] |= g
        if not union:
            continue
        ids = [p.id for p in segs]
        out.append(
            Holder(
                f"group {gid} ({', '.join(ids)})",
                ids[0],
                min(p.start for p in segs),
                max(p.end for p in segs),
                {n: frozenset(g) for n, g in union.items()},
                tuple(ids),
            )
        )
    return out


# --- R6: GPU exclusivity ------------------------------------------------------------


def check_r6(
    members: dict[str, list[Assignment]], holders: list[Holder], out: list[Violation]
) -> None:
    for gid, segs in members.items():
        ref = segs[0]
        ref_pl = _pl_key(ref)
        for a in segs[1:]:
            if _pl_key(a) != ref_pl:
                out.append(
                    Violation(
                        "R6",
                        f"placement differs from {ref.id}'s in group {gid}",
                        a.id,
                        time=a.start,
                    )
                )
            if a.start != ref.start:
                out.append(
                    Violation(
                        "R6",
                        f"starts at {a.start}, {ref.id} of group {gid} at {ref.start}",
                        a.id,
                        time=a.start,
                    )
                )
    # Sweep per GPU: sort intervals by start; any interval starting before the latest end
    # seen so far overlaps the holder with that end.
    per_gpu: dict[tuple[str, int], list[int]] = defaultdict(list)
    for k, h in enumerate(holders):
        if h.end <= h.start:
            continue
        for n, gs in h.gpus.items():
            for g in gs:
                per_gpu[(n, g)].append(k)
    clashes: dict[tuple[int, int, str], tuple[list[int], int]] = {}
    for (n, g), ks in per_gpu.items():
        ks.sort(key=lambda k: (holders[k].start, holders[k].end))
        cur = -1
        for k in ks:
            h = holders[k]
            if cur >= 0 and h.start < holders[cur].end:
                key = (cur, k, n)
                gpus, _ = clashes.setdefault(key, ([], h.start))
                gpus.append(g)
            if cur < 0 or h.end > holders[cur].end:
                cur = k
    for (c, k, n), (gpus, t) in sorted(clashes.items(), key=lambda x: (x[1][1], x[0][2])):
        first, later = holders[c], holders[k]
        gpus.sort()
        out.append(
            Violation(
                "R6",
                f"{later.label} [{later.start}, {later.end}) and {first.label} "
                f"[{first.start}, {first.end}) share GPU(s) {', '.join(map(str, gpus))}",
                later.job,
                n,
                gpus[0],
                t,
            )
        )


def _pl_key(a: Assignment) -> frozenset[tuple[str, frozenset[int]]]:
    return frozenset((p.node, frozenset(p.gpus)) for p in a.placement)


# --- R7: node CPU / memory and per-GPU memory ---------------------------------------


def check_r7(
    inst: Instance, pieces: list[Assignment], holders: list[Holder], out: list[Violation]
) -> None:
    # Per-GPU memory: a holder sits alone on its GPUs (R6), so this is static.
    for h in holders:
        need = group_gpu_mem(inst, [inst.job_by_id[m] for m in h.members])
        if need <= 0:
            continue
        for n in sorted(h.gpus):
            cap = inst.node_by_name[n].group.gpu_mem_gb
            if cap is not None and h.gpus[n] and _over(need, cap):
                out.append(
                    Violation(
                        "R7",
                        f"{h.label} needs {need:g} GB per GPU, the GPUs have {cap:g} GB",
                        h.job,
                        n,
                        min(h.gpus[n]),
                        h.start,
                    )
                )
    # CPU and memory over time, each job (group member) while it runs.
    events: dict[str, list[tuple[int, int, str, int]]] = defaultdict(list)
    for a in pieces:
        if a.end <= a.start:
            continue
        for n, gs in valid_gpus(inst, a).items():
            if gs:
                events[n].append((a.start, 1, a.id, len(gs)))
                events[n].append((a.end, 0, a.id, len(gs)))  # ends sort before starts
    for n in sorted(events):
        ng = inst.node_by_name[n].group
        caps = [("CPUs", ng.cpus, "cpus_per_gpu"), ("GB of memory", ng.mem_gb, "mem_gb_per_gpu")]
        caps = [c for c in caps if c[1] is not None]
        if not caps:
            continue
        evs = sorted(events[n])
        running: dict[str, int] = {}
        over = [False] * len(caps)
        i = 0
        while i < len(evs):
            t = evs[i][0]
            started: list[str] = []
            while i < len(evs) and evs[i][0] == t:
                _, kind, jid, k = evs[i]
                if kind:
                    running[jid] = k
                    started.append(jid)
                else:
                    running.pop(jid, None)
                i += 1
            for c, (what, cap, attr) in enumerate(caps):
                assert cap is not None
                load = sum(k * getattr(inst.job_by_id[jid], attr) for jid, k in running.items())
                now_over = _over(load, cap)
                if now_over and not over[c]:
                    who = some_names(sorted(running))
                    out.append(
                        Violation(
                            "R7",
                            f"{load:g} {what} in use, the node has {cap:g} (running: {who})",
                            started[0] if started else None,
                            n,
                            None,
                            t,
                        )
                    )
                over[c] = now_over


# --- R8: pools with reservations ----------------------------------------------------


def check_r8(inst: Instance, pieces: list[Assignment], out: list[Violation]) -> None:
    for pool, cap in inst.pools.items():
        res = [r for r in inst.reservations if r.pool == pool]
        users = [(a.id, a, inst.job_by_id[a.id].demand.get(pool, 0.0)) for a in pieces]
        users = [u for u in users if u[2] > 0 and u[1].end > u[1].start]
        if not users:
            continue
        # A job's signature: the reservations of this pool that admit it (static).
        sig = {
            jid: frozenset(r.id for r in res if r.admits.admits(inst.job_by_id[jid]))
            for jid, _, _ in users
        }
        checks = sorted({a.start for _, a, _ in users} | {r.start for r in res})
        # Sweep: events sorted by time; ends before starts at equal times (half-open).
        evs = sorted(
            [(a.start, 1, jid, d) for jid, a, d in users]
            + [(a.end, 0, jid, d) for jid, a, d in users]
        )
        load: dict[frozenset[str], float] = defaultdict(float)
        running: dict[str, float] = {}
        last_bad: frozenset[str] | None = None
        i = 0
        for t in checks:
            started: list[str] = []
            while i < len(evs) and evs[i][0] <= t:
                _, kind, jid, d = evs[i]
                if kind:
                    load[sig[jid]] += d
                    running[jid] = d
                    if evs[i][0] == t:
                        started.append(jid)
                else:
                    load[sig[jid]] -= d
                    running.pop(jid, None)
                i += 1
            active = [r for r in res if r.start <= t < r.end]
            bad = _hall(cap, active, load)
            if bad is None:
                last_bad = None
                continue
            # One report per episode, unless a different subset becomes the worst one.
            key = frozenset(r.id for r in bad[0])
            if key == last_bad:
                continue
            last_bad = key
            u, demand, room = bad
            who = some_names(
                [f"{j} {running[j]:g}" for j in sorted(running) if not (sig[j] & {r.id for r in u})]
            )
            if u:
                held = f"{cap:g} minus {sum(r.amount for r in u):g} held by " + ", ".join(
                    sorted(r.id for r in u)
                )
                msg = (
                    f"pool {pool}: jobs not admitted by {', '.join(sorted(r.id for r in u))} "
                    f"demand {demand:g} > {room:g} ({held}); ({who})"
                )
            else:
                msg = f"pool {pool}: demand {demand:g} > capacity {cap:g} ({who})"
            culprit = next((j for j in started if not (sig[j] & {r.id for r in u})), None)
            out.append(Violation("R8", msg, culprit, None, None, t))


def _hall(
    cap: float, active: Sequence[Reservation], load: dict[frozenset[str], float]
) -> tuple[tuple[Reservation, ...], float, float] | None:
    """The most-violated subset U of active reservations, with its demand and room.

    A reservation that admits none of the running jobs only lowers the room when added
    to U, so it is always in the worst U; only the others are enumerated (2^k subsets of
    the k reservations that admit a running job, k is small in practice).
    """
    used = {rid for s, v in load.items() if v > _TOL for rid in s}
    fixed = tuple(r for r in active if r.id not in used)
    free = [r for r in active if r.id in used]
    worst: tuple[tuple[Reservation, ...], float, float] | None = None
    gap = 0.0
    for size in range(len(free) + 1):
        for extra in combinations(free, size):
            u = fixed + extra
            ids = {r.id for r in u}
            demand = sum(v for s, v in load.items() if not (s & ids))
            held = sum(r.amount for r in u)
            room = cap - held
            if _over(demand + held, cap) and demand - room > gap:
                gap = demand - room
                worst = (u, demand, room)
    return worst
