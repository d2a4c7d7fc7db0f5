"""Compiled kernels of planner.solvers.rcpsp_heuristic (numba): the serial schedule
generation scheme, forward-backward improvement and one generation of the genetic search.

Numba because the heuristic's worth is in how many schedules it tries: the numpy SGS it
replaces placed ~550 schedules a second on PSPLIB j120, these ~100 times as many
(`experiments/rcpsp_search.py`), in the same few lines of Python. Compiled functions are
cached on disk (`cache=True`): only the first call on a machine pays the compilation. Where
numba finds no writable place for its cache (a read-only install and no usable home
directory, as in many containers) it refuses to define a cached function at all, and the
solvers would go on without the heuristic; `compiled` then gives numba a private directory
in the system's temporary directory, or else compiles without a disk cache (every process
then pays the compilation, about 6 s, on top of its time limit: README).

Arrays (see rcpsp_heuristic.Project): `dur[i]` (int64), `dem[i, r]` and `cap[r]`
(float64), predecessors and successors as CSR (`pptr`, `pidx`; `sptr`, `sidx`), and
`length`, a usage profile long enough for any serial schedule.
"""

from __future__ import annotations

import heapq
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np

EPS = 1e-9


def compiled(fn: Callable[..., Any]) -> Any:
    """`numba.njit(cache=True)`, with the fallbacks of the module doc."""
    try:
        return nb.njit(cache=True)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        pass
    config: Any = nb.config  # its settings are set at import, unknown to type checkers
    if not config.CACHE_DIR:
        config.CACHE_DIR = private_cache_dir() or ""
        if config.CACHE_DIR:
            try:
                return nb.njit(cache=True)(fn)
            except RuntimeError:
                pass
    return nb.njit(fn)


def private_cache_dir() -> str | None:
    """`planner-numba-<uid>` in the temporary directory, made by this user, mode 0700; None
    if it cannot be made or is not so (a symbolic link, or another user's). Numba loads
    its cache files as pickles: one that others can write is not safe to read."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: numba's own places (the user's profile) are used
        return None
    path = Path(tempfile.gettempdir()) / f"planner-numba-{getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.lstat()
    except OSError:
        return None
    mine = stat.S_ISDIR(st.st_mode) and st.st_uid == getuid()
    return str(path) if mine and not st.st_mode & 0o077 else None


@compiled
def sgs(key, dur, dem, cap, pptr, pidx, sptr, sidx, length):
    """Serial SGS: the eligible job (every predecessor placed) with the smallest key
    next, at the earliest time its whole duration fits. Given the successor lists as
    `pptr, pidx` and the predecessor lists as `sptr, sidx`, it schedules the reversed
    network (time measured back from the end)."""
    n, nr = dur.shape[0], cap.shape[0]
    usage = np.zeros((length, nr))
    start = np.zeros(n, np.int64)
    finish = np.zeros(n, np.int64)
    waiting = np.empty(n, np.int64)
    heap = [(0.0, 0) for _ in range(0)]
    for i in range(n):
        waiting[i] = pptr[i + 1] - pptr[i]
        if waiting[i] == 0:
            heap.append((key[i], i))
    heapq.heapify(heap)
    while heap:
        j = heapq.heappop(heap)[1]
        t = 0
        for k in range(pptr[j], pptr[j + 1]):
            t = max(t, finish[pidx[k]])
        d = dur[j]
        if d > 0:
            while True:  # scan the window backwards: a clash at tau moves t past tau
                clash = -1
                for tau in range(t + d - 1, t - 1, -1):
                    for r in range(nr):
                        if dem[j, r] > 0 and usage[tau, r] + dem[j, r] > cap[r] * (1.0 + EPS):
                            clash = tau
                            break
                    if clash >= 0:
                        break
                if clash < 0:
                    break
                t = clash + 1
            for tau in range(t, t + d):
                for r in range(nr):
                    usage[tau, r] += dem[j, r]
        start[j] = t
        finish[j] = t + d
        for k in range(sptr[j], sptr[j + 1]):
            s = sidx[k]
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(heap, (key[s], s))
    return start


@compiled
def makespan(start, dur):
    m = 0
    for i in range(start.shape[0]):
        m = max(m, start[i] + dur[i])
    return m


@compiled
def justify(start, dur, dem, cap, pptr, pidx, sptr, sidx, length):
    """Forward-backward improvement until the makespan stops dropping: right-justify
    (reversed network, latest-finishing jobs first), then left-justify (earliest-starting
    first). Never worse than `start`."""
    n = dur.shape[0]
    tie = 1e-6 * np.arange(n)
    best = start
    best_ms = makespan(start, dur)
    while True:
        rs = sgs(-(best + dur) + tie, dur, dem, cap, sptr, sidx, pptr, pidx, length)
        ms_r = makespan(rs, dur)
        right = ms_r - (rs + dur)
        left = sgs(right + tie, dur, dem, cap, pptr, pidx, sptr, sidx, length)
        ms = makespan(left, dur)
        if ms >= best_ms:
            if ms_r < best_ms:
                return right
            return best
        best, best_ms = left, ms


@compiled
def seed_rng(seed):
    """Seed numba's own random state (separate from numpy's)."""
    np.random.seed(seed)


@compiled
def _crossover(mother, father, n):
    """Two-point crossover of activity lists: the mother's first q1 jobs, then the
    father's jobs not yet taken up to position q2, then the mother's remaining ones."""
    q1 = np.random.randint(0, n + 1)
    q2 = np.random.randint(q1, n + 1)
    child = np.empty(n, np.int64)
    taken = np.zeros(n, np.bool_)
    k = 0
    for i in range(q1):
        child[k] = mother[i]
        taken[mother[i]] = True
        k += 1
    for i in range(n):
        if k >= q2:
            break
        if not taken[father[i]]:
            child[k] = father[i]
            taken[father[i]] = True
            k += 1
    for i in range(n):
        if not taken[mother[i]]:
            child[k] = mother[i]
            taken[mother[i]] = True
            k += 1
    return child


@compiled
def generation(pop, ms, count, mutation, dur, dem, cap, pptr, pidx, sptr, sidx, length):
    """One generation of the genetic search over start-time vectors `pop` (P x n, each
    justified) with makespans `ms`: `count` children by 2-tournament, two-point crossover of
    the parents' start orders and swap mutation, each decoded by the SGS and justified;
    then the best P distinct schedules of parents and children survive."""
    p, n = pop.shape
    kids = np.empty((count, n), np.int64)
    kms = np.empty(count, np.int64)
    for c in range(count):
        a, b = np.random.randint(0, p), np.random.randint(0, p)
        m = a if ms[a] <= ms[b] else b
        a, b = np.random.randint(0, p), np.random.randint(0, p)
        f = a if ms[a] <= ms[b] else b
        child = _crossover(np.argsort(pop[m], kind="mergesort"),
                           np.argsort(pop[f], kind="mergesort"), n)  # fmt: skip
        for i in range(n - 1):
            if np.random.random() < mutation:
                child[i], child[i + 1] = child[i + 1], child[i]
        key = np.empty(n)
        for pos in range(n):
            key[child[pos]] = pos
        st = justify(sgs(key, dur, dem, cap, pptr, pidx, sptr, sidx, length),
                     dur, dem, cap, pptr, pidx, sptr, sidx, length)  # fmt: skip
        kids[c] = st
        kms[c] = makespan(st, dur)
    both = np.concatenate((pop, kids))
    bms = np.concatenate((ms, kms))
    order = np.argsort(bms, kind="mergesort")
    # a fingerprint per schedule, so that telling repeats apart rarely compares whole rows
    weights = (np.arange(1, n + 1, dtype=np.int64) * 2654435761) % 2147483647
    fp = np.zeros(both.shape[0], np.int64)
    for i in range(both.shape[0]):
        for j in range(n):
            fp[i] += both[i, j] * weights[j]
    out = np.empty_like(pop)
    oms = np.empty_like(ms)
    ofp = np.empty(p, np.int64)
    k = 0
    for i in order:  # the best distinct schedules, then repeats if too few
        if k == p:
            break
        dup = False
        for q in range(k):
            if ofp[q] == fp[i] and np.array_equal(out[q], both[i]):
                dup = True
                break
        if not dup:
            out[k] = both[i]
            oms[k] = bms[i]
            ofp[k] = fp[i]
            k += 1
    for i in order:
        if k == p:
            break
        out[k] = both[i]
        oms[k] = bms[i]
        k += 1
    return out, oms


def warm() -> None:
    """Compile every kernel (or load it from the disk cache) on a three-job project, so
    that no solve pays the compilation out of its time limit (`make install` and the
    tests' conftest run it; `python -m planner.solvers.rcpsp_kernels` does too)."""
    dur = np.array([2, 3, 1], np.int64)
    dem = np.array([[1.0], [1.0], [2.0]])
    cap = np.array([2.0])
    # job 2 after jobs 0 and 1
    pptr, pidx = np.array([0, 0, 0, 2], np.int64), np.array([0, 1], np.int64)
    sptr, sidx = np.array([0, 1, 2, 2], np.int64), np.array([2, 2], np.int64)
    fwd = (dur, dem, cap, pptr, pidx, sptr, sidx, 8)
    seed_rng(0)
    start = justify(sgs(np.arange(3.0), *fwd), *fwd)
    pop = np.array([start, start], np.int64)
    ms = np.array([makespan(start, dur)] * 2, np.int64)
    generation(pop, ms, 2, 0.5, *fwd)


if __name__ == "__main__":
    warm()
