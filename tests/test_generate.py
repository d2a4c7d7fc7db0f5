"""Seeded instance generator (planner.generate)."""

from __future__ import annotations

import json

import pytest

from planner.generate import FAMILIES, generate
from planner.read import instance_from_dict
from planner.solvers import SolveOptions
from planner.solvers.greedy import solve_greedy
from planner.verify import verify


@pytest.mark.parametrize("family", FAMILIES)
def test_valid_feasible_and_deterministic(family):
    for seed in range(6):
        d = generate(family, 25, 3, seed)
        assert d == generate(family, 25, 3, seed)
        json.dumps(d)  # plain JSON data
        inst = instance_from_dict(d)
        assert len(inst.jobs) == 25
        s = solve_greedy(inst, None, SolveOptions())
        assert s.status == "feasible", s.info
        assert verify(inst, s) == []
    assert generate(family, 25, 3, 0) != generate(family, 25, 3, 1)


def test_mixed_exercises_every_feature():
    d = generate("mixed", 60, 4, seed=1)
    inst = instance_from_dict(d)
    jobs = inst.jobs
    assert len({g.speed for g in inst.node_groups}) == 2
    assert len({g.gpus for g in inst.node_groups}) == 2
    assert all(g.cpus is not None and g.mem_gb is not None for g in inst.node_groups)
    assert inst.pools and inst.interleaving.enabled and inst.priority_policy == "strict"
    res = inst.reservations
    assert any(r.pool and r.admits.tenants for r in res)  # pool reservation for a tenant
    assert any(r.nodes and not r.admits.tenants and not r.admits.jobs for r in res)  # maint
    assert any(r.nodes and r.gpus and r.admits.tenants for r in res)  # tenant hold on GPUs
    assert len({j.priority for j in jobs}) == 2
    assert len({j.release for j in jobs}) > 1
    assert any(j.after for j in jobs)
    assert any(j.duration is not None and j.gpus == 0 and j.demand for j in jobs)
    assert any(j.duration is not None and j.gpus > 0 for j in jobs)
    assert any(j.due is not None for j in jobs) and any(j.deadline is not None for j in jobs)
    assert any(j.node_types for j in jobs)
    assert any(j.cpus_per_gpu for j in jobs) and any(j.tenant for j in jobs)
    assert inst.horizon is not None


def test_dl_gpu_counts_like_the_traces():
    inst = instance_from_dict(generate("dl", 300, 8, seed=4))
    counts = [j.gpus for j in inst.jobs]
    assert counts.count(8) > len(counts) / 2
    assert set(counts) <= {1, 2, 4, 8, 16, 32}
    assert all(j.profiled for j in inst.jobs)


def test_rcpsp_is_gpu_less_with_pools_and_precedence():
    inst = instance_from_dict(generate("rcpsp", 30, 1, seed=2))
    assert all(j.gpus == 0 and j.duration is not None for j in inst.jobs)
    assert len(inst.pools) == 4 and any(j.after for j in inst.jobs)


def test_unknown_family_rejected():
    with pytest.raises(ValueError):
        generate("nope", 5, 1, 0)
