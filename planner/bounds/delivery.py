"""What interleaving groups can deliver, for `planner.bounds`: the exact per-model floors of
ingredient 3 (`enumerate_groups`) and the group types of ingredient 7 (`config_types`);
both are argued in `planner.bounds`' module docstring."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from planner.bounds.config import count_types, multiset_cycles
from planner.durations import StageTuple, gpu_mem_fits, solo_iteration_ms, stage_tuple
from planner.instance import Instance, Job

# Float sums of phase times may differ from the exact arithmetic by a few ulps; shaving a
# relative 1e-9 keeps every bound on the safe side of a ceiling.
SAFE = 1.0 - 1e-9


def below_rounding(value: float, magnitude: float) -> float:
    """`value`, a difference of float sums as large as `magnitude`, lowered by what their
    rounding could have added: weights of 10^6 and times of 10^12 make sums of 10^18,
    where one ulp is 128 (tests/test_bounds.py)."""
    return value - 16 * sys.float_info.epsilon * abs(magnitude)


# The ways a group's GPU time is attributed to its members (`planner.bounds`' module
# docstring, item 3).
SCHEMES = ("gpu-stage", "equal", "half-half")


def enumerate_groups(
    models: list[str],
    stages: list[StageTuple],
    sizes: Sequence[int],
    overhead: Mapping[int, float],
    solo: Sequence[float],
    weight: Sequence[float],
) -> dict[str, tuple[float, list[float]]]:
    """Every multiset of `sizes` members drawn from `models`: its c(G) (contract §4, the
    slot recursion of every ordering run side by side in numpy, and the pair formula), then
    per model the least c(G) and, per scheme A, B, C, a per-iteration GPU-time share
    (ms) such that the shares of every multiset's members sum to at most its c(G)."""
    sets, cycles = multiset_cycles(stages, sizes, overhead)
    if not sets:
        return {}
    out: dict[str, tuple[float, list[float]]] = {}
    for ms, c in zip(sets, cycles, strict=True):
        k = len(ms)
        gsum = sum(stages[m][1] for m in ms)
        for m in set(ms):
            ga = stages[m][1] / gsum if gsum > 0 else 1.0 / k
            vals = [c * ga, c / k, c * (ga + 1.0 / k) / 2]
            name = models[m]
            if name not in out:
                out[name] = (c, vals)
            else:
                old_c, old = out[name]
                out[name] = (min(old_c, c), [min(x, y) for x, y in zip(old, vals, strict=True)])
    # Raise each scheme's shares while every multiset still fits: any s with
    # sum_(t in G) s_t <= c(G) for all G and s_t <= solo_t is a valid attribution, so the
    # raised shares stay valid and only grow. Heaviest models first.
    containing: dict[int, list[int]] = defaultdict(list)
    for s_i, ms in enumerate(sets):
        for m in set(ms):
            containing[m].append(s_i)
    order = sorted(range(len(models)), key=lambda m: -weight[m])
    for scheme in range(len(SCHEMES)):
        sh = [min(solo[m], out[models[m]][1][scheme]) for m in range(len(models))]
        for m in order:
            slack = min(
                (cycles[s_i] - sum(sh[u] for u in sets[s_i])) / sets[s_i].count(m)
                for s_i in containing[m]
            )
            sh[m] = min(solo[m], sh[m] + max(0.0, slack))
        for m, name in enumerate(models):
            out[name][1][scheme] = sh[m]
    return out


class ConfigTypes(NamedTuple):
    """Group types for ingredient 7: per type its GPU count and members' rates (types x
    classes), the class number of each (GPU count, model) and its largest rate rho."""

    gpus: np.ndarray
    rates: np.ndarray
    classes: dict[tuple[int, str], int]
    best: dict[tuple[int, str], float]


def config_types(
    inst: Instance, partners: Sequence[Job], speed: float, mem: float | None
) -> ConfigTypes:
    """The group types (`count_types`) of the models of `partners` (every job that may
    run on the family's nodes) per GPU count, on nodes of this speed and GPU memory."""
    by_count: dict[int, dict[str, int]] = defaultdict(dict)
    for j in partners:
        if j.model is not None:
            by_count[j.gpus][j.model] = by_count[j.gpus].get(j.model, 0) + 1
    il = inst.interleaving
    classes: dict[tuple[int, str], int] = {}
    best: dict[tuple[int, str], float] = {}
    blocks: list[tuple[int, int, np.ndarray]] = []  # (GPU count, first class, rates)
    for k, counts in sorted(by_count.items()):
        models = sorted(counts)
        top = min(il.max_group, sum(counts.values()))
        gps = [inst.profiles[m].by_gpus[k] for m in models]

        def fits(ms: tuple[int, ...], k: int = k, models: list[str] = models) -> bool:
            jobs = [Job(f"_{i}", k, models[m], 1) for i, m in enumerate(ms)]
            return gpu_mem_fits(inst, jobs, mem)

        got = count_types(
            [stage_tuple(gp, speed) for gp in gps],
            [solo_iteration_ms(gp, speed) for gp in gps],
            [counts[m] for m in models],
            [q for q in range(2, top + 1) if q in il.overhead],
            il.overhead,
            fits,
        )
        if not len(got.rates):
            continue
        blocks.append((k, len(classes), got.rates))
        for m_i, m in enumerate(models):
            classes[(k, m)] = len(classes)
            best[(k, m)] = float(got.best[m_i])
    rates = np.zeros((sum(len(r) for _, _, r in blocks), len(classes)))
    gpus, row = [], 0
    for k, first, r in blocks:
        rates[row : row + len(r), first : first + r.shape[1]] = r
        gpus += [k] * len(r)
        row += len(r)
    return ConfigTypes(np.array(gpus, dtype=int), rates, classes, best)


def solo_work(inst: Instance, j: Job, speed: float) -> float:
    """A job's work in time units run solo on nodes of this speed (its duration when it
    has no model), shaved by SAFE for float sums."""
    if j.model is None:
        return float(j.duration or 0)
    return (j.iterations or 0) * solo_iteration_ms(inst.gpu_profile(j), speed) / inst.unit_ms * SAFE
