"""Model profiles (contract §3): the structural check of one profile, inline in an instance
(`profiles`) or a catalogue file (models/<model>.json)."""

from __future__ import annotations

from typing import Any

from planner.checker import REQUIRED, Checker, join
from planner.instance import GpuProfile, Profile, Stages

PROFILE_FIELDS = ("model", "batch_size", "gpu_mem_gb", "by_gpus")
GPU_PROFILE_FIELDS = ("iteration_ms", "stages_ms", "restart_ms")
STAGE_FIELDS = ("data", "gpu", "net")


def parse_profile(v: Any, path: str, ck: Checker, name: str | None = None) -> Profile | None:
    """One model profile; `name` is the expected model name (dict key or file stem)."""
    before = ck.fatal
    d = ck.obj(v, path, PROFILE_FIELDS)
    if d is None:
        return None
    model = ck.string(d, "model", path, default=name if name is not None else REQUIRED)
    if name is not None and model is not None and model != name:
        ck.add(join(path, "model"), f"'{model}' differs from its name '{name}'")
    batch = ck.integer(d, "batch_size", path, default=None, minimum=1, nullable=True)
    mem = ck.number(d, "gpu_mem_gb", path, default=None, positive=True, nullable=True)
    by_gpus: dict[int, GpuProfile] = {}
    bp = join(path, "by_gpus")
    raw = ck.mapping(d["by_gpus"], bp) if "by_gpus" in d else None
    if "by_gpus" not in d:
        ck.add(bp, "required field is missing")
    if raw is not None:
        if not raw:
            ck.add(bp, "needs at least one GPU count")
        for key, entry in raw.items():
            ep = f"{bp}.{key}"
            # as written: "02" would be a second key for 2, "²" no integer at all
            if not (key.isascii() and key.isdigit()) or key != str(int(key)) or int(key) < 1:
                ck.add(
                    ep,
                    f"'{key}' is not a GPU count (a positive integer as a string, "
                    "without leading zeros)",
                )
                continue
            e = ck.obj(entry, ep, GPU_PROFILE_FIELDS)
            if e is None:
                continue
            it = ck.number(e, "iteration_ms", ep, positive=True)
            restart = ck.number(e, "restart_ms", ep, default=None, nullable=True)
            sp = join(ep, "stages_ms")
            s = ck.obj(e["stages_ms"], sp, STAGE_FIELDS) if "stages_ms" in e else None
            if "stages_ms" not in e:
                ck.add(sp, "required field is missing")
            if s is None or it is None:
                continue
            st = [ck.number(s, k, sp) for k in STAGE_FIELDS]
            if all(x == 0 for x in st):
                # a group's cycle (contract §4) is at least its members' stage sums: all 0,
                # it would be 0 and interleaving's speeds (solo / cycle) infinite
                ck.add(sp, f"every stage is 0, but an iteration takes {it:g} ms")
            elif all(x is not None for x in st):
                by_gpus[int(key)] = GpuProfile(it, Stages(*st), restart)
    if ck.fatal != before or model is None:
        return None
    return Profile(
        model=model, by_gpus=dict(sorted(by_gpus.items())), gpu_mem_gb=mem, batch_size=batch
    )
