"""Electricity prices (contract §12): the integral of `cluster.power_price` over a span.

Pure arithmetic on the instance's price intervals (half-open, sorted, non-overlapping;
0 outside every interval) and on its watts, shared by the metrics and the planners that
price energy.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from functools import cached_property

from planner.instance import Instance, NodeGroup, PriceInterval

# A difference of prefix integrals below this share of them may have lost its digits.
_CANCELS = 1e-6


class PriceCurve:
    """Price per kWh over time, with O(log n) integrals over any span."""

    def __init__(self, intervals: Sequence[PriceInterval]):
        self.intervals = tuple(intervals)

    @cached_property
    def _starts(self) -> list[int]:
        return [p.start for p in self.intervals]

    @cached_property
    def _prefix(self) -> list[float]:
        """`_prefix[k]`: the integral over the first k intervals, whole."""
        out = [0.0]
        for p in self.intervals:
            out.append(out[-1] + p.price * (p.end - p.start))
        return out

    def integral(self, start: float, end: float) -> float:
        """The integral of the price over [start, end), in price x time units: the
        difference of two prefix integrals, or, where that difference is lost in their
        rounding, the sum of the pieces over the span (a price of 10^12 for 10^6 s, then 1
        for 100 s: a prefix of 10^18 rounds in steps of 128, and a job's cost there was 0,
        its plan "optimal" at 1,000 times the cheapest; tests/test_metrics.py)."""
        lo, hi = self.upto(start), self.upto(end)
        if abs(hi - lo) > _CANCELS * max(abs(lo), abs(hi)):
            return hi - lo
        return self._pieces(start, end)

    def _pieces(self, start: float, end: float) -> float:
        """The integral over [start, end), interval by interval (exact to the last bits)."""
        k = max(0, bisect.bisect_right(self._starts, start) - 1)
        parts = []
        for p in self.intervals[k:]:
            if p.start >= end:
                break
            span = min(end, p.end) - max(start, p.start)
            if span > 0:
                parts.append(p.price * span)
        return math.fsum(parts)

    def upto(self, t: float) -> float:
        """The integral over (-inf, t)."""
        k = bisect.bisect_right(self._starts, t)  # intervals starting at or before t
        if k == 0:
            return 0.0
        last = self.intervals[k - 1]
        return self._prefix[k - 1] + last.price * (min(t, last.end) - last.start)

    def price_at(self, t: int) -> float:
        k = bisect.bisect_right(self._starts, t)
        if k and t < self.intervals[k - 1].end:
            return self.intervals[k - 1].price
        return 0.0

    def breakpoints(self) -> list[int]:
        """Every instant at which the price may change."""
        return sorted({t for p in self.intervals for t in (p.start, p.end)})


def price_curve(instance: Instance) -> PriceCurve:
    return PriceCurve(instance.power_price)


def idle_watts(instance: Instance) -> float:
    """The cluster's idle draw: every GPU at its group's `gpu_idle_w`, from 0 to the
    makespan (contract §12)."""
    return sum(n.gpus * n.group.gpu_idle_w for n in instance.nodes)


def extra_watts(group: NodeGroup) -> float:
    """What one busy GPU of `group` draws above idle (negative where it draws less)."""
    return group.gpu_busy_w - group.gpu_idle_w


def kwh_per_watt_unit(instance: Instance) -> float:
    """kWh drawn by one watt over one time unit: unit_ms / 3.6e6 (ms per hour) / 1000."""
    return instance.unit_ms / 3.6e9
