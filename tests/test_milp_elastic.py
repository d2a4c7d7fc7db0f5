"""The time-indexed MILP with elastic GPU counts and energy objectives (contract §12).

Every expected number is derived by hand in the test's docstring from the profile PROF:
a job of 1000 iterations runs 100 s at 2 GPUs (100 ms per iteration) or 60 s at 4 (60 ms).
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_instance, profile

from planner.instance import Instance, Job, NodeGroup, PriceInterval
from planner.metrics import metrics
from planner.solvers.milp.horizon import kwh_caps
from planner.solvers.milp.variables import build_units

PROF = profile("m", {2: (100.0, 0.0, 100.0, 0.0), 4: (60.0, 0.0, 60.0, 0.0)})
KWH = 1000 / 3.6e9  # kWh per watt-second (time unit 1 s)
BACKENDS = ["milp:cbc", "milp:highs"]
# night is cheap: price 1.0 on [0, 100), 0.1 on [100, 1000), 1.0 on [1000, 100000)
DAY_NIGHT = (
    PriceInterval(0, 100, 1.0),
    PriceInterval(100, 1000, 0.1),
    PriceInterval(1000, 10**5, 1.0),
)


def _jobs(n: int, counts: tuple[int, ...] = (2, 4), iterations: int = 1000) -> list[Job]:
    return [
        Job(f"j{i}", counts[0], model="m", iterations=iterations, gpu_counts=counts)
        for i in range(n)
    ]


def _inst(jobs: list[Job], idle: float = 0.0, **kw: Any) -> Instance:
    node = NodeGroup("n", 1, 4, gpu_idle_w=idle, gpu_busy_w=100.0)
    return make_instance(jobs, [node], [PROF], time_unit="s", **kw)


@pytest.mark.parametrize("spec", BACKENDS)
def test_a_queue_makes_the_smaller_count_pay(solve_verified: Any, spec: str) -> None:
    """Four jobs on one 4-GPU node, makespan. At 4 GPUs they run one at a time: 4 x 60 =
    240. At 2 GPUs two run side by side: 2 x 100 = 200; mixing counts leaves GPUs idle or
    adds a 60 to a 100 chain (at least 220). The optimum, 200, needs every job at 2."""
    inst = _inst(_jobs(4, counts=(4, 2)))  # 4 listed first: the default count loses
    s = solve_verified(inst, spec, time_limit=20, objective=("makespan",))
    assert metrics(inst, s)["makespan"] == 200
    assert all(a.gpus == 2 for a in s.jobs)
    assert s.status == "optimal"
    assert s.info["returned"] == "milp"


@pytest.mark.parametrize("spec", BACKENDS)
def test_an_idle_cluster_makes_the_larger_count_pay(solve_verified: Any, spec: str) -> None:
    """One job alone: 60 s at 4 GPUs beats 100 s at 2 (total_weighted_jct 60)."""
    inst = _inst(_jobs(1))
    s = solve_verified(inst, spec, time_limit=20)
    assert metrics(inst, s)["total_weighted_jct"] == 60
    assert s.jobs[0].gpus == 4
    assert s.status == "optimal"


@pytest.mark.parametrize("spec", BACKENDS)
def test_energy_cost_starts_in_the_cheap_night(solve_verified: Any, spec: str) -> None:
    """One job, no idle draw: inside [100, 1000) it costs 2 GPUs x 100 W x 100 s x 0.1 =
    2000 W s at 2 GPUs, 4 x 100 x 60 x 0.1 = 2400 at 4; any part outside pays 1.0. The
    optimum runs at 2 GPUs within the night; greedy starts at 0 (cost > 2000)."""
    inst = _inst(_jobs(1), power_price=DAY_NIGHT, horizon=2000, objective=("energy_cost",))
    s = solve_verified(inst, spec, time_limit=20, objective=("energy_cost",))
    assert metrics(inst, s)["energy_cost"] == pytest.approx(2000 * KWH)
    assert s.jobs[0].start >= 100 and s.jobs[0].end <= 1000
    assert s.jobs[0].gpus == 2
    assert s.info["returned"] == "milp"


@pytest.mark.parametrize("spec", BACKENDS)
def test_idle_draw_up_to_the_makespan_is_priced(solve_verified: Any, spec: str) -> None:
    """Idle draw 10 W per GPU (40 W for the node) from 0 to the makespan, price 1.0 on
    [0, 100), 0.1 after (to 10^5). Running at 2 GPUs from 100 to 200: idle 40 x (100 x 1.0
    + 100 x 0.1) = 4400, busy extra 2 x 90 x 100 x 0.1 = 1800: 6200. Starting at 0 instead
    pays 4000 idle + 18000 busy. At 4 GPUs from 100: 40 x 106 + 4 x 90 x 60 x 0.1 = 6400.
    Later starts pay more idle at 0.1, so 6200 is the optimum."""
    prices = (PriceInterval(0, 100, 1.0), PriceInterval(100, 10**5, 0.1))
    inst = _inst(_jobs(1), idle=10.0, power_price=prices, horizon=1000)
    s = solve_verified(inst, spec, time_limit=20, objective=("energy_cost",))
    assert metrics(inst, s)["energy_cost"] == pytest.approx(6200 * KWH)
    assert (s.jobs[0].start, s.jobs[0].gpus) == (100, 2)


@pytest.mark.parametrize("spec", BACKENDS)
def test_energy_kwh_counts_busy_and_idle_time(solve_verified: Any, spec: str) -> None:
    """Two jobs, idle 10 W, busy 100 W per GPU on one 4-GPU node. Both at 2 side by side:
    busy 4 x 100 x 100 = 40000 W s, makespan 100 (no idle GPU-time). Both at 4: busy
    2 x 4 x 100 x 60 = 48000. The optimum is 40000."""
    inst = _inst(_jobs(2, counts=(4, 2)), idle=10.0)
    s = solve_verified(inst, spec, time_limit=20, objective=("energy_kwh",))
    assert metrics(inst, s)["energy_kwh"] == pytest.approx(40000 * KWH)
    assert s.status == "optimal"


@pytest.mark.parametrize("spec", BACKENDS)
def test_lexicographic_jct_then_energy_cost(solve_verified: Any, spec: str) -> None:
    """Two jobs, prices DAY_NIGHT. JCT 180 needs both at 4 GPUs, one after the other from
    0 (60 + 120; any other count or start raises a JCT), so the energy stage can only
    confirm its cost: 4 GPUs x 100 W x (100 s at 1.0 + 20 s at 0.1) = 40800 W s."""
    inst = _inst(_jobs(2), power_price=DAY_NIGHT, horizon=2000)
    names = ("total_weighted_jct", "energy_cost")
    s = solve_verified(inst, spec, time_limit=20, objective=names)
    m = metrics(inst, s)
    assert m["total_weighted_jct"] == 180
    assert m["energy_cost"] == pytest.approx(40800 * KWH)


@pytest.mark.parametrize("spec", BACKENDS)
def test_lexicographic_energy_cost_then_jct(solve_verified: Any, spec: str) -> None:
    """Energy first: both at 2 side by side inside the night, 2 x 2 x 100 x 100 x 0.1 =
    4000 W s; then the earliest such start, 100: JCT 200 + 200 = 400."""
    inst = _inst(_jobs(2), power_price=DAY_NIGHT, horizon=2000)
    names = ("energy_cost", "total_weighted_jct")
    s = solve_verified(inst, spec, time_limit=20, objective=names)
    m = metrics(inst, s)
    assert m["energy_cost"] == pytest.approx(4000 * KWH)
    assert m["total_weighted_jct"] == 400


@pytest.mark.parametrize(
    "names",
    [("makespan",), ("total_weighted_jct",), ("energy_kwh",), ("energy_cost", "makespan")],
)
def test_milp_and_cpsat_agree(solve_verified: Any, names: tuple[str, ...]) -> None:
    """Three elastic jobs of 10 s at 2 GPUs or 6 s at 4 (one of 5 s or 3 s, released at
    3) with idle draw and a day/night price: the MILP proves its values optimal, CP-SAT
    reaches the same."""
    prices = (
        PriceInterval(0, 10, 1.0),
        PriceInterval(10, 100, 0.1),
        PriceInterval(100, 10**4, 1.0),
    )
    jobs = _jobs(2, iterations=100) + [
        Job("short", 4, model="m", iterations=50, gpu_counts=(4, 2), release=3),
    ]
    inst = _inst(jobs, idle=5.0, power_price=prices, horizon=150)
    got = {}
    for spec, grid in (("cpsat", {}), ("milp:highs", {"slot": 1})):  # slot 1: exact grid
        s = solve_verified(inst, spec, time_limit=30, objective=names, **grid)
        if spec.startswith("milp"):  # (CP-SAT claims no optimum under energy_cost)
            assert s.status == "optimal", s.info.get("stages")
        got[spec] = [metrics(inst, s)[n] for n in names]
    assert got["milp:highs"] == pytest.approx(got["cpsat"], rel=1e-6)


@pytest.mark.parametrize("spec", ["greedy", "cpsat"])
def test_kwh_caps_hold_for_the_schedule_they_come_from(solve_verified: Any, spec: str) -> None:
    """The energy_kwh end caps are valid: a schedule's own energy never caps one of its
    jobs below its end (jobs of either count, a release, one 4-GPU node)."""
    jobs = _jobs(3) + [Job("late", 4, model="m", iterations=300, gpu_counts=(4, 2), release=50)]
    inst = _inst(jobs, idle=20.0)
    units = build_units(inst, [])
    for names in (("makespan",), ("total_weighted_jct",)):
        s = solve_verified(inst, spec, time_limit=10, objective=names)
        caps = kwh_caps(inst, units, metrics(inst, s)["energy_kwh"])
        assert all(a.end <= caps[a.id] for a in s.jobs)
