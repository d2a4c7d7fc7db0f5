"""`plan replan` (contract §9): a schedule under way, at time T, as a live-state instance.

`live_instance(instance, schedule, now, changes)` gives the instance at `now`: a job whose
first segment started before `now` is done if the schedule ends it by `now`, else running
on its segment with the progress §8 gives at `now`, or, when the schedule has stopped it at
`now`, waiting with the work it has left as its work; the others wait. Then the changes:
- `cancel`: the job leaves the instance (a waiting or running one; not a done one, nor
  one another job still waits for), and the reservations that admit it no longer do: one
  that admitted only cancelled jobs goes; its group's running members run on, or stop at
  `now` when they are no admissible group (`_held_groups`);
- `nodes_down`: each node (a name, or `{"node", "until"}` for a repair time) is reserved
  for nobody from `now` on (until `until`, or for good: past the horizon, which becomes a
  time F that every plan not using the node meets when the instance has none, so a job
  that needs the node has no schedule); jobs running on it are stopped:
  with preemption enabled they stop at `now` and resume later from their progress (the
  planners do it, `planner.live.resume`); without, they wait again and restart from scratch
  (their work is lost; see the README);
- `progress`: a running job's progress at `now`, replacing the computed one (also of a
  job a failed node then stops: with preemption it resumes from it);
- `finished`: a running job that ended at the time given (from its current segment's
  start to `now`) is done then, in that segment, as a job the schedule ends by `now` would
  be (in its last segment, with its placement and group), and its
  co-members' progress is that of a group it left then (`_cut`); applied
  before `nodes_down`, so a job that finished on a node that then failed is not stopped;
- `add`: new waiting jobs, in the instance's job format (no `state`).
The changes file is read by `planner.changes`; problems name the file and the JSON path,
and so do the problems `live_instance` finds against the live state (with `source` as the
file), reported with the file's own. `planner.live_file` writes the live instance.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from planner.catalogue import load_catalogue
from planner.changes import Changes
from planner.checker import join, suggest
from planner.durations import inadmissible_reason
from planner.errors import InputError, Problem
from planner.instance import Instance, Job, Live, Reservation
from planner.limits import MAX_NUMBER
from planner.live.history import work_done
from planner.live.state import check_live_input
from planner.schedule import Schedule, Segment
from planner.validate import counts_profiled, job_fit, job_limits

if TYPE_CHECKING:
    from planner.verify.base import Violation

DOWN = "~down:"  # id prefix of the reservation that takes a failed node out


def live_instance(
    instance: Instance,
    schedule: Schedule,
    now: int,
    changes: Changes | None = None,
    source: str = "<changes>",
    instance_source: str = "<instance>",
) -> Instance:
    """The live state at `now` of `instance` planned by `schedule`, with `changes` applied.

    `schedule` must be a valid schedule of `instance` (the caller verifies it). Raises
    InputError naming `source` and the JSON path of each bad change (`changes.problems`,
    what reading the file found, first).
    """
    changes = changes or Changes()
    check_now(instance, now, instance_source)
    stopped = stopped_at(schedule, now)
    by_id = {a.id: a for a in schedule.jobs}
    jobs = [_state_at(j, by_id[j.id], now) for j in instance.jobs]
    # every running job's progress from the whole schedule (a resumed job's does not
    # follow from its current segment alone; a running job of a live instance counts
    # from that instance's `progress`); a stopped one waits again with the work it has left
    done = work_done(instance, _cut(schedule, changes.finished, now), now)
    jobs = [_left(j, done[j.id]) if j.id in stopped else _with_progress(j, done) for j in jobs]
    problems = list(changes.problems)
    out = _apply(replace(instance, jobs=tuple(jobs), now=now), changes, problems)
    if problems:
        raise InputError(source, problems)
    # What §9 cannot hold (a group that lost members is held as `_held_groups` says): the
    # reader's own checks of a live state, on the one built here (paths as in --live).
    wrong = check_live_input([(f"jobs[{i}]", j) for i, j in enumerate(out.jobs)], out)
    if wrong:
        raise InputError(f"the live state at {now}", wrong)
    return out


def _cut(schedule: Schedule, finished: Mapping[str, int], now: int) -> Schedule:
    """The plan in force with each job `finished` names ending when it did: its co-members
    ran on without it from then (the co-runners of §8 are the members still running), at
    their smaller group's cycle, which the progress they have made by now follows from
    (tests/test_live.py). An end outside the job's run is `_finish`'s problem."""
    jobs = []
    for a in schedule.jobs:
        ended = finished.get(a.id)
        if ended is None or not a.start <= ended < min(a.end, now + 1):
            jobs.append(a)
            continue
        kept = [g for g in a.pieces() if g.start < ended or g.start == a.start]
        jobs.append(a.with_pieces([*kept[:-1], replace(kept[-1], end=ended)]))
    return replace(schedule, jobs=tuple(jobs))


def check_plan_in_force(instance: Instance, schedule: Schedule, source: str) -> None:
    """InputError (naming `source`) unless `schedule` is a valid plan of `instance`: it
    passes the verifier and, when the instance has jobs, plans some (what started by `now`
    is read from it)."""
    from planner.verify import verify

    wrong = verify(instance, schedule)
    if wrong or (not schedule.jobs and instance.jobs):  # no jobs: an empty plan is one
        problems = [Problem(_where(schedule, v), str(v)) for v in wrong[:20]]
        problems = problems or [Problem("jobs", "no jobs")]
        raise InputError(source, [Problem("$", "not a valid schedule of the instance")] + problems)


def _where(schedule: Schedule, v: Violation) -> str:
    """The JSON path of what a violation names: its job's entry (`jobs[3]`) and, for a
    node of that entry's own placement, the placement (`jobs[3].placement[0]`)."""
    index = next((i for i, a in enumerate(schedule.jobs) if a.id == v.job), None)
    if index is None:
        return "jobs"
    nodes = [p.node for p in schedule.jobs[index].placement]
    if v.node in nodes:
        return f"jobs[{index}].placement[{nodes.index(v.node)}]"
    return f"jobs[{index}]"


def state_counts(instance: Instance, live: Instance) -> dict[str, int]:
    """How many jobs of the live state are done, running and waiting, and how many of the
    waiting were stopped with work left (`_left` gave them less work than `instance`)."""
    states = Counter(j.state for j in live.jobs)
    counts = {s: states[s] for s in ("done", "running", "waiting")}
    work = {j.id: j.work for j in instance.jobs}
    counts["stopped"] = sum(
        j.state == "waiting" and j.work != work.get(j.id, j.work) for j in live.jobs
    )
    return counts


def check_now(instance: Instance, now: int, source: str = "<instance>") -> None:
    """`now` may not go back before the instance's own `now` (its done jobs' ends)."""
    if now < instance.now:
        late = [
            Problem(f"jobs[{i}].ended", f"--now {now} is before this done job's end {j.live.ended}")
            for i, j in enumerate(instance.jobs)
            if j.live is not None and j.live.ended is not None and j.live.ended > now
        ]
        head = Problem("now", f"--now {now} is before the instance's now {instance.now}")
        raise InputError(source, [head, *late])


def _state_at(j: Job, a: Any, now: int) -> Job:
    """The job at `now` as the schedule says (done jobs of the instance stay as they are)."""
    if j.state == "done":
        return j
    segs = a.pieces()
    if segs[0].start >= now and j.state != "running":  # a running job started by now
        return replace(j, live=None)
    if a.end <= now:
        # done in its last segment, where and with whom it ran; a job stopped and resumed
        # before has its earlier segments as history the live state does not hold (held
        # without its group, its co-members that ran on were judged as a group that never
        # ran: exit 2 on a valid plan, tests/test_live.py)
        last = segs[-1]
        pl = tuple((p.node, p.gpus) for p in last.placement)
        return replace(j, live=Live("done", last.start, a.end, pl, last.group))
    # running in its current segment (a resumed job: from that segment's start, with its
    # progress from the whole schedule; README, "Replanning")
    seg = _current(segs, now)
    pl = tuple((p.node, p.gpus) for p in seg.placement)
    return replace(j, live=Live("running", seg.start, None, pl, seg.group))


def stopped_at(schedule: Schedule, now: int) -> set[str]:
    """The jobs the schedule has stopped by `now`, to resume at `now` or later: the segment
    they were last in ends by `now` (one that ends just at `now` is stopped there: counted
    as running, a group it leaves at `now` could be held as no admissible group), or it
    resumes just at `now` (it has not run since: like a job that starts at `now`, it
    waits)."""
    out = set()
    for a in schedule.jobs:
        segs = a.pieces()
        if segs[0].start < now < a.end:
            seg = _current(segs, now)
            if seg.start == now or seg.end <= now:
                out.add(a.id)
    return out


def _left(j: Job, done: float) -> Job:
    """A job stopped by `now` with `done` work, as a waiting job of the work it has left
    (contract §9 has no waiting job with progress): its iterations, or its duration,
    become what is left, rounded up (README, "Replanning": its restart is not charged)."""
    left = max(1, math.ceil(round(j.work - done, 6)))
    if j.duration is not None:
        return replace(j, live=None, duration=left)
    return replace(j, live=None, iterations=left)


def _current(segs: tuple[Segment, ...], now: int) -> Segment:
    """The last segment started by `now` (the first starts by then)."""
    return [p for p in segs if p.start <= now][-1]


def _with_progress(j: Job, progress: Mapping[str, float]) -> Job:
    if j.live is None or j.state != "running":
        return j
    work = j.work
    # The schedule may end a job up to one unit after its work is done (contract §4).
    p = min(progress[j.id], work * (1 - 1e-9))
    return replace(j, live=replace(j.live, progress=p))


def _apply(inst: Instance, ch: Changes, problems: list[Problem]) -> Instance:
    jobs = {j.id: j for j in inst.jobs}
    _cancel(jobs, ch.cancel, inst.now, problems)
    _finish(jobs, ch, inst.now, problems)
    # progress before nodes_down: a job stopped by a failed node resumes from the
    # progress given (with preemption; without, it starts again from scratch); its
    # problems are listed after nodes_down's, in the file's order of parts
    told: list[Problem] = []
    _set_progress(jobs, ch, inst.now, told)
    down = _nodes_down(inst, jobs, ch.nodes_down, problems)
    problems += told
    profiles = dict(inst.profiles)
    added = _add(inst, jobs, ch.add, profiles, problems, ch.cancel)
    kept = tuple(jobs.values()) + added
    new = replace(
        inst,
        jobs=_held_groups(inst, kept),
        profiles=profiles,
        reservations=_released(inst.reservations, set(ch.cancel)),
    )
    return _for_good(new, down)


def _for_good(inst: Instance, down: list[tuple[str, str, int | None]]) -> Instance:
    """`inst` with the nodes taken out: (reservation id, node, until or None: for good).

    Reservations end, so for good is until the horizon: a job that needs the node then
    has no schedule, rather than one that starts there after the reservation. Without a
    horizon, the horizon becomes F = `_far(inst)` (the jobs as changed), and the node's
    reservation ends at F + 1, which marks a horizon a replan set: a later replan moves
    it, and F, on (`_far` of its jobs), so that jobs added later are not cut off by it."""
    # The live instance must stay readable: F + 1 within the numbers an instance may hold
    # (a plan that needs more has no schedule: "horizon passed", exit 1).
    far = min(max(inst.now + 1, _far(inst)), MAX_NUMBER - 1)
    horizon = inst.horizon

    def ours(r: Reservation) -> bool:
        return horizon is not None and r.id.startswith(DOWN) and r.end == horizon + 1

    kept, moved = inst.reservations, False
    if any(map(ours, kept)):
        kept = tuple(replace(r, end=far + 1) if ours(r) else r for r in kept)
        horizon, moved = far, True
    elif horizon is None and any(until is None for _, _, until in down):
        horizon, moved = far, True
    end = far + 1 if moved else horizon
    taken = tuple(
        Reservation(rid, inst.now, until or max(end or 0, inst.now + 1), nodes=(name,))
        for rid, name, until in down
    )
    return replace(inst, reservations=kept + taken, horizon=horizon)


def _released(
    reservations: tuple[Reservation, ...], cancelled: set[str]
) -> tuple[Reservation, ...]:
    """The reservations without the cancelled jobs among those they admit; one that
    admitted only those goes (its GPUs or pool amount are free again): a live state
    naming a job it no longer has is bad input. Tenants stay: a hold for a team outlives
    its cancelled jobs (a tenant no job has is valid, README)."""
    out = []
    for r in reservations:
        who = r.admits
        left = replace(who, jobs=who.jobs - cancelled)
        if left == who:
            out.append(r)
        elif left.jobs or left.tenants:
            out.append(replace(r, admits=left))
    return tuple(out)


def _cancel(
    jobs: dict[str, Job], cancel: tuple[str, ...], now: int, problems: list[Problem]
) -> None:
    gone = set(cancel)
    refused: set[str] = set()  # a done job stays: it is not cancelled (nor unknown after)
    for k, jid in enumerate(cancel):
        j = jobs.get(jid)
        if jid in cancel[:k]:
            first = cancel.index(jid)
            problems.append(
                Problem(f"cancel[{k}]", f"job '{jid}' is already listed at cancel[{first}]")
            )
        elif j is None:
            problems.append(Problem(f"cancel[{k}]", f"unknown job '{jid}'{suggest(jid, jobs)}"))
        elif j.state == "done":
            problems.append(Problem(f"cancel[{k}]", f"job '{jid}' is done by now {now}"))
            refused.add(jid)
        else:
            waiting = sorted(o.id for o in jobs.values() if jid in o.after and o.id not in gone)
            if waiting:
                msg = f"{', '.join(waiting)} wait(s) for job '{jid}' (after): cancel them too"
                problems.append(Problem(f"cancel[{k}]", msg))
    for jid in gone - refused:
        jobs.pop(jid, None)


def _running(
    jobs: dict[str, Job], jid: str, ch: Changes, now: int, path: str, problems: list[Problem]
) -> Job | None:
    """The job `jid` a change of `path` names, if it runs at now; else a problem."""
    j = jobs.get(jid)
    if j is None or j.live is None or j.state != "running":
        gone = "cancelled" if jid in ch.cancel else "unknown"
        state = gone if j is None else f"{j.state} at now {now}"
        problems.append(Problem(path, f"job '{jid}' is {state}, not running"))
        return None
    return j


def _set_progress(jobs: dict[str, Job], ch: Changes, now: int, problems: list[Problem]) -> None:
    for jid, value in ch.progress.items():
        path = f"progress.{jid}"
        if jid in ch.finished:
            problems.append(
                Problem(path, f"job '{jid}' is also given as finished (finished.{jid})")
            )
            continue
        j = _running(jobs, jid, ch, now, path, problems)
        if j is None or j.live is None:
            continue
        work = j.work
        if not 0 <= value < work:
            msg = f"{value!r} is not in [0, {work:.13g})"
            if value >= work:
                msg += ": a job that has ended goes in finished (its end time), not progress"
            problems.append(Problem(path, msg))
            continue
        jobs[jid] = replace(j, live=replace(j.live, progress=value))


def _finish(jobs: dict[str, Job], ch: Changes, now: int, problems: list[Problem]) -> None:
    """The running jobs `ch.finished` says ended by now become done then (module docstring)."""
    for jid, ended in ch.finished.items():
        path = f"finished.{jid}"
        j = _running(jobs, jid, ch, now, path, problems)
        if j is None or j.live is None:
            continue
        live = j.live
        if not live.started <= ended <= now:
            msg = f"{ended} is not in [{live.started}, {now}] (its segment's start, now)"
            problems.append(Problem(path, msg))
            continue
        if ended == live.started and j.work > 0:  # R1: only a zero-length job ends at once
            msg = f"{ended} is its segment's start: a job with work to do ends after it"
            problems.append(Problem(path, msg))
            continue
        # done in its current segment, as a job the schedule ends by now would be
        jobs[jid] = replace(j, live=replace(live, state="done", ended=ended, progress=None))


def _nodes_down(
    inst: Instance,
    jobs: dict[str, Job],
    down: tuple[tuple[str, int | None], ...],
    problems: list[Problem],
) -> list[tuple[str, str, int | None]]:
    """The nodes to take out from `now` (reservation id, node, until; `_for_good` makes
    the reservations); jobs running on them (and their co-members) wait again."""
    out: list[tuple[str, str, int | None]] = []
    first: dict[str, int] = {}
    taken = {r.id for r in inst.reservations}
    for k, (name, until) in enumerate(down):
        if name in first:
            msg = f"node '{name}' is already listed at nodes_down[{first[name]}]"
            problems.append(Problem(f"nodes_down[{k}]", msg))
        elif name not in inst.node_by_name:
            msg = f"unknown node '{name}'{suggest(name, inst.node_by_name)}"
            problems.append(Problem(f"nodes_down[{k}]", msg))
        elif until is not None and until <= inst.now:
            msg = f"until {until} is not after now {inst.now}"
            problems.append(Problem(f"nodes_down[{k}].until", msg))
        else:
            rid = _free_id(DOWN + name, taken)
            taken.add(rid)
            out.append((rid, name, until))
        first.setdefault(name, k)
    hit = {name for name, _ in down}
    if inst.preemption.enabled:
        # the planners stop them at now and resume them (planner.live.resume); one that would
        # start (or resume) there just at now has not run there: it waits again
        for jid, j in list(jobs.items()):
            live = j.live
            if j.state == "running" and live is not None and _starts_on(live, inst.now, hit):
                jobs[jid] = _stopped(inst, j)
        return out
    running = {jid: j.live for jid, j in jobs.items() if j.state == "running" and j.live}
    stopped = {
        _unit(jid, live) for jid, live in running.items() if {n for n, _ in live.placement} & hit
    }
    for jid, live in running.items():
        if _unit(jid, live) in stopped:
            jobs[jid] = _stopped(inst, jobs[jid])
    return out


def _unit(jid: str, live: Live) -> tuple[str, str]:
    """What runs together: a group by its label, a job alone by its id (a job may bear
    the label of another's group: `plan solve` labels groups g1, g2, ...)."""
    return ("group", live.group) if live.group is not None else ("job", jid)


def _starts_on(live: Live, now: int, nodes: set[str]) -> bool:
    return live.started == now and any(n in nodes for n, _ in live.placement)


def _free_id(rid: str, taken: set[str]) -> str:
    """`rid`, or `rid#2`, `rid#3`, ... when the instance already has it (a node taken out
    by an earlier replan, or a reservation of the user's that happens to bear the name)."""
    k = 1
    out = rid
    while out in taken:
        k += 1
        out = f"{rid}#{k}"
    return out


def horizon_at_the_cap(before: Instance, live: Instance) -> bool:
    """Whether `live`'s horizon is one this replan set for nodes down for good and cut at
    the most an instance may hold (`_for_good`): a plan that needs longer has none there."""
    return live.horizon == MAX_NUMBER - 1 and before.horizon != live.horizon


def _far(inst: Instance) -> int:
    """A time every plan that can do without the nodes taken out meets: after now, the
    last release and the last reservation, every job run alone one after another (on the
    slowest node, at its slowest GPU count, with a restart) ends by then (R4 and R9 hold
    in a serial plan in priority and `after` order)."""
    slow = min([g.speed for g in inst.node_groups] + [1.0])
    restart = inst.preemption.restart if inst.preemption.enabled else 0
    total = 0
    for j in inst.jobs:
        if j.duration is not None:
            total += j.duration + restart
        elif j.model is not None and j.model in inst.profiles:
            gps = inst.profiles[j.model].by_gpus.values()
            it = max(gp.iteration_ms for gp in gps)
            back = max((gp.restart_ms or 0.0) for gp in gps) if inst.preemption.enabled else 0
            total += int(((j.iterations or 0) * it / slow + back) / inst.unit_ms) + restart + 2
    last = max([inst.now] + [j.release for j in inst.jobs] + [r.end for r in inst.reservations])
    return last + total + 1


def _add(
    inst: Instance,
    jobs: dict[str, Job],
    add: tuple[Job, ...],
    profiles: dict[str, Any],
    problems: list[Problem],
    cancelled: tuple[str, ...],
) -> tuple[Job, ...]:
    known = set(jobs) | {j.id for j in add}
    groups = {g.name for g in inst.node_groups}
    catalogue: dict[str, Any] | None = None
    for i, j in enumerate(add):
        path = f"add[{i}]"
        if j.id in jobs or any(o.id == j.id for o in add[:i]):
            problems.append(Problem(join(path, "id"), f"job id '{j.id}' is taken"))
        elif j.id in cancelled:  # one id, one job: the live file keeps both documents
            msg = f"job '{j.id}' is cancelled by these changes: give the new job another id"
            problems.append(Problem(join(path, "id"), msg))
        if j.model is not None and j.model not in profiles:
            catalogue = catalogue if catalogue is not None else load_catalogue()
            if j.model in catalogue:
                profiles[j.model] = catalogue[j.model]
            else:
                problems.append(Problem(join(path, "model"), f"unknown model '{j.model}'"))
                continue
        if j.model is not None and not counts_profiled(path, j, profiles[j.model], problems):
            continue
        for k, dep in enumerate(j.after):
            if dep in cancelled and dep not in known:
                msg = f"job '{dep}' is cancelled by these changes (cancel[{cancelled.index(dep)}])"
                problems.append(Problem(f"{path}.after[{k}]", msg))
            elif dep not in known:
                problems.append(
                    Problem(f"{path}.after[{k}]", f"unknown job '{dep}'{suggest(dep, known)}")
                )
        # the instance reader's own checks of a job (planner.validate)
        problems += job_limits(inst, path, j, groups, set(inst.pools), inst.pools)
        if j.gpus:
            problems += job_fit(replace(inst, profiles=profiles), path, j)
    return add


def _held_groups(inst: Instance, jobs: tuple[Job, ...]) -> tuple[Job, ...]:
    """Each group label as the live state can hold it. The live state holds a done job in
    its last segment only, and a cancelled one not at all, so a label may hold part of the
    group that formed (members that left it before `now` and ran on elsewhere, or one
    cancelled now). When its members are no admissible group, its done ones are held
    without group and placement (a done job's placement is optional, §9: a group of four
    in which two ended and two moved on was exit 2 on a valid plan, tests/test_live.py);
    when its running ones are still no admissible group, they stop at `now` as a failed
    node's do (`_nodes_down`): with preemption they wait with the work they have left,
    without it they start again from scratch (a member of a group of three cancelled:
    exit 2, tests/test_live.py). A label left on one job (its co-members cancelled or
    stopped) is dropped: the job runs on alone, counted from its progress at now."""
    labels: dict[str, list[Job]] = {}
    for j in jobs:
        if j.live is not None and j.live.group is not None:
            labels.setdefault(j.live.group, []).append(j)
    held: dict[str, Job] = {}
    for ms in labels.values():
        if not _admissible_here(inst, ms):
            held.update((j.id, _history(j, placed=False)) for j in ms if j.state == "done")
            ms = [j for j in ms if j.state == "running"]
            if not _admissible_here(inst, ms):
                held.update((j.id, _stopped(inst, j)) for j in ms)
                ms = []
        if len(ms) == 1:
            held[ms[0].id] = _history(ms[0], placed=True)
    return tuple(held.get(j.id, j) for j in jobs)


def _admissible_here(inst: Instance, ms: list[Job]) -> bool:
    """Whether `ms` may run as one group where the first is placed (contract §4); fewer
    than two always may (one alone loses the label, `_held_groups`)."""
    live = ms[0].live if ms else None
    if len(ms) < 2 or live is None or not live.placement:
        return True
    node = inst.node_by_name[live.placement[0][0]]
    placed = [j.as_placed() for j in ms]
    return inadmissible_reason(inst, placed, node.speed, node.group.gpu_mem_gb) is None


def _history(j: Job, placed: bool) -> Job:
    """`j` out of its group, and off its GPUs unless `placed`."""
    assert j.live is not None
    placement = j.live.placement if placed else ()
    return replace(j, live=replace(j.live, placement=placement, group=None))


def _stopped(inst: Instance, j: Job) -> Job:
    """Running job `j` stopped at `now`: with preemption waiting with the work it has left,
    without it waiting to start again from scratch."""
    assert j.live is not None
    if inst.preemption.enabled:
        return _left(j, j.live.progress or 0.0)
    return replace(j, live=None)
