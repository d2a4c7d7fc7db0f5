"""The event-driven greedy engine's shortcuts for a binding pool (`greedy/events.py`,
`_pools_fit_solo` and `_bucket_min`): a demand that does not fit at an instant passes over
every job of that demand and class until the next start. They must change no schedule:
with the shortcut disabled (every pool check made in full by `planner.pools.pools_fit`, so
no floor is learnt) every rule plans the same jobs at the same times on the same GPUs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planner.errors import InputError
from planner.pools import pools_fit
from planner.read import instance_from_dict
from planner.solvers import SolveOptions
from planner.solvers.greedy import RULES, solve_greedy
from planner.solvers.greedy.events import _Engine
from planner.verify import verify

TENANTS = ("a", "b", None)


@st.composite
def pool_bound(draw: st.DrawFn) -> dict[str, Any]:
    """Many short jobs on one or two 8-GPU nodes behind a small power pool with
    reservations that admit one tenant, or none."""
    jobs = []
    for i in range(draw(st.integers(5, 30))):
        job: dict[str, Any] = {
            "id": f"j{i}",
            "gpus": draw(st.sampled_from([0, 1, 2, 4])),
            "duration": draw(st.sampled_from([0, 1, 5, 20, 60])),
            "release": draw(st.integers(0, 80)),
            "priority": draw(st.integers(0, 1)),
            "demand": {"power_kw": draw(st.sampled_from([0, 1, 2, 3, 5]))},
        }
        tenant = draw(st.sampled_from(TENANTS))
        if tenant is not None:
            job["tenant"] = tenant
        jobs.append(job)
    reservations = []
    for k in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, 100))
        tenant = draw(st.sampled_from(TENANTS))
        reservations.append(
            {
                "id": f"p{k}",
                "start": start,
                "end": start + draw(st.integers(1, 100)),
                "pool": "power_kw",
                "amount": draw(st.sampled_from([1, 2, 4])),
                "for": None if tenant is None else {"tenants": [tenant]},
            }
        )
    return {
        "name": "pool-bound",
        "cluster": {
            "nodes": [{"name": "n", "count": draw(st.integers(1, 2)), "gpus": 8}],
            "pools": {"power_kw": draw(st.sampled_from([5, 6, 8]))},
        },
        "policy": {"priority": draw(st.sampled_from(["strict", "none"]))},
        "reservations": reservations,
        "jobs": jobs,
    }


def plans(doc: dict[str, Any]) -> dict[str, Any]:
    inst = instance_from_dict(doc, file="<generated>")
    out = {}
    for rule in RULES:
        s = solve_greedy(inst, rule, SolveOptions(), engine="events")
        assert s.status == "feasible" and verify(inst, s) == [], (rule, s.info)
        out[rule] = [(a.id, a.start, a.end, a.placement) for a in s.jobs]
    return out


@settings(max_examples=40, deadline=None)
@given(pool_bound())
def test_the_pool_floor_changes_no_schedule(doc: dict[str, Any]) -> None:
    try:
        instance_from_dict(doc, file="<generated>")
    except InputError:  # reservations that hold more than the pool (planner/validate.py)
        assume(False)
    with_floor = plans(doc)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            _Engine, "_pools_fit_solo", lambda e, i, t, d: pools_fit(e.pools, (e.jobs[i],), t, (d,))
        )
        assert plans(doc) == with_floor
