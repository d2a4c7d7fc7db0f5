"""Rate-based progress of one run (contract §8): the members of a group on one GPU set, each
with iterations left and restart time left, from an epoch on, until the last one is done.

The whole future of a run is fixed until a decision changes it, so it is computed once as
phases (stretches with a constant set of co-runners) and read off at any later instant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# Work left below this (iterations, or time units for explicit jobs) counts as done.
_DONE = 1e-9


def _close(dt: float) -> float:
    """How near (ms) a member's own finish may be to the end of a phase of `dt` ms to end
    with it: 1e-9 ms, or a billionth of a phase shorter than 1 ms. Under a vanishingly
    small group cycle (an overhead of 1e-12) a whole job's work takes less than 1e-9 ms,
    and an absolute margin ended its co-runners with it (tests/test_simulate.py, the
    vanishing cycle test)."""
    return 1e-9 * min(1.0, dt)


@dataclass(frozen=True)
class Phase:
    end: float  # ms after the epoch
    it: Mapping[str, float]  # ms per unit of progress of each progressing member
    restarting: tuple[str, ...]  # members paying their restart cost in this phase


@dataclass(frozen=True)
class Trajectory:
    rem: Mapping[str, float]  # work left at the epoch
    restart: Mapping[str, float]  # restart ms left at the epoch
    phases: tuple[Phase, ...]
    finish: Mapping[str, float]  # ms after the epoch at which each member's work is done


def trajectory(
    rem: Mapping[str, float],
    restart: Mapping[str, float],
    cycle: Callable[[Sequence[str]], Mapping[str, float]],
) -> Trajectory:
    """Phases until every member is done; `cycle(active)` gives each active member's ms per
    unit of progress with exactly those co-runners (solo time for one, c(G) for more)."""
    left = dict(rem)
    rst = dict(restart)
    active = sorted(left)
    now = 0.0
    phases: list[Phase] = []
    finish: dict[str, float] = {}
    while active:
        its = cycle(active)
        waits = [rst[a] for a in active if rst[a] > 0]
        works = [left[a] * its[a] for a in active if rst[a] <= 0]
        dt = min(waits + works)
        restarting = tuple(a for a in active if rst[a] > 0)
        progressing = {a: its[a] for a in active if rst[a] <= 0}
        now += dt
        phases.append(Phase(now, progressing, restarting))
        for a in restarting:
            rst[a] = max(0.0, rst[a] - dt)
        for a, it in progressing.items():
            left[a] = 0.0 if left[a] * it - dt <= _close(dt) else left[a] - dt / it
        for a in active:
            if rst[a] <= 0 and left[a] <= _DONE:
                finish[a] = now
        active = [a for a in active if a not in finish]
    return Trajectory(dict(rem), dict(restart), tuple(phases), finish)


def state_at(tr: Trajectory, offset: float) -> tuple[dict[str, float], dict[str, float]]:
    """(work left, restart ms left) of every member `offset` ms after the epoch."""
    left = dict(tr.rem)
    rst = dict(tr.restart)
    start = 0.0
    for ph in tr.phases:
        if start >= offset:
            break
        span = min(ph.end, offset) - start
        for a in ph.restarting:
            rst[a] = max(0.0, rst[a] - span)
        for a, it in ph.it.items():
            left[a] = max(0.0, left[a] - span / it)
        start = ph.end
    for a, f in tr.finish.items():
        if f <= offset:
            left[a] = 0.0
            rst[a] = 0.0
    return left, rst
