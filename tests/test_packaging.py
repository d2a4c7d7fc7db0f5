"""The package as a user installs it without a clone (`pip install .`, a wheel): it must
carry the model catalogue, or every instance naming a catalogue model is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from planner.read import read_instance, read_schedule
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built with the environment's own setuptools (no download) from
    a copy of the sources, so that the build leaves nothing in the repository."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.so")
    for folder in ("planner", "models"):
        shutil.copytree(ROOT / folder, src / folder, symlinks=True, ignore=skip)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
        ]
        + [str(src), "-w", str(out)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("planner-*.whl")
    return built


def test_the_wheel_carries_every_catalogue_model(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {Path(n).name for n in names if n.startswith("planner/models/")}
    assert {p.name for p in (ROOT / "models").glob("*.json")} <= shipped
    assert "README.md" in shipped  # the catalogue's credits travel with it


def test_the_installed_package_plans_the_demo_from_its_own_catalogue(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("PLANNER_MODELS", None)
    where = subprocess.run(
        [sys.executable, "-c", "import planner.catalogue as c; print(c.DEFAULT_DIR)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(site)
    out = tmp_path / "s.json"
    demo = ROOT / "instances" / "demo.json"
    done = subprocess.run(
        [sys.executable, "-m", "planner", "solve", str(demo), "--solver", "greedy"]
        + ["-o", str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert verify(read_instance(demo), read_schedule(out)) == []
