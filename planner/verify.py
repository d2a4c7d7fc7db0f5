"""The independent checker of contract §5 (what `plan check` runs).

`verify(instance, schedule)` lists every violation of rules R1-R10. It shares no code
with the planners: from the package it uses only the problem data (`instance`), the
schedule type (`schedule`) and the duration formulas (`durations`), so a planner bug
cannot hide itself by being repeated here.

Semantics (contract §5 plus the README section "What we chose where the contract is
silent"):
- Intervals are half-open `[start, end)`; zero-length jobs occupy nothing.
- The schedule is checked as it is, whatever its status, with one exception: a schedule
  that claims nothing (no jobs) and has status `infeasible` or `unknown` verifies to `[]`.
  Callers decide whether to verify partial `unknown` schedules (they will show R1
  "missing" violations).
- Group membership is taken from each job's `group` field; the `groups` list must agree
  with it (R1).
- R3 checks group admissibility (2..max_group profiled members, equal GPU counts, cycle
  shorter than the sum of solo times, interleaving enabled). The GPU-memory part of
  admissibility is reported once, under R7 (per-GPU memory), not twice.
- R6 and R7 work on "holders": a solo job, or a whole group, which holds the union of its
  members' GPUs from the group's start to its last member's end. CPU/memory (R7) and
  pools (R8) count each member only while it runs.
- R8 uses the exact subset rule (Hall's condition) for pool reservations, so pool
  reservations are checked there; R10 covers GPU reservations only.
- Overloads (R7, R8) are reported once per episode: at the instant the load first
  exceeds the capacity, not again while it stays over.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from planner.durations import group_admissible, group_member_durations, solo_duration
from planner.instance import Instance, Job, Node, Reservation
from planner.schedule import Assignment, Schedule

_TOL = 1e-9  # float slack on capacities


@dataclass(frozen=True)
class Violation:
    rule: str  # "R1".."R10"
    message: str
    job: str | None = None
    node: str | None = None
    gpu: int | None = None
    time: int | None = None

    def __str__(self) -> str:
        where = []
        if self.job is not None:
            where.append(f"job {self.job}")
        if self.node is not None:
            where.append(f"node {self.node}")
        if self.gpu is not None:
            where.append(f"GPU {self.gpu}")
        if self.time is not None:
            where.append(f"t={self.time}")
        head = f"{self.rule} " + (", ".join(where) + ": " if where else "")
        return head + self.message


@dataclass(frozen=True)
class _Holder:
    """A solo job or a whole group holding GPUs over [start, end)."""

    label: str  # "job x" or "group g (a, b)"
    job: str  # a representative job id (the solo job, or the group's first member)
    start: int
    end: int
    gpus: dict[str, frozenset[int]]  # node -> GPU indices (valid ones only)
    members: tuple[str, ...]


def verify(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Every violation of contract §5 by `schedule` for `instance` (empty list: valid)."""
    if not schedule.jobs and schedule.status in ("infeasible", "unknown"):
        return []
    out: list[Violation] = []
    ok = _check_r1(instance, schedule, out)  # id -> assignment of the checkable jobs
    members = _members(ok)
    _check_r2(instance, ok, out)
    placed = _check_r5(instance, ok, out)  # ids with a valid placement
    _check_r3(instance, ok, members, placed, out)
    _check_r4(instance, ok, out)
    holders = _holders(instance, ok, members)
    _check_r6(ok, members, holders, out)
    _check_r7(instance, ok, holders, out)
    _check_r8(instance, ok, out)
    if instance.priority_policy == "strict":
        _check_r9(instance, ok, out)
    _check_r10(instance, ok, out)
    return out


# --- R1: every job exactly once, sane times, consistent groups -------------------------


def _check_r1(inst: Instance, s: Schedule, out: list[Violation]) -> dict[str, Assignment]:
    seen: dict[str, Assignment] = {}
    for a in s.jobs:
        if a.id not in inst.job_by_id:
            out.append(Violation("R1", "job is not in the instance", a.id))
        elif a.id in seen:
            out.append(Violation("R1", "job appears more than once", a.id))
        else:
            seen[a.id] = a
    for j in inst.jobs:
        if j.id not in seen:
            out.append(Violation("R1", "job is missing from the schedule", j.id))
    ok: dict[str, Assignment] = {}
    for jid, a in seen.items():
        if not (_is_int(a.start) and _is_int(a.end)):
            out.append(
                Violation("R1", f"start {a.start!r} and end {a.end!r} must be integers", jid)
            )
            continue
        if a.end < a.start:
            out.append(Violation("R1", f"end {a.end} is before start {a.start}", jid, time=a.start))
            continue
        if a.end == a.start and not _zero_length(inst, inst.job_by_id[jid]):
            out.append(
                Violation("R1", "start == end for a job that is not zero-length", jid, time=a.start)
            )
            continue
        ok[jid] = a
    # Groups: the list and the jobs' `group` fields must agree.
    listed: dict[str, tuple[str, ...]] = {}
    for g in s.groups:
        if g.id in listed:
            out.append(Violation("R1", f"group {g.id} is listed more than once"))
            continue
        listed[g.id] = g.jobs
        for m in g.jobs:
            if m not in inst.job_by_id:
                out.append(Violation("R1", f"group {g.id} lists unknown job {m}", m))
            elif m in seen and seen[m].group != g.id:
                out.append(
                    Violation(
                        "R1", f"group {g.id} lists the job, whose group is {seen[m].group}", m
                    )
                )
        if len(set(g.jobs)) != len(g.jobs):
            out.append(Violation("R1", f"group {g.id} lists a job more than once"))
    for jid, a in seen.items():
        if a.group is None:
            continue
        if a.group not in listed:
            out.append(Violation("R1", f"group {a.group} is not in the schedule's groups", jid))
        elif jid not in listed[a.group]:
            out.append(Violation("R1", f"group {a.group} does not list the job", jid))
    return ok


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _zero_length(inst: Instance, job: Job) -> bool:
    if job.duration is not None:
        return job.duration == 0
    return not job.iterations


def _members(ok: dict[str, Assignment]) -> dict[str, list[str]]:
    """Group id -> member ids, from the jobs' `group` fields, in a fixed order."""
    out: dict[str, list[str]] = defaultdict(list)
    for jid in sorted(ok):
        g = ok[jid].group
        if g is not None:
            out[g].append(jid)
    return dict(out)


# --- R2: release, deadline, horizon -------------------------------------------------


def _check_r2(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
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


# --- R5: placement ------------------------------------------------------------------


def _check_r5(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> set[str]:
    placed: set[str] = set()
    for jid, a in ok.items():
        n0 = len(out)
        _placement(inst, inst.job_by_id[jid], a, out)
        if len(out) == n0:
            placed.add(jid)
    return placed


def _placement(inst: Instance, j: Job, a: Assignment, out: list[Violation]) -> None:
    def bad(msg: str, node: str | None = None, gpu: int | None = None) -> None:
        out.append(Violation("R5", msg, j.id, node, gpu, a.start))

    if j.gpus == 0:
        if a.placement:
            bad("a job with 0 GPUs must have no placement")
        return
    if not a.placement:
        bad(f"needs {j.gpus} GPUs but has no placement")
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
            if not (_is_int(gi) and 0 <= gi < node.gpus):
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
            bad(f"{j.gpus} GPUs fit one {ng.gpus}-GPU node but {len(a.placement)} nodes are used")
        elif len(set(a.placement[0].gpus)) != j.gpus:
            bad(
                f"uses {len(set(a.placement[0].gpus))} GPUs, the job has {j.gpus}",
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


# --- R3: durations and group admissibility ------------------------------------------


def _speed(inst: Instance, a: Assignment) -> float:
    if a.placement and a.placement[0].node in inst.node_by_name:
        return inst.node_by_name[a.placement[0].node].speed
    return 1.0


def _duration_ok(j: Job, actual: int, expected: int) -> bool:
    if j.profiled:
        return abs(actual - expected) <= 1
    return actual == expected


def _check_r3(
    inst: Instance,
    ok: dict[str, Assignment],
    members: dict[str, list[str]],
    placed: set[str],
    out: list[Violation],
) -> None:
    for jid, a in ok.items():
        if a.group is not None:
            continue
        j = inst.job_by_id[jid]
        if j.gpus and jid not in placed:
            continue  # no node speed to judge by; R5 reported the placement
        want = solo_duration(inst, j, _speed(inst, a))
        if not _duration_ok(j, a.end - a.start, want):
            out.append(
                Violation(
                    "R3", f"lasts {a.end - a.start}, the duration is {want}", jid, time=a.start
                )
            )
    for gid, ids in members.items():
        jobs = [inst.job_by_id[m] for m in ids]
        first = ok[ids[0]]
        name = f"group {gid} ({', '.join(ids)})"
        why = _inadmissible(inst, jobs, _speed(inst, first))
        if why is not None:
            out.append(
                Violation("R3", f"{name} is not admissible: {why}", ids[0], time=first.start)
            )
            continue
        if ids[0] not in placed:
            continue
        wants = group_member_durations(inst, jobs, _speed(inst, first))
        for m, want in zip(ids, wants, strict=True):
            a = ok[m]
            if not _duration_ok(inst.job_by_id[m], a.end - a.start, want):
                out.append(
                    Violation(
                        "R3",
                        f"lasts {a.end - a.start} in {name}, the duration is {want}",
                        m,
                        time=a.start,
                    )
                )


def _inadmissible(inst: Instance, jobs: Sequence[Job], speed: float) -> str | None:
    il = inst.interleaving
    if not il.enabled:
        return "interleaving is disabled in the instance"
    if not 2 <= len(jobs) <= il.max_group:
        return f"{len(jobs)} members, allowed 2..{il.max_group}"
    if any(not j.profiled for j in jobs):
        return "jobs with an explicit duration do not interleave"
    if len({j.gpus for j in jobs}) != 1:
        return "members have different GPU counts"
    # GPU memory is left to R7 so that one fault is reported once.
    if not group_admissible(inst, jobs, speed, None):
        return "its cycle is not shorter than the sum of the solo iteration times"
    return None


# --- R4: precedence -----------------------------------------------------------------


def _check_r4(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
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


# --- holders (R6, R7) ---------------------------------------------------------------


def _valid_gpus(inst: Instance, a: Assignment) -> dict[str, set[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for p in a.placement:
        node = inst.node_by_name.get(p.node)
        if node is None:
            continue
        out[p.node].update(g for g in p.gpus if _is_int(g) and 0 <= g < node.gpus)
    return out


def _holders(
    inst: Instance, ok: dict[str, Assignment], members: dict[str, list[str]]
) -> list[_Holder]:
    out: list[_Holder] = []
    for jid, a in ok.items():
        if a.group is None and a.placement:
            gp = _valid_gpus(inst, a)
            out.append(
                _Holder(
                    f"job {jid}",
                    jid,
                    a.start,
                    a.end,
                    {n: frozenset(g) for n, g in gp.items()},
                    (jid,),
                )
            )
    for gid, ids in members.items():
        union: dict[str, set[int]] = defaultdict(set)
        for m in ids:
            for n, g in _valid_gpus(inst, ok[m]).items():
                union[n] |= g
        if not union:
            continue
        start = min(ok[m].start for m in ids)
        end = max(ok[m].end for m in ids)
        out.append(
            _Holder(
                f"group {gid} ({', '.join(ids)})",
                ids[0],
                start,
                end,
                {n: frozenset(g) for n, g in union.items()},
                tuple(ids),
            )
        )
    return out


# --- R6: GPU exclusivity ------------------------------------------------------------


def _check_r6(
    ok: dict[str, Assignment],
    members: dict[str, list[str]],
    holders: list[_Holder],
    out: list[Violation],
) -> None:
    for gid, ids in members.items():
        ref = ok[ids[0]]
        ref_pl = _pl_key(ref)
        for m in ids[1:]:
            a = ok[m]
            if _pl_key(a) != ref_pl:
                out.append(
                    Violation(
                        "R6", f"placement differs from {ids[0]}'s in group {gid}", m, time=a.start
                    )
                )
            if a.start != ref.start:
                out.append(
                    Violation(
                        "R6",
                        f"starts at {a.start}, {ids[0]} of group {gid} at {ref.start}",
                        m,
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


def _check_r7(
    inst: Instance, ok: dict[str, Assignment], holders: list[_Holder], out: list[Violation]
) -> None:
    # Per-GPU memory: a holder sits alone on its GPUs (R6), so this is static.
    for h in holders:
        need = 0.0
        for m in h.members:
            j = inst.job_by_id[m]
            prof = inst.profiles.get(j.model) if j.model is not None else None
            if prof is not None and prof.gpu_mem_gb is not None:
                need += prof.gpu_mem_gb
        if need <= 0:
            continue
        for n in sorted(h.gpus):
            cap = inst.node_by_name[n].group.gpu_mem_gb
            if cap is not None and h.gpus[n] and need > cap + _TOL:
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
    for jid, a in ok.items():
        if a.end <= a.start:
            continue
        for n, gs in _valid_gpus(inst, a).items():
            if gs:
                events[n].append((a.start, 1, jid, len(gs)))
                events[n].append((a.end, 0, jid, len(gs)))  # ends sort before starts
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
                now_over = load > cap + _TOL
                if now_over and not over[c]:
                    who = _some(sorted(running))
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


def _check_r8(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    for pool, cap in inst.pools.items():
        res = [r for r in inst.reservations if r.pool == pool]
        users = [(jid, a, inst.job_by_id[jid].demand.get(pool, 0.0)) for jid, a in ok.items()]
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
            who = _some(
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
            room = cap - sum(r.amount for r in u)
            if demand - room > gap + _TOL:
                gap = demand - room
                worst = (u, demand, room)
    return worst


# --- R9: strict priority ------------------------------------------------------------


def _check_r9(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    """For each job b, the job a with priority > b's, release <= b's and the latest start.

    Jobs are taken in release order; a Fenwick tree over priority ranks (reversed, so a
    prefix is "priority greater than") keeps the latest start seen: O(n log n).
    """
    ids = sorted(ok, key=lambda j: inst.job_by_id[j].release)
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
        rel = inst.job_by_id[ids[k]].release
        batch = []
        while k < len(ids) and inst.job_by_id[ids[k]].release == rel:
            batch.append(ids[k])
            k += 1
        for jid in batch:  # equal releases count: release(a) <= release(b)
            update(rank[inst.job_by_id[jid].priority], (ok[jid].start, jid))
        for jid in batch:
            b = inst.job_by_id[jid]
            start_a, a = query(rank[b.priority] - 1)
            if a and start_a > ok[jid].start:
                pa = inst.job_by_id[a].priority
                out.append(
                    Violation(
                        "R9",
                        f"starts at {ok[jid].start} (priority {b.priority}) before {a} "
                        f"(priority {pa}, released at {inst.job_by_id[a].release}) starts at "
                        f"{start_a}",
                        jid,
                        time=ok[jid].start,
                    )
                )


# --- R10: GPU reservations ----------------------------------------------------------


def _check_r10(inst: Instance, ok: dict[str, Assignment], out: list[Violation]) -> None:
    by_node: dict[str, list[tuple[str, set[int]]]] = defaultdict(list)
    for jid, a in ok.items():
        if a.end > a.start:
            for n, gs in _valid_gpus(inst, a).items():
                by_node[n].append((jid, gs))
    for r in inst.reservations:
        if r.pool is not None or r.end <= r.start:
            continue
        for n in r.nodes:
            node = inst.node_by_name.get(n)
            if node is None:
                continue
            reserved = set(r.gpus) if r.gpus is not None else set(range(node.gpus))
            for jid, gs in by_node.get(n, []):
                a = ok[jid]
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


def _some(names: Sequence[str], limit: int = 8) -> str:
    """A readable list of names, cut after `limit` (big overloads name thousands)."""
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


def rules(violations: Iterable[Violation]) -> set[str]:
    """The rules broken, e.g. {"R3", "R6"} (handy in tests and summaries)."""
    return {v.rule for v in violations}
