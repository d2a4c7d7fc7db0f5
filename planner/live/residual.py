"""Planning a live state (contract §9) with any planner: the waiting jobs around the fixed ones.

`residual(instance)` turns a live instance into a static one that every solver already
handles, and the answer back into a schedule of the live instance:
- running jobs keep their segment; its end follows §8 (from `started`, or from `now`
  with `progress` given; done co-members run along until they ended). Their GPUs are
  reserved for nobody from `now` to the end of their set of segments, and their pool
  demands likewise, so no waiting job can touch them;
- a node whose CPUs or memory the running jobs share could be overloaded by waiting jobs
  on its free GPUs: then as many of its free GPUs are reserved too, until its running jobs
  end, as keep the worst load of the rest within the node's CPUs and memory (a GPU
  reservation cannot express a CPU budget; the node is "held whole" when none is left);
- done jobs occupy nothing after their end (<= now);
- waiting jobs are released at `max(release, now)`; a predecessor that runs is replaced by
  a stand-in job with no resources that lasts until the predecessor ends (top priority,
  weight 0, released at `now`), so `after` holds without moving anyone's release; a done
  predecessor is dropped (it ended by `now`).
`Residual.merge` puts the fixed jobs back, renames the planner's group labels that clash
with given ones, and shifts the residual's lower bounds by the fixed jobs' contribution.

Strict priority (R9) in the residual compares each waiting job's own release, kept in
`Instance.arrived` (every planner and the verifier read it through `Instance.arrival`), as
R9 on the live state does: comparing `max(release, now)` made a job of higher priority
that arrived later start first, and with `after` between them no planner found a schedule
(tests/test_live.py). A stopped job resumes in the residual as a waiting job, which R9
would bind, while in the live state its start is history (contract §9): the residual
places it where R9 binds it to nothing (`_exempt_from_r9`), so its R9 is the state's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from planner.instance import TOL, Instance, Job, Reservation, over
from planner.live.history import carried_on, retimed
from planner.live.holds import Hold, clashes
from planner.live.resume import resume_job, stop_times
from planner.live.running import assignments_of, fixed_assignments, runs_until
from planner.schedule import Assignment, Group, Schedule

STAND_IN = "~after:"  # id prefix of the stand-in for a running predecessor
WHOLE_NODE = "~node:"  # id prefix of a node's free GPUs held for its running jobs' CPUs or memory
RUNNING = "~running:"  # id prefix of what a running job holds (GPUs of a node, a pool)
# The residual's reservations that are not the live state's own: they end when running
# jobs do, or, with preemption, sooner
HELD_FOR_RUNNING = (RUNNING, WHOLE_NODE)


@dataclass(frozen=True)
class Residual:
    instance: Instance  # static: the waiting jobs (and stand-ins), fixed jobs as reservations
    live: Instance
    fixed: Mapping[str, Assignment]  # running and done jobs as the schedule keeps them
    stand_ins: frozenset[str]
    conservative: bool = False  # free GPUs are held for running jobs' CPUs (module docstring)
    stopped: frozenset[str] = frozenset()  # running jobs stopped (at their fixed end), resumed
    # a stopped job could run on after `now` until a reservation begins, and its co-members
    # run on without it or stop with it: where the residual stops them is a choice, not
    # every plan's (`stop_choices`)
    stop_chosen: bool = False

    def merge(self, s: Schedule) -> Schedule:
        """The residual's schedule as a schedule of the live instance."""
        info = {**s.info, "live": self.summary()}
        lb = s.lower_bound
        if not s.jobs and self.instance.jobs:
            # no plan, but its bound stands only as below: the residual's bound of 709 once
            # stood beside a verified plan of 651 that stopped a running job (tests/test_live.py)
            kept = (self.shift(lb) or None) if lb is not None and self.proves else None
            if s.status == "infeasible" and (self.conservative or not self.bounded):
                # the residual is stricter
                return s.with_(status="unknown", info=info, lower_bound=kept)
            return s.with_(info=info, lower_bound=kept)
        taken = {a.group for a in self.fixed.values() if a.group is not None}
        rename = _fresh_labels({g.id for g in s.groups}, taken)
        planned = {a.id: _relabel(a, rename) for a in s.jobs if a.id not in self.stand_ins}
        fixed = {k: a for k, a in self.fixed.items() if k not in self.stopped}
        for jid in self.stopped:
            planned[jid] = _resumed(self.fixed[jid], planned[jid])
        jobs = tuple({**planned, **fixed}[j.id] for j in self.live.jobs)
        status = s.status
        if not self.proves:
            status = "feasible" if status == "optimal" else status
        return s.with_(
            instance=self.live.name,
            jobs=jobs,
            groups=tuple(_fixed_groups(self.fixed.values()))
            + tuple(Group(rename.get(g.id, g.id), g.jobs) for g in s.groups),
            lower_bound=(self.shift(lb) or None) if lb is not None and self.proves else None,
            status=status if self.instance.jobs else "optimal",
            info=info,
        )

    @property
    def bounded(self) -> bool:
        """Whether the residual's bounds hold for the live state: not when a plan may stop a
        running job at `now` (preemption, §9), which the residual, keeping running jobs to
        their ends, does not consider: on tests/test_live.py's X, Y, W a plan that stops W
        has 503 where the residual's bound said 730. Nor when a stopped job's rest, which
        the residual runs alone (`resume.resume_job`), could join a group: a plan that
        regroups it had 182 where the residual's bound said 211.6 (tests/test_live.py). Nor
        when a stopped job could run on after `now` until a reservation begins: a plan that
        stops it at `now` frees its GPUs for a waiting job sooner (tests/test_live.py: 2,125
        where the residual that runs it on has 4,125), one that runs it on keeps its work
        (115 where the residual that stops it at `now` has 120 at best); nor when its
        co-members could run on without it or stop with it (`stop_choices`)."""
        if not self.live.preemption.enabled:
            return True
        running = [j for j in self.live.jobs if j.state == "running"]
        regroups = self.live.interleaving.enabled and any(j.profiled for j in running)
        return (
            all(j.id in self.stopped for j in running)
            and not (self.stopped and regroups)
            and not self.stop_chosen
        )

    @property
    def proves(self) -> bool:
        """Whether the residual's optimum and bounds are the live state's: `bounded`, and
        no free GPU held for a running job's CPUs (that hold keeps waiting jobs off GPUs
        the live state lets them use, so the residual is stricter: its optimum may be worse
        than the live state's, and its bounds above it, tests/test_live.py)."""
        return self.bounded and not self.conservative

    def loosened(self) -> Residual:
        """The residual without its holds of free GPUs: a relaxation of the live state (a
        waiting job may use a node's free GPUs, and the running jobs' CPUs and memory
        are not counted against it), whose bounds hold when the residual is `bounded`."""
        kept = tuple(r for r in self.instance.reservations if not r.id.startswith(WHOLE_NODE))
        return replace(self, instance=replace(self.instance, reservations=kept), conservative=False)

    def start_of(self, s: Schedule) -> Schedule:
        """The residual's jobs' part of `s`, a plan of the live instance (`plan replan`
        passes the plan in force as `SolveOptions.start`), as a start for the residual.
        The planners take it only when it is complete and valid (`exact.best_start`,
        `exact.given_start`): when nothing changed it is, so a replan is never worse than
        keeping the plan; a stand-in or an added job has no part in it, a cancelled or
        stopped co-member changes its group's durations, and then it is ignored."""
        ids = {j.id for j in self.instance.jobs}
        groups = [replace(g, jobs=tuple(i for i in g.jobs if i in ids)) for g in s.groups]
        jobs = tuple(a for a in s.jobs if a.id in ids)
        cut = tuple(_from(a, self.live.now) or a for a in jobs)
        out = s.with_(
            instance=self.instance.name,
            solver="plan-in-force",
            jobs=cut,
            groups=tuple(g for g in groups if len(g.jobs) > 1),
            lower_bound=None,
            info={},
        )
        # a job stopped by now waits again with the work it has left (`planner.replan`):
        # its segments from now on, the first without its restart, end sooner
        return retimed(self.instance, out) if cut != jobs else out

    def in_force(self, s: Schedule) -> Schedule | str:
        """The plan in force `s` carried on as a plan of the live instance: each job's
        segments from its current one (running) or from `now` (waiting; all of them but
        for a job stopped before `now`), done jobs as fixed, the ends by §8
        (`history.retimed`: a job waiting again with the work it has left starts without
        its restart and ends sooner; `history.carried_on`: where its rounded-up work ends
        a segment later than planned, what follows moves on). The plans of preemptive
        instances stop running jobs after `now`, which the residual cannot (it keeps them
        to their §8 ends), so `start_of` does not hold them. Why not, when a job has no
        part in `s` from its current segment or `now` (added, or stopped at now to start
        again)."""
        by_id = {a.id: a for a in s.jobs}
        jobs = []
        for j in self.live.jobs:
            a = by_id.get(j.id)
            if j.live is not None and j.state == "done":
                jobs.append(self.fixed[j.id])
                continue
            if a is None:
                return f"a job has no part in it (added: {j.id})"
            part = _from(a, j.live.started if j.live is not None else self.live.now)
            if part is None:
                return "a job has no part in it from now (stopped at now, it starts again)"
            jobs.append(part)
        kept = carried_on(self.live, s.with_(jobs=tuple(jobs)))
        return kept.with_(
            instance=self.live.name, solver="plan-in-force", lower_bound=None, info={}
        )

    def late(self, skip: frozenset[str] = frozenset()) -> str | None:
        """Why no plan can be valid: a fixed job (not in `skip`) that ends after its
        deadline or the horizon (it cannot be moved), or None."""
        for jid, a in self.fixed.items():
            if jid in skip:
                continue
            limit = self.live.job_by_id[jid].deadline
            for what, t in (("deadline", limit), ("horizon", self.live.horizon)):
                if t is not None and a.end > t:
                    state = self.live.job_by_id[jid].state
                    return f"{state} job {jid} ends at {a.end}, after its {what} {t}"
        return None

    def co_runners(self) -> frozenset[str]:
        """Running jobs with a running co-member, with preemption: a plan may stop a
        co-member at `now` (or before the residual does) and so end such a job sooner than
        the residual keeps it (its co-members run on without it, `running.runs_until`):
        a deadline or horizon the residual sees it miss proves nothing (tests/test_live.py)."""
        if not self.live.preemption.enabled:
            return frozenset()
        running: dict[str, list[str]] = defaultdict(list)
        for jid, a in self.fixed.items():
            if a.group is not None and self.live.job_by_id[jid].state == "running":
                running[a.group].append(jid)
        return frozenset(j for ids in running.values() if len(ids) > 1 for j in ids)

    def clash(self) -> str | None:
        """A rule of §5 that the fixed jobs break among themselves as the planners keep
        them (`planner.live.holds`; what they held for certain is checked on reading), or None.
        Without preemption no plan mends it; with it, a plan might stop a running job at
        `now`, which the residual's planners do only for a reservation (`planner.live.resume`)
        and the engine from the present does whenever it pays (`solvers.dispatch`)."""
        return _clash(self.live, self.fixed)

    def shift(self, lb: Mapping[str, float]) -> dict[str, float]:
        """Residual lower bounds as bounds of the live instance: add what the fixed jobs
        contribute (and the waiting jobs' release shift, for JCT); none for energy."""
        fixed = [(self.live.job_by_id[jid], a.end) for jid, a in self.fixed.items()]
        out = {}
        for name, v in lb.items():
            if name == "makespan":
                out[name] = max([v] + [end for _, end in fixed])
            elif name == "total_weighted_jct":
                waiting = [j for j in self.live.jobs if j.live is None]
                out[name] = (
                    v
                    + sum(j.weight * (end - j.release) for j, end in fixed)
                    + sum(j.weight * (max(j.release, self.live.now) - j.release) for j in waiting)
                )
            elif name == "total_weighted_tardiness":
                # a stopped job's tardiness is the residual's (it ends there)
                out[name] = v + sum(
                    j.weight * max(0, end - j.due)
                    for j, end in fixed
                    if j.due is not None and j.id not in self.stopped
                )
            # energy_kwh and energy_cost: the residual's draw leaves out the fixed jobs' and
            # the idle GPUs' up to the live makespan, and a price may be negative: no bound
        return out

    def summary(self) -> dict[str, Any]:
        states = [j.state for j in self.live.jobs]
        return {
            "now": self.live.now,
            **{k: states.count(k) for k in ("waiting", "running", "done")},
        }


# Where a residual stops the running jobs that a reservation stops (`resume.stop_times`):
# at the reservation or at `now`, their co-members running on or stopping with them
STOP_CHOICES = {
    "later": (False, False),
    "now": (True, False),
    "later+group": (False, True),
    "now+group": (True, True),
}


def stop_choices(inst: Instance) -> dict[str, dict[str, int]]:
    """The distinct stop times (`resume.stop_times`, without the jobs whose work is done
    before they stop) of `STOP_CHOICES`, in its order: one entry when there is no choice."""
    out: dict[str, dict[str, int]] = {}
    for name, (at_now, group) in STOP_CHOICES.items():
        stops = stop_times(inst, at_now, group)
        ran = runs_until(inst, stops)
        stops = {k: t for k, t in stops.items() if not ran[k].finished}
        if stops not in out.values():
            out[name] = stops
    return out


def residual(
    inst: Instance, choice: str = "later", choices: Mapping[str, Mapping[str, int]] | None = None
) -> Residual:
    """The static instance of `inst`'s waiting jobs around its fixed ones (module
    docstring); a running job that must stop (`resume.stop_times`) stops as `choice` of
    `stop_choices` says (the first when it has none such): at the reservation that stops
    it (`later`) or at `now`, its co-members running on or stopping with it (`+group`);
    `choices`: `stop_choices(inst)` when the caller has them."""
    choices = stop_choices(inst) if choices is None else choices
    stops = choices.get(choice, next(iter(choices.values())))
    ran = runs_until(inst, stops)
    stopped = set(stops)
    fixed = assignments_of(inst, ran)
    resumed, profiles = [], dict(inst.profiles)
    for jid in sorted(stopped):
        job, prof = resume_job(inst, inst.job_by_id[jid], ran[jid].progress, stops[jid])
        resumed.append(job)
        if prof is not None:
            profiles[prof.model] = prof
    extra = list(_held(inst, fixed))
    stand_ins: dict[str, Job] = {}
    waiting = [*resumed]
    for j in inst.jobs:
        if j.live is None:
            after = tuple(_after(inst, j, fixed, stopped, stand_ins))
            waiting.append(replace(j, release=max(j.release, inst.now), after=after))
    static = replace(
        inst,
        jobs=tuple(waiting) + tuple(stand_ins.values()),
        profiles=profiles,
        reservations=inst.reservations + tuple(extra),
        now=0,
        # queued before `now`: the greedy rules keep their arrival order (greedy/order.py)
        arrived={j.id: r for j in waiting if (r := inst.job_by_id[j.id].release) < inst.now},
    )
    static = _exempt_from_r9(static, stopped)
    conservative = any(r.id.startswith(WHOLE_NODE) for r in extra)
    return Residual(
        static,
        inst,
        fixed,
        frozenset(stand_ins),
        conservative,
        frozenset(stopped),
        len(choices) > 1,
    )


def _exempt_from_r9(static: Instance, stopped: set[str]) -> Instance:
    """`static` with each stopped job out of every R9 pair, as in the live state, where its
    start is history (contract §9; the verifier skips it as the later job, and as the
    earlier one its start precedes every waiting job's). The residual runs its rest as a
    waiting job, which R9 would bind: behind a waiting job of higher priority released no
    earlier (a stopped job of priority 1 behind one of priority 2: 15105 where the live
    state has 10105), or before a successor of lower priority that `after` puts after
    it (no schedule). R9 binds a pair only when the earlier job in priority arrived no
    later, so a job of a priority above every other that arrived after every other is in
    no pair: the residual's R9 is then the live state's, and its optimum and bounds hold
    (tests/test_bounds_starts.py). The greedy rules still order it by its own priority and
    arrival (`Instance.queued`): first whatever the rule, a long resumed job held a short
    heavy one back (tests/test_live.py)."""
    if static.priority_policy != "strict" or not stopped:
        return static
    top = max(j.priority for j in static.jobs) + 1
    last = max(static.arrival(j) for j in static.jobs) + 1
    jobs = tuple(replace(j, priority=top) if j.id in stopped else j for j in static.jobs)
    arrived = {**static.arrived, **dict.fromkeys(stopped, last)}
    own = {j.id: (j.priority, static.arrival(j)) for j in static.jobs if j.id in stopped}
    return replace(static, jobs=jobs, arrived=arrived, queued=own)


def _after(
    inst: Instance,
    j: Job,
    fixed: Mapping[str, Assignment],
    stopped: set[str],
    stand_ins: dict[str, Job],
) -> Iterable[str]:
    """`j.after` in the residual: waiting and resumed predecessors stay, a running one
    becomes its stand-in, a done one is dropped."""
    top = max((x.priority for x in inst.jobs), default=0) + 1
    for dep in j.after:
        state = inst.job_by_id[dep].state
        if state == "waiting" or dep in stopped:
            yield dep
        elif state == "running":
            sid = STAND_IN + dep
            length = max(0, fixed[dep].end - inst.now)
            stand_ins[sid] = Job(
                sid, 0, duration=length, release=inst.now, priority=top, weight=0.0
            )
            yield sid


def kept_clash(inst: Instance) -> str | None:
    """`Residual.clash` with every running job kept to the end of its segment, as it is
    kept without preemption (`plan simulate`), or None."""
    return _clash(inst, fixed_assignments(inst))


def _clash(live: Instance, fixed: Mapping[str, Assignment]) -> str | None:
    holds = [
        Hold(live.job_by_id[jid].as_placed(), a.start, a.end, _place(a), a.group)
        for jid, a in fixed.items()
    ]
    found = clashes(live, holds)
    if not found:
        return None
    state = live.job_by_id[found[0].job].state
    return f"{state} job {found[0].job} cannot keep its segment: {found[0].message}"


def _held(inst: Instance, fixed: Mapping[str, Assignment]) -> Iterable[Reservation]:
    """Reservations for nobody that hold what the running jobs use from `now`."""
    holds: dict[tuple[str, int], int] = {}  # (node, GPU) -> until
    node_until: dict[str, int] = defaultdict(int)
    cpus: dict[str, float] = defaultdict(float)
    mem: dict[str, float] = defaultdict(float)
    for jid, a in fixed.items():
        j = inst.job_by_id[jid]
        if j.state != "running" or a.end <= inst.now:
            continue
        for pool, amount in j.demand.items():
            yield Reservation(f"{RUNNING}{jid}:{pool}", inst.now, a.end, pool=pool, amount=amount)
        for p in a.placement:
            for g in p.gpus:
                holds[(p.node, g)] = max(holds.get((p.node, g), 0), a.end)
            node_until[p.node] = max(node_until[p.node], a.end)
            cpus[p.node] += len(p.gpus) * j.cpus_per_gpu
            mem[p.node] += len(p.gpus) * j.mem_gb_per_gpu
    for node, until in node_until.items():
        busy = {g for n, g in holds if n == node}
        free = [g for g in range(inst.node_by_name[node].group.gpus) if g not in busy]
        shut = free[_open_gpus(inst, node, len(free), cpus[node], mem[node]) :]
        if shut:
            gpus = None if len(shut) == len(free) else tuple(shut)  # None: the whole node
            yield Reservation(f"{WHOLE_NODE}{node}", inst.now, until, nodes=(node,), gpus=gpus)
    for (node, g), until in sorted(holds.items()):
        yield Reservation(f"{RUNNING}{node}:{g}", inst.now, until, nodes=(node,), gpus=(g,))


def _open_gpus(inst: Instance, node: str, free: int, cpus: float, mem: float) -> int:
    """How many of the node's `free` GPUs waiting jobs may use beside its running jobs
    (which ask `cpus` and `mem`) without ever exceeding its CPUs or memory."""
    group = inst.node_by_name[node].group
    waiting = [j for j in inst.jobs if j.live is None]
    # A free GPU may carry a whole interleaving group, each member asking its own share
    # (R7 sums over running jobs): the worst GPU holds the `max_group` largest needs.
    per_gpu = inst.interleaving.max_group if inst.interleaving.enabled else 1
    room = free
    for cap, used, needs in (
        (group.cpus, cpus, [j.cpus_per_gpu for j in waiting]),
        (group.mem_gb, mem, [j.mem_gb_per_gpu for j in waiting]),
    ):
        need = sum(sorted(needs, reverse=True)[:per_gpu])
        if cap is not None and need > 0 and over(used + free * need, cap):
            room = min(room, max(0, math.floor((cap * (1 + TOL) - used) / need)))
    return room


def _place(a: Assignment) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((p.node, tuple(p.gpus)) for p in a.placement)


def _fresh_labels(labels: set[str], taken: set[str]) -> dict[str, str]:
    out = {}
    used = labels | taken
    n = 1
    for label in sorted(labels & taken):
        while f"g{n}" in used:
            n += 1
        out[label] = f"g{n}"
        used.add(f"g{n}")
    return out


def _relabel(a: Assignment, rename: Mapping[str, str]) -> Assignment:
    if not rename:
        return a
    segs = tuple(
        replace(g, group=rename.get(g.group, g.group) if g.group else None) for g in a.segments
    )
    group = rename.get(a.group, a.group) if a.group else None
    return replace(a, group=group, segments=segs)


def _from(a: Assignment, since: int) -> Assignment | None:
    """A job's part of the plan in force from `since` on (`now`, or a running job's start):
    all of it, unless the plan stopped the job before then (its segments that start
    earlier are history); None when no segment starts by then or later."""
    segs = [p for p in a.pieces() if p.start >= since]
    if len(segs) == len(a.pieces()):
        return a
    return a.with_pieces(segs) if segs else None


def _resumed(first: Assignment, rest: Assignment) -> Assignment:
    """A stopped job: its segment until now, then the rest as the residual planned it."""
    return first.with_pieces((*first.pieces(), *rest.pieces()))


def _fixed_groups(fixed: Iterable[Assignment]) -> Iterable[Group]:
    members: dict[str, list[str]] = defaultdict(list)
    for a in fixed:
        if a.group is not None:
            members[a.group].append(a.id)
    return (Group(label, tuple(ids)) for label, ids in members.items())
