"""Reading and checking a job's live state (contract §9): `state`, `started`, `ended`,
`placement`, `group`, `progress`.

`parse_live` is part of the structural pass (types, which fields go with which state);
`check_live_input` is part of the cross-reference pass (times against `now`, nodes and GPUs of
a placement, predecessors, group labels). Choices where the contract is silent (README):
a done job may carry `group` with its `placement` (so members of a finished interleaving
group may share GPUs); the running members of one group give `progress` all or none.

No plan moves a running or done job (§9), so whatever rule of §5 the fixed data alone
break is bad input, not a planner's failure: R1 (a done job that is not zero-length
ends after it started), R3 (a group must be admissible), R5 (the placement's shape and
node group), R7 (the job fits its node) and, over the intervals the jobs certainly held
their resources, R6, R7, R8 and R10 (`planner.live.holds`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from planner.checker import Checker, join, kind, suggest
from planner.durations import inadmissible_reason
from planner.errors import Problem, gpus_phrase
from planner.instance import Instance, Job, Live
from planner.live.holds import Hold, clashes
from planner.live.running import fixed_assignments

STATE_FIELDS = ("state", "started", "ended", "placement", "group", "progress")
STATES = ("waiting", "running", "done")
_ALLOWED = {
    "waiting": (),
    "running": ("started", "placement", "group", "progress"),
    "done": ("started", "ended", "placement", "group"),
}


def parse_live(d: dict[str, Any], path: str, ck: Checker) -> Live | None:
    """The job's `Live` record from its JSON object, or None for a waiting job."""
    state = ck.string(d, "state", path, default="waiting", choices=STATES) or "waiting"
    for key in STATE_FIELDS[1:]:
        if key in d and key not in _ALLOWED[state]:
            ck.add(join(path, key), f"'{key}' does not go with state '{state}'")
    if state == "waiting":
        return None
    started = ck.integer(d, "started", path)
    ended = ck.integer(d, "ended", path) if state == "done" else None
    if started is not None and ended is not None and ended < started:
        ck.add(join(path, "ended"), f"ended {ended} is before started {started}")
    placement = _placement(d.get("placement", []), join(path, "placement"), ck)
    group = ck.string(d, "group", path, default=None, nullable=True)
    if group is not None and "placement" not in d:
        ck.add(join(path, "group"), "a group needs the job's placement")
    progress = ck.number(d, "progress", path, default=None, nullable=True)
    if None in (started, placement) or (state == "done" and ended is None):
        # `state._place` says what else a running job lacks once it has a record; without
        # one, say it here too, so that every problem is listed at once (contract §2)
        gpus = d.get("gpus")
        first: Any = gpus[0] if isinstance(gpus, list) and gpus else gpus
        if state == "running" and not d.get("placement") and kind(first) == "integer" and first > 0:
            ck.add(join(path, "placement"), _needs_placement(first))
        return None
    assert started is not None and placement is not None
    return Live(state, started, ended, placement, group, progress)


def _placement(v: Any, path: str, ck: Checker) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    if not isinstance(v, list):
        ck.add(path, f"expected an array of {{node, gpus}} objects, got {kind(v)}")
        return None
    out = []
    for i, item in enumerate(v):
        p = f"{path}[{i}]"
        d = ck.obj(item, p, ("node", "gpus"))
        if d is None:
            return None
        node = ck.string(d, "node", p)
        gpus = d.get("gpus")
        if not isinstance(gpus, list) or not gpus:
            ck.add(join(p, "gpus"), "expected a non-empty array of GPU indices")
            return None
        idx = [ck.int_value(g, f"{p}.gpus[{k}]") for k, g in enumerate(gpus)]
        if node is None or any(g is None for g in idx):
            return None
        out.append((node, tuple(g for g in idx if g is not None)))
    return tuple(out)


def check_live_input(
    jobs: list[tuple[str, Job]], instance: Instance, now_ok: bool = True, cluster_ok: bool = True
) -> list[Problem]:
    """Cross-checks of the live state: times, placements, predecessors, groups, and the
    rules the fixed jobs break among themselves; the times against `now` only when it is
    sound (`now_ok`: a bad `now` is read as 0, and every time after 0 would be a problem
    that is not one), the placements only when the cluster is (`cluster_ok`: a node of a
    group that failed to parse is unknown, and every placement on it would be a problem)."""
    out: list[Problem] = []
    state = {j.id: j for _, j in jobs}
    sound: set[str] = set()  # fixed jobs whose times and placement are in order
    for path, j in jobs:
        if j.live is None:
            continue
        n0 = len(out)
        _times(path, j, instance.now if now_ok else None, out)
        if cluster_ok:
            _place(path, j, instance, out)
        if len(out) == n0 and cluster_ok:
            sound.add(j.id)
        for k, dep in enumerate(j.after):
            pred = state.get(dep)
            if pred is None:
                continue  # unknown: reported by the reference check
            if pred.live is None or pred.live.ended is None:
                msg = f"job '{dep}' is {pred.state}, yet this {j.state} job waits for it"
                out.append(Problem(f"{path}.after[{k}]", msg))
            elif pred.live.ended > j.live.started:
                msg = f"job '{dep}' ended at {pred.live.ended}, after this job started"
                out.append(Problem(f"{path}.after[{k}]", msg))
    _groups(jobs, instance, sound, out)
    out += _clashes(jobs, instance, sound)
    return out


def _times(path: str, j: Job, now: int | None, out: list[Problem]) -> None:
    live = j.live
    assert live is not None
    if now is not None and live.started > now:
        out.append(Problem(f"{path}.started", f"started {live.started} is after now {now}"))
    if live.started < j.release:
        msg = f"started {live.started} is before the release {j.release}"
        out.append(Problem(f"{path}.started", msg))
    if live.ended is not None and now is not None and live.ended > now:
        out.append(Problem(f"{path}.ended", f"ended {live.ended} is after now {now}"))
    work = j.work
    if live.ended is not None and live.ended == live.started and work:
        msg = f"R1: ended {live.ended} equals started, but the job is not zero-length"
        out.append(Problem(f"{path}.ended", msg))
    if live.progress is not None and live.progress >= work:
        msg = f"progress {live.progress:g} reaches the job's work {work:.13g}: mark it done"
        out.append(Problem(f"{path}.progress", msg))


def _needs_placement(gpus: int) -> str:
    return f"a running job needs its placement ({gpus_phrase(gpus)})"


def _place(path: str, j: Job, inst: Instance, out: list[Problem]) -> None:
    live = j.live
    assert live is not None
    p = f"{path}.placement"
    n0 = len(out)
    if not live.placement:
        if j.gpus and live.state == "running":
            out.append(Problem(p, _needs_placement(j.gpus)))
        return
    if not j.gpus:
        out.append(Problem(p, "a job with 0 GPUs has no placement"))
        return
    count = 0
    for i, (name, gpus) in enumerate(live.placement):
        node = inst.node_by_name.get(name)
        if node is None:
            out.append(
                Problem(
                    f"{p}[{i}].node", f"unknown node '{name}'{suggest(name, inst.node_by_name)}"
                )
            )
            return
        for k, g in enumerate(gpus):
            if g >= node.gpus:
                msg = f"GPU {g} is outside node {name} (GPUs 0-{node.gpus - 1})"
                out.append(Problem(f"{p}[{i}].gpus[{k}]", msg))
        if len(set(gpus)) != len(gpus):
            out.append(Problem(f"{p}[{i}].gpus", "a GPU is listed twice"))
        count += len(set(gpus))
    if len({name for name, _ in live.placement}) != len(live.placement):
        out.append(Problem(p, "a node is listed twice"))
    if count not in j.gpu_counts:  # an elastic job runs at any of its counts (§12)
        has = f"may run at {', '.join(map(str, j.gpu_counts))}" if j.elastic else f"has {j.gpus}"
        out.append(Problem(p, f"places {gpus_phrase(count)}, the job {has}"))
    if len(out) == n0:
        _shape(p, j.as_placed(), inst, out)


def _shape(p: str, j: Job, inst: Instance, out: list[Problem]) -> None:
    """R5: the placement's nodes are of one node group that `node_types` allows; a job
    that fits one node uses one, a larger one whole nodes; then R7: the job fits that
    group's nodes (CPUs, memory, GPU memory)."""
    assert j.live is not None
    nodes = [inst.node_by_name[name] for name, _ in j.live.placement]
    names = sorted({n.group.name for n in nodes})
    if len(names) > 1:
        out.append(Problem(p, f"R5: nodes of different node groups ({', '.join(names)})"))
        return
    g = nodes[0].group
    n0 = len(out)
    if j.node_types is not None and g.name not in j.node_types:
        msg = f"R5: node group {g.name} is not in the job's node_types ({', '.join(j.node_types)})"
        out.append(Problem(p, msg))
    if j.gpus <= g.gpus and len(nodes) > 1:
        fits = f"a job of {gpus_phrase(j.gpus)} fits one {g.gpus}-GPU node"
        msg = f"R5: {fits}, the placement uses {len(nodes)}"
        out.append(Problem(p, msg))
    elif j.gpus > g.gpus and any(len(set(gpus)) != g.gpus for _, gpus in j.live.placement):
        out.append(Problem(p, f"R5: a job of {j.gpus} GPUs uses whole {g.gpus}-GPU nodes"))
    if len(out) == n0 and (j.model is None or j.model in inst.profiles):
        why = inst.misfit(j, g)
        if why is not None:
            out.append(Problem(p, f"R7: on node group {g.name}, the job {why}"))


def _groups(
    jobs: list[tuple[str, Job]], inst: Instance, sound: set[str], out: list[Problem]
) -> None:
    """Members of a running group label share `started` and placement; 2..max_group of
    them; progress all or none; then the group is admissible (`_admissible`)."""
    members: dict[str, list[tuple[str, Job]]] = defaultdict(list)
    for path, j in jobs:
        if j.live is not None and j.live.group is not None:
            members[j.live.group].append((path, j))
    for label, ms in members.items():
        path0, j0 = ms[0]
        assert j0.live is not None
        n0 = len(out)
        where = f"{path0}.group"
        if not inst.interleaving.enabled:
            out.append(Problem(where, f"group '{label}': interleaving is disabled"))
        if not 2 <= len(ms) <= inst.interleaving.max_group:
            n = len(ms)
            msg = (
                f"group '{label}' has {n} member(s), a group has 2 to {inst.interleaving.max_group}"
            )
            out.append(Problem(where, msg))
        for path, j in ms[1:]:
            assert j.live is not None
            if j.live.started != j0.live.started:
                msg = (
                    f"group '{label}': started {j.live.started}, {j0.id} started {j0.live.started}"
                )
                out.append(Problem(f"{path}.started", msg))
            if sorted(j.live.placement) != sorted(j0.live.placement):
                out.append(
                    Problem(
                        f"{path}.placement", f"group '{label}': placement differs from {j0.id}'s"
                    )
                )
        running = [j for _, j in ms if j.state == "running"]
        given = {j.live.progress is not None for j in running if j.live is not None}
        if len(given) > 1:
            out.append(
                Problem(where, f"group '{label}': give progress for all running members or none")
            )
        if len(out) == n0 and j0.live.placement and all(j.id in sound for _, j in ms):
            _admissible(where, label, [j for _, j in ms], inst, out)


def _admissible(where: str, label: str, ms: list[Job], inst: Instance, out: list[Problem]) -> None:
    """R3: the members may interleave at their count on their node (contract §4; its GPU
    memory part, which the verifier reports under R7, is said here too)."""
    if any(j.model is not None and j.model not in inst.profiles for j in ms):
        return  # an unknown model: reported by the reference check
    live = ms[0].live
    assert live is not None
    node = inst.node_by_name[live.placement[0][0]]
    jobs = [j.as_placed() for j in ms]
    why = inadmissible_reason(inst, jobs, node.speed, node.group.gpu_mem_gb)
    if why is not None:
        out.append(Problem(where, f"R3: group '{label}' is not admissible: {why}"))


def _clashes(jobs: list[tuple[str, Job]], inst: Instance, sound: set[str]) -> list[Problem]:
    """R6, R7, R8 and R10 among the fixed jobs, over what they certainly held (a job id
    given twice is reported as such, and left out here)."""
    path: dict[str, str] = {}
    for p, j in jobs:
        path[j.id] = p if j.id not in path else ""
    holds = [_certain(j, inst.now) for _, j in jobs if j.id in sound and path[j.id]]
    return [Problem(f"{path[c.job]}.{c.field}", c.message) for c in clashes(inst, holds)]


def _certain(j: Job, now: int) -> Hold:
    """What a fixed job held, whatever is planned: a done job over [started, ended); a
    running job over [started, now), since with preemption a plan may end its segment at
    `now` (§9), and over its first time unit when it started at `now` (a segment has
    `start < end`, R1 and R11, unless the job is zero-length)."""
    live = j.live
    assert live is not None
    if live.ended is not None:
        end = live.ended
    elif live.started < now:
        end = now
    else:
        zero = j.work == 0
        end = live.started + (0 if zero else 1)
    return Hold(j.as_placed(), live.started, end, live.placement, live.group)


def ends_before_now(jobs: list[tuple[str, Job]], instance: Instance) -> list[Problem]:
    """A running job whose work is done before `now` by §8 is done, not running (asked
    only of an otherwise valid instance: the §8 run needs its profiles and nodes)."""
    fixed = fixed_assignments(instance)
    out = []
    for path, j in jobs:
        if j.state == "running" and fixed[j.id].end < instance.now:
            msg = f"its work is done at {fixed[j.id].end}, before now {instance.now}: mark it done"
            out.append(Problem(f"{path}.state", msg))
    return out
