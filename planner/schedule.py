"""The schedule every planner returns and `plan check` reads (contract §6).

Metrics and objective values are not stored here: `planner.metrics` computes them from the
schedule when it is written or shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, get_args

from planner.limits import MAX_SCHEDULE_TIME

FORMAT = "planner-schedule/1"
Status = Literal["optimal", "feasible", "infeasible", "unknown"]
STATUSES: tuple[Status, ...] = get_args(Status)


# A stage's status in either exact back end: the MILP's backend's (milp.backends.RunStatus),
# or "skipped" when Ctrl-C or the time limit came before it was solved (`SolveInfo.stages`);
# CP-SAT's status named the same way (cpsat.solve._stage_status; CP-SAT's own names are
# `SolveInfo.cpsat_status`).
StageStatus = Literal["optimal", "feasible", "infeasible", "none", "skipped"]


class StageInfo(TypedDict, total=False):
    """One lexicographic stage of an exact back end, in the metric's units: the MILP writes
    them as `SolveInfo.stages`; CP-SAT keeps objective, status and solver_says (its status
    name) and writes the last as `SolveInfo.cpsat_status`."""

    objective: str
    status: StageStatus
    value: float | None
    bound: float | None
    seconds: float
    solver_says: str  # the backend's own words
    proved: bool  # optimal by its status or by its bound (milp.solve._integral_proof)


class SolveInfo(TypedDict, total=False):
    """Every key a planner may put in `Schedule.info`, declared once (all optional).

    The CLI's summary reads `reason`, `error`, `auto`, `bound_by`, `elastic`, `held_back`
    and `interrupted` (planner/cli/terminal.print_summary), `plan simulate` `simulation`;
    `plan bench` records `reason`; the rest is reported in the schedule file as it is.
    """

    # every planner
    reason: str  # why no schedule, or why the model's schedule was not returned
    solver_reason: str  # the planner's own `reason` when the dispatcher gives another
    # per objective, the tightest bound: path|volume|wspt|lp|config|cpsat|milp
    bound_by: dict[str, str]
    interrupted: bool  # stopped by Ctrl-C (options.stop)
    instance_file: str  # set by `plan solve` and `plan simulate`, as typed
    instance_relative: str  # its path from the schedule's folder (`read.instance_record`)
    live: dict[str, Any]  # a live state (contract §9): now and the jobs per state
    # greedy
    rule: str
    groups: int  # groups this plan formed (a live state's running groups are kept, not counted)
    job: str  # the job that could not be placed
    engine: str
    grouping: str
    grouped_objective: float
    solo_objective: float
    elastic: str  # the count choice of an elastic instance (planner.elastic.count_choices)
    variants: str  # "k of n": the count choices planned before the time limit (README)
    held_back: str  # how jobs were held back for a cheaper price (planner.elastic.hold_backs)
    # improve / auto
    improve: dict[str, Any]
    auto: dict[str, Any]  # {"chose", "why", "model_options"}
    # preempt (planner.solvers.preempt)
    # starts, runs, failed, rejected, improvements, found_by; second_lane: why none came
    preempt: dict[str, Any]
    kept: dict[str, Any]  # Muri's grouping kept to the end: solver, objective, returned
    simulation: dict[str, Any]  # the engine run: policy, decisions, preemptions
    # exact solvers (CP-SAT and MILP; planner.solvers.exact.finish)
    greedy_solver: str  # the solver of the best start (a greedy rule or the RCPSP heuristic)
    greedy_objective: dict[str, float]  # the start's objective values
    start_errors: dict[str, str]  # a start rule that failed: the error (exact.best_start)
    start_failed: str  # the first start rule that found no plan: "rule: its reason"
    model_objective: dict[str, float]  # the model's schedule's objective values
    returned: str  # "cpsat" / "milp" (the model's schedule), "greedy" (the start), "none"
    invalid: list[str]  # the model's schedule broke these rules (a planner bug)
    optimal_by_bound: bool  # "optimal" because the schedule meets a valid lower bound
    horizon: int
    groups_complete: bool  # every admissible group is a candidate (planner.groups)
    groups_split: bool  # a reservation admits some members of a group (no proof then)
    # CP-SAT
    options: int
    candidate_groups: int
    cpsat_status: list[str]  # CP-SAT's status name per stage (StageInfo.solver_says)
    hint_vars: int
    model_bound: dict[str, float]
    relaxation_bound: dict[str, float]
    relaxation_bound_error: str
    notes: list[str]
    error: str
    # MILP
    backend: str
    coarsened: dict[str, Any]
    refined: dict[str, Any]  # solved again at slot 1: from_slot, to_slot, reason
    slot: int
    slots: int
    binaries: int
    variables: int
    rows: int
    precedence: str
    no_start: list[str]
    pool_conservative: bool
    exact_grid: bool
    warm_start: str
    stages: list[StageInfo]
    extract: str
    optimal_on_grid: bool


@dataclass(frozen=True)
class Placement:
    node: str
    gpus: tuple[int, ...]


@dataclass(frozen=True)
class Segment:
    """One stretch of a job's run between a start and a stop (contract §8)."""

    start: int
    end: int
    placement: tuple[Placement, ...] = ()
    group: str | None = None


@dataclass(frozen=True)
class Assignment:
    """Where and when one job runs; `group` names its interleaving group, if any.

    A preempted job lists its `segments` (contract §8); then `start`/`end` are the first
    segment's start and the last one's end, `placement`/`group` the first segment's. Empty
    `segments` means one segment: the assignment's own times, placement and group.
    """

    id: str
    start: int
    end: int
    placement: tuple[Placement, ...] = ()
    group: str | None = None
    segments: tuple[Segment, ...] = ()
    gpus: int | None = None  # the first segment's count, written for elastic jobs (§12)

    def pieces(self) -> tuple[Segment, ...]:
        """The job's segments, one when it was never stopped."""
        if self.segments:
            return self.segments
        return (Segment(self.start, self.end, self.placement, self.group),)

    def with_pieces(self, segs: Sequence[Segment]) -> Assignment:
        """The job run in `segs` (in order, at least one) instead: start, end, placement and
        group follow from them, and `gpus`, when written, is the first one's count."""
        first = segs[0]
        gpus = sum(len(q.gpus) for q in first.placement) if self.gpus is not None else None
        more = tuple(segs) if len(segs) > 1 else ()
        return Assignment(
            self.id, first.start, segs[-1].end, first.placement, first.group, more, gpus
        )

    def labels(self) -> set[str]:
        """Every group label the job carries, on any segment."""
        return {p.group for p in self.pieces() if p.group is not None}


@dataclass(frozen=True)
class Group:
    id: str
    jobs: tuple[str, ...]


@dataclass(frozen=True)
class Schedule:
    instance: str
    solver: str
    status: Status
    jobs: tuple[Assignment, ...] = ()
    groups: tuple[Group, ...] = ()
    lower_bound: Mapping[str, float] | None = None
    wall_s: float = 0.0
    # Facts about the run (why `auto` chose a solver, the start, gaps): keys of SolveInfo.
    info: Mapping[str, Any] = field(default_factory=dict)

    def with_(self, **changes: Any) -> Schedule:
        return replace(self, **changes)


def schedule_to_dict(
    s: Schedule, objective: Mapping[str, float], metrics: Mapping[str, float]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": FORMAT,
        "instance": s.instance,
        "solver": s.solver,
        "status": s.status,
        "objective": dict(objective),
        "lower_bound": dict(s.lower_bound) if s.lower_bound is not None else None,
        "wall_s": round(s.wall_s, 3),
        "jobs": [_job_to_dict(a) for a in s.jobs],
        "groups": [{"id": g.id, "jobs": list(g.jobs)} for g in s.groups],
        "metrics": dict(metrics),
    }
    if s.info:
        out["info"] = dict(s.info)
    return out


def _placement_list(pl: tuple[Placement, ...]) -> list[dict[str, Any]]:
    return [{"node": p.node, "gpus": list(p.gpus)} for p in pl]


def _job_to_dict(a: Assignment) -> dict[str, Any]:
    """A job entry; `segments` only for a job with more than one, so a job never stopped
    keeps the version-1 form exactly."""
    out: dict[str, Any] = {
        "id": a.id,
        "start": a.start,
        "end": a.end,
        "group": a.group,
        "placement": _placement_list(a.placement),
    }
    if a.gpus is not None:
        out["gpus"] = a.gpus
    if len(a.segments) > 1:
        out["segments"] = [
            {
                "start": g.start,
                "end": g.end,
                "placement": _placement_list(g.placement),
                "group": g.group,
            }
            for g in a.segments
        ]
    return out


class ScheduleFormatError(ValueError):
    """A schedule file that is not in the contract's format; `problems` are (path, text)."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))
        self.problems = problems


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _time(v: Any) -> bool:
    return _int(v) and abs(v) <= MAX_SCHEDULE_TIME


def _check_time(v: Any, path: str, probs: list[tuple[str, str]]) -> None:
    if not _int(v):
        probs.append((path, "missing or not an integer"))
    elif not _time(v):
        probs.append((path, f"an integer outside ±{MAX_SCHEDULE_TIME:,} (2**53)"))


def _parse_placement(raw: Any, path: str, probs: list[tuple[str, str]]) -> tuple[Placement, ...]:
    pl: list[Placement] = []
    raw_pl = [] if raw is None else raw  # absent or null: none; `{}`, `false`, `0`: refused
    if not isinstance(raw_pl, list):
        probs.append((f"{path}.placement", "not a list"))
        raw_pl = []
    for k, p in enumerate(raw_pl):
        ok = (
            isinstance(p, dict)
            and isinstance(p.get("node"), str)
            and isinstance(p.get("gpus"), list)
            and all(_int(x) for x in p["gpus"])
        )
        if not ok:
            probs.append((f"{path}.placement[{k}]", "needs a node name and a list of GPU indices"))
            continue
        pl.append(Placement(p["node"], tuple(p["gpus"])))
    return tuple(pl)


def _parse_group(raw: Any, path: str, probs: list[tuple[str, str]]) -> str | None:
    if raw is not None and not isinstance(raw, str):
        probs.append((f"{path}.group", "not a string or null"))
        return None
    return raw


def _parse_segments(raw: Any, path: str, probs: list[tuple[str, str]]) -> tuple[Segment, ...]:
    """A job's `segments` (contract §8); their order and times are the verifier's (R11)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        probs.append((f"{path}.segments", "not a non-empty list"))
        return ()
    out: list[Segment] = []
    for k, g in enumerate(raw):
        sp = f"{path}.segments[{k}]"
        if not isinstance(g, dict):
            probs.append((sp, "not an object"))
            continue
        times = [g.get("start"), g.get("end")]
        for key, v in zip(("start", "end"), times, strict=True):
            _check_time(v, f"{sp}.{key}", probs)
        pl = _parse_placement(g.get("placement"), sp, probs)
        group = _parse_group(g.get("group"), sp, probs)
        if all(_time(v) for v in times):
            out.append(Segment(g["start"], g["end"], pl, group))
    return tuple(out)


def schedule_from_dict(d: Any) -> Schedule:
    """Parse a schedule document; structural problems raise ScheduleFormatError.

    Only the shape is checked here; whether the schedule obeys the rules is the
    verifier's business.
    """
    probs: list[tuple[str, str]] = []
    if not isinstance(d, dict):
        raise ScheduleFormatError([("$", "a schedule is a JSON object")])
    if "cluster" in d and "format" not in d:  # arguments swapped: one line, not one per job
        raise ScheduleFormatError([("$", "this is an instance (it has 'cluster'), not a schedule")])
    jobs: list[Assignment] = []
    raw_jobs = d.get("jobs")
    if not isinstance(raw_jobs, list):
        probs.append(("jobs", "missing or not a list"))
        raw_jobs = []
    for i, j in enumerate(raw_jobs):
        path = f"jobs[{i}]"
        if not isinstance(j, dict):
            probs.append((path, "not an object"))
            continue
        if not isinstance(j.get("id"), str):
            probs.append((f"{path}.id", "missing or not a string"))
            continue
        for key in ("start", "end"):
            _check_time(j.get(key), f"{path}.{key}", probs)
        pl = _parse_placement(j.get("placement"), path, probs)
        group = _parse_group(j.get("group"), path, probs)
        segs = _parse_segments(j.get("segments"), path, probs)
        count = j.get("gpus")
        if count is not None and not _int(count):
            probs.append((f"{path}.gpus", "not an integer (the first segment's GPU count)"))
        if _time(j.get("start")) and _time(j.get("end")):
            gpus = count if _int(count) else None
            jobs.append(Assignment(j["id"], j["start"], j["end"], pl, group, segs, gpus))
    groups: list[Group] = []
    raw_groups = d.get("groups") or []
    if not isinstance(raw_groups, list):
        probs.append(("groups", "not a list"))
        raw_groups = []
    for i, g in enumerate(raw_groups):
        if not (
            isinstance(g, dict)
            and isinstance(g.get("id"), str)
            and isinstance(g.get("jobs"), list)
            and all(isinstance(x, str) for x in g["jobs"])
        ):
            probs.append((f"groups[{i}]", "needs an id and a list of job ids"))
            continue
        groups.append(Group(g["id"], tuple(g["jobs"])))
    status = d.get("status", "feasible")
    if status not in STATUSES:
        probs.append(("status", f"must be one of {', '.join(STATUSES)}"))
    info = d.get("info") or {}
    if not isinstance(info, dict):
        probs.append(("info", "not an object"))
    wall = d.get("wall_s") or 0.0
    if isinstance(wall, bool) or not isinstance(wall, int | float):
        probs.append(("wall_s", "not a number"))
    if "format" in d and d["format"] != FORMAT:
        # another document, or a format to come; the informational fields (solver,
        # objective, lower_bound, metrics) are left to `plan show` (tests/test_show.py)
        probs.append(("format", f"expected '{FORMAT}', found {json.dumps(d['format'])}"))
    if probs:
        raise ScheduleFormatError(probs)
    lb = d.get("lower_bound")
    return Schedule(
        instance=str(d.get("instance", "")),
        solver=str(d.get("solver", "")),
        status=status,
        jobs=tuple(jobs),
        groups=tuple(groups),
        lower_bound=lb if isinstance(lb, dict) else None,
        wall_s=float(wall),
        info=info,
    )
