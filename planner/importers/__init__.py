"""Converters from public benchmark and trace formats to the contract's instance JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def project_instance(
    name: str, pools: Mapping[str, float], jobs: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A makespan instance of pool-only jobs (PSPLIB, job-shop): no nodes, just pools."""
    return {
        "version": 1,
        "name": name,
        "time_unit": "s",
        "cluster": {"nodes": [], "pools": dict(pools)},
        "objective": ["makespan"],
        "jobs": list(jobs),
    }
