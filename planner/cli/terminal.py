"""All terminal output of `plan`: tables, problem lists and the live solver line.

Commands hand values to these functions; nothing else in the package prints.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from planner.errors import InputError, Problem
from planner.solvers import Progress

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=1) + "\n")
    sys.stdout.flush()


def print_input_error(e: InputError, as_json: bool = False) -> None:
    if as_json:
        print_json({"error": "bad input", "file": e.file,
                    "problems": [{"path": p.path, "message": p.message} for p in e.problems]})
    err.print(f"[bold red]error:[/] {e.file}: {len(e.problems)} problem(s)")
    for p in e.problems:
        err.print(f"  {e.file}: [bold]{p.path}[/]: {p.message}", markup=True)


def print_problems(file: str, problems: Sequence[Problem]) -> None:
    print_input_error(InputError(file, list(problems)))


def print_error(message: str) -> None:
    err.print(Text("error: ", style="bold red") + Text(message))


def print_note(message: str) -> None:
    err.print(Text(message, style="dim"))


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.{digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def print_summary(doc: Mapping[str, Any], time_unit: str) -> None:
    """The summary table of one schedule document (contract §6 form)."""
    m = doc.get("metrics") or {}
    t = Table(title=f"plan for {doc.get('instance', '')}", show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column(justify="right")
    lb = doc.get("lower_bound") or {}
    for name, value in (doc.get("objective") or {}).items():
        bound = lb.get(name)
        gap = ""
        if bound is not None and value:
            gap = f"  (bound {_fmt(float(bound))}, gap {100 * (value - bound) / abs(value):.2f}%)"
        t.add_row(f"objective {name}", _fmt(float(value)) + gap)
    rows = [
        ("makespan", m.get("makespan"), time_unit),
        ("average JCT", m.get("avg_jct"), time_unit),
        ("p99 JCT", m.get("p99_jct"), time_unit),
        ("GPU utilisation", None if m.get("gpu_utilization") is None
         else f"{100 * m['gpu_utilization']:.1f}%", ""),
        ("energy", m.get("energy_kwh"), "kWh"),
        ("interleaving groups", len(doc.get("groups") or []), ""),
        ("jobs", len(doc.get("jobs") or []), ""),
        ("solver", doc.get("solver"), ""),
        ("status", doc.get("status"), ""),
        ("wall time", doc.get("wall_s"), "s"),
    ]
    for label, value, unit in rows:
        t.add_row(label, f"{_fmt(value)} {unit}".rstrip())
    info = doc.get("info") or {}
    if "reason" in info:
        t.add_row("note", str(info["reason"]))
    out.print(t)


def print_violations(violations: Sequence[Any]) -> None:
    err.print(f"[bold red]{len(violations)} violation(s)[/]")
    for v in violations:
        err.print(f"  {v}", markup=False)


def print_models(rows: Iterable[Mapping[str, Any]]) -> None:
    t = Table(title="model catalogue")
    for col in ("model", "batch size", "GPU memory (GB)", "GPU counts", "iteration ms"):
        t.add_column(col)
    for r in rows:
        t.add_row(str(r["model"]), _fmt(r.get("batch_size")), _fmt(r.get("gpu_mem_gb")),
                  ", ".join(str(g) for g in r["gpus"]),
                  ", ".join(_fmt(x, 0) for x in r["iteration_ms"]))
    out.print(t)


def print_validated(name: str, counts: Mapping[str, int]) -> None:
    parts = ", ".join(f"{v} {k}" for k, v in counts.items())
    out.print(f"[green]ok[/] {name}: {parts}")


class LiveLine:
    """A one-line live display on stderr of incumbent, bound, gap and elapsed time."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and err.is_terminal
        self._live: Live | None = None
        self._last = 0.0

    def __enter__(self) -> LiveLine:
        if self.enabled:
            self._live = Live(Text("solving…"), console=err, transient=True,
                              refresh_per_second=4)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def update(self, p: Progress) -> None:
        if self._live is None:
            return
        now = time.monotonic()
        if now - self._last < 0.2:
            return
        self._last = now
        gap = "-"
        if p.incumbent is not None and p.bound is not None and p.incumbent:
            gap = f"{100 * (p.incumbent - p.bound) / abs(p.incumbent):.2f}%"
        self._live.update(Text(
            f"{p.elapsed_s:7.1f}s  incumbent {_fmt(p.incumbent)}  bound {_fmt(p.bound)}"
            f"  gap {gap}  {p.message}"))
