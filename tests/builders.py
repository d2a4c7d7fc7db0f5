"""Small helpers to build Instance and Schedule objects directly in tests.

They fill in what `planner.read` would (node expansion `<group>-<i>`, defaults) so a test
can state only what it is about. Kept general on purpose: any test may use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from planner.instance import (
    Admits,
    GpuProfile,
    Instance,
    Interleaving,
    Job,
    Node,
    NodeGroup,
    Preemption,
    Profile,
    Reservation,
    Stages,
)
from planner.read import instance_from_dict
from planner.schedule import Assignment, Group, Placement, Schedule


def profile(
    model: str,
    by_gpus: Mapping[int, tuple[float, float, float, float]],
    gpu_mem_gb: float | None = None,
) -> Profile:
    """`by_gpus`: GPU count -> (iteration_ms, data_ms, gpu_ms, net_ms)."""
    return Profile(
        model,
        {g: GpuProfile(it, Stages(d, gp, n)) for g, (it, d, gp, n) in by_gpus.items()},
        gpu_mem_gb,
    )


def admits(tenants: Iterable[str] = (), jobs: Iterable[str] = ()) -> Admits:
    return Admits(frozenset(tenants), frozenset(jobs))


def reservation(id: str, start: int, end: int, **kw: Any) -> Reservation:
    """Keyword `for_` may be an Admits; other keywords are Reservation fields."""
    if "for_" in kw:
        kw["admits"] = kw.pop("for_")
    for key in ("nodes", "gpus"):
        if kw.get(key) is not None:
            kw[key] = tuple(kw[key])
    return Reservation(id, start, end, **kw)


def make_instance(
    jobs: Iterable[Job],
    node_groups: Iterable[NodeGroup],
    profiles: Iterable[Profile] = (),
    **kw: Any,
) -> Instance:
    """An Instance with nodes expanded from the groups; other keywords are Instance fields."""
    groups = tuple(node_groups)
    nodes = []
    for g in groups:
        for i in range(g.count):
            nodes.append(Node(f"{g.name}-{i}", g, len(nodes)))
    kw.setdefault("name", "test")
    return Instance(
        jobs=tuple(jobs),
        node_groups=groups,
        nodes=tuple(nodes),
        profiles={p.model: p for p in profiles},
        **kw,
    )


def place(node: str, *gpus: int) -> Placement:
    return Placement(node, tuple(gpus))


def assign(
    id: str, start: int, end: int, *placement: Placement, group: str | None = None
) -> Assignment:
    return Assignment(id, start, end, tuple(placement), group)


def make_schedule(
    assignments: Iterable[Assignment],
    groups: Mapping[str, Iterable[str]] | None = None,
    status: str = "feasible",
    instance: str = "test",
) -> Schedule:
    """`groups`: group id -> member ids (defaults to what the assignments' `group` say)."""
    assignments = tuple(assignments)
    if groups is None:
        found: dict[str, list[str]] = {}
        for a in assignments:
            if a.group is not None:
                found.setdefault(a.group, []).append(a.id)
        groups = found
    return Schedule(
        instance=instance,
        solver="test",
        status=status,
        jobs=assignments,
        groups=tuple(Group(g, tuple(m)) for g, m in groups.items()),
    )


# --- a small instance that exercises every rule, and a valid schedule of it ----------
#
# Node groups a (2 nodes x 4 GPUs, speed 1) and b (2 nodes x 2 GPUs, speed 2); profiles
# of dqn and gpt2 at 2 GPUs (Muri trace2 stage times); an interleaved group d1+g1 on a-0;
# a multi-node job `big` after g1; priorities p_hi > d1 > the rest; p_lo after p_hi; two
# pool-only jobs under a pool reservation; a tenant reservation on b-1 GPU 0 and a
# maintenance reservation on b-0 GPU 0.


def small_instance(**changes: Any) -> Instance:
    dqn = profile("dqn", {2: (509.0, 435.0, 8.0, 0.5)}, gpu_mem_gb=4)
    gpt2 = profile("gpt2", {2: (437.0, 0.6, 419.0, 49.0)}, gpu_mem_gb=12)
    groups = [
        NodeGroup(
            "a", 2, 4, gpu_mem_gb=32, cpus=16, mem_gb=64, speed=1.0, gpu_idle_w=50, gpu_busy_w=250
        ),
        NodeGroup(
            "b", 2, 2, gpu_mem_gb=16, cpus=8, mem_gb=32, speed=2.0, gpu_idle_w=30, gpu_busy_w=200
        ),
    ]
    jobs = [
        Job(
            "d1",
            2,
            model="dqn",
            iterations=1000,
            priority=1,
            tenant="rl",
            cpus_per_gpu=2,
            mem_gb_per_gpu=12,
        ),
        Job("g1", 2, model="gpt2", iterations=3000, cpus_per_gpu=2, mem_gb_per_gpu=12),
        Job("s1", 2, model="gpt2", iterations=1000, release=10, tenant="nlp", due=200),
        Job("big", 8, duration=50, node_types=("a",), after=("g1",), deadline=1700, weight=2.0),
        Job("p_hi", 1, duration=20, priority=5, mem_gb_per_gpu=20, due=100),
        Job("p_lo", 1, duration=30, node_types=("a",), after=("p_hi",)),
        Job("t1", 0, duration=10, demand={"power": 3}),
        Job("t2", 0, duration=5, demand={"power": 2}, tenant="ops"),
    ]
    reservations = [
        reservation("nlp-hold", 0, 300, nodes=["b-1"], gpus=[0], for_=admits(tenants=["nlp"])),
        reservation("maint", 0, 100, nodes=["b-0"], gpus=[0]),
        reservation("power-cap", 0, 20, pool="power", amount=2),
    ]
    kw: dict[str, Any] = dict(
        pools={"power": 5},
        reservations=tuple(reservations),
        horizon=2000,
        interleaving=Interleaving(enabled=True),
    )
    kw.update(changes)
    return make_instance(jobs, groups, [dqn, gpt2], name="small", **kw)


def small_assignments() -> dict[str, Assignment]:
    """A valid schedule of small_instance(), by job id (replace entries to break it)."""
    return {
        "d1": assign("d1", 0, 625, place("a-0", 0, 1), group="G"),  # interleaved with g1
        "g1": assign("g1", 0, 1499, place("a-0", 0, 1), group="G"),
        "s1": assign("s1", 10, 238, place("b-1", 0, 1)),  # speed 2: 227.5 ms/iteration
        "big": assign("big", 1600, 1650, place("a-0", 0, 1, 2, 3), place("a-1", 0, 1, 2, 3)),
        "p_hi": assign("p_hi", 0, 20, place("a-1", 0)),
        "p_lo": assign("p_lo", 20, 50, place("a-1", 1)),
        "t1": assign("t1", 0, 10),
        "t2": assign("t2", 10, 15),
    }


def small_schedule(**replace_: Assignment) -> Schedule:
    jobs = small_assignments()
    jobs.update(replace_)
    return make_schedule(jobs.values())


def vanishing_cycle_instance(release: int = 0, preemption: bool = False) -> Instance:
    """Two complementary jobs on one GPU (ms units) whose pair cycle is 1e-12 of its slot
    cycle: together `a` does its 50 iterations in about 5e-10 ms, far below the rounding
    tolerance of `durations.ceil_units`; `b` then runs its last 10 alone (100 ms)."""
    profiles = [profile("m", {1: (10, 3, 5, 2)}), profile("k", {1: (10, 6, 1, 1)})]
    jobs = [
        Job("a", 1, model="m", iterations=50, release=release),
        Job("b", 1, model="k", iterations=60, release=release),
    ]
    return make_instance(
        jobs,
        [NodeGroup("n", 1, 1)],
        profiles,
        time_unit="ms",
        interleaving=Interleaving(True, 4, {2: 1e-12, 3: 1e-12, 4: 1e-12}),
        preemption=Preemption(preemption, 0),
    )


def one_gpu_priced(prices: list[tuple[int, int, float]], job: dict[str, Any]) -> Instance:
    """One GPU drawing 300 W when busy (0 idle) under the price steps (start, end, price),
    `job` (a job's JSON object) to place, objective `energy_cost` (contract §12)."""
    doc = {
        "version": 1,
        "name": "priced",
        "cluster": {
            "nodes": [{"name": "n", "count": 1, "gpus": 1, "gpu_busy_w": 300, "gpu_idle_w": 0}],
            "power_price": [{"start": a, "end": z, "price": p} for a, z, p in prices],
        },
        "objective": ["energy_cost"],
        "jobs": [job],
    }
    return instance_from_dict(doc, file="<test>")
