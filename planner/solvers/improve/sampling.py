"""List orders for the improvement search: random perturbations of an order (biased random
sampling) and orders by parameterised keys."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from planner.instance import Instance
from planner.solvers.greedy.order import best_solo_duration


def perturbed(
    instance: Instance,
    ranks: Sequence[int],
    width: float,
    rng: random.Random,
    classes: Mapping[str, int] | None = None,
) -> list[int]:
    """`ranks` with each position moved by Gaussian noise of standard deviation
    `width * n` (at least 1); `classes` (effective priority under strict priority) keeps
    higher classes first."""
    n = len(ranks)
    sd = max(1.0, width * n)
    jobs = instance.jobs
    keys = []
    for i, r in enumerate(ranks):
        cls = -classes[jobs[i].id] if classes is not None else 0
        keys.append((cls, r + rng.gauss(0.0, sd), i))
    order = sorted(range(n), key=lambda i: keys[i])
    out = [0] * n
    for r, i in enumerate(order):
        out[i] = r
    return out


def keyed(
    instance: Instance, a: float, b: float, classes: Mapping[str, int] | None = None
) -> list[int]:
    """List positions by the key `max(gpus, 1)^a * solo^b / weight` (then instance order),
    after the effective-priority class when `classes` is given."""
    jobs = instance.jobs
    keys = []
    for i, j in enumerate(jobs):
        cls = -classes[j.id] if classes is not None else 0
        solo = max(1, best_solo_duration(instance, j))
        keys.append((cls, max(1, j.gpus) ** a * solo**b / max(j.weight, 1e-9), i))
    order = sorted(range(len(jobs)), key=lambda i: keys[i])
    out = [0] * len(order)
    for r, i in enumerate(order):
        out[i] = r
    return out
