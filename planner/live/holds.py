"""What the running and done jobs of a live state (contract §9) hold, and the rules of
contract §5 they break among themselves: R6 (GPU exclusivity), R7 (node CPUs and memory),
R8 (pools) and R10 (GPU reservations). No plan moves those jobs, so no plan mends that.

`clashes` takes each fixed job with the interval it holds its resources over. Two callers
choose the intervals:
- the cross-reference pass (`planner.live.state.check_live_input`) takes what the fixed data alone
  make certain: a done job's `[started, ended)`, a running job's `[started, now)` (and
  its first time unit when it started at `now`); a break there is bad input;
- `planner.live.residual.Residual.clash` takes the segments the planners keep (a running job's
  until its §8 end); a break there leaves no plan that keeps them.
Members of one interleaving group (one `group` label; a done job may carry one, README)
share their GPUs, which the group holds from its start to its last member's end (R6);
each member holds its CPUs, memory and pool demand while it runs (R7, R8).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from planner.instance import Instance, Job, Reservation, over
from planner.pools import PoolTimeline

Place = tuple[tuple[str, tuple[int, ...]], ...]  # (node, GPU indices), as in `Live`


@dataclass(frozen=True)
class Hold:
    """A fixed job holding its placement, its share of its nodes' CPUs and memory and its
    pool demand over `[start, end)`."""

    job: Job
    start: int
    end: int
    placement: Place
    group: str | None


@dataclass(frozen=True)
class Clash:
    """A rule the holds break: reported at `job` (the one that starts later), whose
    `field` ("placement" or "demand") is at fault; `message` begins with the rule."""

    job: str
    field: str
    message: str


def clashes(inst: Instance, holds: Sequence[Hold]) -> list[Clash]:
    """Every break of R6, R7 (CPUs and memory), R8 and R10 among `holds` alone."""
    held = [h for h in holds if h.end > h.start]  # intervals are half-open (§5)
    return [
        *gpu_clashes(held),
        *node_clashes(inst, held),
        *pool_clashes(inst, held),
        *reserved_clashes(inst, held),
    ]


@dataclass(frozen=True)
class _Unit:
    """A solo job, or a whole group, on its GPUs (R6)."""

    name: str  # "job a" or "group g (a, b)"
    job: str  # reported at
    start: int
    end: int
    gpus: frozenset[tuple[str, int]]


def _units(holds: Iterable[Hold]) -> list[_Unit]:
    by_label: dict[tuple[str, str], list[Hold]] = defaultdict(list)
    for h in holds:
        if h.placement:
            key = ("group", h.group) if h.group is not None else ("job", h.job.id)
            by_label[key].append(h)
    out = []
    for (what, label), hs in by_label.items():
        ids = ", ".join(h.job.id for h in hs)
        name = f"group {label} ({ids})" if what == "group" else f"job {label}"
        gpus = frozenset((n, g) for h in hs for n, gs in h.placement for g in gs)
        start, end = min(h.start for h in hs), max(h.end for h in hs)
        out.append(_Unit(name, hs[0].job.id, start, end, gpus))
    return out


def gpu_clashes(holds: Iterable[Hold]) -> list[Clash]:
    """R6: a GPU held by two solo jobs or groups at once. Per GPU, in order of start, each
    is compared with the one seen so far that holds its GPU the longest."""
    units = _units(holds)
    per_gpu: dict[tuple[str, int], list[int]] = defaultdict(list)
    for k, u in enumerate(units):
        for gpu in u.gpus:
            per_gpu[gpu].append(k)
    shared: dict[tuple[int, int, str], list[int]] = defaultdict(list)
    for (node, g), ks in sorted(per_gpu.items()):
        ks.sort(key=lambda k: (units[k].start, units[k].end))
        longest = ks[0]
        for k in ks[1:]:
            if units[k].start < units[longest].end:
                shared[(longest, k, node)].append(g)
            if units[k].end > units[longest].end:
                longest = k
    out = []
    for (first, later, node), gpus in shared.items():
        a, b = units[first], units[later]
        msg = (
            f"R6: {b.name} holds GPU(s) {_list(gpus)} of {node} over [{b.start}, {b.end}), "
            f"as does {a.name} over [{a.start}, {a.end})"
        )
        out.append(Clash(b.job, "placement", msg))
    return out


def node_clashes(inst: Instance, holds: Iterable[Hold]) -> list[Clash]:
    """R7: a node's CPUs or memory overloaded, reported when the overload begins."""
    per_node: dict[str, list[Hold]] = defaultdict(list)
    for h in holds:
        for node, _ in h.placement:
            per_node[node].append(h)
    out = []
    for node, hs in sorted(per_node.items()):
        group = inst.node_by_name[node].group
        for what, cap, attr in (
            ("CPUs", group.cpus, "cpus_per_gpu"),
            ("GB of memory", group.mem_gb, "mem_gb_per_gpu"),
        ):
            if cap is None:
                continue
            use = {h.job.id: _on(h, node) * getattr(h.job, attr) for h in hs}
            for t, running, starter in _sweep(hs):
                load = sum(use[h.job.id] for h in running)
                if over(load, cap):
                    ids = ", ".join(sorted(h.job.id for h in running))
                    has = f"the node has {cap:g}"
                    msg = f"R7: {load:g} {what} of {node} in use at {t} ({ids}), {has}"
                    out.append(Clash((starter or running[0]).job.id, "placement", msg))
                    break  # one report per node and resource
    return out


def _on(h: Hold, node: str) -> int:
    return sum(len(set(gpus)) for n, gpus in h.placement if n == node)


def _sweep(
    holds: Sequence[Hold], also: Iterable[int] = ()
) -> Iterable[tuple[int, list[Hold], Hold | None]]:
    """At every instant a hold starts (and at each of `also`), in order: the instant, the
    holds running then, and one that starts then (the latest listed) or None."""
    starts = sorted(holds, key=lambda h: h.start)
    ends = sorted(holds, key=lambda h: h.end)
    running: dict[int, Hold] = {}
    i = j = 0
    for t in sorted({h.start for h in holds} | set(also)):
        starter = None
        while j < len(ends) and ends[j].end <= t:
            running.pop(id(ends[j]), None)
            j += 1
        while i < len(starts) and starts[i].start <= t:
            if starts[i].end > t:
                running[id(starts[i])] = starts[i]
                starter = starts[i] if starts[i].start == t else starter
            i += 1
        yield t, list(running.values()), starter


def pool_clashes(inst: Instance, holds: Sequence[Hold]) -> list[Clash]:
    """R8 by the subset rule of `planner.pools.PoolTimeline` (README, Hall's condition),
    checked when a hold or a reservation starts; one report per episode."""
    out = []
    for pool, cap in sorted(inst.pools.items()):
        users = [h for h in holds if h.job.demand.get(pool, 0.0) > 0]
        res = [r for r in inst.reservations if r.pool == pool and r.end > r.start]
        timeline = PoolTimeline(cap, res)
        for h in users:
            timeline.book(h.start, h.end, timeline.job_class(h.job), h.job.demand[pool])
        over = False
        for t, running, starter in _sweep(users, (r.start for r in res)):
            found = timeline.overbooked_at(t) if running else None
            if found is not None and not over:
                u, load = found
                kept = [h.job.id for h in running if not any(r.admits.admits(h.job) for r in u)]
                held = f" minus {sum(r.amount for r in u):g} held by {_names(u)}" if u else ""
                short = f"pool {pool}: demand {load:g} ({', '.join(sorted(kept))})"
                blamed = starter or max(running, key=lambda h: h.start)
                out.append(
                    Clash(blamed.job.id, "demand", f"R8: at {t}, {short} > capacity {cap:g}{held}")
                )
            over = found is not None
    return out


def reserved_clashes(inst: Instance, holds: Iterable[Hold]) -> list[Clash]:
    """R10: a hold on GPUs that a reservation not admitting its job holds at the time."""
    gpu_res = [r for r in inst.reservations if r.pool is None and r.end > r.start]
    out = []
    for h in holds:
        for r in gpu_res:
            if r.admits.admits(h.job) or h.end <= r.start or h.start >= r.end:
                continue
            for node, gpus in h.placement:
                hit = _reserved(inst, r, node) & set(gpus)
                if hit:
                    msg = (
                        f"R10: holds GPU(s) {_list(hit)} of {node} over [{h.start}, {h.end}), "
                        f"which reservation {r.id} [{r.start}, {r.end}) keeps from it"
                    )
                    out.append(Clash(h.job.id, "placement", msg))
    return out


def _reserved(inst: Instance, r: Reservation, node: str) -> set[int]:
    if node not in r.nodes or node not in inst.node_by_name:
        return set()
    return set(r.gpus) if r.gpus is not None else set(range(inst.node_by_name[node].gpus))


def _list(gpus: Iterable[int]) -> str:
    return ", ".join(map(str, sorted(gpus)))


def _names(rs: Iterable[Reservation]) -> str:
    return ", ".join(sorted(r.id for r in rs))
