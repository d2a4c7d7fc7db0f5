"""`plan solve`: read, validate, solve, verify, export."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from threading import Event
from typing import Any, cast

import click

from planner.cli import terminal
from planner.cli.common import (
    EXIT_INFEASIBLE,
    handle_errors,
    parse_objective,
)
from planner.cli.interrupts import Interrupts
from planner.cli.params import SECONDS, SEED, THREADS
from planner.errors import UsageError
from planner.instance import Instance
from planner.schedule import Schedule
from planner.solvers import SolveOptions, objectives_of, parse_spec
from planner.solvers.auto import DEFAULT_TIME_LIMIT


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


@click.command()
@click.argument("instance", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the schedule JSON here ('-': standard output, like --json).",
)
@click.option("--gantt", type=click.Path(dir_okay=False), help="Write the Gantt CSV here.")
@click.option(
    "--solver",
    default="auto",
    show_default=True,
    help="auto, cpsat, milp, greedy or greedy:fifo|sjf|srsf|priority|interleave.",
)
@click.option(
    "--time-limit",
    type=SECONDS,
    help="Seconds for the solver [default: 30 for auto, cpsat and milp; greedy needs none].",
)
@click.option(
    "--objective",
    help="total_weighted_jct, makespan or total_weighted_tardiness, or a "
    "comma-separated lexicographic list [default: the instance's].",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed of the solvers.")
@click.option(
    "--workers",
    type=THREADS,
    default=2,
    show_default=True,
    help="Solver threads (CP-SAT search workers, MILP threads).",
)
@click.option(
    "--milp-backend", type=click.Choice(["cbc", "highs"]), default="cbc", show_default=True
)
@click.option(
    "--slots",
    type=click.IntRange(min=2),
    default=200,
    show_default=True,
    help="MILP: at most this many time slots.",
)
@click.option("--slot", type=click.IntRange(min=1), help="MILP: slot length in time units.")
@click.option(
    "--jobs",
    "show_jobs",
    is_flag=True,
    help=f"Print the per-job table (shown anyway up to {JOB_TABLE_MAX} jobs).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the schedule JSON instead of tables.")
@handle_errors
def solve(
    instance: str,
    output: str | None,
    gantt: str | None,
    solver: str,
    time_limit: float | None,
    objective: str | None,
    seed: int,
    workers: int,
    milp_backend: str,
    slots: int,
    slot: int | None,
    show_jobs: bool,
    as_json: bool,
) -> None:
    """Plan INSTANCE and write the schedule."""
    from planner.export import gantt_csv, gantt_rows, schedule_document
    from planner.jsonio import dumps
    from planner.outputs import check_outputs, write_all
    from planner.read import read_instance
    from planner.solvers import solve as run_solver
    from planner.verify import verify

    if gantt == "-":
        raise UsageError("--gantt -: write the CSV to standard output with plan export S -o -")
    if output == "-":  # the schedule document on standard output, tables left out
        output, as_json = None, True
    parse_spec(solver)  # a bad spec is a usage error before any reading
    objectives = parse_objective(objective)
    check_outputs([output, gantt], [instance])  # before solving: never lose a plan
    inst = read_instance(instance)

    live_line = terminal.LiveLine(enabled=not as_json, limit_s=_shown_limit(time_limit, solver))
    with live_line as live, Interrupts(Event()) as signals:
        options = SolveOptions(
            time_limit=time_limit,
            seed=seed,
            workers=workers,
            objective=objectives,
            progress=live.update,
            milp_backend=milp_backend,
            slots=slots,
            slot=slot,
            stop=signals.stop,
        )
        t0 = time.perf_counter()
        sched = _in_thread(lambda: run_solver(inst, solver, options))
        interrupted = {"interrupted": True} if options.stop.is_set() else {}
        sched = sched.with_(
            wall_s=time.perf_counter() - t0,
            info={**sched.info, **interrupted, "instance_file": str(Path(instance))},
        )

        found = sched.status in ("optimal", "feasible")
        violations = verify(inst, sched) if found else []
        if violations:  # a planner bug: never write a schedule that breaks the rules
            terminal.print_error(
                f"solver {sched.solver} produced an invalid schedule; nothing written"
            )
            terminal.print_violations(violations)
            sys.exit(EXIT_INFEASIBLE)
        doc = schedule_document(inst, sched, objectives_of(inst, options))
        files = {output: dumps(doc)} if output else {}
        if gantt:
            files[gantt] = gantt_csv(gantt_rows(sched, inst))
        if found:
            write_all(files)
    if as_json:
        terminal.print_json(doc)
    else:
        _print_result(doc, inst, sched, list(files) if found else None, bool(output), show_jobs)
    if not found:
        reason = sched.info.get("reason", "no feasible schedule found")
        terminal.print_error(f"{sched.status}: {reason}")
        sys.exit(EXIT_INFEASIBLE)
    if signals.exit_code is not None:
        sys.exit(signals.exit_code)


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
    terminal.print_summary(doc, inst.time_unit)
    for path in written or ():
        terminal.print_note(f"wrote {path}")
    if written is not None and not kept:
        terminal.print_note("the schedule was not written: give -o FILE to keep it")
