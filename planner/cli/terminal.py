"""All terminal output of `plan`: tables, problem lists and the live solver line.

Commands hand values to these functions; nothing else in the package prints.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from planner.errors import InputError
from planner.figures import figure
from planner.jsonio import dumps
from planner.solvers import Progress

# C0 and C1 control characters but the newline, shown as \xNN: ids, names and paths are
# the user's text, and an escape sequence in them would restyle or move the terminal.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c != 0x0A}


def visible(text: str) -> str:
    return text.translate(_CONTROL)


class _Console(Console):
    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Every string printed, table cells too, with its control characters shown (a
        `Text` built by hand bypasses this: pass the user's text as a string)."""
        return super().render_str(visible(text), **kwargs)

    def on_broken_pipe(self) -> None:
        """rich exits 1 ("no feasible schedule" here): raise instead, for the command's
        error handler (`planner.cli.common.handle_errors`: exit 141)."""
        self.quiet = True
        raise BrokenPipeError


def silence_output() -> None:
    """Point standard output and error at /dev/null, so that flushing them at exit fails
    no more once their reader went away."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        os.dup2(devnull, stream.fileno())


# No markup by default: ids, names, paths and messages are the user's text, and rich would
# read "[red]" in them as a style (tables too); a line that styles says markup=True and
# escapes what it echoes. No emoji codes either: rich printed a job "j:fire:" as "j🔥"
# (`tests/test_cli.py`).
out = _Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
err = _Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)


# A pipe takes 64 KiB at a time (Linux): one larger write whose reader leaves after its
# first read writes that much, raises nothing and loses the rest; written a pipe's worth
# at a time, the next write raises BrokenPipeError (exit 141, tests/test_cli.py).
CHUNK = 1 << 16


def _write_stdout(text: str) -> None:
    for i in range(0, len(text), CHUNK):
        sys.stdout.write(text[i : i + CHUNK])
        sys.stdout.flush()
    sys.stdout.flush()


def print_json(data: Any) -> None:
    _write_stdout(dumps(data))  # never NaN or Infinity, like every JSON file written


def print_input_error(e: InputError, as_json: bool = False) -> None:
    if as_json:
        print_json(
            {
                "error": "bad input",
                "file": e.file,
                "problems": [{"path": p.path, "message": p.message} for p in e.problems],
            }
        )
    file = escape(e.file)
    err.print(f"[bold red]error:[/] {file}: {len(e.problems)} problem(s)", markup=True)
    for p in e.problems:
        err.print(f"  {file}: [bold]{escape(p.path)}[/]: {escape(p.message)}", markup=True)


def busy(message: str, enabled: bool) -> Any:
    """A spinner with `message` on stderr while a long step runs (terminals only)."""
    if enabled and err.is_terminal:
        return err.status(message)
    return contextlib.nullcontext()


def print_raw(text: str) -> None:
    """An output file's text on standard output (`-o -`)."""
    _write_stdout(text)


def print_error(message: str) -> None:
    err.print(Text("error: ", style="bold red"), message, sep="")


def print_internal_error(message: str, traced: bool = False) -> None:
    """One line, however many the message has (matplotlib's parser errors had four);
    `traced`: the traceback is printed above it (`--debug`), so no hint."""
    hint = "" if traced else ", rerun with --debug for the traceback"
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    err.print(Text("internal error: ", style="bold red"), f"{line}{hint}", sep="")


def print_traceback(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def print_warning(message: str) -> None:
    err.print(Text("warning: ", style="bold yellow"), message, sep="")


def print_note(message: str) -> None:
    err.print(message, style="dim")


def print_summary(doc: Mapping[str, Any], time_unit: str, priced: bool = False) -> None:
    """The summary table of one schedule document (contract §6 form); `priced`: the
    cluster has electricity prices, so the energy cost is shown too (contract §12)."""
    m = doc.get("metrics") or {}
    t = Table(title=f"plan for {doc.get('instance', '')}", show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column(justify="right")
    lb = doc.get("lower_bound") or {}
    by = (doc.get("info") or {}).get("bound_by") or {}
    for name, value in (doc.get("objective") or {}).items():
        t.add_row(f"objective {name}", figure(float(value)))
        bound = lb.get(name)
        if bound is not None and value:  # a row of its own: one line in 80 columns
            word = f"{by[name]}, " if name in by else ""
            pct = 100 * (value - bound) / abs(value)
            t.add_row("  lower bound", f"{figure(float(bound))} ({word}gap {pct:.2f}%)")
    rows = [
        ("makespan", m.get("makespan"), time_unit),
        ("average JCT", m.get("avg_jct"), time_unit),
        ("p99 JCT", m.get("p99_jct"), time_unit),
        (
            "GPU utilisation",
            None if m.get("gpu_utilization") is None else f"{100 * m['gpu_utilization']:.1f}%",
            "",
        ),
        ("energy", m.get("energy_kwh"), "kWh"),
        *([("energy cost", m.get("energy_cost"), "")] if priced else []),
        ("interleaving groups", len(doc.get("groups") or []), ""),
        ("jobs", len(doc.get("jobs") or []), ""),
        ("solver", doc.get("solver"), ""),
        ("status", doc.get("status"), ""),
        ("wall time", doc.get("wall_s"), "s"),
    ]
    for label, value, unit in rows:
        t.add_row(label, f"{figure(value)} {unit}".rstrip())
    info = doc.get("info") or {}
    if isinstance(info.get("auto"), dict):
        t.add_row("auto chose", f"{info['auto'].get('chose')}: {info['auto'].get('why')}")
    if "elastic" in info:
        t.add_row("GPU counts", f"chosen: {info['elastic']}")
    if info.get("stop") in STOPS:  # planner.solvers.dispatch._plan_stops
        t.add_row("stopped jobs", STOPS[info["stop"]])
    if "held_back" in info:
        t.add_row("held back", f"{info['held_back']} (for a cheaper price)")
    if "reason" in info:
        t.add_row("note", str(info["reason"]))
    elif "error" in info:  # a solver's refusal that left an earlier stage's plan standing
        t.add_row("note", str(info["error"]))
    if info.get("interrupted") and doc.get("status") in ("optimal", "feasible"):
        t.add_row("interrupted", "stopped early: this is the best schedule found so far")
    elif info.get("interrupted"):
        t.add_row("interrupted", "stopped before a schedule was found")
    out.print(t)


# What a live state's running jobs that a reservation to come stops did (`info.stop`)
STOPS = {
    "later": "run on to the reservation that stops them (better than stopping now)",
    "now": "stopped now (better than running on to the reservation that stops them)",
    "later+group": "run on to the reservation that stops them, their co-members stopping too",
    "now+group": "stopped now with their co-members (better than letting those run on)",
}

# Above this many jobs `--jobs` prints plain aligned lines, one per job, not rich's table:
# rich measures every cell: `plan solve --jobs` on 10,000 jobs took 11.7 s, now 3.9 s as
# without `--jobs` (README, "The CLI"; tests/test_cli.py). Such a list is for grep and a pager.
PLAIN_ROWS = 1000


def print_job_table(rows: Sequence[Any], time_unit: str) -> None:
    """Where and when each job runs and, for a job that waited, why (`planner.waits`)."""
    cols = ("job", "node", "GPUs", "group", "start", "end", f"wait ({time_unit})", "why it waited")
    left = ("job", "node", "group", "why it waited")
    cells = [
        (r.job, r.nodes, str(r.gpus), r.group or "-", figure(r.start), figure(r.end),
         figure(r.wait), r.why)
        for r in rows
    ]  # fmt: skip
    if len(cells) > PLAIN_ROWS:
        _write_stdout(_aligned(cols, cells, [c in left for c in cols]))
        return
    t = Table(title="jobs", box=None)
    for col in cols:
        # ids, node lists and figures are what the user looks for: wrapped when long,
        # never cut to "…" (a job's nodes were, at 80 columns: tests/test_cli.py -k fold)
        t.add_column(col, justify="left" if col in left else "right", overflow="fold")
    for row in cells:
        t.add_row(*row)
    out.print(t)


def _aligned(head: Sequence[str], cells: Sequence[Sequence[str]], left: Sequence[bool]) -> str:
    """The rows as text columns two spaces apart, whole (no wrapping or cutting), the
    user's text with its control characters shown (`visible`)."""
    # one line per job: a newline in a job id is shown as \x0a too, and the columns are
    # as wide as the terminal draws them (a CJK character takes two cells)
    rows = [list(head), *([visible(c).replace("\n", "\\x0a") for c in row] for row in cells)]
    widths = [max(cell_len(row[k]) for row in rows) for k in range(len(head))]
    lines = (
        "  ".join(_pad(c, w, lj) for c, w, lj in zip(row, widths, left, strict=True))
        for row in rows
    )
    return "jobs\n" + "\n".join(line.rstrip() for line in lines) + "\n"


def _pad(cell: str, width: int, left: bool) -> str:
    fill = " " * (width - cell_len(cell))
    return cell + fill if left else fill + cell


def print_check_ok(schedule: str, jobs: int) -> None:
    out.print(f"[green]ok[/] {escape(schedule)}: {jobs} jobs, no violations", markup=True)


def print_violations(violations: Sequence[Any]) -> None:
    err.print(f"[bold red]{len(violations)} violation(s)[/]", markup=True)
    for v in violations:
        err.print(f"  {v}")


def print_models(rows: Sequence[Mapping[str, Any]], folder: str) -> None:
    """The catalogue's table, titled with the folder it was read from: an installed `plan`
    has no `models/` beside the user's files, and an empty catalogue says where it looked."""
    if not rows:
        print_warning(f"no models in {folder} (missing or empty; PLANNER_MODELS names a folder)")
        return
    t = Table(title=Text(f"model catalogue ({folder})"))
    # Model names are what users type into instances: never cut them; the lists wrap.
    t.add_column("model", no_wrap=True, overflow="fold", min_width=18)
    for col in ("batch size", "GPU memory (GB)", "GPU counts", "iteration ms"):
        t.add_column(col)
    for r in rows:
        t.add_row(
            str(r["model"]),
            figure(r.get("batch_size")),
            figure(r.get("gpu_mem_gb")),
            ", ".join(str(g) for g in r["gpus"]),
            ", ".join(figure(x, 0) for x in r["iteration_ms"]),
        )
    out.print(t)


def print_validated(name: str, counts: Mapping[str, int]) -> None:
    parts = ", ".join(f"{v} {k}" for k, v in counts.items())
    out.print(f"[green]ok[/] {escape(name)}: {escape(parts)}", markup=True)


class StatusLine:
    """The live line's text, rendered afresh at every refresh so that elapsed time moves
    between improvements: elapsed / limit, incumbent, bound and gap of the last report."""

    def __init__(self, limit_s: float | None):
        self.t0 = time.monotonic()
        self.limit_s = limit_s
        self.last: Progress | None = None

    def __rich__(self) -> Text:
        elapsed = time.monotonic() - self.t0
        clock = f"{elapsed:6.1f}s" + (f" / {self.limit_s:g}s" if self.limit_s is not None else "")
        p = self.last
        if p is None:
            return Text(f"{clock}  solving…")
        gap = "-"
        if p.incumbent is not None and p.bound is not None and p.incumbent:
            gap = f"{100 * (p.incumbent - p.bound) / abs(p.incumbent):.2f}%"
        now = f"incumbent {figure(p.incumbent)}  bound {figure(p.bound)}  gap {gap}"
        return Text(f"{clock}  {now}  {p.message}")


class LiveLine:
    """A one-line live display on stderr of elapsed / limit, incumbent, bound and gap."""

    def __init__(self, enabled: bool, limit_s: float | None = None):
        self.enabled = enabled and err.is_terminal
        self._live: Live | None = None
        self.line = StatusLine(limit_s)

    def __enter__(self) -> LiveLine:
        if self.enabled:
            self._live = Live(self.line, console=err, transient=True, refresh_per_second=4)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def update(self, p: Progress) -> None:
        self.line.last = p  # drawn at the next refresh


# --- plan simulate ---


class SimProgress:
    """A progress bar on stderr for `plan simulate`: jobs done of all, simulated time, and
    elapsed time; redrawn at most 4 times a second (terminals only)."""

    def __init__(self, enabled: bool, total: int, time_unit: str):
        self.enabled = enabled and err.is_terminal
        self.total = total
        self.unit = time_unit
        self._progress: Any = None
        self._task: Any = None
        self._last = 0.0

    def __enter__(self) -> SimProgress:
        if self.enabled:
            self._progress = _progress_bar("simulate", "jobs done", transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)

    def update(self, now: int, done: int, total: int) -> None:
        if self._progress is None or time.monotonic() - self._last < 0.25:
            return
        self._last = time.monotonic()
        self._progress.update(self._task, completed=done, description=f"t = {now:,} {self.unit}")


def print_simulation(info: Mapping[str, Any]) -> None:
    """The `info.simulation` line under the summary of `plan simulate`."""
    decisions = int(info.get("decisions") or 0)
    seconds = float(info.get("policy_seconds") or 0.0)
    per = seconds / decisions if decisions else 0.0
    err.print(
        Text(
            f"policy {info.get('policy')}: {decisions:,} decisions, "
            f"{int(info.get('preemptions') or 0):,} preemptions, policy time {seconds:,.2f} s "
            f"({per * 1000:.1f} ms per decision)",
            style="dim",
        )
    )


# --- plan bench ---


class BenchProgress:
    """A progress bar on stderr (done/total, elapsed) for `plan bench`; quiet when disabled.
    `auto_refresh=False` redraws only when a row arrives (no background thread)."""

    def __init__(self, enabled: bool, auto_refresh: bool = True):
        self.enabled = enabled
        self.auto_refresh = auto_refresh
        self._progress: Any = None
        self._task: Any = None
        self.failed = 0

    def __enter__(self) -> BenchProgress:
        if self.enabled:
            self._progress = _progress_bar("bench", None, auto_refresh=self.auto_refresh)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)

    def start(self, total: int, done: int) -> None:
        if self._progress is not None:
            self._task = self._progress.add_task("", total=total, completed=done)
            self._progress.refresh()

    def advance(self, row: Mapping[str, Any]) -> None:
        if row.get("status") in ("error", "timeout") or not row.get("verified"):
            self.failed += 1
        if self._progress is not None and self._task is not None:
            last = escape(visible(f"{row.get('name')} {row.get('solver')}: {row.get('status')}"))
            failed = f"  [red]{self.failed} failed[/]" if self.failed else ""
            self._progress.update(self._task, advance=1, description=last + failed)
            self._progress.refresh()


def _short(v: Any) -> str:
    """A compact number for narrow tables: 987.6, 12.3k, 4.56M."""
    if v is None:
        return "-"
    v = float(v)
    if abs(v) >= 1e6:
        return f"{v / 1e6:.2f}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:.1f}k"
    return f"{v:.1f}"


def _ratio(v: Any) -> str:
    return "-" if v is None else f"{v:.2f}"


def print_bench_summary(summary: Mapping[str, Any]) -> None:
    """The per-solver table of `plan bench` (see planner.batch.summary)."""
    from rich import box

    base = summary.get("baseline") or "-"
    rules = "/".join(r.removeprefix("greedy:") for r in summary.get("best_rule_of") or [])
    t = Table(
        title=f"bench: {summary.get('instances', 0)} instance(s), {summary.get('runs', 0)} run(s)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=0,
    )
    t.add_column("solver", style="bold", no_wrap=True)
    for col in (
        "inst",
        "ok",
        "avg\nJCT",
        "make-\nspan",
        "util",
        "kWh",
        "JCT\n×base",
        "mksp\n×base",
        "JCT\n×rule",
        "mksp\n×rule",
    ):
        t.add_column(col, justify="right", no_wrap=True)
    for s in summary.get("solvers", []):
        share = s.get("verified_share")
        util = s.get("mean_gpu_utilization")
        t.add_row(
            s["solver"],
            figure(s.get("instances")),
            "-" if share is None else f"{100 * share:.0f}%",
            _short(s.get("mean_avg_jct")),
            _short(s.get("mean_makespan")),
            "-" if util is None else f"{100 * util:.1f}%",
            _short(s.get("mean_energy_kwh")),
            _ratio(s.get("avg_jct_ratio_baseline")),
            _ratio(s.get("makespan_ratio_baseline")),
            _ratio(s.get("avg_jct_ratio_best_rule")),
            _ratio(s.get("makespan_ratio_best_rule")),
        )
    out.print(t)
    out.print(
        Text(
            f"Means over verified runs. ×base, ×rule: mean over instances of reference / solver"
            f" (> 1: better than the reference); base = {base}, rule = "
            + (
                f"the best of {rules} per instance."
                if rules
                else "the better of greedy:sjf and greedy:srsf per instance (neither ran)."
            ),
            style="dim",
        )
    )


def _progress_bar(
    label: str, unit: str | None, transient: bool = False, auto_refresh: bool = True
) -> Any:
    """A rich progress bar on stderr: label, bar, done/total [unit], elapsed, description
    (`plan simulate` and `plan bench`)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn()]
    if unit:
        columns.append(TextColumn(unit))
    columns += [TimeElapsedColumn(), TextColumn("{task.description}")]
    return Progress(*columns, console=err, transient=transient, auto_refresh=auto_refresh)
