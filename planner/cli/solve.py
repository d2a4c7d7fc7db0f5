"""`plan solve`: read, validate, solve, verify, export."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from threading import Event
from typing import Any, NamedTuple, TypeVar, cast

import click

import planner.cli.terminal as terminal
from planner.cli.common import (
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    fail,
    handle_errors,
    parse_objective,
)
from planner.cli.interrupts import Interrupts
from planner.cli.params import SECONDS, SEED, THREADS, FileName
from planner.cli.show import show_page
from planner.errors import UsageError
from planner.instance import Instance
from planner.outputs import STDOUT, check_pictures
from planner.schedule import Schedule
from planner.solvers import SolveOptions, objectives_of, parse_spec
from planner.solvers.options import DEFAULT_TIME_LIMIT


def _in_thread(work: Callable[[], Schedule]) -> Schedule:
    """Run `work` in a worker thread. Python runs signal handlers only in the main thread
    and only between bytecodes, so a main thread blocked inside a solver's C++ call would
    not see Ctrl-C until the solver returned; waiting in short joins lets it react."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = work()
        except BaseException as e:  # handed to the main thread below
            box["error"] = e

    t = threading.Thread(target=target, name="solver", daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.1)
    if "error" in box:
        raise box["error"]
    return cast(Schedule, box["result"])


JOB_TABLE_MAX = 25  # a larger table scrolls the summary away: ask for it with --jobs

F = TypeVar("F", bound=Callable[..., Any])

_SOLVE_OPTIONS = [
    click.option(
        "-o",
        "--output",
        type=FileName(allow_dash=True),
        help="Write the schedule JSON here ('-': standard output, like --json).",
    ),
    click.option("--gantt", type=FileName(), help="Write the Gantt CSV here."),
    click.option("--show", type=FileName(), help="Write the Gantt chart (HTML) here."),
    click.option(
        "--solver",
        default="auto",
        show_default=True,
        help="auto, cpsat, milp, greedy or greedy:fifo|sjf|srsf|priority|interleave.",
    ),
    click.option(
        "--time-limit",
        type=SECONDS,
        help="Seconds for the solver [default: 30; greedy:RULE needs none, plain greedy "
        "spends it only on extra plans: a preemptive batch's starts, interleaving groups "
        "kept to their end, GPU counts, price hold-backs].",
    ),
    click.option(
        "--objective",
        help="total_weighted_jct, makespan, total_weighted_tardiness, energy_kwh or "
        "energy_cost, or a comma-separated lexicographic list (spaces around names are "
        "dropped) [default: the instance's].",
    ),
    click.option(
        "--seed", type=SEED, default=0, show_default=True, help="Random seed of the solvers."
    ),
    click.option(
        "--workers",
        type=THREADS,
        default=2,
        show_default=True,
        help=(
            "Solver threads (CP-SAT search workers, MILP threads); from 2, batch and release"
            " plans anneal a second seed in a forked process."
        ),
    ),
    click.option(
        "--milp-backend",
        type=click.Choice(["cbc", "highs"]),
        default="cbc",
        show_default=True,
        help="The MILP's solver; --solver milp:cbc or milp:highs names it too, and wins.",
    ),
    click.option(
        "--slots",
        type=click.IntRange(min=2),
        default=200,
        show_default=True,
        help=(
            "MILP: time slots over the horizon (sets the slot length; the grid grows to hold"
            " the start's plan)."
        ),
    ),
    click.option("--slot", type=click.IntRange(min=1), help="MILP: slot length in time units."),
    click.option(
        "--jobs",
        "show_jobs",
        is_flag=True,
        help=f"Print the per-job table (shown anyway up to {JOB_TABLE_MAX} jobs).",
    ),
    click.option(
        "--json", "as_json", is_flag=True, help="Print the schedule JSON instead of tables."
    ),
]


class SolveArgs(NamedTuple):
    """The values of the options `solve_options` adds, handed over as one argument."""

    output: str | None
    gantt: str | None
    show: str | None
    solver: str
    time_limit: float | None
    objective: str | None
    seed: int
    workers: int
    milp_backend: str
    slots: int
    slot: int | None
    show_jobs: bool
    as_json: bool

    @property
    def prints_json(self) -> bool:
        """`--json`, or `-o -`, the schedule document on standard output (`Outputs.normalised`)."""
        return self.as_json or self.output == STDOUT

    def prepared(self) -> tuple[Outputs, SolveOptions]:
        """The outputs and solver settings; usage errors before any reading."""
        outs = Outputs(self.output, self.gantt, self.show, show_jobs=self.show_jobs)
        outs = replace(outs, as_json=self.as_json).normalised()
        check_pictures(self.show, html_option="--show")
        parse_spec(self.solver)  # a bad spec is a usage error before any reading
        settings = settings_of(
            self.objective,
            self.time_limit,
            self.seed,
            self.workers,
            self.milp_backend,
            self.slots,
            self.slot,
        )
        return outs, settings


def solve_options(fn: F) -> F:
    """The options `plan solve` and `plan replan` share (outputs, solver and its settings),
    passed to `fn` as one `args: SolveArgs`."""

    @functools.wraps(fn)
    def command(*a: Any, **kw: Any) -> Any:
        args = SolveArgs(**{name: kw.pop(name) for name in SolveArgs._fields})
        return fn(*a, args=args, **kw)

    for option in reversed(_SOLVE_OPTIONS):
        command = option(command)
    return cast(F, command)


@dataclass(frozen=True)
class Outputs:
    """Where one command writes: the schedule, its Gantt CSV and chart, and `extra` (path,
    text) files written with them; `show_jobs` / `as_json` say what it prints."""

    output: str | None
    gantt: str | None
    show: str | None = None
    extra: tuple[tuple[str, str], ...] = ()
    show_jobs: bool = False
    as_json: bool = False

    def normalised(self) -> Outputs:
        from planner.outputs import files_only

        if self.gantt == "-":
            raise UsageError("--gantt -: write the CSV to standard output with plan export S -o -")
        files_only({"--show": self.show})
        if self.output == STDOUT:  # the schedule document on standard output, tables left out
            return replace(self, output=None, as_json=True)
        return self

    def paths(self) -> list[str | None]:
        return [self.output, self.gantt, self.show, *(p for p, _ in self.extra)]


def settings_of(
    objective: str | None,
    time_limit: float | None,
    seed: int,
    workers: int,
    milp_backend: str,
    slots: int,
    slot: int | None,
) -> SolveOptions:
    return SolveOptions(
        time_limit=time_limit,
        seed=seed,
        workers=workers,
        objective=parse_objective(objective),
        milp_backend=milp_backend,
        slots=slots,
        slot=slot,
    )


@click.command()
@click.argument("instance", type=FileName())
@solve_options
@handle_errors
def solve(instance: str, args: SolveArgs) -> None:
    """Plan INSTANCE and write the schedule."""
    from planner.outputs import check_outputs
    from planner.read import read_instance
    from planner.validate import idle_tenants

    outs, settings = args.prepared()
    check_outputs(outs.paths(), [instance])  # before solving: never lose a plan
    inst = read_instance(instance)
    if not outs.as_json:
        for note in idle_tenants(inst):
            terminal.print_note(f"{instance}: {note}")
    plan_and_write(inst, instance, args.solver, settings, outs)


def plan_and_write(
    inst: Instance, instance: str, solver: str, settings: SolveOptions, outs: Outputs
) -> None:
    """Solve with a live line and Ctrl-C / SIGTERM handling, verify, write every output or
    none, print (`plan solve` and `plan replan`)."""
    from planner.export import schedule_document, schedule_files
    from planner.outputs import write_all
    from planner.read import instance_record
    from planner.solvers import solve as run_solver
    from planner.verify import verify

    limit = _shown_limit(settings.time_limit, solver)
    live_line = terminal.LiveLine(enabled=not outs.as_json, limit_s=limit)
    with live_line as live, Interrupts(Event()) as signals:
        options = replace(settings, progress=live.update, stop=signals.stop)
        t0 = time.perf_counter()
        sched = _in_thread(lambda: run_solver(inst, solver, options))
        interrupted = {"interrupted": True} if options.stop.is_set() else {}
        sched = sched.with_(
            wall_s=time.perf_counter() - t0,
            info={**sched.info, **interrupted, **instance_record(instance, outs.output)},
        )
        found = sched.status in ("optimal", "feasible")
        violations = verify(inst, sched) if found else []
        if violations:  # a planner bug: never write a schedule that breaks the rules
            fail(
                EXIT_INTERNAL,
                f"solver {sched.solver} produced an invalid schedule; nothing written",
                violations,
            )
        doc = schedule_document(inst, sched, objectives_of(inst, options))
        files = schedule_files(inst, sched, doc, outs.output, outs.gantt) | dict(outs.extra)
        if found:
            if outs.show:
                files[outs.show] = show_page(doc, inst, outs.show)
            write_all(files)
    if outs.as_json:
        terminal.print_json(doc)
    else:
        written = list(files) if found else None
        _print_result(doc, inst, sched, written, bool(outs.output), outs.show_jobs)
    if not found and signals.exit_code is not None:  # stopped before any plan was made
        fail(signals.exit_code, "interrupted before a schedule was found; nothing written")
    if not found:
        reason = sched.info.get("reason", "no feasible schedule found")
        fail(EXIT_INFEASIBLE, f"{NOT_FOUND.get(sched.status, sched.status)}: {reason}")
    if signals.exit_code is not None:  # stopped early: the best plan is written, said above
        fail(signals.exit_code, None)


# The status of a run that wrote nothing, in words (a live state's residual is stricter
# than the instance, so its "infeasible" is reported as unknown: planner/live/residual.py, merge).
NOT_FOUND = {
    "infeasible": "no schedule exists",
    "unknown": "no schedule found (none proved impossible)",
}


def _shown_limit(time_limit: float | None, solver: str) -> float | None:
    """The limit the live line shows: the solvers' default, except for greedy (none)."""
    if time_limit is None and not solver.startswith("greedy"):
        return DEFAULT_TIME_LIMIT
    return time_limit


def _print_result(
    doc: dict[str, Any],
    inst: Instance,
    sched: Schedule,
    written: list[str] | None,
    kept: bool,
    show_jobs: bool,
) -> None:
    """Job table, summary and what was written (`written` None: no schedule found; `kept`:
    the schedule itself was written)."""
    if written is not None and (show_jobs or len(sched.jobs) <= JOB_TABLE_MAX):
        from planner.waits import job_rows

        terminal.print_job_table(job_rows(inst, sched), inst.time_unit)
    terminal.print_summary(doc, inst.time_unit, bool(inst.power_price))
    for path in written or ():
        terminal.print_note(f"wrote {path}")
    if written is not None and not kept:
        terminal.print_note("the schedule was not written: give -o FILE to keep it")
