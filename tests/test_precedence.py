"""planner.precedence, and a long `after` chain planned end to end by every solver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import make_instance
from click.testing import CliRunner

from planner.cli import main
from planner.instance import Job, NodeGroup
from planner.precedence import (
    ancestors,
    descendants,
    effective_priorities,
    heads_tails,
    successors,
    topological_order,
)
from planner.read import read_instance
from planner.schedule import schedule_from_dict
from planner.verify import verify

CHAIN = 1500  # far beyond Python's default recursion limit of 1,000


def _diamond() -> list[Job]:
    #   a -> b -> d, a -> c -> d, e alone; listed out of order on purpose
    return [
        Job("d", gpus=0, duration=1, after=("b", "c"), priority=0),
        Job("b", gpus=0, duration=2, after=("a",), priority=0),
        Job("c", gpus=0, duration=5, after=("a", "a"), priority=3),
        Job("a", gpus=0, duration=4, release=1, priority=1),
        Job("e", gpus=0, duration=1, release=7, priority=2),
    ]


def test_walks_on_a_diamond() -> None:
    inst = make_instance(_diamond(), [NodeGroup("n", 1, 1)])
    assert successors(inst) == {"d": [], "b": ["d"], "c": ["d"], "a": ["b", "c"], "e": []}
    assert topological_order(inst) == ["a", "e", "b", "c", "d"]
    dur = {j.id: j.duration or 0 for j in inst.jobs}
    head, tail = heads_tails(inst, dur)
    assert head == {"a": 1, "e": 7, "b": 5, "c": 5, "d": 10}
    assert tail == {"a": 6, "e": 0, "b": 1, "c": 1, "d": 0}
    assert ancestors(inst)["d"] == {"a", "b", "c"}
    assert descendants(inst)["a"] == {"b", "c", "d"}
    assert effective_priorities(inst) == {"d": 0, "b": 0, "c": 3, "a": 3, "e": 2}


def test_cycle_is_refused() -> None:
    jobs = [Job("a", gpus=0, duration=1, after=("b",)), Job("b", gpus=0, duration=1, after=("a",))]
    with pytest.raises(ValueError, match="cycle"):
        topological_order(make_instance(jobs, []))


def _chain_document(reverse: bool) -> dict[str, object]:
    """A chain of GPU-less jobs plus three pool jobs that cannot overlap pairwise (so the
    CP-SAT model adds its redundant no-overlap cliques, which walk the chain)."""
    chain: list[dict[str, object]] = [
        {"id": f"c{i}", "duration": 1, "gpus": 0, **({"after": [f"c{i - 1}"]} if i else {})}
        for i in range(CHAIN)
    ]
    if reverse:
        chain.reverse()
    pool_jobs = [{"id": f"p{k}", "duration": 2, "gpus": 1, "demand": {"disk": 1}} for k in range(3)]
    return {
        "version": 1,
        "name": "chain",
        "time_unit": "s",
        "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}], "pools": {"disk": 1.5}},
        "jobs": chain + pool_jobs,
    }


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize(
    "solver", [["greedy"], ["cpsat"], ["milp"], ["milp", "--milp-backend", "highs"], ["auto"]]
)
def test_long_chain_plans_with_every_solver(
    tmp_path: Path, reverse: bool, solver: list[str]
) -> None:
    path, out = tmp_path / "chain.json", tmp_path / "s.json"
    path.write_text(json.dumps(_chain_document(reverse)))
    args = ["solve", str(path), "--solver", *solver, "--time-limit", "1", "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, (r.output, r.exception)
    inst = read_instance(path)
    sched = schedule_from_dict(json.loads(out.read_text()))
    assert verify(inst, sched) == []
    assert len(sched.jobs) == CHAIN + 3
