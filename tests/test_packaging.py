"""The package as a user installs it without a clone (`pip install .`, a wheel, an sdist):
it must carry every module and the model catalogue, or every instance naming a catalogue
model is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from planner.read import read_instance, read_schedule
from planner.verify import verify

ROOT = Path(__file__).resolve().parent.parent
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
SDIST_FOLDERS = ("tests", "instances", "docs")  # MANIFEST.in: what the tests read


def _build_tools() -> str | None:
    """Why this environment cannot build the package offline (None: it can): the dev extra
    brings setuptools >= 77 (pyproject.toml), a venv made without pip has none."""
    try:
        version = {name: metadata.version(name) for name in ("pip", "setuptools")}
    except metadata.PackageNotFoundError as e:
        return f"no {e.name} in this environment"
    major = int(version["setuptools"].split(".")[0])
    return None if major >= 77 else f"setuptools {version['setuptools']} < 77"


pytestmark = pytest.mark.skipif(_build_tools() is not None, reason=str(_build_tools()))


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what a build reads, so that building leaves nothing in the repository."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "Makefile"):
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.so")
    for folder in ("planner", "models", *SDIST_FOLDERS):
        shutil.copytree(ROOT / folder, src / folder, ignore=skip)
    return src


@pytest.fixture(scope="module")
def wheel(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built as `pip install .` builds it, with the environment's own
    setuptools (no download)."""
    out = tmp_path_factory.mktemp("wheel")
    build = ["wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    done = subprocess.run(
        [*PIP, *build, str(sources), "-w", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("planner-*.whl")
    return built


def catalogue_files() -> set[str]:
    return {p.name for p in (ROOT / "models").iterdir() if p.suffix in (".json", ".md")}


def test_the_wheel_carries_every_module_and_the_catalogue(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "planner").rglob("*.py")}
    assert modules - names == set()  # a package missing from pyproject.toml's list
    shipped = {Path(n).name for n in names if n.startswith("planner/models/")}
    assert catalogue_files() <= shipped  # models/README.md: the catalogue's credits


def test_the_sdist_carries_the_catalogue_the_licence_and_what_its_tests_read(
    sources: Path, tmp_path: Path
) -> None:
    code = "import sys, setuptools.build_meta as b; b.build_sdist(sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], cwd=sources, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (sdist,) = tmp_path.glob("planner-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {Path(n).relative_to(sdist.name.removesuffix(".tar.gz")) for n in tar.getnames()}
    assert {Path("models", n) for n in catalogue_files()} <= names
    assert Path("LICENSE") in names
    wanted = {
        p.relative_to(sources)
        for folder in SDIST_FOLDERS
        for p in (sources / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert wanted - names == set()


def test_the_installed_package_plans_the_demo_from_its_own_catalogue(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
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
    assert Path(where.stdout.strip()) == site / "planner" / "models"
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
