"""Elastic GPU counts and energy prices (contract §12): reading, the verifier, metrics.

Every expected number below is computed by hand from the profile in `_instance`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import assign, make_instance, make_schedule, place, profile

from planner.errors import InputError
from planner.export import schedule_document
from planner.instance import Instance, Interleaving, Job, NodeGroup, PriceInterval
from planner.metrics import metrics
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.verify import rules, verify

# m: 100 ms per iteration at 2 GPUs, 60 ms at 4 (no data/net stage: the GPU stage is all)
PROF = profile("m", {2: (100.0, 0.0, 100.0, 0.0), 4: (60.0, 0.0, 60.0, 0.0)})


def _instance(**kw: Any) -> Instance:
    job = Job("e", 2, model="m", iterations=1000, gpu_counts=(2, 4))
    node = NodeGroup("n", 1, 4, gpu_idle_w=50.0, gpu_busy_w=250.0)
    return make_instance([job], [node], [PROF], time_unit="s", **kw)


def test_a_job_runs_at_either_listed_count_with_that_counts_duration() -> None:
    inst = _instance()
    # 1000 iterations x 100 ms = 100 s at 2 GPUs; x 60 ms = 60 s at 4 GPUs
    at2 = make_schedule([assign("e", 0, 100, place("n-0", 0, 1))])
    at4 = make_schedule([assign("e", 0, 60, place("n-0", 0, 1, 2, 3))])
    assert verify(inst, at2) == []
    assert verify(inst, at4) == []
    # the duration of the other count is wrong
    assert rules(verify(inst, make_schedule([assign("e", 0, 60, place("n-0", 0, 1))]))) == {"R3"}
    assert rules(verify(inst, make_schedule([assign("e", 0, 100, place("n-0", 0, 1, 2))]))) == {
        "R5"
    }


def test_the_entry_count_must_be_the_first_segments() -> None:
    inst = _instance()
    doc = schedule_document(inst, make_schedule([assign("e", 0, 60, place("n-0", 0, 1, 2, 3))]), [])
    assert doc["jobs"][0]["gpus"] == 4
    doc["jobs"][0]["gpus"] = 2
    assert rules(verify(inst, schedule_from_dict(doc))) == {"R5"}


def test_group_members_run_at_the_same_count() -> None:
    """Members share one placement, so one count: a member with one count (4) cannot join
    a group at 2 GPUs."""
    jobs = [
        Job("a", 2, model="m", iterations=10, gpu_counts=(2, 4)),
        Job("b", 4, model="m", iterations=10),
    ]
    inst = make_instance(
        jobs, [NodeGroup("n", 1, 4)], [PROF], interleaving=Interleaving(enabled=True)
    )
    s = make_schedule(
        [
            assign("a", 0, 1, place("n-0", 0, 1), group="g"),
            assign("b", 0, 1, place("n-0", 0, 1), group="g"),
        ]
    )
    found = verify(inst, s)
    assert "R5" in rules(found)  # b has one count, 4, and runs at 2


def test_energy_cost_across_a_price_boundary() -> None:
    # price 0.2 per kWh on [0, 50), 0.1 on [50, 200); the job runs 60 s at 4 GPUs, over
    # [20, 80), across the boundary.
    prices = (PriceInterval(0, 50, 0.2), PriceInterval(50, 200, 0.1))
    inst = _instance(power_price=prices)
    s = make_schedule([assign("e", 20, 80, place("n-0", 0, 1, 2, 3))])
    assert verify(inst, s) == []
    m = metrics(inst, s)
    # makespan 80. idle draw: 4 GPUs x 50 W over [0, 80): 200 W x (50 x 0.2 + 30 x 0.1) = 2600
    # busy extra: 4 GPUs x 200 W over [20, 80): 800 W x (30 x 0.2 + 30 x 0.1) = 7200
    # W x s x price -> x 1000 ms / 3.6e9
    assert m["energy_cost"] == pytest.approx((2600 + 7200) * 1000 / 3.6e9)
    # energy_kwh: 4 x 60 s busy at 250 W + 4 x 20 s idle at 50 W
    assert m["energy_kwh"] == pytest.approx((4 * 60 * 250 + 4 * 20 * 50) * 1000 / 3.6e9)


def test_no_price_means_no_cost() -> None:
    inst = _instance()
    s = make_schedule([assign("e", 0, 60, place("n-0", 0, 1, 2, 3))])
    assert metrics(inst, s)["energy_cost"] == 0.0


def _doc(**job: object) -> dict:
    return {
        "cluster": {
            "nodes": [{"name": "v", "count": 1, "gpus": 8, "gpu_busy_w": 300, "gpu_idle_w": 60}],
            "power_price": [{"start": 0, "end": 100, "price": 0.3}],
        },
        "jobs": [{"id": "a", "model": "bert", "iterations": 10, **job}],
        "objective": ["energy_cost", "total_weighted_jct"],
    }


def test_reader_takes_a_list_of_counts_and_prices() -> None:
    inst = instance_from_dict(_doc(gpus=[4, 2, 8]))
    (job,) = inst.jobs
    assert job.gpu_counts == (4, 2, 8) and job.gpus == 4 and job.elastic
    assert inst.power_price == (PriceInterval(0, 100, 0.3),)
    assert inst.objective == ("energy_cost", "total_weighted_jct")


@pytest.mark.parametrize(
    ("gpus", "path"),
    [
        ([2, 3], "jobs[0].gpus[1]"),  # bert has no profile at 3 GPUs
        ([2, 16], "jobs[0].gpus[1]"),  # 16 GPUs fits no node (one 8-GPU node)
        ([2, 2], "jobs[0].gpus"),
        ([], "jobs[0].gpus"),
        ([2, "4"], "jobs[0].gpus[1]"),
    ],
)
def test_reader_refuses_bad_counts_with_their_path(gpus: list, path: str) -> None:
    with pytest.raises(InputError) as e:
        instance_from_dict(_doc(gpus=gpus))
    assert path in [p.path for p in e.value.problems]


def test_reader_refuses_overlapping_prices(tmp_path: Path) -> None:
    d = _doc(gpus=2)
    d["cluster"]["power_price"] = [
        {"start": 0, "end": 100, "price": 0.3},
        {"start": 50, "end": 150, "price": 0.1},
    ]
    with pytest.raises(InputError) as e:
        instance_from_dict(json.loads(json.dumps(d)))
    assert "cluster.power_price[1]" in [p.path for p in e.value.problems]
