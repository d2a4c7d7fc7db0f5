"""The pool timeline of the list schedulers (`planner/solvers/greedy/timeline.py`) against
a brute-force count: a demand fits a pool without reservations exactly when, at every
integer instant it would run, what is booked there plus what it adds is within capacity
(contract §5, R8)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.instance import over
from planner.pools import PoolTimeline

SPANS = st.tuples(st.integers(0, 30), st.integers(1, 12), st.sampled_from([0.5, 1.0, 2.0, 3.0]))


@settings(max_examples=200, deadline=None)
@given(
    booked=st.lists(SPANS, max_size=8),
    start=st.integers(0, 30),
    items=st.lists(
        st.tuples(st.integers(1, 15), st.sampled_from([0.5, 1.0, 2.5])), min_size=1, max_size=3
    ),
    capacity=st.sampled_from([2.0, 3.0, 4.0]),
)
def test_fits_is_the_count_at_every_instant(
    booked: list[tuple[int, int, float]],
    start: int,
    items: list[tuple[int, float]],
    capacity: float,
) -> None:
    pool = PoolTimeline(capacity, [])
    for t0, length, amount in booked:
        pool.book(t0, t0 + length, frozenset(), amount)
    demand = [(start + d, frozenset[int](), a) for d, a in items]
    end = max(e for e, _, _ in demand)

    def load(tau: int) -> float:
        held = sum(a for t0, n, a in booked if t0 <= tau < t0 + n)
        return held + sum(a for e, _, a in demand if tau < e)

    expected = not any(over(load(tau), capacity) for tau in range(start, end))
    assert pool.fits(start, end, demand) == expected
