"""A time-indexed LP bound on the weighted completion of jobs sharing one resource.

The argument is `planner.bounds`' ingredient 6 (its module docstring); this module only
builds and solves the LP with HiGHS. Per job: its earliest start `head_j`, its earliest
end `end_j`, its weight, and one or more *modes* (solo, interleaved), each with the least
amount x time `share_jm` the job takes on the resource per unit of progress and its least
duration `least_jm` if it made all its progress in that mode. The resource has
capacity-time `room[t]` in each slot `[points[t], points[t+1])` of a grid and unlimited
room after the last point.

    min  sum_j w_j C_j
    s.t. sum_(t,m) x_jtm = 1                          (all of j's progress is made)
         sum_(j,m) share_jm x_jtm <= room[t]          (capacity per slot)
         0 <= x_jtm <= (points[t+1] - a_jt) / least_jm,  a_jt = max(points[t], head_j)
         C_j >= sum_(t,m) a_jt x_jtm + min_m least_jm / 2,  C_j >= end_j

x_jtm is the fraction of j's progress (iterations, or time for an explicit duration) made
in slot t in mode m.

Slot cuts (`slot_cuts`, both this LP and `planner.bounds.config`'s): with X_jt = sum_m x_jtm
and W_j the least time all of j's progress can take (`min_m least_jm` here), the progress
made in slot t is made at or after a_jt at a rate of at most 1/W_j, so its progress-
weighted mean time is at least a_jt + X_jt W_j / 2. Summed, j's mean busy time M_j is at
least sum_t X_jt (a_jt + X_jt W_j / 2), and C_j >= M_j + W_j / 2 (the completion rows
above count only a_jt). X^2 >= 2 theta X - theta^2 for any theta turns the square into

    C_j >= sum_t (a_jt + theta_jt W_j) X_jt + W_j / 2 - (W_j / 2) sum_t theta_jt^2,

added after the LP is solved with theta = its X, and solved again (Kelley's cutting
planes, a few rounds: `CUT_ROUNDS`; each round's optimum is a valid bound).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from planner.highs import silence_banner

# Above this many LP columns the bound is skipped (its cost must stay well under a second
# or two on the instances `plan solve` runs it on; the 400-job Muri trace needs ~40k).
MAX_COLUMNS = 60_000
# Grid points the LP may use (the jobs' distinct heads plus an even grid fill them);
# chosen, not tuned.
MAX_POINTS = 400


# A bound must stay cheap, and be the same on a busy machine as on an idle one: HiGHS stops
# after this many simplex iterations (unsolved = skipped), not after a wall-clock time.
# `experiments/bound_lps.py` (one run, idle machine): the earlier 5 s limit cut off the
# configuration LP of five of Muri's twelve all-at-zero 60-job windows (trace4 jobs 60-119:
# bound 204,187 s average JCT instead of 223,836 after 23,723 iterations, 6.3 s); with this
# limit all but trace1 jobs 0-59 are solved (it needs 44,728 iterations, 18 s, and is
# stopped after 14 s). cluster_trace (400 jobs) takes 9,087 iterations, muri-testbed-100
# 12,132. HiGHS's interior point method was faster only on trace1 jobs 0-59 (6.1 s) and
# slower on the rest (testbed 8.1 s).
LP_ITERATIONS = 30_000
# ... and at most this many per second of the solve's time limit, so that the bound (each
# LP of it) keeps to a fraction of a short limit: about 0.3-0.4 s of LP per second of limit
# on a 2-core machine of this project's CI kind, idle (2,500-3,300 iterations a second).
# Without it, trace1's all-at-zero jobs 0-59 took 16.9 s under `plan solve --time-limit 5`
# (14 s of it an LP that was then skipped). A count per LP; the bound as a whole also has
# a clock (BOUND_ITERATIONS_PER_S below), so a busy machine can still get a weaker bound.
ITERATIONS_PER_SECOND = 1_000


def lp_iterations(time_limit: float) -> int:
    """The simplex iterations each bound LP gets under a solve of `time_limit` seconds."""
    return max(1, min(LP_ITERATIONS, int(ITERATIONS_PER_SECOND * time_limit)))


# Only a guard against a machine far slower than this one; the iterations decide.
LP_GUARD_SECONDS = 60.0
# ... and one bound (all its LPs, `clocked`) stops after its iterations at this rate: a
# clock, so a busy machine may get a weaker bound, but only where an LP runs slower than
# this per iteration. Without it, `plan replan --solver cpsat --time-limit 10` of a live
# state with 1,144 of `plan generate --family dl --jobs 2000 --nodes 62 --seed 1`'s jobs
# left took 23.3 s: its configuration LP (27,364 rows, 60,760 columns) runs 1,344
# iterations a second and needs 29,362, so it used up its 10,000 and was skipped. At this
# rate a bound keeps to 0.625 s per second of the limit; the README (the bound LPs'
# simplex iterations, "What we chose ...") has the measurements.
BOUND_ITERATIONS_PER_S = 1_600


# Rounds of slot cuts (module docstring): at most CUT_ROUNDS, and another only while the
# last one raised the bound by at least CUT_GAIN of what the first one did. Measured (one
# run, average-JCT bound after 0 / 1 / 2 / 3 / 6 rounds): cluster_trace 63,468 / 64,674 /
# 65,124 / 65,294 / 65,374 s; muri-testbed-100 63,285 / 63,516 / 63,525 / 63,526 / 63,527;
# trace1 all-at-zero jobs 60-119 1,347,083 / 1,352,395 / 1,352,455 / 1,352,463 /
# 1,352,467, where each round after the first costs 0.4-0.9 s: hence the stop.
CUT_ROUNDS = 6
CUT_GAIN = 0.25

# New rows for an LP from its solution: lower bounds, CSR starts, column indices, values.
CutRows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def slot_cuts(
    job: np.ndarray, slot: np.ndarray, a: np.ndarray, least: np.ndarray, c0: int, scale: float
) -> Callable[[np.ndarray], CutRows]:
    """The slot cuts (module docstring), one row per job, of an LP whose columns 0 ..
    len(job) - 1 are progress fractions of job `job[k]` in slot `slot[k]` from `a[k]` on,
    and whose column c0 + j is C_j; `least[j]` is W_j; times in units of `scale`."""
    n, nx = len(least), len(job)
    _, pair = np.unique(
        job.astype(np.int64) * (int(slot.max(initial=0)) + 1) + slot, return_inverse=True
    )
    order = np.argsort(job, kind="stable")
    count = np.bincount(job, minlength=n)
    starts = np.concatenate(([0], np.cumsum(count + 1)[:-1]))
    rank = np.arange(nx) - np.repeat(np.cumsum(count) - count, count)
    at_x = starts[job[order]] + rank  # where column order[i] sits in the rows' entries
    at_c = starts + count
    index = np.empty(nx + n, dtype=np.int32)
    index[at_x], index[at_c] = order, c0 + np.arange(n)
    w = least / scale
    first = np.unique(pair, return_index=True)[1]  # one column per (job, slot)

    def rows(solution: np.ndarray) -> CutRows:
        per_pair = np.zeros(len(first))
        np.add.at(per_pair, pair, solution[:nx])
        theta = per_pair[pair]
        squares = np.zeros(n)
        np.add.at(squares, job[first], theta[first] ** 2)
        value = np.empty(nx + n)
        value[at_x] = -(a[order] / scale + theta[order] * w[job[order]])
        value[at_c] = 1.0
        return w / 2 * (1.0 - squares), starts.astype(np.int32), index, value

    return rows


# The event that stops the bound LPs of the solve under way (`stoppable`): Ctrl-C sets the
# solve's `SolveOptions.stop`, and an LP of many seconds must not hold the exit up.
_STOP: ContextVar[threading.Event | None] = ContextVar("bound_lp_stop", default=None)


@contextmanager
def stoppable(stop: threading.Event) -> Iterator[None]:
    """Within it, `solve_lp` gives up (no bound) as soon as `stop` is set."""
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def lp_stopped() -> bool:
    """Whether the bound LPs of the solve under way have been told to stop."""
    stop = _STOP.get()
    return stop is not None and stop.is_set()


# When the bound under way (`clocked`) runs out of time (time.monotonic()).
_DEADLINE: ContextVar[float | None] = ContextVar("bound_deadline", default=None)


@contextmanager
def clocked(iterations: int) -> Iterator[None]:
    """Within it, the LPs of one bound share iterations / BOUND_ITERATIONS_PER_S seconds:
    `solve_lp` stops at that time (no bound from that LP, or the last round's), and none
    starts after it. Nested, the outermost clock holds."""
    if _DEADLINE.get() is not None:
        yield
        return
    token = _DEADLINE.set(time.monotonic() + iterations / BOUND_ITERATIONS_PER_S)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _seconds_left() -> float:
    """The wall-clock seconds an LP may take now: LP_GUARD_SECONDS, or less under a clock."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return LP_GUARD_SECONDS
    return min(LP_GUARD_SECONDS, deadline - time.monotonic())


def lp_out_of_time() -> bool:
    """Whether the bound under way has been stopped or has used its time (`clocked`)."""
    return lp_stopped() or _seconds_left() <= 0


def quiet_highs() -> Any:
    """A quiet Highs object."""
    import highspy

    silence_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def grid(
    head: np.ndarray,
    share: np.ndarray,
    least: np.ndarray,
    cap: float,
    modes: int,
    columns: int = MAX_COLUMNS,
) -> np.ndarray:
    """Grid points: 0, the distinct heads (quantiles of them when there are many) and an
    even grid up to a rough end of the work (later work is priced at the last point);
    about `columns` / (jobs x modes) points, so the LP keeps its size."""
    points = max(8, min(MAX_POINTS, columns // max(1, modes * len(head))))
    hs = np.unique(head)
    if len(hs) > points // 2:
        hs = np.unique(np.quantile(hs, np.linspace(0, 1, points // 2), method="lower"))
    top = float(np.max(head) + share.sum() / max(cap, 1e-9) + np.max(least))
    even = np.linspace(0.0, top, max(2, points - len(hs)))
    return np.unique(np.concatenate(([0.0], hs, even)))


def weighted_completion_lp(
    head: np.ndarray,
    modes: list[tuple[np.ndarray, np.ndarray]],
    end: np.ndarray,
    weight: np.ndarray,
    points: np.ndarray,
    room: np.ndarray,
    iterations: int = LP_ITERATIONS,
) -> float | None:
    """The LP's optimum (the module docstring), or None when it is too big or not solved
    within `iterations` simplex iterations. `modes` holds per mode (share, least) per job
    (inf: the job has no such mode); `room[t]` is the capacity-time of slot t
    (len(points) - 1 finite slots)."""
    n, m = len(head), len(points)
    lo = np.append(points, np.inf)
    first = np.maximum(0, np.searchsorted(points, head, side="right") - 1)
    cols_j, cols_t, cols_a, cols_ub, cols_v = [], [], [], [], []
    for share, least in modes:
        for j in np.flatnonzero(np.isfinite(share) & np.isfinite(least) & (least > 0)):
            ts = np.arange(first[j], m)
            a = np.maximum(points[ts], head[j])
            cols_j.append(np.full(len(ts), j))
            cols_t.append(ts)
            cols_a.append(a)
            cols_ub.append(np.minimum((lo[ts + 1] - a) / least[j], 1.0))
            cols_v.append(np.full(len(ts), share[j]))
    if not cols_j:
        return None
    jj, tt = np.concatenate(cols_j), np.concatenate(cols_t)
    aa, ub, vv = np.concatenate(cols_a), np.concatenate(cols_ub), np.concatenate(cols_v)
    nx = len(jj)
    if nx > MAX_COLUMNS or len(np.unique(jj)) < n:
        return None
    fastest = np.min(np.array([np.where(np.isfinite(s), t, np.inf) for s, t in modes]), axis=0)
    scale = max(1.0, float(points[-1]))  # times in units of the grid's span
    # Columns: x (nx), then C (n). Rows: n "sum x = 1", m-1 capacity rows, n completion rows.
    finite = tt < m - 1
    xs = np.arange(nx)
    rows = np.concatenate([jj, n + tt[finite], n + (m - 1) + jj, n + (m - 1) + np.arange(n)])
    cols = np.concatenate([xs, xs[finite], xs, nx + np.arange(n)])
    vals = np.concatenate([np.ones(nx), vv[finite] / scale, -aa / scale, np.ones(n)])
    return solve_lp(
        np.concatenate([np.zeros(nx), weight]),
        (np.concatenate([np.zeros(nx), end / scale]), np.concatenate([ub, np.full(n, np.inf)])),
        (
            np.concatenate([np.ones(n), np.full(m - 1, -np.inf), fastest / 2 / scale]),
            np.concatenate([np.ones(n), room / scale, np.full(n, np.inf)]),
        ),
        (rows, cols, vals),
        scale,
        iterations,
        slot_cuts(jj, tt, aa, fastest, nx, scale),
    )


def solve_lp(
    cost: np.ndarray,
    col_bounds: tuple[np.ndarray, np.ndarray],
    row_bounds: tuple[np.ndarray, np.ndarray],
    entries: tuple[np.ndarray, np.ndarray, np.ndarray],
    scale: float,
    iterations: int = LP_ITERATIONS,
    cuts: Callable[[np.ndarray], CutRows] | None = None,
) -> float | None:
    """min cost.x subject to row_lo <= A x <= row_up and col_lo <= x <= col_up, where A
    has the (row, column, value) `entries` (+-inf: no bound); the optimum times `scale`, or
    None when HiGHS does not prove it optimal within `iterations` simplex iterations.
    With `cuts`, up to CUT_ROUNDS times within the same iterations: the rows it gives for
    the solution are added and the LP solved again (each optimum is a bound; the best is
    returned)."""
    import highspy

    # HiGHS's tolerances are absolute (a reduced cost of -1e-7 is "optimal"): with costs of
    # 10^-6 its optimum may lie above the true one, so no bound (two jobs of weights 1.23e-6
    # and 1.27e-6 got a bound above their optimum, tests/test_bounds.py). The costs are
    # scaled to a largest of 1 and the optimum scaled back.
    top = float(np.max(np.abs(cost))) if len(cost) else 0.0
    if top > 0.0:
        cost, scale = cost / top, scale * top
    rows, cols, vals = entries
    inf = highspy.kHighsInf
    order = np.lexsort((rows, cols))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cost), len(row_bounds[0])
    lp.col_cost_ = cost
    lp.col_lower_, lp.col_upper_ = (np.clip(b, -inf, inf) for b in col_bounds)
    lp.row_lower_, lp.row_upper_ = (np.clip(b, -inf, inf) for b in row_bounds)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.searchsorted(cols[order], np.arange(len(cost) + 1)).astype(np.int32)
    lp.a_matrix_.index_ = rows[order].astype(np.int32)
    lp.a_matrix_.value_ = vals[order]
    if lp_out_of_time():
        return None
    stop = _STOP.get()
    h = quiet_highs()
    h.setOptionValue("solver", "simplex")  # so that the iteration limit applies
    h.setOptionValue("simplex_iteration_limit", iterations)
    h.setOptionValue("time_limit", _seconds_left())
    if stop is not None:  # interrupted: not optimal, so no bound
        h.cbSimplexInterrupt += lambda e: e.interrupt() if stop.is_set() else None
    h.passModel(lp)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    best = float(h.getInfo().objective_function_value)
    left = iterations - h.getInfo().simplex_iteration_count  # the rounds share the rest
    first = 0.0  # the first round's gain
    for _ in range(CUT_ROUNDS):
        if cuts is None or left <= 0:
            break
        lo, starts, index, value = cuts(np.asarray(h.getSolution().col_value))
        h.addRows(len(lo), lo, np.full(len(lo), inf), len(index), starts, index, value)
        h.setOptionValue("simplex_iteration_limit", left)
        h.setOptionValue("time_limit", max(0.0, _seconds_left()))
        h.run()  # from the last basis: a few hundred iterations
        left -= h.getInfo().simplex_iteration_count
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break  # the last round's optimum stands: these rows only add to it
        gain = float(h.getInfo().objective_function_value) - best
        best += max(0.0, gain)
        first = first or gain
        if gain <= CUT_GAIN * first:
            break
    return best * scale
