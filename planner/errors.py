"""Errors that reach the user: bad input (exit 2) with every problem found."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file: where (`jobs[3].gpus`) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def gpus_phrase(count: int) -> str:
    """A count of GPUs as a message says it: "1 GPU", "4 GPUs"."""
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


class InputError(Exception):
    """An input file that cannot be used; `problems` lists all that were found."""

    def __init__(self, file: str, problems: list[Problem]):
        self.file = file
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{file}: {len(problems)} problem(s)\n{lines}")


class UsageError(Exception):
    """A request the planner cannot serve (unknown solver spec, option out of range)."""


class WriteError(UsageError):
    """An output that cannot be written: `path` and the system's `reason`."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}; nothing was written")
