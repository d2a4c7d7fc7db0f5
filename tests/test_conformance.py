"""Every behavioural scenario once, run over every solver (see `conftest.SOLVERS`).

Each case is a hand-sized instance with its objective and the optimum derived by hand in
the comment above it (None: no schedule exists). For every solver the schedule verifies
(`solve_verified`) and passes the case's own check. The exact solvers (CP-SAT, MILP with
either back end) must reach the optimum and prove it; a greedy rule must reach a feasible
schedule no better than the optimum, and may claim "optimal" only at the optimum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pytest
from builders import admits, make_instance, profile, reservation
from conftest import PROVES_INFEASIBILITY, SolveVerified, is_exact

from planner.instance import Instance, Interleaving, Job, NodeGroup
from planner.metrics import objective_values
from planner.schedule import Assignment, Schedule
from planner.solvers.plain import plain_infeasibility

Check = Callable[[str, Schedule], None]


class Case(NamedTuple):
    id: str
    build: Callable[[], Instance]
    optimum: int | None  # of the instance's first objective; None: infeasible
    check: Check | None = None


def by_id(s: Schedule) -> dict[str, Assignment]:
    return {a.id: a for a in s.jobs}


def node(gpus: int = 1, count: int = 1, name: str = "n") -> NodeGroup:
    return NodeGroup(name, count, gpus)


def jobs_on(jobs: list[Job], groups: list[NodeGroup], objective: str, **kw: object) -> Callable:
    return lambda: make_instance(jobs, groups, objective=(objective,), **kw)


# --- tenant (GPU and node) reservations ---------------------------------------------------

# GPU 0 of a 2-GPU node is held for tenant x during [0, 10): x1 takes it, y1 (10 s) runs on
# GPU 1 from 0, y2 (5 s) on GPU 0 from 10 (or after y1): makespan 15; 10 without the hold.
X_HOLD = (reservation("hold", 0, 10, nodes=["n-0"], gpus=[0], for_=admits(["x"])),)
XY_JOBS = [
    Job("x1", 1, duration=5, tenant="x"),
    Job("y1", 1, duration=10, tenant="y"),
    Job("y2", 1, duration=5, tenant="y"),
]


def y_jobs_avoid_gpu_0_while_held(solver: str, s: Schedule) -> None:
    for a in s.jobs:
        if a.id.startswith("y") and a.start < 10:
            assert 0 not in a.placement[0].gpus


# GPU 1 held for tenant t during [0, 10): two untenanted 10 s jobs share GPU 0 (makespan
# 20), but a job of tenant t may use GPU 1 at once (makespan 10).
T_HOLD = (reservation("r", 0, 10, nodes=["n-0"], gpus=[1], for_=admits(tenants=["t"])),)
TWO_JOBS = [Job("b", 1, duration=10), Job("c", 1, duration=10)]

# GPU 0 held by r1 (tenant x) and r2 (tenant y) at once: only a job admitted by both may
# use it, so two x jobs take turns on GPU 1 (makespan 10). With r2 admitting x1 by id,
# x1 takes GPU 0 and z GPU 1 side by side (makespan 5).
R1 = reservation("r1", 0, 20, nodes=["n-0"], gpus=[0], for_=admits(tenants=["x"]))
R2_Y = reservation("r2", 0, 20, nodes=["n-0"], gpus=[0], for_=admits(tenants=["y"]))
R2_X1 = reservation("r2", 0, 20, nodes=["n-0"], gpus=[0], for_=admits(jobs=["x1"]))

# Node n-0 (2 GPUs) held for tenant nlp during [0, 20), then GPU 0 held for job `named`
# during [20, 40). mine (nlp, 2 GPUs) runs [0, 5): JCT 5; named (released at 10) cannot
# run before 20, then runs on its GPU 0 [20, 25): JCT 15; other on GPU 1 [20, 25): JCT 25.
# Total weighted JCT 45.
NODE_HOLD = (
    reservation("hold", 0, 20, nodes=["n-0"], for_=admits(["nlp"])),
    reservation("job", 20, 40, nodes=["n-0"], gpus=[0], for_=admits(jobs=["named"])),
)
NODE_HOLD_JOBS = [
    Job("other", 1, duration=5, tenant="vision"),
    Job("mine", 2, duration=5, tenant="nlp"),
    Job("named", 1, duration=5, release=10),
]


def the_tenant_runs_at_once(solver: str, s: Schedule) -> None:
    assert by_id(s)["mine"].start == 0


# GPUs 0-1 of a 4-GPU node held for x during [0, 10). y3 needs 3 GPUs, so one of the held
# class: it waits for 10 although 2 GPUs are free earlier. x1 and y2 run [0, 10), y3
# [10, 15): makespan 15.
PARTIAL_HOLD = (reservation("hold", 0, 10, nodes=["n-0"], gpus=[0, 1], for_=admits(["x"])),)
PARTIAL_JOBS = [
    Job("x1", 2, duration=10, tenant="x"),
    Job("y2", 2, duration=10, tenant="y"),
    Job("y3", 3, duration=5, tenant="y"),
]


def y3_waits_for_the_hold(solver: str, s: Schedule) -> None:
    assert by_id(s)["y3"].start >= 10


# Maintenance of the only node during [0, 10): a (5 s) ends at 15. Two holds overlapping
# in [5, 10) count once: a fits neither before 12 and ends at 17.
MAINT = (reservation("maint", 0, 10, nodes=["n-0"]),)
MAINT2 = (
    reservation("m1", 0, 10, nodes=["n-0"]),
    reservation("m2", 5, 12, nodes=["n-0"], gpus=[0, 1]),
)

RESERVATIONS = [
    Case("gpu-hold-delays-others", jobs_on(XY_JOBS, [node(2)], "makespan", reservations=X_HOLD),
         15, y_jobs_avoid_gpu_0_while_held),
    Case("gpu-hold-absent", jobs_on(XY_JOBS, [node(2)], "makespan"), 10),
    Case("gpu-hold-blocks-untenanted", jobs_on(TWO_JOBS, [node(2)], "makespan",
                                               reservations=T_HOLD), 20),
    Case("gpu-hold-admits-its-tenant",
         jobs_on([Job("b", 1, duration=10), Job("t", 1, duration=10, tenant="t")], [node(2)],
                 "makespan", reservations=T_HOLD), 10),
    Case("overlapping-holds-need-every-admission",
         jobs_on([Job("x1", 1, duration=5, tenant="x"), Job("x2", 1, duration=5, tenant="x")],
                 [node(2)], "makespan", reservations=(R1, R2_Y)), 10),
    Case("overlapping-holds-admit-by-tenant-and-id",
         jobs_on([Job("x1", 1, duration=5, tenant="x"), Job("z", 1, duration=5, tenant="z")],
                 [node(2)], "makespan", reservations=(R1, R2_X1)), 5),
    Case("node-hold-then-job-hold", jobs_on(NODE_HOLD_JOBS, [node(2)], "total_weighted_jct",
                                            reservations=NODE_HOLD),
         45, the_tenant_runs_at_once),
    Case("partial-hold-splits-gpu-classes",
         jobs_on(PARTIAL_JOBS, [node(4)], "makespan", reservations=PARTIAL_HOLD),
         15, y3_waits_for_the_hold),
    Case("maintenance-blocks-a-node",
         jobs_on([Job("a", 2, duration=5)], [node(2)], "makespan", reservations=MAINT), 15),
    Case("overlapping-maintenance-counts-once",
         jobs_on([Job("a", 2, duration=5)], [node(2)], "makespan", reservations=MAINT2), 17),
]  # fmt: skip


# --- multi-node jobs and node speed ------------------------------------------------------


def big_takes_whole_nodes(solver: str, s: Schedule) -> None:
    big = by_id(s)["big"]
    gpus = {p.node: p.gpus for p in big.placement}
    assert len(gpus) == len(big.placement) >= 2  # distinct nodes
    width = len(big.placement[0].gpus)
    assert all(g == tuple(range(width)) for g in gpus.values())


def a_runs_on_the_fast_node(solver: str, s: Schedule) -> None:
    assert by_id(s)["a"].placement[0].node == "fast-0"


# 8-GPU big on two 4-GPU nodes, then the two 4-GPU jobs side by side: makespan 20.
# 4-GPU big on two of three 2-GPU nodes, s1 and s2 on the third: makespan 6.
# 100 iterations of (100 - 80 + 80 / 2) ms on the speed-2 node: 6 s (10 s on the slow one).
MULTI_NODE = [
    Case("multi-node-whole-nodes",
         jobs_on([Job("big", 8, duration=10), Job("s1", 4, duration=10),
                  Job("s2", 4, duration=10)], [node(4, 2)], "makespan"),
         20, big_takes_whole_nodes),
    Case("multi-node-beside-small-jobs",
         jobs_on([Job("big", 4, duration=6), Job("s1", 1, duration=6), Job("s2", 1, duration=3)],
                 [node(2, 3)], "makespan", priority_policy="none"),
         6, big_takes_whole_nodes),
    Case("node-speed-picks-the-fast-node",
         lambda: make_instance([Job("a", 1, model="m", iterations=100)],
                               [node(1, name="slow"), NodeGroup("fast", 1, 1, speed=2.0)],
                               [profile("m", {1: (100, 10, 80, 10)})], objective=("makespan",)),
         6, a_runs_on_the_fast_node),
    # n-1 down to the horizon (a reservation admitting nobody, as `nodes_down` for good
    # makes): the 4-GPU job needs both 2-GPU nodes, so no schedule exists, and every
    # solver says which job (planner/solvers/plain.py, `reserved_out`)
    Case("multi-node-with-a-node-down-for-good",
         jobs_on([Job("big", 4, duration=5), Job("s", 1, duration=5)], [node(2, 2)],
                 "makespan", horizon=100, reservations=(reservation("down", 0, 100,
                                                                    nodes=["n-1"]),)),
         None),
]  # fmt: skip


# --- strict priority ---------------------------------------------------------------------

# One GPU, long (10 s, priority 1) and short (1 s). Strict: long first, JCT 10 + 11 = 21.
# None: short first, 1 + 11 = 12.
LONG_SHORT = [Job("long", 1, duration=10, priority=1), Job("short", 1, duration=1)]

# Two GPUs; hi (50 s, 2 GPUs, priority 1), lo1 (10 s, 2 GPUs), lo2 (1 s, 1 GPU).
# Strict: hi [0, 50), lo2 [50, 51), lo1 [51, 61): JCT 50 + 51 + 61 = 162.
# None: lo2 [0, 1), lo1 [1, 11), hi [11, 61): 1 + 11 + 61 = 73.
HI_LO = [
    Job("lo1", 2, duration=10),
    Job("lo2", 1, duration=1),
    Job("hi", 2, duration=50, priority=1),
]


def hi_starts_first(solver: str, s: Schedule) -> None:
    got = by_id(s)
    assert got["hi"].start == 0
    assert got["lo1"].start >= got["hi"].start and got["lo2"].start >= got["hi"].start


PRIORITY = [
    Case("strict-priority-long-first",
         jobs_on(LONG_SHORT, [node()], "total_weighted_jct", priority_policy="strict"), 21),
    Case("no-priority-short-first",
         jobs_on(LONG_SHORT, [node()], "total_weighted_jct", priority_policy="none"), 12),
    Case("strict-priority-holds-back-backfill",
         jobs_on(HI_LO, [node(2)], "total_weighted_jct", priority_policy="strict"),
         162, hi_starts_first),
    Case("no-priority-backfills", jobs_on(HI_LO, [node(2)], "total_weighted_jct",
                                          priority_policy="none"), 73),
]  # fmt: skip


# --- pools and pool reservations -----------------------------------------------------------

# Pool of 4, 3 held for x during [0, 10): x1 (3) runs [0, 10) in the held units; y1 (2)
# has only 1 unit until 10, then runs [10, 15): makespan 15.
POOL_X = [
    Job("x1", 0, duration=10, demand={"p": 3}, tenant="x"),
    Job("y1", 0, duration=5, demand={"p": 2}, tenant="y"),
]
POOL_X_HOLD = (reservation("hold", 0, 10, pool="p", amount=3, for_=admits(["x"])),)

# Two 5 kW jobs (a of tenant ops): together under a 10 kW cap (makespan 5), in turn under
# 9 kW (10); with 5 kW held for nobody during [0, 5) in turn (10); held for ops, a draws
# on the held 5 kW and b on the rest: together again (5).
KW = [
    Job("a", 0, duration=5, demand={"kw": 5}, tenant="ops"),
    Job("b", 0, duration=5, demand={"kw": 5}),
]
KW_HELD = (reservation("h", 0, 5, pool="kw", amount=5),)
KW_OPS = (reservation("h", 0, 5, pool="kw", amount=5, for_=admits(tenants=["ops"])),)

# Pool of 10, 4 held for tenant t during [0, 30). a, b (6 each) and d (4) are not
# admitted: only 6 units are open to them before 30, so they run one at a time, ending
# at 10, 20, 30; c (t, 4) runs [0, 10) on the held units beside one of them.
# Total weighted JCT 10 + 20 + 30 + 10 = 70.
POOL_T = [
    Job("a", 0, duration=10, demand={"p": 6}),
    Job("b", 0, duration=10, demand={"p": 6}),
    Job("c", 0, duration=10, demand={"p": 4}, tenant="t"),
    Job("d", 0, duration=10, demand={"p": 4}),
]
POOL_T_HOLD = (reservation("r", 0, 30, pool="p", amount=4, for_=admits(tenants=["t"])),)


def the_tenant_uses_the_held_units(solver: str, s: Schedule) -> None:
    assert by_id(s)["c"].start < 30


# a (2) and b (2) do not fit a pool of 3 together; c (1) follows a: a [0, 4), then b
# [4, 7) beside c [4, 6): makespan 7 (b first: b [0, 3), a [3, 7), c [7, 9)).
POOL_PREC = [
    Job("a", 0, duration=4, demand={"p": 2}),
    Job("b", 0, duration=3, demand={"p": 2}),
    Job("c", 0, duration=2, demand={"p": 1}, after=("a",)),
]

# The same amounts in ten-billionths: a pool of 1e-10 holds one job of 6e-11 at a time, so
# c (3), a (5), b (5) run in turn: total weighted JCT 3 + 8 + 13 = 24. Rounded to
# thousandths, CP-SAT's pool held 0 (its model infeasible); the MILP's rows of 1e-10 were
# below its back ends' tolerances and it returned a plan breaking R8
# (cpsat/variables.capacity_scale, milp/constraints.add_capacity_row).
POOL_TINY = [
    Job("a", 0, duration=5, demand={"p": 6e-11}),
    Job("b", 0, duration=5, demand={"p": 6e-11}),
    Job("c", 1, duration=3, demand={"p": 6e-11}),
]

POOLS = [
    Case("pool-reservation-admits-a-tenant",
         jobs_on(POOL_X, [node()], "makespan", pools={"p": 4}, reservations=POOL_X_HOLD), 15),
    Case("pool-capacity-fits-both", jobs_on(KW, [node()], "makespan", pools={"kw": 10}), 5),
    Case("pool-capacity-forces-turns", jobs_on(KW, [node()], "makespan", pools={"kw": 9}), 10),
    Case("pool-held-for-nobody",
         jobs_on(KW, [node()], "makespan", pools={"kw": 10}, reservations=KW_HELD), 10),
    Case("pool-held-for-a-tenant",
         jobs_on(KW, [node()], "makespan", pools={"kw": 10}, reservations=KW_OPS), 5),
    Case("pool-reservation-and-three-outsiders",
         jobs_on(POOL_T, [node()], "total_weighted_jct", pools={"p": 10},
                 reservations=POOL_T_HOLD), 70, the_tenant_uses_the_held_units),
    Case("pool-and-precedence", jobs_on(POOL_PREC, [node()], "makespan", pools={"p": 3}), 7),
    Case("pool-of-a-ten-billionth",
         jobs_on(POOL_TINY, [node()], "total_weighted_jct", pools={"p": 1e-10}), 24),
]  # fmt: skip


# --- interleaving ------------------------------------------------------------------------

# Data-heavy and GPU-heavy jobs on one GPU: alone 100 s each (200 s in a row). As a pair
# the best ordering's slot cycle is 100 ms (TT2 gives 105), times the overhead
# 1.33/1.015: 131.03 ms per iteration, so both end at ceil(131.03) = 132 s.
PAIR_PROFILES = [profile("data", {1: (100, 90, 5, 5)}), profile("gpu", {1: (100, 5, 90, 5)})]
PAIR = [Job("a", 1, model="data", iterations=1000), Job("b", 1, model="gpu", iterations=1000)]


def pair(enabled: bool) -> Callable[[], Instance]:
    return lambda: make_instance(
        PAIR, [node()], PAIR_PROFILES, interleaving=Interleaving(enabled), objective=("makespan",)
    )


def grouped_when_it_pays(solver: str, s: Schedule) -> None:
    if is_exact(solver) or solver == "auto":
        assert len(s.groups) == 1 and by_id(s)["a"].end == by_id(s)["b"].end == 132
    elif solver not in ("greedy:interleave", "greedy"):  # the baseline rules never interleave
        assert not s.groups


def never_grouped(solver: str, s: Schedule) -> None:
    assert not s.groups and all(a.group is None for a in s.jobs)


INTERLEAVING = [
    Case("interleaving-beats-sequential", pair(True), 132, grouped_when_it_pays),
    Case("interleaving-disabled", pair(False), 200, never_grouped),
]


# --- deadlines ---------------------------------------------------------------------------

# Two 10 s jobs on both GPUs of a node; b must end by 15, so b runs first: JCT 10 + 20.
# Two 6 s jobs on one GPU, both due by 10: impossible. A 10 s job due by 5: impossible.
ORDERED = [Job("a", 2, duration=10), Job("b", 2, duration=10, deadline=15)]
CROWDED = [Job("a", 1, duration=6, deadline=10), Job("b", 1, duration=6, deadline=10)]
TOO_LATE = [Job("a", 2, duration=10), Job("b", 2, duration=10, deadline=5)]

DEADLINES = [
    Case("deadline-forces-the-order", jobs_on(ORDERED, [node(2)], "total_weighted_jct"), 30),
    Case("deadlines-crowded-out", jobs_on(CROWDED, [node()], "makespan"), None),
    Case("deadline-before-the-duration", jobs_on(TOO_LATE, [node(2)], "makespan"), None),
]

CASES = RESERVATIONS + MULTI_NODE + PRIORITY + POOLS + INTERLEAVING + DEADLINES


def check_infeasible(solver: str, s: Schedule, inst: Instance) -> None:
    assert s.jobs == ()
    plain = plain_infeasibility(inst)
    if plain is not None:
        # a job that plainly cannot meet its deadline is a proof whatever the solver
        # (planner/solvers/plain.py, named by dispatch.solve), said once: the solver's
        # own words (often the same) are kept apart
        assert (s.status, s.info["reason"]) == ("infeasible", plain), s.info
    elif solver in PROVES_INFEASIBILITY:
        assert s.status == "infeasible", s.info
    elif is_exact(solver):  # the MILP finds its model infeasible but claims no proof
        assert s.status == "unknown", s.info
    else:  # a greedy rule cannot prove it, but says which deadline it missed
        assert s.status == "unknown" and "deadline" in s.info["reason"], s.info


def check_feasible(case: Case, inst: Instance, solver: str, s: Schedule) -> None:
    objective = inst.objective[0]
    got = objective_values(inst, s, [objective])[objective]
    if is_exact(solver):
        assert (s.status, got) == ("optimal", case.optimum), s.info
        assert s.lower_bound is not None
        assert s.lower_bound[objective] == pytest.approx(case.optimum)
    else:
        assert s.status in ("optimal", "feasible"), s.info
        assert got >= case.optimum  # the optimum is a lower bound of every schedule
        assert s.status == "feasible" or got == case.optimum


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_scenario(case: Case, solver: str, solve_verified: SolveVerified) -> None:
    inst = case.build()
    s = solve_verified(inst, solver)
    if case.optimum is None:
        check_infeasible(solver, s, inst)
        return
    if not is_exact(solver) and not s.jobs:  # a greedy rule may miss a tight deadline
        assert s.status == "unknown" and "deadline" in s.info["reason"], s.info
        return
    check_feasible(case, inst, solver, s)
    if case.check is not None:
        case.check(solver, s)
