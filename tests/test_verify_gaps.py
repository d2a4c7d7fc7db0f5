"""planner.verify: cases a mutation pass found untested, each verdict worked out by hand
from docs/CONTRACT.md (section 5 unless said otherwise)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    admits,
    assign,
    make_instance,
    make_schedule,
    place,
    profile,
    reservation,
    small_assignments,
    small_instance,
)
from test_verify import one

from planner.errors import InputError
from planner.instance import Instance, Interleaving, Job, NodeGroup
from planner.read import instance_from_dict
from planner.verify import rules, verify


def _solo(*jobs: Job, gpus: int = 1, nodes: int = 1, **kw: Any) -> Instance:
    """Explicit-duration jobs on `nodes` nodes n-0.. of `gpus` GPUs each."""
    return make_instance(jobs, [NodeGroup("n", nodes, gpus)], **kw)


def _three_on_one_gpu(status: str = "feasible") -> tuple[Instance, Any]:
    inst = _solo(*(Job(x, 1, duration=10) for x in "abc"))
    s = make_schedule(
        [
            assign("a", 0, 10, place("n-0", 0)),
            assign("b", 10, 20, place("n-0", 0)),  # right after a: no clash (half-open)
            assign("c", 15, 25, place("n-0", 0)),
        ],
        status=status,
    )
    return inst, s


# --- R1 ----------------------------------------------------------------------------


def test_r1_float_times_are_not_integers():
    # R1 asks for integer start and end; 0.0 and 10.0 are floats, even if whole.
    inst = _solo(Job("t", 1, duration=10))
    v = one("R1", verify(inst, make_schedule([assign("t", 0.0, 10.0, place("n-0", 0))])))
    assert v.job == "t" and v.message == "start 0.0 and end 10.0 must be integers"


def test_r1_group_listing_a_job_twice():
    # Every job appears exactly once (R1), also in a group's list.
    s = make_schedule(small_assignments().values(), {"G": ["d1", "g1", "g1"]})
    v = one("R1", verify(small_instance(), s))
    assert "G" in v.message and "more than once" in v.message


def test_r1_group_list_missing_a_job_that_carries_its_label():
    # g1 carries group G, but G's list names only d1 (README: the list must name exactly
    # the jobs carrying the label).
    s = make_schedule(small_assignments().values(), {"G": ["d1"]})
    v = one("R1", verify(small_instance(), s))
    assert v.job == "g1" and v.message == "group G does not list the job"


# --- R2 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "fault"),
    [(4, 14, "release"), (6, 16, "deadline"), (5, 15, None)],
)
def test_r2_release_and_deadline_are_exact(start, end, fault):
    # release 5, deadline 15, duration 10: R2 start >= 5 and end <= 15, no slack.
    inst = _solo(Job("j", 1, duration=10, release=5, deadline=15))
    vs = verify(inst, make_schedule([assign("j", start, end, place("n-0", 0))]))
    if fault is None:
        assert vs == []
    else:
        v = one("R2", vs)
        assert v.job == "j" and fault in v.message


# --- R3 ----------------------------------------------------------------------------


def test_r3_profiled_job_two_units_off():
    # 10 iterations x 1000 ms = 10 s alone (§4); §4 accepts an end within one unit of it.
    m = profile("m", {1: (1000.0, 0.0, 1000.0, 0.0)})
    inst = make_instance([Job("x", 1, model="m", iterations=10)], [NodeGroup("n", 1, 1)], [m])
    assert verify(inst, make_schedule([assign("x", 0, 11, place("n-0", 0))])) == []
    v = one("R3", verify(inst, make_schedule([assign("x", 0, 12, place("n-0", 0))])))
    assert v.job == "x" and "10" in v.message


def test_r3_elastic_group_not_admissible_at_its_count():
    # §12: members of a group run at the placement's count, §4 there. At 2 GPUs the
    # stages (90, 5, 5) and (0, 100, 0) give TT2 = 100 + 10 = 110, cycle 110 * 1.31 < 200
    # (sum of solo times): admissible. At 4 GPUs both are (0, 100, 0): TT2 = 200, cycle
    # >= 200: not admissible, and the group runs at 4.
    dat = profile("dat", {2: (100.0, 90.0, 5.0, 5.0), 4: (100.0, 0.0, 100.0, 0.0)})
    gpu = profile("gpu", {2: (100.0, 0.0, 100.0, 0.0), 4: (100.0, 0.0, 100.0, 0.0)})
    jobs = [
        Job("a", 2, model="dat", iterations=10, gpu_counts=(2, 4)),
        Job("b", 2, model="gpu", iterations=10, gpu_counts=(2, 4)),
    ]
    inst = make_instance(
        jobs, [NodeGroup("n", 1, 4)], [dat, gpu], interleaving=Interleaving(enabled=True)
    )
    four = place("n-0", 0, 1, 2, 3)
    s = make_schedule([assign("a", 0, 3, four, group="G"), assign("b", 0, 3, four, group="G")])
    v = one("R3", verify(inst, s))
    assert v.job == "a" and "not admissible" in v.message and "cycle" in v.message


# --- R4 ----------------------------------------------------------------------------


def test_r4_checks_every_predecessor():
    # r after p and q: starting when p ends (10) is fine for p, but q ends at 20.
    inst = _solo(
        Job("p", 1, duration=10),
        Job("q", 1, duration=20),
        Job("r", 1, duration=10, after=("p", "q")),
        gpus=2,
    )
    s = make_schedule(
        [
            assign("p", 0, 10, place("n-0", 0)),
            assign("q", 0, 20, place("n-0", 1)),
            assign("r", 10, 20, place("n-0", 0)),
        ]
    )
    v = one("R4", verify(inst, s))
    assert (v.job, v.time) == ("r", 10) and "q" in v.message and "p" not in v.message


# --- R5 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpus", "placement", "node", "fragment"),
    [
        (1, [place("a-0", 0, 0)], "a-0", "listed twice"),  # one distinct GPU, counted once
        (8, [place("a-0", 0, 1, 2, 3), place("a-0", 0, 1, 2, 3)], None, "node appears twice"),
        (4, [place("b-0", 0, 1), place("a-0", 0, 1)], None, "different node groups"),
        (2, [place("a-0", 0), place("a-1", 0)], None, "2 nodes are used"),  # fits one node
        (1, [place("a-0", 0), place("a-1", 0)], None, "a job of 1 GPU fits one 4-GPU node"),
        (1, [place("a-0", 0, 1)], "a-0", "uses 2 GPUs"),  # one GPU too many
        (6, [place("a-0", 0, 1, 2, 3), place("a-1", 0, 1)], None, "not a whole number"),
    ],
    ids=[
        "gpu-twice",
        "node-twice",
        "mixed-groups",
        "split",
        "split-one-gpu",
        "too-many",
        "not-a-multiple",
    ],
)
def test_r5_placement_shapes(gpus, placement, node, fragment):
    # R5: g <= GPUs per node: g distinct GPUs of one node; else g / GPUs-per-node whole
    # nodes of one node group, g dividing evenly. Groups a (4-GPU nodes), b (2-GPU nodes).
    groups = [NodeGroup("a", 2, 4), NodeGroup("b", 2, 2)]
    inst = make_instance([Job("j", gpus, duration=10)], groups)
    v = one("R5", verify(inst, make_schedule([assign("j", 0, 10, *placement)])))
    assert (v.job, v.node) == ("j", node) and fragment in v.message


# --- R6 ----------------------------------------------------------------------------


def test_r6_clash_with_a_job_that_is_not_the_first_on_the_gpu():
    # a [0, 10), b [10, 20), c [15, 25) on one GPU: only b and c overlap, during [15, 20).
    v = one("R6", verify(*_three_on_one_gpu()))
    assert (v.job, v.node, v.gpu, v.time) == ("c", "n-0", 0, 15)
    assert "job b" in v.message and "job c" in v.message


def test_an_unknown_schedule_with_jobs_is_still_checked():
    # Only an empty infeasible/unknown schedule is exempt (planner/verify/__init__.py).
    v = one("R6", verify(*_three_on_one_gpu(status="unknown")))
    assert (v.job, v.time) == ("c", 15)


# --- R7 ----------------------------------------------------------------------------


def test_r7_every_overload_is_listed():
    # Node: 4 CPUs, 8 GB. a (3 CPUs, 2 GB) + b (2 CPUs, 1 GB) from 0: 5 CPUs > 4. c (6 GB)
    # from 5: 2 + 1 + 6 = 9 GB > 8 while the CPUs are still over: a second fault.
    inst = make_instance(
        [
            Job("a", 1, duration=10, cpus_per_gpu=3, mem_gb_per_gpu=2),
            Job("b", 1, duration=10, cpus_per_gpu=2, mem_gb_per_gpu=1),
            Job("c", 1, duration=10, mem_gb_per_gpu=6),
        ],
        [NodeGroup("n", 1, 3, cpus=4, mem_gb=8)],
    )
    s = make_schedule(
        [
            assign("a", 0, 10, place("n-0", 0)),
            assign("b", 0, 10, place("n-0", 1)),
            assign("c", 5, 15, place("n-0", 2)),
        ]
    )
    vs = verify(inst, s)
    assert rules(vs) == {"R7"} and len(vs) == 2, [str(v) for v in vs]
    assert [(v.time, v.node) for v in vs] == [(0, "n-0"), (5, "n-0")]
    assert "CPUs" in vs[0].message and "memory" in vs[1].message and vs[1].job == "c"


# --- R8 ----------------------------------------------------------------------------


def _pool(jobs: list[Job], cap: float, *res: Any) -> Instance:
    return _solo(*jobs, pools={"lic": cap}, reservations=tuple(res))


def test_r8_reservation_for_nobody_and_one_for_the_job():
    # Pool 10: hold keeps 5 from everyone, forA keeps 5 for A. A may use forA's 5 and the
    # 0 left free: its 6 is 1 too many.
    inst = _pool(
        [Job("A", 0, duration=10, demand={"lic": 6})],
        10,
        reservation("forA", 0, 100, pool="lic", amount=5, for_=admits(jobs=["A"])),
        reservation("hold", 0, 100, pool="lic", amount=5),
    )
    v = one("R8", verify(inst, make_schedule([assign("A", 0, 10)])))
    assert v.time == 0 and "hold" in v.message


def test_r8_one_unit_jobs_count():
    # Two jobs of one time unit, 6 each, together at [0, 1): 12 > 10.
    inst = _pool([Job(x, 0, duration=1, demand={"lic": 6}) for x in "ab"], 10)
    v = one("R8", verify(inst, make_schedule([assign("a", 0, 1), assign("b", 0, 1)])))
    assert v.time == 0 and "12" in v.message


# --- R10 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "nodes", "on", "at"),
    [
        (19, 29, ["n-0"], "n-0", 19),  # overlaps the reservation's last unit
        (1, 11, ["n-0"], "n-0", 10),  # overlaps its first unit
        (45, 55, ["n-0"], "n-0", 50),  # a one-unit reservation [50, 51), see below
        (10, 20, ["n-0", "n-1"], "n-1", 10),  # reserved on its second node
        (20, 30, ["n-0"], None, None),  # right after: half-open, no fault
        (0, 10, ["n-0"], None, None),  # right before
    ],
)
def test_r10_reservation_edges(start, end, nodes, on, at):
    # A GPU reservation [10, 20) (or [50, 51) when the job is at 45) admitting nobody on
    # `nodes`: no job may use those GPUs inside it. The job runs on `on` (n-0 if None).
    r_start, r_end = (50, 51) if start == 45 else (10, 20)
    inst = _solo(
        Job("j", 1, duration=10),
        nodes=2,
        reservations=(reservation("r", r_start, r_end, nodes=nodes),),
    )
    vs = verify(inst, make_schedule([assign("j", start, end, place(on or "n-0", 0))]))
    if on is None:
        assert vs == []
    else:
        v = one("R10", vs)
        assert (v.job, v.node, v.gpu, v.time) == ("j", on, 0, at)


# --- reading ---------------------------------------------------------------------------


def test_an_empty_job_id_is_refused():
    # Ids are non-empty strings (planner/checker.py, `str_value`): "" names no job.
    d = {
        "version": 1,
        "cluster": {"nodes": [{"name": "a", "gpus": 1}]},
        "jobs": [{"id": "", "duration": 10, "gpus": 1}],
    }
    with pytest.raises(InputError) as e:
        instance_from_dict(d, catalogue={})
    assert [(p.path, "non-empty string" in p.message) for p in e.value.problems] == [
        ("jobs[0].id", True)
    ]
