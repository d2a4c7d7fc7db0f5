"""The MILP planner: greedy start, grid, model, lexicographic solves, extraction, bound.

Status and bound:
- The best start (planner.solvers.exact.best_start: greedy rules, the RCPSP heuristic,
  or `SolveOptions.start` with its groups added to the candidates) gives the horizon,
  the warm start and the fallback: the answer is never worse than it (if the MILP finds
  nothing better, the start is returned with status "feasible",
  info["returned"] = "greedy" and info["reason"] saying why).
- "optimal" only if every lexicographic stage was proved optimal by the solver (its own
  status, or an integral objective whose bound rounds up to the incumbent) AND the grid is
  exact: slot length 1 (integer times and durations, so every exact schedule is on the
  grid), no horizon cut that could exclude optimal schedules, no conservative pool rows,
  no preemption (the model has no segments), and the candidate groups complete and not
  split by reservations (`_Model.proof`).
  Otherwise the grid optimum is reported as "feasible", info["optimal_on_grid"] = True.
- lower_bound: the solver's bound when the grid is exact, on the first objective only: a
  later stage's bound holds only among the schedules optimal on the earlier ones, so a
  later objective gets planner.bounds' bound, which holds for every schedule (as
  CP-SAT's and auto's do; tests/test_milp.py). With slot > 1 the grid bound is not a bound of the
  exact problem (starts on the grid and rounded-up durations restrict it). For makespan
  without reservations and deadlines we subtract a valid rounding allowance
  (horizon.rounding_allowance: how much later than any exact schedule a grid schedule
  may have to end); otherwise, and for the sum objectives, we report planner.bounds'
  valid bound. The larger valid value is reported. A returned schedule that
  meets a valid bound is "optimal" whatever the grid (info["optimal_by_bound"]).

Ctrl-C (options.stop): when CBC's log shows no solution better than the warm start, it is
killed at once; otherwise it gets SIGINT once a second, stops at its next branch-and-bound
check and writes its best solution, which is used as a time-limited result. If it has not
stopped after backends.STOP_GRACE s (stuck in root cut generation, where it does not look),
it is killed. A killed CBC returns nothing, and the best schedule we already hold (an
earlier stage, or greedy) is returned. HiGHS polls the event in its MIP and simplex
interrupt callbacks and keeps its incumbent; it does not look during presolve, so a stop
there waits for presolve to end.
Remaining lexicographic stages are skipped; info["interrupted"] = True.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pulp

import planner.solvers.milp.model as milp_model
import planner.solvers.milp.variables as milp_vars
from planner.bounds import optional_bounds, tightest
from planner.groups import (
    exact_candidates,
    split_by_reservation,
)
from planner.instance import ENERGY_OBJECTIVES, Instance
from planner.metrics import objective_values
from planner.schedule import Schedule, SolveInfo, StageInfo, StageStatus
from planner.solvers.exact import (
    MAX_GROUPS_PER_JOB,
    NOT_RUN,
    NotRun,
    best_start,
    earliest_starts,
    finish,
)
from planner.solvers.milp.backends import RunResult, run_backend
from planner.solvers.milp.energy import add_energy
from planner.solvers.milp.extract import extract
from planner.solvers.milp.grid import Grid, make_grid, slot_length
from planner.solvers.milp.hint import grid_starts, set_warm
from planner.solvers.milp.horizon import (
    Horizon,
    horizon_and_end_caps,
    min_durations,
    rounding_allowance,
)
from planner.solvers.milp.objective import WEIGHTED
from planner.solvers.options import Progress, SolveOptions, objectives_of

# A grid this coarse says nothing useful: give up on the model and return greedy's plan.
MIN_SLOTS = 8  # (chosen, not tuned)
# Building the model counts against the time limit. PuLP builds about 200,000 nonzeros a
# second here (the demo's 449k-nonzero model in 2.1 s, a 121k one in 0.6 s, measured on a
# loaded 2-core machine), and the solver needs MIN_SOLVE_S (backends gives CBC at least 1 s):
# a model that cannot be built in the time left before that is coarsened, or skipped.
BUILD_NONZEROS_PER_S = 200_000
MIN_SOLVE_S = 1.0
# Handing the model to the back end costs as well, per nonzero, as a share of its build:
# CBC's MPS file (PuLP's writeMPS) about twice the build, HiGHS's own model (PuLP's
# buildSolverModel) 0.45-0.75 times. `experiments/milp_handover.py` (300 generated mixed
# jobs, 8 nodes, `--time-limit 10`): 1.95 and 2.08 for CBC, 0.75 and 0.69 for HiGHS on a
# quiet 2-core machine, 2.1 and 0.45 in one earlier run on a loaded one. Unbudgeted, the
# MPS file alone ran 7-9 s past a 10 s limit there.
HANDOVER = {"cbc": 2.1, "highs": 0.75}
INTERRUPTED = "interrupted before the MILP model was built"
INTERRUPTED_BUILT = "interrupted before the MILP model was handed to the solver"


# Below this many admissible groups the model takes every one (`groups.exact_candidates`),
# so that its optimum is a proof (tests/data/pruned-pair.json: pruned, CBC called 23
# optimal where 21 exists). Fewer than CP-SAT's: each group adds start units, so the grid
# coarsens. `experiments/all_groups.py --solver milp --seeds 6 --jobs 6,8,10 --time-limit
# 10 --most 400` (one run, 18 instances): on the 11 with at most 92 admissible groups every
# group gave the same plan or better (once), on 3 of the 7 with 142-223 a worse one (slot
# 560 against 140 on the worst: 44,622 against 41,488).
ALL_GROUPS_MAX = 60


@dataclass
class _Run:
    """One MILP solve's shared state: what every step reads and the `info` it fills."""

    instance: Instance
    options: SolveOptions
    names: tuple[str, ...]
    backend: str
    t0: float = field(default_factory=time.monotonic)
    info: SolveInfo = field(default_factory=lambda: SolveInfo())

    @property
    def solver(self) -> str:
        return f"milp:{self.backend}"

    # The live display follows the final lower bound's rule (_valid_bounds): planner.bounds'
    # bound, raised by the solver's only when the model's bound is a proof.
    floor: float | None = None
    proof: bool = False
    first_scale: float = 1.0  # the first objective's metric value per model unit

    def report(self, incumbent: float | None, bound: float | None, message: str = "") -> None:
        if self.options.progress is not None:
            self.options.progress(Progress(incumbent, bound, message))

    def report_solver(self, incumbent: float | None, bound: float | None) -> None:
        """The backend's report on the first objective, its bound taken as the final one's."""
        scaled = [None if v is None else v * self.first_scale for v in (incumbent, bound)]
        own = scaled[1] if self.proof else None
        self.report(scaled[0], max((b for b in (own, self.floor) if b is not None), default=None))


@dataclass
class _Model:
    """The built model, and what its answers prove."""

    units: Sequence[milp_vars.StartUnit]
    grid: Grid
    built: milp_model.Built
    caps: dict[str, int]  # the horizon's end caps (`Horizon.caps`)
    exact_grid: bool  # the grid holds the exact problem's optimum (`_exact_grid`)
    # every admissible group is a candidate and none is split by a reservation
    # (`groups.split_by_reservation`): the model's bound holds on every grid schedule
    sound: bool
    warm: str  # the warm start: "used", or why not

    @property
    def proof(self) -> bool:
        """The model's optimum and bound are the exact problem's."""
        return self.exact_grid and self.sound

    @property
    def proof_of_infeasibility(self) -> bool:
        """Its infeasibility too: end caps (set from the start's value) may leave a capped
        model infeasible where schedules exist."""
        return self.proof and not self.caps


@dataclass
class _Stages:
    """The lexicographic solves: per-stage facts, and what they proved."""

    stages: list[StageInfo] = field(default_factory=list)
    chosen: dict[str, float] | None = None  # variable values of the last solution
    proved_all: bool = True
    interrupted: bool = False
    bounds: dict[str, float] = field(default_factory=dict)


def solve_milp(instance: Instance, options: SolveOptions) -> Schedule:
    """Plan `instance` with the time-indexed MILP from the best start; never worse than it."""
    backend = options.milp_backend if options.milp_backend in ("cbc", "highs") else "cbc"
    r = _Run(instance, options, objectives_of(instance, options), backend)
    r.info["backend"] = backend
    start = best_start(instance, options, r.info)
    named = _relaxation_bounds(r)
    m = _build_model(r, start, _values(named))
    if isinstance(m, str):
        if options.stop.is_set():
            r.info["interrupted"] = True
        return _without_the_model(r, start, named, m)
    st = _solve_stages(r, m)
    r.info["stages"] = st.stages
    if st.interrupted or options.stop.is_set():
        r.info["interrupted"] = True
    lower = _lower_bound(r, m, st, named)
    out = _finish_milp(r, start, m, st, lower)
    retry = options.slot is None and m.grid.length > 1 and "coarsened" not in r.info
    if retry and not out.jobs and out.status != "infeasible":
        out = _on_the_exact_grid(r, out, m.grid.length)
        if out.jobs or out.status == "infeasible":
            return out  # the second solve's answer, which its own run reported
    first = r.names[0]
    final = objective_values(instance, out, r.names)[first] if out.jobs else None
    r.report(final, (lower or {}).get(first), "done")
    return out


def _relaxation_bounds(r: _Run) -> dict[str, tuple[float, str]]:
    """planner.bounds' bounds and their ingredients (a failure noted in `info`); the first
    objective's is shown beside the start's value and with the backend's progress."""
    named = optional_bounds(r.instance, r.names, r.options.bound_iterations, r.info)
    first = r.names[0]
    r.floor = named[first][0] if first in named else None
    gvals = r.info.get("greedy_objective")
    r.report(gvals[first] if gvals else None, r.floor, "greedy start")
    return named


def _values(named: dict[str, tuple[float, str]]) -> dict[str, float]:
    return {k: v for k, (v, _) in named.items()}


def _build_model(r: _Run, start: Schedule | None, simple: dict[str, float]) -> _Model | str:
    """The model on the finest grid it fits (`_choose_grid`), warm-started from `start`;
    or why none fits."""
    if r.options.stop.is_set():
        return INTERRUPTED
    instance = r.instance
    groups, complete = exact_candidates(instance, MAX_GROUPS_PER_JOB, ALL_GROUPS_MAX, start)
    units = milp_vars.build_units(instance, groups)
    hz = horizon_and_end_caps(instance, units, r.names, start, r.info.get("greedy_objective"))
    earliest = earliest_starts(instance, min_durations(instance, units))
    left = r.options.limit - (time.monotonic() - r.t0)
    affordable = int((left - MIN_SOLVE_S) * BUILD_NONZEROS_PER_S / (1 + HANDOVER[r.backend]))
    gridded = _choose_grid(r, start, units, hz, earliest, affordable)
    if isinstance(gridded, str):
        return gridded
    grid, grid_caps, warm_slots = gridded
    built = milp_model.build(
        instance, units, grid, r.names, grid_caps, earliest=earliest,
        cmax_floor=simple.get("makespan", 0.0),
    )  # fmt: skip
    if r.options.stop.is_set():  # the build does not look: seconds on a large model
        return INTERRUPTED_BUILT
    add_energy(instance, built, r.names)
    r.info["slot"], r.info["slots"], r.info["horizon"] = grid.length, grid.slots, grid.horizon
    r.info.update(built.sizes)  # type: ignore[typeddict-item]  # binaries, variables, rows
    r.info.update(built.notes)  # type: ignore[typeddict-item]  # precedence, no_start, pool_conservative
    exact_grid = _exact_grid(instance, grid, hz, built)
    r.info["exact_grid"] = exact_grid
    # the model's candidate groups may be a pruned subset of the admissible ones, or held
    # to stricter reservation rules than R10 (`groups.split_by_reservation`): then its
    # optimum, bound and infeasibility speak of that model only, and prove nothing
    split = split_by_reservation(instance, groups)
    r.info["groups_complete"], r.info["groups_split"] = complete, split
    warm = "no greedy" if start is None else set_warm(instance, built, start, warm_slots)
    r.info["warm_start"] = warm
    return _Model(units, grid, built, hz.caps, exact_grid, complete and not split, warm)


def _exact_grid(instance: Instance, grid: Grid, hz: Horizon, built: milp_model.Built) -> bool:
    """The grid holds the exact problem's optimum: slot length 1 (integer times and
    durations, so every exact schedule is on the grid), no horizon cut that could exclude
    optimal schedules (`Horizon.exact`), no conservative pool rows."""
    return (
        grid.length == 1
        and hz.exact
        and not built.notes.get("pool_conservative")
        # no preemption in the model (contract §8): no proof over schedules with segments
        and not instance.preemption.enabled
    )


def _without_the_model(
    r: _Run, start: Schedule | None, named: dict[str, tuple[float, str]], why: str
) -> Schedule:
    """The start (or nothing), with planner.bounds' bounds, when no model fits."""
    first = r.names[0]
    if first in named:  # as the model's path names it (`plan solve` prints the word)
        r.info["bound_by"] = {first: named[first][1]}
    return finish(
        r.instance, r.solver, r.names, None, start, proved=False, lower=_values(named) or None,
        info=r.info, t0=r.t0, why_none=why,
    )  # fmt: skip


def _lower_bound(
    r: _Run, m: _Model, st: _Stages, named: dict[str, tuple[float, str]]
) -> dict[str, float]:
    """`_valid_bounds`, and which ingredient gave the first objective's (`bound_by`)."""
    first = r.names[0]
    gvals = r.info.get("greedy_objective")
    gfirst = None if gvals is None else gvals[first]
    lower = _valid_bounds(
        r.instance, m.units, r.names, m.grid, st.bounds, _values(named), m.proof, m.sound,
        gfirst,
    )  # fmt: skip
    best = tightest(named.get(first), (lower[first], "milp")) if first in lower else None
    if best is not None:  # ties: the relaxation's ingredient, listed first
        r.info["bound_by"] = {first: best[1]}
    return lower


def _finish_milp(
    r: _Run, start: Schedule | None, m: _Model, st: _Stages, lower: dict[str, float]
) -> Schedule:
    """`exact.finish` on the last stage's schedule: "optimal" only when every stage was
    proved on a model whose optimum is a proof (module docstring)."""
    schedule = extract(r.instance, m.built) if st.chosen is not None else None
    first_status: StageStatus | NotRun = st.stages[0]["status"] if st.stages else NOT_RUN
    why_none = _why_none(st, first_status, m.proof_of_infeasibility)
    if st.chosen is not None and schedule is None:
        r.info["extract"] = why_none = "GPU index colouring failed"
    proved = (
        st.proved_all
        and m.proof
        and len(st.stages) == len(r.names)
        and all(s["status"] == "optimal" or s.get("proved") for s in st.stages)
    )
    out = finish(
        r.instance, r.solver, r.names, schedule, start, proved=proved, lower=lower or None,
        info=r.info, t0=r.t0, why_none=why_none,
        infeasible=first_status == "infeasible" and m.proof_of_infeasibility,
    )  # fmt: skip
    grid_optimum = st.proved_all and m.sound and not m.exact_grid  # a coarse grid the only gap
    if out.info.get("returned") == "milp" and grid_optimum:
        out = out.with_(info={**out.info, "optimal_on_grid": True})
    return out


def _why_none(st: _Stages, first_status: StageStatus | NotRun, proof: bool) -> str:
    """Why the model gave no schedule. "none" says nothing: the solver's own words do
    ("stopped: no solution better than the start", "some jobs have no start slot on this
    grid", its time-limit line). `proof`: the model's infeasibility is a proof."""
    if first_status == "infeasible" and not proof:  # said beside "none proved impossible"
        return "no MILP schedule (its model is infeasible, which proves nothing here)"
    said = st.stages[0].get("solver_says") if first_status == "none" else None
    return f"no MILP schedule ({said or first_status})"


def _on_the_exact_grid(r: _Run, out: Schedule, slot: int) -> Schedule:
    """No schedule on the grid of `--slots` (not one coarsened for size) and none from the
    start: the grid's rounded-up durations may be what misses a deadline (4 jobs, a
    deadline met with 1 s to spare: infeasible at slot 6, optimal at slot 1;
    tests/test_milp.py), so the time left goes to slot 1 (coarsened again if its model is
    too large to build in that time). Its answer replaces `out` when it has a schedule or
    proves there is none; else `out` says that it was tried."""
    left = r.options.limit - (time.monotonic() - r.t0)
    if left < 2 * MIN_SOLVE_S or r.options.stop.is_set():
        return out
    again = solve_milp(r.instance, replace(r.options, slot=1, time_limit=left))
    why = f"no schedule on the grid of slot {slot} and none from the start"
    refined = {"from_slot": slot, "to_slot": again.info.get("slot"), "reason": why}
    wall = time.monotonic() - r.t0
    if again.jobs or again.status == "infeasible":
        return again.with_(wall_s=wall, info={**again.info, "refined": refined})
    refined["found"] = f"nothing ({again.status})"
    stopped = {"interrupted": True} if again.info.get("interrupted") else {}
    return out.with_(wall_s=wall, info={**out.info, **stopped, "refined": refined})


_BY_TIME = ", the most that can be built in the time left"


def _choose_grid(
    r: _Run,
    start: Schedule | None,
    units: Sequence[milp_vars.StartUnit],
    hz: Horizon,
    earliest: dict[str, int],
    affordable: int,
) -> tuple[Grid, dict[str, int], dict[str, tuple[int, int]] | None] | str:
    """(grid, its end caps, the start on it), the slot length coarsened while the model
    would be too large, or take longer to build than the `affordable` nonzeros; or why no
    grid fits."""
    instance, options = r.instance, r.options
    max_nonzeros = min(milp_vars.MAX_NONZEROS, affordable)
    if max_nonzeros <= 0:
        return "no time left for the MILP model after the start (raise --time-limit)"
    length = slot_length(hz.length, options.slots, options.slot)
    first_length = length
    prev_slots: int | None = None
    while True:
        grid = make_grid(hz.length, length, options.slot is None)
        warm_slots = None if start is None else grid_starts(start, length)
        if warm_slots is not None:
            end = max((t * length + d for t, d in warm_slots.values()), default=0)
            if instance.horizon is None or end <= instance.horizon:
                grid = make_grid(max(hz.length, end), length, grid.auto)
        # The caps hold for exact schedules; on a coarser grid starts are rounded up (and
        # the start's shifted schedule may end later), so they would cut off every schedule.
        grid_caps = hz.caps if length == 1 else {}
        binaries, nonzeros = milp_vars.size_estimate(instance, units, grid, grid_caps, earliest)
        if binaries <= milp_vars.MAX_BINARIES and nonzeros <= max_nonzeros:
            break
        # Coarsening stops paying once the slot count no longer falls: the start, shifted
        # onto a coarser grid, ends later in proportion to the slot length.
        if grid.slots <= MIN_SLOTS or (prev_slots is not None and grid.slots >= prev_slots):
            return (
                f"time-indexed model of {binaries:,} binaries and {nonzeros:,} "
                f"nonzeros stays over the limits ({milp_vars.MAX_BINARIES:,}, "
                f"{max_nonzeros:,}{_BY_TIME if max_nonzeros < milp_vars.MAX_NONZEROS else ''}"
                f") at slot {length}"
            )
        prev_slots = grid.slots
        length *= 2
    if length != first_length:
        r.info["coarsened"] = {
            "from_slot": first_length,
            "to_slot": length,
            "reason": f"model over {milp_vars.MAX_BINARIES} binaries or "
            f"{max_nonzeros} nonzeros"
            f"{_BY_TIME if max_nonzeros < milp_vars.MAX_NONZEROS else ''}",
        }
    return grid, grid_caps, warm_slots


def _solve_stages(r: _Run, m: _Model) -> _Stages:
    """One solve per objective, each fixing the previous at its value; stops at the first
    stage without a solution, on Ctrl-C, or when the time is up."""
    st = _Stages()
    names, options, built, warm = r.names, r.options, m.built, m.warm == "used"
    r.proof, r.first_scale = m.proof, built.scales.get(names[0], 1.0)  # for report_solver
    for k, name in enumerate(names):
        if built.notes.get("no_start"):
            reason = "some jobs have no start slot on this grid"
            st.stages.append({"objective": name, "status": "none", "solver_says": reason})
            st.proved_all = False
            break
        remaining = options.limit - (time.monotonic() - r.t0)
        if k > 0 and (remaining < 1.0 or options.stop.is_set()):
            st.stages.append({"objective": name, "status": "skipped"})
            st.proved_all = False
            break
        built.prob.setObjective(built.objectives[name])
        budget = max(1.0, remaining / (len(names) - k))
        res: RunResult = run_backend(
            built.prob, r.backend, budget, options.workers, options.seed,
            warm or (k > 0 and st.chosen is not None), options.stop,
            r.report_solver if k == 0 else None,
        )  # fmt: skip
        st.interrupted = st.interrupted or res.interrupted
        scale = built.scales.get(name, 1.0)  # model units -> the metric's
        stage: StageInfo = {
            "objective": name,
            "status": res.status,
            "value": None if res.objective is None else res.objective * scale,
            "bound": None if res.bound is None else res.bound * scale,
            "seconds": round(res.seconds, 2),
            "solver_says": res.detail,
        }
        st.stages.append(stage)
        if res.status not in ("optimal", "feasible"):
            st.proved_all = False
            if st.chosen is not None:
                _restore(built, st.chosen)
            break
        st.chosen = _snapshot(built)
        proved = res.status == "optimal" or _integral_proof(r.instance, name, res)
        bound = res.bound
        if bound is not None and name in WEIGHTED and not _integral_weights(r.instance):
            # the backends' tolerances are absolute (SOLVER_ABS_TOL): a proof within a
            # relative 10^-6 of the shaved bound only (whole weights round, `_integral_proof`)
            bound -= SOLVER_ABS_TOL
            value = res.objective
            proved = proved and value is not None and value - bound <= 1e-6 * abs(value)
        stage["proved"] = proved
        if bound is not None and st.proved_all:
            st.bounds[name] = bound * scale
        st.proved_all = st.proved_all and proved
        if k + 1 < len(names):
            _fix(built, name, res.objective)
        if options.stop.is_set():
            if k + 1 < len(names):
                st.stages.append({"objective": names[k + 1], "status": "skipped"})
                st.proved_all = False
            break
    return st


# --- stages ----------------------------------------------------------------------------


def _snapshot(built: milp_model.Built) -> dict[str, float]:
    """Every variable's value in the current solution, so a failed later stage (whose
    solver may have overwritten the values) can restore it."""
    return {v.name: float(v.varValue or 0.0) for v in built.prob.variables()}


def _restore(built: milp_model.Built, saved: dict[str, float]) -> None:
    for v in built.prob.variables():
        v.varValue = saved.get(v.name, 0.0)


def _fix(built: milp_model.Built, name: str, value: float | None) -> None:
    """Keep stage `name` at (or below) the value just found while the next one is solved."""
    if value is None:
        value = pulp.value(built.objectives[name]) or 0.0
    tol = 1e-6 * max(1.0, abs(value))
    built.prob.addConstraint(
        pulp.LpConstraint(built.objectives[name], pulp.LpConstraintLE, f"fix_{name}", value + tol)
    )


# CBC's and HiGHS's tolerances are absolute (HiGHS's gap 1e-6; CBC returned a bound
# 2.7e-6 above a verified plan of 4.000000004): a weighted objective of fractional weights
# takes the solver's bound less this, in model units (tests/test_bounds.py)
SOLVER_ABS_TOL = 1e-5


def _integral_weights(instance: Instance) -> bool:
    return all(float(j.weight).is_integer() for j in instance.jobs)


def _integral_proof(instance: Instance, name: str, res: RunResult) -> bool:
    """An integral objective is optimal once its bound rounds up to the incumbent."""
    if res.objective is None or res.bound is None or name in ENERGY_OBJECTIVES:
        return False
    integral = name == "makespan" or _integral_weights(instance)
    return integral and math.ceil(res.bound - 1e-6) >= res.objective - 1e-6


def _valid_bounds(
    instance: Instance,
    units: Sequence[milp_vars.StartUnit],
    names: Sequence[str],
    grid: Grid,
    bounds: dict[str, float],
    simple: dict[str, float],
    proof: bool,
    complete: bool,
    start_first: float | None,
) -> dict[str, float]:
    """Valid bounds: planner.bounds' (`simple`), raised by the solver's when the model's
    bound is a proof (`proof`: exact grid and candidate groups), or for makespan by the
    grid bound less the rounding allowance when every admissible group was a candidate
    (`complete`)."""
    out: dict[str, float] = dict(simple)  # valid for every schedule, so for the optimum too
    first = names[0]
    if proof and first in bounds:  # a later stage's bound is conditional (module docstring)
        out[first] = max(out.get(first, -math.inf), bounds[first])
    elif complete and first == "makespan" and first in bounds and not instance.preemption.enabled:
        no_windows = not instance.reservations and all(j.deadline is None for j in instance.jobs)
        if no_windows:
            upper = min(bounds[first], grid.horizon)
            ub = start_first if start_first is not None else grid.horizon
            corrected = upper - rounding_allowance(units, grid.length, ub)
            out[first] = max(out[first], math.ceil(corrected - 1e-9))
    if first in out and first == "makespan":
        out[first] = float(math.ceil(out[first] - 1e-9))
    return out
