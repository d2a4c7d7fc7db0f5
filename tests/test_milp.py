"""The time-indexed MILP planner: optimal values on tiny instances (slot length 1) agree
with CP-SAT and with hand-computed optima, for every objective and both back ends; each
the grid, bound and fallback rules hold. Every schedule passes the verifier. The behavioural
scenarios (interleaving, reservations, pools, strict priority, multi-node jobs, deadlines)
and their hand-computed optima are in test_conformance.py, run over every solver.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from builders import make_instance, small_instance
from conftest import run_verified

from planner.instance import Instance, Job, NodeGroup
from planner.metrics import objective_values
from planner.read import read_instance
from planner.schedule import Schedule, SolveInfo, schedule_from_dict
from planner.solvers import SolveOptions
from planner.solvers.milp import solve_milp
from planner.solvers.options import Progress
from planner.verify import verify

BACKENDS = ["cbc", "highs"]
DATA = Path(__file__).parent / "data"
HAS_CPSAT = importlib.util.find_spec("planner.solvers.cpsat") is not None


def milp(inst: Instance, backend: str = "cbc", **kw: object) -> Schedule:
    return run_verified(inst, f"milp:{backend}", **kw)


def value(inst: Instance, s: Schedule, name: str) -> float:
    return objective_values(inst, s, [name])[name]


def tiny() -> Instance:
    """Five explicit-duration jobs on one 2-GPU node; releases, dues, weights, a chain."""
    jobs = [
        Job("a", 2, duration=4, weight=1.0, due=4),
        Job("b", 1, duration=3, weight=3.0, due=3),
        Job("c", 1, duration=5, release=1, weight=1.0, due=8),
        Job("d", 1, duration=2, weight=2.0, after=("b",), due=6),
        Job("e", 2, duration=1, release=2, weight=1.0, due=5),
    ]
    return make_instance(jobs, [NodeGroup("n", 1, 2)], priority_policy="none")


# Hand-checked optima of tiny() (CP-SAT agrees when present; `_tiny_by_every_order`
# enumerates them independently of the planner):
#   makespan 10: total GPU work is 2*4 + 3 + 5 + 2 + 2*1 = 20 on 2 GPUs.
#   total weighted JCT 40: b [0,3), c [1,6), d [3,5), e [6,7), a [7,11): weights x ends
#   9 + 6 + 10 + 7 + 11 = 43, less weights x releases 1 + 2 = 3.
#   total weighted tardiness 9.
TINY_OPT = {"makespan": 10.0, "total_weighted_jct": 40.0, "total_weighted_tardiness": 9.0}


def _tiny_by_every_order() -> dict[str, float]:
    """The optima of tiny() over every serial schedule: each job in turn at its earliest
    start (release, predecessors, at most 2 GPUs busy at any time), over every order that
    keeps b before d. For a regular objective some order gives an optimal schedule."""
    import itertools

    jobs = tiny().jobs
    best: dict[str, float] = {}
    for order in itertools.permutations(jobs):
        if [j.id for j in order].index("b") > [j.id for j in order].index("d"):
            continue
        busy, end = [0] * 64, {}
        for j in order:
            assert j.duration is not None
            t = max([j.release, *(end[p] for p in j.after)])
            while any(busy[u] + j.gpus > 2 for u in range(t, t + j.duration)):
                t += 1
            for u in range(t, t + j.duration):
                busy[u] += j.gpus
            end[j.id] = t + j.duration
        got = {
            "makespan": max(end.values()),
            "total_weighted_jct": sum(j.weight * (end[j.id] - j.release) for j in jobs),
            "total_weighted_tardiness": sum(
                j.weight * max(0, end[j.id] - (j.due or 0)) for j in jobs
            ),
        }
        best = {k: min(best.get(k, v), v) for k, v in got.items()}
    return best


def test_tiny_optima_by_every_order() -> None:
    assert _tiny_by_every_order() == TINY_OPT


OBJECTIVES = [
    ("makespan",),
    ("total_weighted_jct",),
    ("total_weighted_tardiness",),
    ("makespan", "total_weighted_jct"),
]


@pytest.mark.parametrize("objective", OBJECTIVES, ids=lambda o: "+".join(o))
@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_optimum_matches_reference(backend: str, objective: tuple[str, ...]) -> None:
    inst = tiny()
    s = milp(inst, backend, objective=objective)
    assert s.status == "optimal", s.info
    assert s.info["slot"] == 1
    got = objective_values(inst, s, objective)
    if HAS_CPSAT:
        from planner.solvers.cpsat import solve_cpsat

        ref = solve_cpsat(inst, SolveOptions(time_limit=10.0, objective=objective))
        assert ref.status == "optimal"
        assert verify(inst, ref) == []
        want = objective_values(inst, ref, objective)
        assert got == pytest.approx(want)
    if objective[0] in TINY_OPT:
        assert got[objective[0]] == TINY_OPT[objective[0]]
    # the bound of a proved first objective equals its value
    assert s.lower_bound is not None
    assert s.lower_bound[objective[0]] == pytest.approx(got[objective[0]])


@pytest.mark.parametrize("workers", ["1", "3"])
def test_highs_solves_whatever_the_workers(tmp_path: Path, workers: str) -> None:
    # HiGHS sets up its thread pool once per process: asked for another count than the
    # bound LPs had run it with, it stopped at once ("Not Set") and the greedy start came
    # back, with --workers 1, 3 or 4. A fresh process, as a user runs it.
    if "highs" not in BACKENDS:
        pytest.skip("highspy is not installed")
    data = Path(__file__).parent / "data" / "bench" / "tiny-dl.json"
    out = tmp_path / "s.json"
    args = ["solve", str(data), "--solver", "milp:highs", "--time-limit", "3", "--workers"]
    done = subprocess.run(
        [sys.executable, "-m", "planner", *args, workers, "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert [st["solver_says"] for st in doc["info"]["stages"]] == ["Optimal"]
    assert verify(read_instance(data), schedule_from_dict(doc)) == []


def test_lexicographic_second_stage_improves_on_tie() -> None:
    inst = tiny()
    first = milp(inst, objective=("makespan",))
    lex = milp(inst, objective=("makespan", "total_weighted_jct"))
    assert value(inst, lex, "makespan") == value(inst, first, "makespan")
    assert value(inst, lex, "total_weighted_jct") <= value(inst, first, "total_weighted_jct")
    assert [st["objective"] for st in lex.info["stages"]] == ["makespan", "total_weighted_jct"]


# --- grid, bound, fallback, stop ---------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_schedule_on_the_default_grid_is_solved_again_on_slot_1(backend: str) -> None:
    """j1 (1,009 s from 3) must end by 1,033 and j2 (23 s, higher priority) goes first:
    every start rule misses the deadline, and the default grid (slot 6) rounds the
    durations up past it. Optimal makespan 1,146 = 23 + 1,009 + 101 + 13 (one 4-GPU node:
    j2, j1, then j0 and j3; CP-SAT agrees)."""
    inst = read_instance(DATA / "milp-deadline-off-grid.json")
    reports: list[Progress] = []
    s = milp(inst, backend, time_limit=20, progress=reports.append)
    assert s.status == "optimal" and value(inst, s, "makespan") == 1146, s.info
    assert s.info["refined"]["from_slot"] > 1 and s.info["slot"] == 1
    # the display ends on the answer's bound (the first solve's was 1,071)
    assert [(p.message, p.bound) for p in reports[-1:]] == [("done", 1146)]


def test_a_second_solve_stopped_early_leaves_the_first_answer_saying_so() -> None:
    """Ctrl-C as the slot-1 solve starts: the first answer ("unknown") is kept, with the
    whole run's time, the interruption and what the second solve found."""
    inst = read_instance(DATA / "milp-deadline-off-grid.json")
    reports: list[Progress] = []
    options = SolveOptions(time_limit=20, progress=reports.append)

    stopped_at: list[float] = []

    def stop_at_the_second_start(p: Progress) -> None:
        reports.append(p)
        if [q.message for q in reports].count("greedy start") == 2 and not stopped_at:
            stopped_at.append(time.monotonic() - t0)
            options.stop.set()

    options = dataclasses.replace(options, progress=stop_at_the_second_start)
    t0 = time.monotonic()
    s = solve_milp(inst, options)
    assert verify(inst, s) == [] and s.status == "unknown" and s.info["interrupted"]
    assert s.info["refined"]["found"].startswith("nothing") and s.info["slot"] > 1
    assert s.wall_s >= stopped_at[0] and reports[-1].message == "done"

    inst = tiny()
    exact = milp(inst, objective=("makespan",))
    coarse = milp(inst, objective=("makespan",), slot=3)
    assert coarse.info["slot"] == 3
    assert coarse.info["exact_grid"] is False
    assert coarse.lower_bound is not None
    # the grid optimum alone never makes it "optimal"; meeting a valid bound does
    if coarse.status == "optimal":
        assert coarse.info.get("optimal_by_bound")
        assert value(inst, coarse, "makespan") == coarse.lower_bound["makespan"]
    else:
        assert coarse.status == "feasible"
    assert coarse.lower_bound["makespan"] <= value(inst, exact, "makespan")
    # never worse than the greedy start
    assert value(inst, coarse, "makespan") <= coarse.info["greedy_objective"]["makespan"]


def test_all_features_instance_gives_a_valid_schedule() -> None:
    inst = small_instance()
    for backend in BACKENDS:
        s = milp(inst, backend, time_limit=5.0)
        assert s.status in ("optimal", "feasible")
        assert s.info["returned"] in ("milp", "greedy")
        greedy = s.info["greedy_objective"]
        for name, v in objective_values(inst, s, inst.objective).items():
            assert v <= greedy[name] + 1e-6


def test_stop_already_set_still_returns_a_schedule() -> None:
    inst = tiny()
    stop = threading.Event()
    stop.set()
    s = milp(inst, stop=stop, objective=("makespan", "total_weighted_jct"))
    assert s.info.get("interrupted") is True
    assert s.status in ("optimal", "feasible")
    assert len(s.jobs) == len(inst.jobs)


def test_progress_is_reported_at_start_and_end() -> None:
    seen = []
    milp(tiny(), objective=("makespan",), progress=seen.append)
    assert len(seen) >= 2
    assert seen[0].incumbent is not None and seen[-1].message == "done"
    assert seen[-1].incumbent == 10


def test_model_too_large_for_any_grid_returns_greedy_with_reason() -> None:
    """muri-testbed-100: coarsening cannot bring the time-indexed model under its size
    limits (the shifted greedy start grows with the slot), so the MILP says so and hands
    back the greedy plan instead of looping."""
    from pathlib import Path

    from planner.read import read_instance
    from planner.solvers import SolveOptions
    from planner.verify import verify

    inst = read_instance(
        Path(__file__).resolve().parent.parent / "instances" / "muri-testbed-100.json"
    )
    # 10 s: the start portfolio alone takes 3.5-4 s here, so at 5 s a slow moment left no
    # time for any model ("no time left ..."), and the test failed once in CI
    s = solve_milp(inst, SolveOptions(time_limit=10))
    assert s.status == "feasible" and s.info["returned"] == "greedy"
    assert "stays over the limits" in s.info["reason"]
    assert verify(inst, s) == []


def test_milp_reason_reaches_plan_solve_output(tmp_path: Path) -> None:
    """The MILP states why it returned its start under `reason`, the key `plan solve`
    shows (it used to be `why`, which no reader looked at). The limit leaves room for the
    start on a loaded machine (with 10 s a CI run beside other work found no time left
    for the model, another reason); the model is refused by size at once either way."""
    from click.testing import CliRunner

    from planner.cli import main
    from planner.read import read_instance
    from planner.schedule import schedule_from_dict

    path = Path(__file__).resolve().parent.parent / "instances" / "muri-testbed-100.json"
    out = tmp_path / "s.json"
    args = ["solve", str(path), "--solver", "milp", "--time-limit", "30", "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "stays over the limits" in " ".join(r.stdout.split())
    s = schedule_from_dict(json.loads(out.read_text()))
    assert s.info["returned"] == "greedy"
    assert verify(read_instance(path), s) == []


def test_no_time_for_the_model_returns_the_start_with_reason() -> None:
    """Model building and the start count against the limit: with no time left after the
    start the MILP is not built, and the start comes back "feasible" saying why."""
    from planner.read import read_instance

    inst = read_instance(
        Path(__file__).resolve().parent.parent / "instances" / "bench" / "gen-mixed-25j-4n-s3.json"
    )
    s = solve_milp(inst, SolveOptions(time_limit=0.01))
    assert s.status == "feasible" and s.info["returned"] == "greedy"
    assert "no time left for the MILP model" in s.info["reason"]
    assert verify(inst, s) == []
    # the bound it returns is named, as on every other path (it was not on this one)
    (name,) = inst.objective
    assert s.lower_bound is not None and s.info["bound_by"][name] in ("path", "wspt", "lp")


def test_highs_stage_keeps_to_the_time_limit() -> None:
    """HiGHS's presolve cannot be interrupted: its enumeration rule alone took 14 s on this
    instance's 445,798-nonzero model with a 9 s limit (the stage ran 15 s, the solve 17 s),
    so `backends.PRESOLVE_RULES_OFF` switches it off. Not a speed
    target: the stage must merely end within the limit it was given, give or take the
    second HiGHS may take after it stops (README, "What we chose where the contract is
    silent")."""
    if "highs" not in BACKENDS:
        pytest.skip("highspy is not installed")
    inst = read_instance(
        Path(__file__).resolve().parent.parent / "instances" / "bench" / "gen-mixed-25j-4n-s3.json"
    )
    s = milp(inst, "highs", time_limit=9.0)
    (stage,) = s.info["stages"]
    assert stage["seconds"] <= 9.0 + 1.5, stage


def test_best_start_with_time_for_every_rule_keeps_the_first_best() -> None:
    """The start portfolio tries the default rule first but, given time for all, returns
    what the rules in their own order would: the best, ties to the earlier rule."""
    from planner.metrics import strictly_better
    from planner.read import read_instance
    from planner.solvers.exact import OBJECTIVE_TOL, best_start, start_rules, values
    from planner.solvers.greedy import solve_greedy

    inst = read_instance(Path(__file__).resolve().parent.parent / "instances" / "demo.json")
    names = tuple(inst.objective)
    best: Schedule | None = None
    for rule in start_rules(inst):
        s = solve_greedy(inst, rule, SolveOptions())
        assert verify(inst, s) == []
        if best is None or strictly_better(
            values(inst, s, names), values(inst, best, names), OBJECTIVE_TOL
        ):
            best = s
    info: SolveInfo = {}
    got = best_start(inst, SolveOptions(time_limit=600), info)
    assert best is not None and got is not None and got.solver == best.solver
    assert verify(inst, got) == []
    assert info["greedy_solver"] == got.solver and "start_errors" not in info
    assert info["greedy_objective"] == objective_values(inst, got, names)


@pytest.mark.parametrize("spec", ["cpsat", "milp:cbc", "milp:highs"])
def test_a_start_rule_that_fails_is_reported_and_the_others_still_start(
    monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    """A bug in one greedy rule costs the exact solver that start, and says so in
    `info.start_errors` instead of passing unnoticed."""
    from planner.solvers import exact

    real = exact.solve_greedy

    def failing_sjf(
        instance: Instance, rule: str | None, options: SolveOptions, **kw: bool
    ) -> Schedule:
        if rule == "sjf":
            raise KeyError("j3")
        return real(instance, rule, options, **kw)

    monkeypatch.setattr(exact, "solve_greedy", failing_sjf)
    inst = small_instance()
    s = run_verified(inst, spec, time_limit=10.0, workers=2)
    assert s.info["start_errors"] == {"sjf": "KeyError: 'j3'"}
    assert s.info["greedy_solver"] not in ("", "greedy:sjf")
    assert s.status in ("optimal", "feasible") and len(s.jobs) == len(inst.jobs)


def test_highs_reports_the_value_of_the_solution_it_returns() -> None:
    """Warm-started on a model its presolve solves outright, HiGHS 1.16 reported the
    objective and bound 5 for a solution of value 13 ("optimal" with a bound below the
    plan; on a 7-job instance it cut the search off and returned a worse plan as
    optimal). Such a report is not taken: HiGHS runs again without the warm start."""
    from planner.read import instance_from_dict

    doc = {
        "version": 1,
        "name": "presolved",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n0", "count": 1, "gpus": 2}], "pools": {"power_kw": 5}},
        "policy": {"priority": "none"},
        "objective": ["total_weighted_jct"],
        "jobs": [
            {"id": "j4", "duration": 2, "gpus": 1},
            {"id": "j5", "duration": 1, "gpus": 0, "after": ["j4"], "demand": {"power_kw": 3}},
            {"id": "j6", "model": "gpt2", "gpus": [2, 1], "iterations": 10,
             "demand": {"power_kw": 3}},
        ],
    }  # fmt: skip
    inst = instance_from_dict(doc)
    s = run_verified(inst, "milp:highs", time_limit=10.0, workers=2)
    value = objective_values(inst, s, ("total_weighted_jct",))["total_weighted_jct"]
    assert value == 13.0  # CP-SAT's and CBC's proved optimum
    assert s.status == "optimal" and s.lower_bound == {"total_weighted_jct": 13.0}
    assert [st["value"] for st in s.info["stages"]] == [13.0]


def test_a_highs_report_that_is_not_its_solutions_is_not_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm run's report is off (as HiGHS 1.16's was): a second run without the warm
    start is taken, or, without time for one, the solution at its own value, unproved.
    The objective's constant term, which PuLP does not pass to HiGHS, is no mismatch."""
    import dataclasses

    import pulp

    from planner.solvers.milp import backends

    prob = pulp.LpProblem("p", pulp.LpMinimize)
    x = prob.add_variable("x", lowBound=0, upBound=3, cat=pulp.LpInteger)
    prob += 2 * x + 1
    prob += x >= 2
    real = backends._highs_once
    warm_runs: list[bool] = []

    def off_when_warm(*args: object) -> backends.RunResult:
        r = real(*args)  # type: ignore[arg-type]
        warm_runs.append(bool(args[3]))
        return dataclasses.replace(r, objective=1.0, bound=1.0) if args[3] else r

    monkeypatch.setattr(backends, "_highs_once", off_when_warm)
    r = backends.run_backend(prob, "highs", 5.0, 1, 0, True, threading.Event(), None)
    assert warm_runs == [True, False]
    assert (r.status, r.objective, r.bound) == ("optimal", 4.0, 4.0)
    warm_runs.clear()
    r = backends.run_backend(prob, "highs", 0.5, 1, 0, True, threading.Event(), None)
    assert warm_runs == [True] and (r.status, r.objective, r.bound) == ("feasible", 4.0, None)
    assert x.varValue == 2.0
    # a second run whose solution is worse: the first solution, with the second's bound
    x.varValue = None
    worse = backends.RunResult("feasible", 6.0, 3.0, False, 0.1, "Time limit reached")

    def worse_when_cold(*args: object) -> backends.RunResult:
        r = real(*args)  # type: ignore[arg-type]
        if args[3]:
            return dataclasses.replace(r, objective=1.0, bound=1.0)
        x.varValue = 3.0  # value 2 * 3 = 6, as reported
        return worse

    monkeypatch.setattr(backends, "_highs_once", worse_when_cold)
    r = backends.run_backend(prob, "highs", 5.0, 1, 0, True, threading.Event(), None)
    assert (r.status, r.objective, r.bound) == ("feasible", 4.0, 3.0) and x.varValue == 2.0
    monkeypatch.setattr(backends, "_highs_once", off_when_warm)
    warm_runs.clear()  # a true report is taken as it is
    r = backends.run_backend(prob, "highs", 5.0, 1, 0, False, threading.Event(), None)
    assert warm_runs == [False] and (r.status, r.objective, r.bound) == ("optimal", 4.0, 4.0)


_FAKE_CBC = """
import signal, sys, time
asked, obeys, lines = sys.argv[1], sys.argv[2] == "obeys", sys.argv[3:]
def on_sigint(*_):
    with open(asked, "a") as f:
        f.write("x")
    if obeys:
        sys.exit(0)
signal.signal(signal.SIGINT, on_sigint)
for line in lines:
    print(line, flush=True)
for _ in range(300):  # a root that outlasts the limit, as la01 imported at 5 s did
    time.sleep(0.1)
"""
_BANNER = "Welcome to the CBC MILP Solver"
_START = "Cbc0045I MIPStart provided solution with cost 800"
_KILLED = "stopped: no solution better than the start"


@pytest.mark.parametrize(
    "lines, killed",
    [
        ([_BANNER, _START, "Cbc0012I Integer solution of 800 found by Reduced search"], True),
        ([_BANNER, _START], True),
        # a better solution: asked to stop (SIGINT) and given the time to write it
        ([_BANNER, _START, "Cbc0012I Integer solution of 700 found by DiveCoefficient"], False),
        # in branch and bound: SIGINT stops it with its bound
        ([_BANNER, _START, "Cbc0010I After 0 nodes, 1 on tree, 800 best solution"], False),
        # a log not seen to be line-buffered (a static CBC that stdbuf cannot reach)
        ([], False),
    ],
)
def test_cbc_over_its_limit_is_killed_when_it_has_nothing_to_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], killed: bool
) -> None:
    """Past the limit, a CBC whose log shows nothing better than the warm start and no
    branch and bound is killed at once (the caller keeps the start); otherwise it is asked
    to stop, as before."""
    import pulp
    from pulp.apis.coin_api import PULP_CBC_CMD

    from planner.solvers.milp import backends

    asked = tmp_path / "asked"
    script = tmp_path / "fake_cbc.py"
    script.write_text(_FAKE_CBC)
    fake = tmp_path / "cbc"
    quoted = " ".join(f"'{x}'" for x in lines)
    obeys = "ignores" if killed else "obeys"
    fake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "{asked}" {obeys} {quoted}\n')
    fake.chmod(0o755)
    monkeypatch.setattr(PULP_CBC_CMD, "pulp_cbc_path", str(fake))
    prob = pulp.LpProblem("p", pulp.LpMinimize)
    x = prob.add_variable("x", lowBound=0, upBound=3, cat=pulp.LpInteger)
    prob += x
    r = backends.run_backend(prob, "cbc", 0.0, 1, 0, False, threading.Event(), None)
    assert r.status == "none"
    if killed:  # nothing to wait for
        assert not asked.exists() and r.detail == _KILLED
    else:
        assert asked.read_text() == "x" and r.detail != _KILLED


def test_a_milp_without_a_schedule_says_why_in_the_solvers_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first stage that ends with no solution (status "none", as when CBC is stopped
    with nothing better than the start) gives the start back with the solver's own words
    as the reason, not the bare status."""
    from planner.solvers.milp import backends
    from planner.solvers.milp import solve as milp_solve

    def stopped(*args: object, **kw: object) -> backends.RunResult:
        return backends.RunResult("none", None, None, True, 0.1, _KILLED)

    monkeypatch.setattr(milp_solve, "run_backend", stopped)
    inst = small_instance()
    s = run_verified(inst, "milp:cbc", time_limit=10.0)
    assert s.info["returned"] == "greedy" and s.status == "feasible"
    assert s.info["reason"] == f"no MILP schedule ({_KILLED})"


def test_the_exact_solvers_start_computes_no_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The start portfolio's greedy plans carry no lower bounds: the exact solver computes
    them once for its answer (README "What we chose where the contract is silent")."""
    import planner.solvers.greedy.solve as greedy_solve
    from planner.solvers import exact

    calls = 0
    real = greedy_solve.with_bounds

    def counted(*args: object, **kw: object) -> Schedule:
        nonlocal calls
        calls += 1
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(greedy_solve, "with_bounds", counted)
    inst = small_instance()
    info: SolveInfo = {}
    start = exact.best_start(inst, SolveOptions(time_limit=10.0), info)
    assert start is not None and start.lower_bound is None and calls == 0
    assert verify(inst, start) == [] and info["greedy_solver"].startswith("greedy")
    s = run_verified(inst, "cpsat", time_limit=5.0, workers=2)
    assert s.lower_bound is not None  # the answer has its bound


def test_a_stop_during_the_start_ends_it_after_the_first_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C while the exact solvers' start portfolio runs: the first greedy plan (the
    answer of last resort) is made and kept, no further rule is started."""
    from planner.solvers import exact

    ran: list[str | None] = []
    real = exact.solve_greedy

    def recorded(inst: Instance, rule: str | None, options: SolveOptions, **kw: bool) -> Schedule:
        ran.append(rule)
        return real(inst, rule, options, **kw)

    monkeypatch.setattr(exact, "solve_greedy", recorded)
    inst = small_instance()
    stopped = SolveOptions(time_limit=60.0)
    stopped.stop.set()
    info: SolveInfo = {}
    start = exact.best_start(inst, stopped, info)
    assert start is not None and verify(inst, start) == [] and len(ran) == 1
    ran.clear()
    exact.best_start(inst, SolveOptions(time_limit=60.0), {})
    assert len(ran) > 1  # without a stop the portfolio goes on


@pytest.mark.parametrize("backend", ["cbc", "highs"])
@pytest.mark.parametrize("when", ["before", "during", "after"])
def test_a_stop_at_the_model_build_hands_nothing_to_the_back_end(
    monkeypatch: pytest.MonkeyPatch, backend: str, when: str
) -> None:
    """Ctrl-C after the start or while the model was built: the model was still built
    and handed over (PuLP's MPS file for CBC: 9 s on 300 jobs), 16-32 s in all before the
    start was returned. Now nothing is handed to the back end and the start answers."""
    from planner.solvers.milp import backends
    from planner.solvers.milp import solve as milp_solve

    inst = small_instance()
    options = SolveOptions(time_limit=60.0, milp_backend=backend)
    built: list[int] = []
    real_build, real_best = milp_solve.milp_model.build, milp_solve.best_start

    def build(*args: object, **kw: object) -> object:
        built.append(1)
        if when == "during":
            options.stop.set()  # the signal comes while the model is built
        return real_build(*args, **kw)  # type: ignore[arg-type]

    def best_start(*args: object, **kw: object) -> object:
        start = real_best(*args, **kw)  # type: ignore[arg-type]
        if when == "before":
            options.stop.set()  # the signal comes once the start is made
        return start

    real_warm = milp_solve.set_warm

    def set_warm(*args: object, **kw: object) -> object:
        if when == "after":
            options.stop.set()  # the signal comes once the model is built and warmed
        return real_warm(*args, **kw)  # type: ignore[arg-type]

    handed: list[str] = []
    monkeypatch.setattr(milp_solve, "set_warm", set_warm)
    monkeypatch.setattr(milp_solve.milp_model, "build", build)
    monkeypatch.setattr(milp_solve, "best_start", best_start)
    monkeypatch.setattr(backends, "_write_model", lambda *a, **k: handed.append("cbc") or None)
    monkeypatch.setattr(backends, "_highs_once", lambda *a, **k: handed.append("highs") or None)
    s = solve_milp(inst, options)
    assert s.info.get("interrupted") is True and handed == []
    assert built == ([] if when == "before" else [1])
    assert s.info.get("stages") if when == "after" else not s.info.get("stages")
    assert s.status == "feasible" and verify(inst, s) == [] and len(s.jobs) == len(inst.jobs)


@pytest.mark.parametrize("spec", ["milp:cbc", "milp:highs", "cpsat"])
def test_a_later_objectives_bound_holds_for_every_schedule(spec: str) -> None:
    # tests/data/lexicographic-bound.json (plan generate --family rcpsp --jobs 8 --nodes 3
    # --seed 63522, node speeds changed, prices added), makespan then weighted JCT: the
    # exact models prove makespan 28 and JCT 124 among the plans of makespan 28; the MILP
    # gave 124 as the JCT's bound, above greedy's verified 103 (makespan 30), and CP-SAT
    # gave the JCT none
    inst = read_instance(Path(__file__).parent / "data" / "lexicographic-bound.json")
    names = ("makespan", "total_weighted_jct")
    s = run_verified(inst, spec, time_limit=10)
    greedy = run_verified(inst, "greedy:srsf")
    assert s.status == "optimal" and value(inst, s, "makespan") < value(inst, greedy, "makespan")
    assert value(inst, greedy, names[1]) < value(inst, s, names[1])  # the case at hand
    assert s.lower_bound is not None and set(s.lower_bound) == set(names)
    for schedule in (s, greedy):
        for name in names:
            assert s.lower_bound[name] <= value(inst, schedule, name) + 1e-6, name


@pytest.mark.parametrize("backend", ["cbc", "highs"])
def test_the_milp_is_never_worse_than_its_start_even_within_its_tolerance(backend: str) -> None:
    # b is released at 2,592,001,000 ms and lasts 464: the start ends it at once, while
    # the model's coarse grid started it at its next slot, 600 ms later, which passed as
    # no worse (relative 2.3e-7, within the 1e-6 that "optimal" allows)
    jobs = [Job("a", 1, duration=1), Job("b", 1, duration=464, release=2_592_001_000)]
    inst = make_instance(jobs, [NodeGroup("n", 1, 1)], objective=("makespan",), time_unit="ms")
    s = run_verified(inst, "milp", time_limit=5.0, milp_backend=backend)
    assert objective_values(inst, s, ["makespan"])["makespan"] == 2_592_001_464


@pytest.mark.parametrize("names", [("makespan",), ("makespan", "total_weighted_jct")])
def test_a_fractional_cbc_answer_is_solved_again_without_preprocessing(
    names: tuple[str, ...],
) -> None:
    # tests/data/cbc-fractional-answer.json (plan generate --family rcpsp --jobs 10 --nodes 1
    # --seed 4): from the greedy start (makespan 25, optimal: CP-SAT and HiGHS prove it), CBC
    # 2.10.3's postprocessing gave back start variables of 0.5 as "Optimal", makespan 21;
    # the model's schedule lacked job a7, the start was returned as a planner bug's, and
    # with a second objective its stage fixed makespan <= 21 and came back infeasible
    inst = read_instance(DATA / "cbc-fractional-answer.json")
    s = run_verified(inst, "milp:cbc", time_limit=20.0, objective=names)
    assert s.status == "optimal" and s.info.get("returned") == "milp", s.info
    assert value(inst, s, "makespan") == 25
    first = s.info["stages"][0]
    assert first["value"] == 25 and "without preprocessing" in first["solver_says"]
