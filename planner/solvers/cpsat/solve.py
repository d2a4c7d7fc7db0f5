"""The CP-SAT solve loop: best start, horizon, lexicographic stages, status, fallback.

Anytime and never worse than the start: planner.solvers.exact's best start (every greedy
rule and, on plain RCPSP, `planner.solvers.rcpsp_heuristic`; or `SolveOptions.start`, a
plan another planner made, its groups added to the candidates) is the hint, bounds the
horizon, and is returned whenever CP-SAT finds nothing better (exact.finish compares the
objective values of both schedules lexicographically).

The horizon and each job's latest end are `planner.solvers.cpsat.horizon`'s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from planner.bounds import lower_bounds, optional_bounds, tightest
from planner.groups import (
    exact_candidates,
)
from planner.instance import Instance
from planner.schedule import Schedule, SolveInfo, StageInfo, StageStatus
from planner.solvers.cpsat.extract import extract
from planner.solvers.cpsat.hint import add_hint, set_hints
from planner.solvers.cpsat.horizon import horizon_and_end_caps, max_per_job
from planner.solvers.cpsat.model import build
from planner.solvers.cpsat.objective import (
    Objective,
    add_objective,
)
from planner.solvers.cpsat.variables import CpsatModel
from planner.solvers.exact import (
    NOT_RUN,
    NotRun,
    best_start,
    cpsat_size,
    finish,
)
from planner.solvers.options import Progress, SolveOptions, objectives_of

# Above LNS_MIN_JOBS, hinted placement-free models run LNS only (see _parameters); up to
# it they run two full searches (with and without LP) instead of CP-SAT's 2-worker default
# (one full search and LNS). `experiments/cpsat_search_ab.py` (10 s, 2 workers, seed 0,
# four fixed samples of 10 per set, one run): PSPLIB j90 sum of makespans 3,835 with the
# default, 3,828 with two full searches, proved 31 / 32; j60 3,316 / 3,319, proved 33 / 35
# (j6041_9 proved in 5.8 s, j6046_7 in 3.9 s instead of 8.5; on the open j6013_* the two
# trade one to three units either way).
LNS_MIN_JOBS = 100
# Job shops (`Instance.disjunctive`: CP-SAT's no-overlap on every machine) run the two full
# searches up to this many operations. Paired runs (10 s, 2 workers, seed 0, hinted), LNS
# only against two full searches on la21-la40: mean gap to the optimum 0.312% / 0.311%;
# the full searches proved la24, la36 and la40 (1,222: LNS only 1,240) and did better on
# la21, la29 and la38, worse on la27 (1,282 against 1,235); again on eight of them the
# same proofs, la27 1,263 against 1,242. On the compare sample (la04, la08, ..., la40)
# every open one is then proved or equal.
LNS_MIN_DISJUNCTIVE = 250
# Models with placement choices (GPU jobs on nodes) of at least this many jobs run LNS only
# too, with all of CP-SAT's LNS subsolvers. `experiments/cpsat_lns_placement.py` (30 s,
# 2 workers, instances/bench's seven GPU instances of 50-200 jobs, paired runs; two rounds
# with a prototype of this switch, one with it): average JCT of the default over LNS only
# 0.998-1.041, 1.000-1.053 and 0.995-1.103 (muri-testbed-100: 104,430 s against 94,720),
# better on 16 of 21 pairs, worse on two by 0.25% and 0.54%. Below it the default stays:
# LNS alone never proves a schedule optimal.
LNS_PLACEMENT_MIN_JOBS = 50


# Below this many admissible groups the model takes every one (`groups.exact_candidates`),
# not only the candidates each job keeps: pruned, it called a 4-job plan of total JCT 23
# optimal when a pair it never saw gave 21 (tests/data/pruned-pair.json). Measured by
# `experiments/all_groups.py --seeds 6 --jobs 8,10,12,14 --time-limit 10 --most 400` (one
# run): on the 18 instances with at most 400 admissible groups, every group gave a better
# plan on 7 and no worse on any, and proved 14 optimal against 1.
ALL_GROUPS_MAX = 400

# Building the model counts against the time limit and cannot be interrupted: on `plan
# generate --family dl --jobs 2000 --nodes 32 --seed 1 --preemption` (62,104 placement
# options) building and hinting took 3.4-5.4 s on a loaded 2-core machine, so a 10 s solve
# ran 17 s and answered Ctrl-C 9 s late. The model is built only when its solo options
# (`exact.cpsat_size`) at this rate, and MIN_SOLVE_S of search, fit in what the start left
# of the limit; else the start is returned, saying why. A 1,144-job live state (README,
# the bounds' clock: hinted in 0.57 s; one run, idle machine, not in the README: 62,360
# options, built in 5.16 s).
BUILD_OPTIONS_PER_S = 10_000
MIN_SOLVE_S = 0.05  # `_solve_stages` runs no stage with less left


class _Callback(cp_model.CpSolverSolutionCallback):
    """Progress and Ctrl-C between solutions. The bound shown follows the final one's rule
    (`_lower_bound`): the larger of `floor` (planner.bounds, computed once before the
    search) and CP-SAT's own bound when that is a proof (`proof`), so the gap shown live
    and in the summary agree."""

    def __init__(
        self,
        obj: Objective,
        options: SolveOptions,
        floor: float | None = None,
        proof: bool = False,
    ):
        super().__init__()
        self.obj, self.options = obj, options
        self.floor, self.proof = floor, proof

    def on_solution_callback(self) -> None:
        if self.options.progress is not None:
            own = self.obj.bound_of(self.best_objective_bound) if self.proof else None
            bound = max((b for b in (own, self.floor) if b is not None), default=None)
            self.options.progress(
                Progress(
                    self.objective_value / self.obj.scale,
                    bound,
                    self.obj.name,
                )
            )
        if self.options.stop.is_set():
            self.stop_search()


# Subsolvers dropped on big placement-free models under LNS only (see _parameters): on
# PSPLIB j120 they rarely improve a good start and take turns from the scheduling LNS.
LNS_IGNORED = (
    "ls",
    "feasibility_pump",
    "graph_arc_lns",
    "graph_var_lns",
    "graph_cst_lns",
    "rins/rens",
)


def _search(cm: CpsatModel, hinted: bool, stage: int) -> str:
    """Which search `_parameters` sets up: "prove" (two full searches), "lns-scheduling"
    (LNS only, scheduling neighbourhoods), "lns" (LNS only, every neighbourhood) or
    "default" (CP-SAT's own)."""
    if not cm.uses:  # `proving_size` models (cliques) are all within LNS_MIN_JOBS
        n = len(cm.jobs)
        if n <= LNS_MIN_JOBS or (n <= LNS_MIN_DISJUNCTIVE and cm.instance.disjunctive):
            return "prove"
        return "lns-scheduling" if hinted or stage > 0 else "default"
    if len(cm.jobs) >= LNS_PLACEMENT_MIN_JOBS:
        return "lns"
    return "default"


def _parameters(solver: cp_model.CpSolver, options: SolveOptions, left: float, search: str) -> None:
    p = solver.parameters
    p.max_time_in_seconds = left
    p.random_seed = options.seed
    p.num_workers = max(1, options.workers)
    # Ctrl-C belongs to the CLI, which sets options.stop (watched below) and then exits
    # 130 with the best schedule; CP-SAT's own handler would swallow the signal.
    p.catch_sigint_signal = False
    if options.workers != 2:
        return
    if search == "lns-scheduling":
        # Bigger models without placement choices (RCPSP j120), started from a complete
        # hint: both threads improve it by LNS (scheduling time/resource windows,
        # precedences, intervals) instead of one full search that never closes the gap.
        # PSPLIB j120 sample, 10 s: mean gap to the best known ~2.3% (with the RCPSP
        # heuristic's start and no cliques) instead of ~3.5% (experiments/cpsat_bench.py).
        p.use_lns_only = True
        p.ignore_subsolvers.extend(LNS_IGNORED)
    elif search == "prove":
        # CP-SAT's 2-worker default is one full search plus a thread shared by LNS
        # workers. On models without placement choices up to LNS_MIN_JOBS jobs (RCPSP
        # j30-j90, job shops) two full searches, with and without LP, prove optima much
        # sooner (PSPLIB j3013_1: ~3.5 s instead of > 10 s; ft10 proved in ~4 s instead
        # of 940-944 after 10 s; j60 and j90: LNS_MIN_JOBS), and job shops up to
        # LNS_MIN_DISJUNCTIVE operations. Bigger placement-free models run LNS only
        # (above), small GPU models the default.
        p.num_full_subsolvers = 2
        p.subsolvers.extend(["default_lp", "no_lp"])
    elif search == "lns":
        p.use_lns_only = True  # big models with placement choices: LNS_PLACEMENT_MIN_JOBS


@dataclass
class _Model:
    """The built model, and what its answers prove."""

    cm: CpsatModel
    objs: list[Objective]
    candidate_groups: int
    complete: bool  # every admissible group is a candidate (`groups.exact_candidates`)
    horizon: int
    hinted: int  # hint variables set from the start
    proof: bool  # its optimum, bound and infeasibility are the exact problem's


@dataclass
class _Stages:
    """The lexicographic solves: per-stage facts (status and CP-SAT's own status name,
    `info.cpsat_status`), the last stage's schedule, the first stage's bound, whether
    Ctrl-C stopped them, and CP-SAT's refusal of the model."""

    schedule: Schedule | None = None
    stages: list[StageInfo] = field(default_factory=list)
    bound: float | None = None
    interrupted: bool = False
    error: str | None = None


def _solve_stages(
    cm: CpsatModel,
    objs: list[Objective],
    options: SolveOptions,
    t0: float,
    limit: float,
    hinted: bool = False,
    floor: float | None = None,
    proof: bool = False,
) -> _Stages:
    """One solve per objective, each fixing the previous at its optimum; stops after the
    first stage not proved optimal, on Ctrl-C, when the time is up, or when CP-SAT refuses
    the model."""
    st = _Stages()
    for i, obj in enumerate(objs):
        left = limit - (time.monotonic() - t0)
        if left <= MIN_SOLVE_S or options.stop.is_set():
            break
        cm.model.minimize(obj.expr)
        solver = cp_model.CpSolver()
        _parameters(solver, options, left, _search(cm, hinted, i))
        # the first stage's bound: `floor` and, on an exact model, CP-SAT's; later stages
        # minimise another objective, whose own bound is shown
        cb = _Callback(obj, options, floor if i == 0 else None, proof and obj.exact)
        done = threading.Event()

        def watch(solver: cp_model.CpSolver = solver, done: threading.Event = done) -> None:
            # Ctrl-C between solutions: the callback alone would wait for the next one.
            while not done.wait(0.1):
                if options.stop.is_set():
                    solver.stop_search()
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            status = solver.solve(cm.model, cb)
        finally:
            done.set()
            watcher.join()
        stage: StageInfo = {
            "objective": obj.name,
            "status": _stage_status(status),
            "solver_says": solver.status_name(status),
        }
        st.stages.append(stage)
        if options.stop.is_set():
            st.interrupted = True
        if status == cp_model.MODEL_INVALID:
            st.error = _why_invalid(cm.model.validate(), i, obj.name)
            break
        if stage["status"] not in ("optimal", "feasible"):
            break
        if i == 0:
            st.bound = obj.bound_of(solver.best_objective_bound)
        st.schedule = extract(cm, solver.value)
        if stage["status"] != "optimal" or st.interrupted or i == len(objs) - 1:
            break
        # Fix this objective at its optimum and hint the next stage with this solution.
        try:
            cm.model.add(obj.expr <= round(solver.objective_value))
        except (TypeError, ValueError, OverflowError):
            # its constant (weights x releases) passed 64-bit integers and became a
            # float, which a constraint refuses (tests/test_cpsat.py)
            st.error = _why_invalid("overflow", i + 1, objs[i + 1].name)
            break
        cm.model.clear_hints()
        sol = list(solver.response_proto.solution)
        set_hints(cm.model, list(range(len(sol))), sol)
    return st


def _stage_status(status: cp_model.CpSolverStatus) -> StageStatus:
    """CP-SAT's status as the MILP's stage status (`schedule.StageStatus`): UNKNOWN (no
    solution in the time) and MODEL_INVALID (the model refused, `_Stages.error`) are
    "none"."""
    if status == cp_model.OPTIMAL:
        return "optimal"
    if status == cp_model.FEASIBLE:
        return "feasible"
    if status == cp_model.INFEASIBLE:
        return "infeasible"
    return "none"


def _why_invalid(message: str, stage: int, objective: str) -> str:
    """CP-SAT's reason for refusing the model, on one line: its message goes on to list
    every term of the offending expression (tests/test_cpsat.py). Refused at a later
    stage of a lexicographic list, the earlier stages' schedule stands."""
    first = message.strip().splitlines()[0] if message.strip() else "no reason given"
    if "overflow" in first:
        # weights up to 10^6 times times up to 10^12 (planner/limits.py) can pass 2^63
        first = "its objective could pass 64-bit integers (weights x times)"
    if stage == 0:
        return f"CP-SAT refused the model, so the start is returned: {first}"
    return f"CP-SAT refused stage {stage + 1} ({objective}), which is not optimised: {first}"


def solve_cpsat(instance: Instance, options: SolveOptions) -> Schedule:
    """Plan `instance` with CP-SAT from the best start; never worse than that start."""
    t0 = time.monotonic()
    names = objectives_of(instance, options)
    info: SolveInfo = {}
    start = best_start(instance, options, info)
    # The live line's gap needs the bound now; computed before the model is built, its
    # time is known when the model's room is judged (a 1,144-job live state at 10 s built
    # the model, then spent the rest on this bound, and the search never ran).
    floor = _shown_floor(instance, names[0], options) if options.progress is not None else None
    why = _no_room_for_the_model(instance, options, t0)
    if why is not None:
        return _without_the_model(instance, names, start, options, info, t0, why)
    try:
        m = _build_model(instance, names, start)
    except OverflowError as e:  # a number past CP-SAT's 64 bits (`energy.PRICE_MOST`)
        why = f"CP-SAT refused the model, so the start is returned: {e}"
        return _without_the_model(instance, names, start, options, info, t0, why)
    st = _solve_stages(
        m.cm, m.objs, options, t0, options.limit, hinted=m.hinted > 0, floor=floor,
        proof=m.proof,
    )  # fmt: skip
    _model_info(info, m, st, names[0])
    if st.interrupted or options.stop.is_set():
        info["interrupted"] = True
    lower = _lower_bound(
        instance, names, st.bound if m.proof else None, info, options.bound_iterations
    )
    return _finish_cpsat(instance, names, start, m, st, lower, info, t0)


def _build_model(instance: Instance, names: tuple[str, ...], start: Schedule | None) -> _Model:
    """The model over the candidate groups, its objectives, hinted with `start`."""
    groups, complete = exact_candidates(instance, max_per_job(instance), ALL_GROUPS_MAX, start)
    horizon, ub = horizon_and_end_caps(instance, names, start, groups)
    cm = build(instance, groups, ub, horizon, makespan="makespan" in names)
    objs = [add_objective(cm, n) for n in names]
    hinted = add_hint(cm, objs, start) if start is not None else 0
    # "optimal", "infeasible" and bounds are proofs only for a complete, exact model:
    # candidate groups may be a pruned subset of all admissible groups.
    # (Elastic jobs: candidate groups are formed at their default counts only, contract
    # §12, so `complete` is False.) The horizon with room to the last price change holds
    # some energy-optimal schedule (`exact.price_wait`), as the MILP's does.
    exact_objectives = all(o.exact for o in objs)
    # The model has no preemption (contract §8): its optimum, bound and infeasibility
    # speak of schedules without segments only, so with preemption none is a proof.
    proof = cm.exact and complete and exact_objectives and not instance.preemption.enabled
    return _Model(cm, objs, len(groups), complete, horizon, hinted, proof)


def _without_the_model(
    instance: Instance,
    names: Sequence[str],
    start: Schedule | None,
    options: SolveOptions,
    info: SolveInfo,
    t0: float,
    why: str,
) -> Schedule:
    """The start (or nothing), with planner.bounds' bounds, when the model is not built."""
    if options.stop.is_set():
        info["interrupted"] = True
    lower = _lower_bound(instance, names, None, info, options.bound_iterations)
    return finish(
        instance, "cpsat", names, None, start, proved=False, lower=lower, info=info,
        t0=t0, why_none=why,
    )  # fmt: skip


def _model_info(info: SolveInfo, m: _Model, st: _Stages, first: str) -> None:
    """The model's size and CP-SAT's statuses and bound, in `info`."""
    info["options"] = sum(len(jv.options) for jv in m.cm.jobs.values())
    info["candidate_groups"], info["groups_complete"] = m.candidate_groups, m.complete
    info["cpsat_status"] = [s["solver_says"] for s in st.stages]
    info["hint_vars"], info["horizon"] = m.hinted, m.horizon
    if st.bound is not None:
        info["model_bound"] = {first: st.bound}
    if m.cm.notes:
        info["notes"] = list(m.cm.notes)
    if st.error:
        info["error"] = st.error


def _finish_cpsat(
    instance: Instance,
    names: Sequence[str],
    start: Schedule | None,
    m: _Model,
    st: _Stages,
    lower: dict[str, float] | None,
    info: SolveInfo,
    t0: float,
) -> Schedule:
    """`exact.finish` on the last stage's schedule: "optimal" only when every stage was
    proved on a model whose optimum is a proof."""
    proved = (
        len(st.stages) == len(names)
        and all(s["status"] == "optimal" for s in st.stages)
        and m.proof
        and not st.interrupted
    )
    first_status: StageStatus | NotRun = st.stages[0]["status"] if st.stages else NOT_RUN
    return finish(
        instance,
        "cpsat",
        names,
        st.schedule,
        start,
        proved=proved,
        lower=lower,
        info=info,
        t0=t0,
        why_none=_why_none(st),
        infeasible=first_status == "infeasible" and m.proof,
    )


def _why_none(st: _Stages) -> str:
    """Why the model gave no schedule: CP-SAT's refusal of it, else the first stage's
    status in CP-SAT's own words ("UNKNOWN": nothing found in the time)."""
    said = st.stages[0]["solver_says"] if st.stages else NOT_RUN
    return st.error or f"CP-SAT found no schedule ({said})"


def _no_room_for_the_model(instance: Instance, options: SolveOptions, t0: float) -> str | None:
    """Why the model is not built (the start is returned), or None. Building it counts
    against the time limit and cannot be interrupted; the live line's bound comes first."""
    if options.stop.is_set():
        return "interrupted before the CP-SAT model was built"
    size = cpsat_size(instance)
    left = options.limit - (time.monotonic() - t0)
    if size / BUILD_OPTIONS_PER_S + MIN_SOLVE_S > left:
        after = " and the lower bound" if options.progress is not None else ""
        return (
            f"no time left for the CP-SAT model after the start{after}: {size:,} placement "
            f"options take about {size / BUILD_OPTIONS_PER_S:.1f} s to build (raise --time-limit)"
        )
    return None


def _shown_floor(instance: Instance, name: str, options: SolveOptions) -> float | None:
    """planner.bounds' bound on `name` for the live display, None when it fails."""
    try:
        return lower_bounds(instance, [name], options.bound_iterations)[name]
    except Exception:  # a bound is optional: _lower_bound reports the failure
        return None


def _lower_bound(
    instance: Instance,
    names: Sequence[str],
    model_bound: float | None,
    info: SolveInfo,
    iterations: int,
) -> dict[str, float] | None:
    """The best valid bound on each objective: on the first, CP-SAT's (when the model is
    exact and complete) or planner.bounds' relaxation bound (always valid); on a later
    one planner.bounds' only (a later stage's bound holds only among the plans optimal on
    the earlier objectives, README)."""
    found = optional_bounds(instance, names, iterations, info)
    first = names[0]
    if first in found:  # planner.bounds has none for some objectives (energy_cost)
        info["relaxation_bound"] = {first: found[first][0]}
    own = None if model_bound is None else (model_bound, "cpsat")
    best = {first: tightest(own, found.get(first))}  # ties: the model's bound, listed first
    best |= {n: found[n] for n in names[1:] if n in found}
    kept = {n: b for n, b in best.items() if b is not None}
    if not kept:
        return None
    info["bound_by"] = {n: word for n, (_, word) in kept.items()}
    return {n: value for n, (value, _) in kept.items()}
