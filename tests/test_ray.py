"""`plan bench --executor ray` gives the same rows as local processes (except wall_s).

Starts a small local Ray instance (2 CPUs, no dashboard) and shuts it down afterwards.
Skipped only when Ray is not installed (`pip install -e '.[ray]'` from the clone).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner.batch.executors import run_local, run_ray
from planner.batch.results import read_results
from planner.batch.suite import collect_instances, make_tasks
from planner.cli import main

ray = pytest.importorskip("ray")

DATA = Path(__file__).parent / "data" / "bench"
SOLVERS = ["greedy:fifo", "greedy:sjf"]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: v for k, v in r.items() if k != "wall_s"} for r in rows),
        key=lambda r: (r["instance"], r["solver"], r["repeat"]),
    )


def test_ray_rows_equal_local_rows(local_ray: None) -> None:
    tasks = make_tasks(collect_instances([str(DATA)]), SOLVERS, time_limit=5.0)
    assert len(tasks) == 4
    local = list(run_local(tasks, workers=1))
    remote = list(run_ray(tasks, workers=2))
    assert ray.is_initialized()  # a Ray it did not start is left running
    assert len(remote) == 4
    assert _strip(remote) == _strip(local)
    assert all(r["verified"] and r["status"] in ("feasible", "optimal") for r in remote)


def test_ray_cli_writes_the_same_file(local_ray: None, tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["bench", str(DATA), "--solvers", ",".join(SOLVERS), "--time-limit", "5", "--json"]
    res = runner.invoke(main, [*common, "--workers", "1", "-o", str(tmp_path / "local.csv")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        main, [*common, "--executor", "ray", "--workers", "2", "-o", str(tmp_path / "ray.csv")]
    )
    assert res.exit_code == 0, res.output
    local, _ = read_results(tmp_path / "local.csv")
    remote, _ = read_results(tmp_path / "ray.csv")
    assert [r["solver"] for r in remote] == [r["solver"] for r in local]  # canonical order
    assert _strip(remote) == _strip(local)


def test_an_address_nothing_answers_at_is_exit_2_at_once(tmp_path: Path) -> None:
    """`ray.init` retried it for minutes, a warning every 5 s, leaving a header-only file."""
    import socket

    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "r.csv"
    args = ["bench", str(DATA), "--solvers", "greedy:fifo", "-o", str(out)]
    before = ray.is_initialized()  # this module's local Ray may be up
    r = CliRunner().invoke(main, [*args, "--executor", "ray", "--address", f"127.0.0.1:{port}"])
    assert r.exit_code == 2 and "no Ray cluster answers there" in r.output, r.output
    assert not out.exists() and ray.is_initialized() == before
