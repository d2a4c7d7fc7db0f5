"""Anytime improvement (planner.solvers.improve): never worse than the greedy start, every
incumbent verified, deterministic for a seed, stops on the time limit and on Ctrl-C."""

from __future__ import annotations

import threading
from functools import cache

from planner.generate import generate
from planner.instance import Instance
from planner.metrics import objective_values
from planner.read import instance_from_dict
from planner.solvers import Progress, SolveOptions
from planner.solvers.greedy import solve_greedy
from planner.solvers.improve import improve
from planner.verify import verify


@cache
def inst(family: str, jobs: int, nodes: int, seed: int) -> Instance:
    return instance_from_dict(generate(family, jobs, nodes, seed))


def value(i: Instance, s) -> list[float]:
    names = list(i.objective)
    ov = objective_values(i, s, names)
    return [ov[n] for n in names]


def test_never_worse_every_incumbent_verified():
    for i in (inst("dl", 400, 6, 1), inst("mixed", 300, 5, 2)):
        start = solve_greedy(i, None, SolveOptions())
        seen = []

        def on_incumbent(s, i=i, seen=seen):
            assert s.status == "feasible"
            assert verify(i, s) == []
            seen.append(value(i, s))

        s = improve(i, SolveOptions(seed=3), start=start, max_samples=14, on_incumbent=on_incumbent)
        assert verify(i, s) == []
        assert seen[0] == value(i, start)
        assert seen == sorted(seen, reverse=True)  # strictly better each time
        assert value(i, s) == seen[-1] <= value(i, start)
        assert s.info["improve"]["samples"] == 14
        assert s.lower_bound is not None


def test_improves_a_dl_instance():
    # The static-rule portfolio alone beats the default rule here (sjf with groups).
    i = inst("dl", 2000, 32, 1)
    s = improve(i, SolveOptions(seed=0), max_samples=4)
    assert value(i, s) < [s.info["improve"]["start_objective"]]
    assert s.solver.endswith("+improve")
    assert verify(i, s) == []


def test_deterministic_for_a_seed():
    i = inst("dl", 400, 6, 4)
    a = improve(i, SolveOptions(seed=7), max_samples=16)
    b = improve(i, SolveOptions(seed=7), max_samples=16)
    assert (a.jobs, a.groups) == (b.jobs, b.groups)
    assert verify(i, a) == []


def test_time_limit_and_stop():
    i = inst("dl", 400, 6, 5)
    start = solve_greedy(i, None, SolveOptions())
    assert verify(i, start) == []
    # A zero limit or a Ctrl-C before the first sample returns the start plan.
    s = improve(i, SolveOptions(time_limit=0.0), start=start)
    assert s.info["improve"]["samples"] == 0 and s.jobs == start.jobs
    stop = threading.Event()
    stop.set()
    s = improve(i, SolveOptions(time_limit=60.0, stop=stop), start=start)
    assert s.info["improve"]["samples"] == 0 and s.info["improve"]["stopped"] == "interrupted"
    # A small limit ends the search after a bounded number of samples (not timed tightly:
    # the machine is shared), with progress reported.
    seen: list[Progress] = []
    s = improve(i, SolveOptions(time_limit=0.5, progress=seen.append), start=start)
    # the limit ends it (a generous guard for a shared machine, not a speed target)
    assert s.info["improve"]["stopped"] == "limit" and s.wall_s < 30
    assert seen and seen[0].message == "greedy start"
    assert verify(i, s) == []
