"""The checking toolkit of the input readers: a `Checker` that collects every problem with
its JSON path, getters that type-check a field and fill in its default, and the helpers
`kind`, `join` and `suggest` for messages. Depends only on `planner.errors`."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Collection
from typing import Any

from planner.errors import Problem
from planner.limits import MAX_NUMBER

REQUIRED: Any = object()  # marks a required field in the getters below


def kind(v: Any) -> str:
    """The JSON type name of a Python value, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def got(v: Any) -> str:
    """`null`, or a value's JSON type and text (`string "9"`), for "expected ..., got" messages."""
    return "null" if v is None else f"{kind(v)} {json.dumps(v)}"


def join(path: str, key: str) -> str:
    return key if path == "$" else f"{path}.{key}"


def suggest(word: str, choices: Collection[str]) -> str:
    """` (did you mean 'x'?)` when a close name exists, else an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Checker:
    """Collects problems; the getters return the value (or default), or None when bad."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.fatal = 0  # problems that leave a value unusable (not unknown fields)

    def add(self, path: str, message: str, fatal: bool = True) -> None:
        self.problems.append(Problem(path, message))
        self.fatal += fatal

    def obj(self, v: Any, path: str, allowed: Collection[str]) -> dict[str, Any] | None:
        if not isinstance(v, dict):
            self.add(path, f"expected an object, got {kind(v)}")
            return None
        for k in v:
            if k not in allowed:
                self.add(join(path, k), f"unknown field '{k}'{suggest(k, allowed)}", fatal=False)
        return v

    def mapping(self, v: Any, path: str) -> dict[str, Any] | None:
        """An object whose keys are names (pools, GPU counts), not fields."""
        if not isinstance(v, dict):
            self.add(path, f"expected an object, got {kind(v)}")
            return None
        return v

    def _get(self, d: dict[str, Any], key: str, path: str, default: Any) -> tuple[bool, Any]:
        """(present, value); records a missing required field."""
        if key not in d:
            if default is REQUIRED:
                self.add(join(path, key), "required field is missing")
            return False, None if default is REQUIRED else default
        return True, d[key]

    def integer(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = REQUIRED,
        minimum: int | None = 0,
        nullable: bool = False,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        return self.int_value(v, join(path, key), minimum)

    def int_value(self, v: Any, path: str, minimum: int | None = 0) -> int | None:
        if isinstance(v, bool) or not isinstance(v, int):
            self.add(path, f"expected an integer, got {got(v)}")
            return None
        if minimum is not None and v < minimum:
            what = "negative" if minimum == 0 else f"less than {minimum}"
            self.add(path, f"{v} is {what}" + (" (times are non-negative)" if minimum == 0 else ""))
            return None
        return v if self.bounded(v, path) else None

    def bounded(self, v: float, path: str, limit: float = MAX_NUMBER) -> bool:
        """False (and a problem) when |v| exceeds the documented limit."""
        if abs(v) > limit:
            side = f"larger than the limit {limit:g}" if v > 0 else f"below the limit {-limit:g}"
            # the value in full where it fits: "1e+12 is larger than the limit 1e+12" for
            # 10^12 + 1 hid what is wrong
            whole = float(v).is_integer() and abs(v) < 1e21
            self.add(path, f"{int(v) if whole else float(v)!r} is {side}")
            return False
        return True

    def number(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = REQUIRED,
        minimum: float | None = 0.0,
        positive: bool = False,
        nullable: bool = False,
        maximum: float = MAX_NUMBER,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        return self.num_value(v, join(path, key), minimum, positive, maximum)

    def num_value(
        self,
        v: Any,
        path: str,
        minimum: float | None = 0.0,
        positive: bool = False,
        maximum: float = MAX_NUMBER,
    ) -> float | None:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            self.add(path, f"expected a number, got {got(v)}")
            return None
        if positive and v <= 0:
            self.add(path, f"{v} must be > 0")
            return None
        if minimum is not None and v < minimum:
            self.add(path, f"{v} must be >= {minimum:g}")
            return None
        return float(v) if self.bounded(v, path, maximum) else None

    def string(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = REQUIRED,
        nullable: bool = False,
        choices: Collection[str] | None = None,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        return self.str_value(v, join(path, key), choices)

    def str_value(self, v: Any, path: str, choices: Collection[str] | None = None) -> str | None:
        if not isinstance(v, str) or not v:
            self.add(path, f"expected a non-empty string, got {got(v)}")
            return None
        if choices is not None and v not in choices:
            options = ", ".join(choices)
            self.add(path, f"'{v}' is not one of {options}{suggest(v, choices)}")
            return None
        return v

    def str_list(
        self,
        d: dict[str, Any],
        key: str,
        path: str,
        default: Any = REQUIRED,
        nullable: bool = False,
    ) -> Any:
        present, v = self._get(d, key, path, default)
        if not present or (v is None and nullable):
            return v
        p = join(path, key)
        if not isinstance(v, list):
            self.add(p, f"expected an array of strings, got {kind(v)}")
            return None
        out = [self.str_value(x, f"{p}[{i}]") for i, x in enumerate(v)]
        return None if any(x is None for x in out) else out
