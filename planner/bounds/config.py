"""The configuration LP: weighted completion of the jobs on one node-group family, with
interleaving priced by what each group *type* delivers.

The argument is `planner.bounds`' ingredient 7 (its module docstring); this module finds
the group types and builds the LP. At one GPU count a type G is a multiset of models, and
while a group of co-runners of type G holds its k GPUs, each member of model m progresses
by `rho_m(G) = solo_m / c(G)` of a solo time unit per time unit (contract §4 and §8). Work
is counted in solo time units on the family's fastest nodes (`work_j`). Per job j: x^s_jt
and x^g_jt, the fractions of its work done solo and in a group in slot t of the grid,
`a_jt = max(points[t], head_j)` and `len_jt = points[t+1] - a_jt`; per type G and block b
of `block` consecutive slots, y_Gb: the time groups of type G run in b, summed over GPU
sets.

    min  sum_j w_j C_j
    s.t. sum_t x^s_jt + x^g_jt = 1
         sum_(j, t in b) gpus_j work_j x^s_jt + sum_G k_G y_Gb <= room_b         (capacity)
         sum_(j of class c, t in b) work_j x^g_jt <= sum_G n_m(G) rho_m(G) y_Gb  (class c
                                                        = (GPU count k, model m), k_G = k)
         work_j x^s_jt + work_j x^g_jt / rho_j <= len_jt     (one mode at a time)
         0 <= x^s_jt <= len_jt / work_j,  0 <= x^g_jt <= rho_j len_jt / work_j
         C_j >= sum_t a_jt (x^s_jt + x^g_jt) + work_j / (2 max(1, rho_j)),  C_j >= end_j
         C_j >= sum_t a_jt (x^s_jt + x^g_jt) + work_j / 2
                + (1/rho_j - 1) (theta G_j - theta^2 work_j / 2)    (0 < rho_j < 1, each
                  theta in TANGENTS; G_j = work_j sum_t x^g_jt, the grouped work)

`rho_j` is the largest rho_m(G) over the types holding j's model at its count (0: j never
groups, and has no x^g). Slots after the last grid point have unlimited room.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from planner.bounds.lp import LP_ITERATIONS, quiet_highs, slot_cuts, solve_lp
from planner.durations import StageTuple

# Above this many columns (x, y and C together) the configuration LP is skipped; the x
# grid gets about X_COLUMNS of them, the group types at most Y_COLUMNS (coarser blocks
# when there are many types). Measured on the 400-job Muri trace: about 2-3 s in all.
MAX_CONFIG_COLUMNS = 110_000
X_COLUMNS = 70_000
Y_COLUMNS = 30_000


def multiset_cycles(
    stages: Sequence[StageTuple],
    sizes: Sequence[int],
    overhead: Mapping[int, float],
    most: Sequence[int] | None = None,
) -> tuple[list[tuple[int, ...]], list[float]]:
    """Every multiset of `sizes` members drawn from the models with these stages (model
    m at most most[m] times) and its cycle c(G) (contract §4: the slot recursion of every
    ordering run side by side in numpy, and the pair formula)."""
    sets: list[tuple[int, ...]] = []
    rows: list[tuple[int, ...]] = []
    owner: list[int] = []
    for k in sizes:
        for ms in itertools.combinations_with_replacement(range(len(stages)), k):
            if most is not None and any(ms.count(m) > most[m] for m in set(ms)):
                continue
            for perm in set(itertools.permutations(ms)):
                rows.append(perm + (-1,) * (4 - k))
                owner.append(len(sets))
            sets.append(ms)
    if not rows:
        return [], []
    idx = np.array(rows)
    present = idx >= 0
    st = np.array(list(stages) + [(0.0, 0.0, 0.0)])  # index -1: an empty position
    d, g, n = st[idx, 0], st[idx, 1], st[idx, 2]
    f = np.zeros((len(rows), 161))
    for i in range(160):
        best = f[:, i].copy()
        q = (i + 1) % 4
        best = np.where(present[:, q], np.maximum(best, f[:, i] + n[:, q]), best)
        q = (i + 2) % 4
        best = np.where(present[:, q], np.maximum(best, f[:, i] + g[:, q]), best)
        q = (i + 3) % 4
        if i >= 1:
            best = np.where(present[:, q], np.maximum(best, f[:, i - 1] + d[:, q]), best)
        f[:, i + 1] = best
    tt_rows = (f[:, 160] - f[:, 80]) / 20
    tt = np.full(len(sets), np.inf)
    np.minimum.at(tt, np.array(owner), tt_rows)
    cycles = []
    for s_i, ms in enumerate(sets):
        t = float(tt[s_i])
        if len(ms) == 2:
            a, b = stages[ms[0]], stages[ms[1]]
            t = min(t, max(a[0], b[1] + b[2]) + max(b[0], a[1] + a[2]))
        cycles.append(overhead[len(ms)] * t)
    return sets, cycles


class CountTypes(NamedTuple):
    """The group types kept at one GPU count: per type its members' rates (types x models,
    n_m(G) rho_m(G)), and per model the largest single-member rate rho_m(G) of any type
    that beats solo time-sharing (0: none)."""

    rates: np.ndarray
    best: np.ndarray


def count_types(
    stages: Sequence[StageTuple],
    solo: Sequence[float],
    most: Sequence[int],
    sizes: Sequence[int],
    overhead: Mapping[int, float],
    fits: Callable[[tuple[int, ...]], bool],
) -> CountTypes:
    """Types of 2..max members (model m at most most[m] times, `fits` their GPU memory).
    A type whose cycle is at least its members' summed solo times is left out: its members
    progress no faster in total than solo, so its time may be counted as their solo time.
    A type at most a combination (weights summing to <= 1) of the others is left out too:
    that combination delivers at least as much of every model on the same GPUs."""
    nm = len(stages)
    rows, best = [], np.zeros(nm)
    sets, cycles = multiset_cycles(stages, sizes, overhead, most)
    for ms, c in zip(sets, cycles, strict=True):
        if c >= sum(solo[m] for m in ms) or not fits(ms):
            continue
        r = np.zeros(nm)
        for m in ms:
            r[m] += solo[m] / c
            best[m] = max(best[m], solo[m] / c)
        rows.append(r)
    rates = np.array(rows).reshape(len(rows), nm)
    return CountTypes(rates[undominated(rates)], best)


def undominated(rates: np.ndarray) -> np.ndarray:
    """Indices of the rows not at most a combination, weights summing to < 1, of other
    rows (a componentwise-dominated row, or the later of two equal rows, is one); one warm-
    started LP per candidate: min sum lam s.t. sum_l lam_l r_l >= r_i, lam_i = 0."""
    n = len(rates)
    if n <= 1:
        return np.arange(n)
    ge = np.all(rates[None, :, :] >= rates[:, None, :], axis=2)  # ge[i, j]: j >= i
    gt = np.any(rates[None, :, :] > rates[:, None, :], axis=2)
    earlier = np.tri(n, k=-1, dtype=bool)  # earlier[i, j]: j < i
    np.fill_diagonal(ge, False)
    cand = np.flatnonzero(~(ge & (gt | earlier)).any(axis=1))
    if len(cand) <= 1:
        return cand
    import highspy

    sub = rates[cand]
    h = quiet_highs()
    inf = highspy.kHighsInf
    nc, nm = sub.shape
    h.addVars(nc, np.zeros(nc), np.full(nc, inf))
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), np.ones(nc))
    for m in range(nm):
        nz = np.flatnonzero(sub[:, m])
        h.addRow(-inf, inf, len(nz), nz.astype(np.int32), sub[nz, m])
    keep = []
    all_rows = np.arange(nm, dtype=np.int32)
    for i in range(nc):
        h.changeColBounds(i, 0.0, 0.0)
        h.changeRowsBounds(nm, all_rows, sub[i], np.full(nm, inf))
        h.run()
        dominated = (
            h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            and h.getInfo().objective_function_value < 1.0 - 1e-9
        )
        if not dominated:
            keep.append(i)
            h.changeColBounds(i, 0.0, inf)
    return cand[np.array(keep, dtype=int)]


class ConfigJobs(NamedTuple):
    """Per job of the family (all with work > 0): earliest start and end, weight, work in
    solo time units on the family's fastest nodes, GPUs, class index (-1: never groups)
    and its largest rate in a group, rho_j (0 when it never groups)."""

    head: np.ndarray
    end: np.ndarray
    weight: np.ndarray
    work: np.ndarray
    gpus: np.ndarray
    cls: np.ndarray
    rho: np.ndarray


class _Cols(NamedTuple):
    """The x columns: job, slot, grouped mode?, a_jt, upper bound."""

    job: np.ndarray
    slot: np.ndarray
    grouped: np.ndarray
    a: np.ndarray
    ub: np.ndarray


def _x_columns(jobs: ConfigJobs, points: np.ndarray) -> _Cols:
    m = len(points)
    lo = np.append(points, np.inf)
    first = np.maximum(0, np.searchsorted(points, jobs.head, side="right") - 1)
    parts: list[tuple[np.ndarray, ...]] = []
    for j in range(len(jobs.head)):
        ts = np.arange(first[j], m)
        a = np.maximum(points[ts], jobs.head[j])
        length = lo[ts + 1] - a
        rates = [1.0] + ([float(jobs.rho[j])] if jobs.rho[j] > 0 else [])
        for mode, r in enumerate(rates):
            ub = np.minimum(r * length / jobs.work[j], 1.0)
            parts.append((np.full(len(ts), j), ts, np.full(len(ts), mode == 1), a, ub))
    job, slot, grouped, a, ub = (np.concatenate(p) for p in zip(*parts, strict=True))
    return _Cols(job, slot, grouped, a, ub)


class _Rows:
    """Row bounds and (row, column, value) entries of an LP being built."""

    def __init__(self) -> None:
        self.lo: list[np.ndarray] = []
        self.up: list[np.ndarray] = []
        self.entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = 0

    def add(self, lo: np.ndarray, up: np.ndarray) -> int:
        """New rows with these bounds; the number of the first."""
        first = self.count
        self.lo.append(lo)
        self.up.append(up)
        self.count += len(lo)
        return first

    def put(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray | float) -> None:
        self.entries.append((rows, cols, np.broadcast_to(vals, rows.shape).astype(float)))

    def matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(np.concatenate(p) for p in zip(*self.entries, strict=True))  # type: ignore[return-value]


def config_lp(
    jobs: ConfigJobs,
    type_gpus: np.ndarray,
    type_rates: np.ndarray,
    points: np.ndarray,
    room: np.ndarray,
    iterations: int = LP_ITERATIONS,
) -> float | None:
    """The LP's optimum (the module docstring), or None when it is too big or not solved
    within `iterations` simplex iterations.
    `type_rates` is types x classes (n_m(G) rho_m(G) in the class of model m at the
    type's GPU count `type_gpus`); `room[t]` is the capacity-time of slot t. Columns: x,
    then y (type-major, block-minor), then C."""
    n, m = len(jobs.head), len(points)
    nt, ncls = type_rates.shape
    block = max(1, -(-nt * (m - 1) // Y_COLUMNS))
    nb = -(-(m - 1) // block)
    x = _x_columns(jobs, points)
    nx, ny = len(x.job), nt * nb
    if nx + ny + n > MAX_CONFIG_COLUMNS:
        return None
    scale = max(1.0, float(points[-1]))  # times in units of the grid's span
    xs, ys = np.arange(nx), nx + np.arange(ny)
    fin = x.slot < m - 1
    solo, grp = fin & ~x.grouped, fin & x.grouped
    blk, w = x.slot // block, jobs.work[x.job]
    room_b = np.zeros(nb)
    np.add.at(room_b, np.arange(m - 1) // block, room)
    lp = _Rows()
    lp.put(lp.add(np.ones(n), np.ones(n)) + x.job, xs, 1.0)
    r_cap = lp.add(np.full(nb, -np.inf), room_b / scale)
    r_cls = lp.add(np.full(nb * ncls, -np.inf), np.zeros(nb * ncls))
    lp.put(r_cap + blk[solo], xs[solo], jobs.gpus[x.job[solo]] * w[solo] / scale)
    lp.put(r_cls + blk[grp] * ncls + jobs.cls[x.job[grp]], xs[grp], w[grp] / scale)
    lp.put(r_cap + (ys - nx) % nb, ys, type_gpus[(ys - nx) // nb])
    nz_t, nz_c = np.nonzero(type_rates)
    lp.put(
        r_cls + (np.arange(nb)[None, :] * ncls + nz_c[:, None]).ravel(),
        nx + (nz_t[:, None] * nb + np.arange(nb)[None, :]).ravel(),
        -np.repeat(type_rates[nz_t, nz_c], nb),
    )
    _one_mode_rows(lp, jobs, x, points, scale)
    _completion_rows(lp, jobs, x, nx + ny, scale)
    return solve_lp(
        np.concatenate([np.zeros(nx + ny), jobs.weight]),
        (
            np.concatenate([np.zeros(nx + ny), jobs.end / scale]),
            np.concatenate([x.ub, np.full(ny + n, np.inf)]),
        ),
        (np.concatenate(lp.lo), np.concatenate(lp.up)),
        lp.matrix(),
        scale,
        iterations,
        slot_cuts(x.job, x.slot, x.a, jobs.work / np.maximum(1.0, jobs.rho), nx + ny, scale),
    )


def _one_mode_rows(lp: _Rows, jobs: ConfigJobs, x: _Cols, points: np.ndarray, scale: float) -> None:
    """work_j x^s_jt + work_j x^g_jt / rho_j <= len_jt per grouping job and finite slot."""
    m = len(points)
    pair = (x.slot < m - 1) & (jobs.rho[x.job] > 0)
    keys, row = np.unique(x.job[pair] * m + x.slot[pair], return_inverse=True)
    pj, pt = keys // m, keys % m
    length = points[pt + 1] - np.maximum(points[pt], jobs.head[pj])
    first = lp.add(np.full(len(keys), -np.inf), length / scale)
    rate = np.where(x.grouped[pair], jobs.rho[x.job[pair]], 1.0)
    lp.put(first + row, np.flatnonzero(pair), jobs.work[x.job[pair]] / rate / scale)


# Where the completion rows touch the least spread of a job that groups at rate < 1 (the
# module docstring of planner.bounds, ingredient 7): at a quarter, half, three quarters and
# all of its work grouped.
TANGENTS = (0.25, 0.5, 0.75, 1.0)


def _completion_rows(lp: _Rows, jobs: ConfigJobs, x: _Cols, c0: int, scale: float) -> None:
    """C_j >= sum_t a_jt x_jt + spread, where spread is work_j / (2 max(1, rho_j)) and,
    for 0 < rho_j < 1, each tangent of the convex least spread in the grouped work g:
    work/2 + (1/rho - 1) g^2 / (2 work) >= work/2 + (1/rho - 1)(theta g - theta^2 work/2)."""
    n = len(jobs.head)
    work, rho = jobs.work, jobs.rho
    first = lp.add(work / (2 * np.maximum(1.0, rho)) / scale, np.full(n, np.inf))
    lp.put(first + x.job, np.arange(len(x.job)), -x.a / scale)
    lp.put(first + np.arange(n), c0 + np.arange(n), 1.0)
    slow = np.flatnonzero((rho > 0) & (rho < 1))
    if not len(slow):
        return
    where = np.full(n, -1)
    where[slow] = np.arange(len(slow))
    mine = where[x.job] >= 0
    k = np.where(rho > 0, 1.0 / np.where(rho > 0, rho, 1.0) - 1.0, 0.0)
    for theta in TANGENTS:
        rhs = work[slow] / 2 - k[slow] * theta**2 * work[slow] / 2
        r = lp.add(rhs / scale, np.full(len(slow), np.inf))
        extra = np.where(x.grouped[mine], k[x.job[mine]] * theta * work[x.job[mine]], 0.0)
        lp.put(r + where[x.job[mine]], np.flatnonzero(mine), -(x.a[mine] + extra) / scale)
        lp.put(r + np.arange(len(slow)), c0 + slow, 1.0)
