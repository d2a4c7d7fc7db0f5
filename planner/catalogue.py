"""The model catalogue: measured profiles in models/<model>.json (contract §3).

The default folder is `$PLANNER_MODELS` when set, else the repository's `models/` in a clone,
or its copy `planner/models` in an installed wheel (pyproject.toml, `tests/test_packaging.py`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from planner.checker import Checker
from planner.errors import InputError
from planner.instance import Profile
from planner.profiles import parse_profile

_PACKAGE = Path(__file__).resolve().parent
_WHEEL_COPY = _PACKAGE / "models"
DEFAULT_DIR = _WHEEL_COPY if _WHEEL_COPY.is_dir() else _PACKAGE.parent / "models"


def models_dir(directory: Path | str | None = None) -> Path:
    if directory is not None:
        return Path(directory)
    env = os.environ.get("PLANNER_MODELS")
    return Path(env) if env else DEFAULT_DIR


def load_profile(path: Path) -> Profile:
    """One catalogue file; its `model` must match the file name."""
    from planner.jsonio import read_json

    d = read_json(path)
    ck = Checker()
    prof = parse_profile(d, "$", ck, name=path.stem)
    if prof is None or ck.problems:
        raise InputError(str(path), ck.problems)
    return prof


def load_catalogue(directory: Path | str | None = None) -> dict[str, Profile]:
    """Every `*.json` profile in the folder, by model name (a missing folder is empty)."""
    folder = models_dir(directory)
    if not folder.is_dir():
        return {}
    return {p.stem: load_profile(p) for p in sorted(folder.glob("*.json"))}


def catalogue_rows(directory: Path | str | None = None) -> list[dict[str, Any]]:
    """One row per model for `plan models`: name, GPU counts, memory, batch size, and the
    solo iteration time in ms at each GPU count (a list aligned with `gpus`)."""
    rows = []
    for name, prof in load_catalogue(directory).items():
        rows.append(
            {
                "model": name,
                "gpus": list(prof.by_gpus),
                "gpu_mem_gb": prof.gpu_mem_gb,
                "batch_size": prof.batch_size,
                "iteration_ms": [gp.iteration_ms for gp in prof.by_gpus.values()],
            }
        )
    return rows
