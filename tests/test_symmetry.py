"""The node-symmetry rule both exact back ends share (`planner.solvers.symmetry`): renaming
a verified plan's interchangeable nodes keeps it verified, puts each class's nodes in the
order the models' symmetry breaking asks for, and leaves nodes a GPU reservation names
alone (hypothesis over generated instances, every plan checked by the verifier)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.generate import generate
from planner.read import instance_from_dict
from planner.schedule import Assignment, Placement, Schedule
from planner.solvers import SolveOptions
from planner.solvers.greedy.solve import solve_greedy
from planner.solvers.symmetry import gpu_reserved_nodes, interchangeable_nodes, relabel_for_symmetry
from planner.verify import verify


def renamed(s: Schedule, names: Mapping[str, str]) -> Schedule:
    def moved(pl: tuple[Placement, ...]) -> tuple[Placement, ...]:
        return tuple(Placement(names.get(p.node, p.node), p.gpus) for p in pl)

    def job(a: Assignment) -> Assignment:
        return a.with_pieces([replace(g, placement=moved(g.placement)) for g in a.pieces()])

    return s.with_(jobs=tuple(job(a) for a in s.jobs))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    family=st.sampled_from(["dl", "mixed"]),
    jobs=st.integers(4, 14),
    nodes=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    preemption=st.booleans(),
)
def test_the_relabelled_plan_verifies_and_orders_each_class(
    family: str, jobs: int, nodes: int, seed: int, preemption: bool
) -> None:
    inst = instance_from_dict(generate(family, jobs, nodes, seed, preemption=preemption))
    plan = solve_greedy(inst, "srsf", SolveOptions(time_limit=5))
    assert verify(inst, plan) == []
    names = relabel_for_symmetry(inst, plan)
    moved = renamed(plan, names)
    assert verify(inst, moved) == []
    assert sorted(names) == sorted(names.values())  # a permutation
    assert not set(names) & gpu_reserved_nodes(inst)
    position = {j.id: i for i, j in enumerate(inst.jobs)}
    first: dict[str, int] = {}
    for a in moved.jobs:
        for g in a.pieces():
            for p in g.placement:
                first[p.node] = min(first.get(p.node, len(position)), position[a.id])
    for cls in interchangeable_nodes(inst):
        order = [first.get(n.name, len(position)) for n in cls]
        assert order == sorted(order), (cls, order)  # the earliest job's node comes first
