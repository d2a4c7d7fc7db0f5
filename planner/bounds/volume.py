"""Capacity over time, for `planner.bounds`: the volume bound of ingredient 3
(`volume_bound`), the capacity-time per slot of the LPs' grids (`slot_room`) and the
mean-busy-time bound of ingredient 4 (`mean_busy_bound`), as argued in `planner.bounds`'
module docstring."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict

import numpy as np


def volume_bound(
    head: np.ndarray, vol: np.ndarray, cap: float, events: list[tuple[float, float]]
) -> float:
    """max over thresholds r of the earliest T with capacity-time in [r, T] >= the volume of
    jobs with head >= r; capacity is `cap` plus the step changes in `events`."""
    if cap <= 0 or len(vol) == 0:
        return 0.0
    # Breakpoints of the capacity rate and the cumulative capacity A(t) at them.
    deltas: dict[float, float] = defaultdict(float)
    for t, dv in events:
        deltas[float(t)] += dv
    ts = sorted(set(deltas) | {0.0})
    rate = []
    cur = cap
    for t in ts:
        cur += deltas.get(t, 0.0)
        rate.append(max(0.0, cur))
    bt = np.array(ts)
    # Events at negative times do not occur (times are >= 0); rate before ts[0]=0 unused.
    br = np.array(rate)
    seg = np.diff(bt) * br[:-1]
    acc = np.concatenate(([0.0], np.cumsum(seg)))
    last_rate = br[-1] if br[-1] > 0 else cap  # after all reservations: full capacity

    def a_of(t: np.ndarray) -> np.ndarray:
        inside = np.interp(t, bt, acc)
        return np.where(t > bt[-1], acc[-1] + (t - bt[-1]) * last_rate, inside)

    order = np.argsort(-head, kind="stable")
    h = head[order]
    v = np.cumsum(vol[order])  # volume of jobs with head >= h[i] (ties: take the last)
    keep = np.append(h[1:] != h[:-1], True)
    h, v = h[keep], v[keep]
    target = a_of(h) + v
    # Smallest T with A(T) >= target: find the segment, then interpolate inside it.
    pos = np.searchsorted(acc, target, side="left")
    out = np.empty_like(target)
    beyond = pos >= len(acc)
    out[beyond] = bt[-1] + (target[beyond] - acc[-1]) / last_rate
    inb = ~beyond
    i = np.maximum(pos[inb] - 1, 0)
    r = br[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_in = np.where(r > 0, bt[i] + (target[inb] - acc[i]) / np.where(r > 0, r, 1.0), bt[i])
    out[inb] = np.where(pos[inb] == 0, bt[0], t_in)
    return float(np.max(np.maximum(out, h)))


def slot_room(points: np.ndarray, cap: float, events: list[tuple[float, float]]) -> np.ndarray:
    """Capacity-time in each slot [points[t], points[t+1]): `cap` plus the step changes
    in `events` (reservations that admit none of the resource's jobs), never below 0."""
    deltas: dict[float, float] = defaultdict(float)
    for t, dv in events:
        deltas[float(t)] += dv
    ts = sorted(set(deltas) | {0.0})
    rate, cur = [], cap
    for t in ts:
        cur += deltas.get(t, 0.0)
        rate.append(max(0.0, cur))
    bt, br = np.array(ts), np.array(rate)
    acc = np.concatenate(([0.0], np.cumsum(np.diff(bt) * br[:-1])))
    last = br[-1]
    a = np.where(points > bt[-1], acc[-1] + (points - bt[-1]) * last, np.interp(points, bt, acc))
    return np.asarray(np.diff(a))


def mean_busy_bound(release: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """min sum w_j M_j over preemptive one-machine schedules with release dates: the
    preemptive largest-w/p-first schedule (module docstring, ingredient 4); jobs with
    p = 0 add nothing."""
    keep = p > 0
    rel, p, w = release[keep], p[keep], w[keep]
    order = np.argsort(rel, kind="stable")
    rel_l, p_l, w_l = rel[order].tolist(), p[order].tolist(), w[order].tolist()
    n = len(rel_l)
    heap: list[tuple[float, int, float]] = []  # (-w/p, job, remaining)
    total = 0.0
    t = 0.0
    i = 0
    while i < n or heap:
        if not heap:
            t = max(t, rel_l[i])
        while i < n and rel_l[i] <= t:
            heapq.heappush(heap, (-w_l[i] / p_l[i], i, p_l[i]))
            i += 1
        nxt = rel_l[i] if i < n else math.inf
        while heap and t < nxt:
            ratio, j, rem = heapq.heappop(heap)
            run = min(rem, nxt - t)
            # w/p * integral of t over the piece
            total += -ratio * run * (2 * t + run) / 2.0
            t += run
            if rem - run > 1e-12 * p_l[j]:
                heapq.heappush(heap, (ratio, j, rem - run))
    return total
