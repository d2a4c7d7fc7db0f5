"""The time grid of the MILP: slot length and number of slots.

Starts lie on slot boundaries (start = slot * length); a job occupies every slot its exact
interval touches, i.e. ceil(duration / length) slots from its start slot. So a schedule
read off the grid is feasible at exact times: each job's exact interval lies inside the
slots the model reserved for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Grid:
    length: int  # time units per slot
    slots: int  # number of slots; the grid covers [0, slots * length)
    auto: bool = True  # chosen from options.slots rather than given by options.slot

    @property
    def horizon(self) -> int:
        return self.slots * self.length

    def span(self, duration: int) -> int:
        """Slots a job of this exact duration occupies (0 for a zero-length job)."""
        return -(-duration // self.length)

    def first(self, release: int) -> int:
        """First start slot at or after `release`."""
        return -(-release // self.length)

    def time(self, slot: int) -> int:
        return slot * self.length


def slot_length(horizon: int, max_slots: int, given: int | None) -> int:
    """The given slot length, else the smallest one with at most `max_slots` slots."""
    if given is not None:
        return max(1, int(given))
    return max(1, math.ceil(horizon / max(1, max_slots)))


def make_grid(horizon: int, length: int, auto: bool) -> Grid:
    return Grid(length=length, slots=max(1, -(-max(horizon, 1) // length)), auto=auto)
