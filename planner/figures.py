"""How a number is shown to a person: one rule for `plan`'s terminal tables, `plan show`'s
header and the bench report, so one schedule's figures read alike everywhere."""

from __future__ import annotations

import math
from typing import Any


def figure(v: Any, digits: int = 2) -> str:
    """Whole numbers in full with thousands separators (a makespan of 1,234,567 ms is not
    rounded to 1.23457e+06), a value below 10^-digits to three significant digits (a tiny
    cost is not 0.00), others with `digits` decimals; None is "-"."""
    if v is None:
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):  # "inf" read from an edited results file: int() raised
            return str(v)
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        if abs(v) < 10**-digits:
            return f"{v:.3g}"
        return f"{v:,.{digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)
