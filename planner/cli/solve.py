"""`plan solve`: read, validate, solve, verify, export."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, cast

import click

import planner.cli.terminal as terminal
from planner.cli.common import (
    EXIT_INFEASIBLE,
    EXIT_INTERRUPTED,
    handle_errors,
    parse_objective,
)
from planner.schedule import Schedule
from planner.solvers import SolveOptions, objectives_of, parse_spec


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


@click.command()
@click.argument("instance", type=click.Path(dir_okay=False))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the schedule JSON here."
)
@click.option("--gantt", type=click.Path(dir_okay=False), help="Write the Gantt CSV here.")
@click.option(
    "--solver",
    default="auto",
    show_default=True,
    help="auto, cpsat, milp, greedy or greedy:fifo|sjf|srsf|priority|interleave.",
)
@click.option("--time-limit", type=click.FloatRange(min=0.0), help="Seconds for the solver.")
@click.option("--objective", help="Objective, or a comma-separated lexicographic list.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True)
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
    as_json: bool,
) -> None:
    """Plan INSTANCE and write the schedule."""
    from planner.export import gantt_csv, gantt_rows, json_text, schedule_document, write_atomic
    from planner.read import read_instance
    from planner.solvers import solve as run_solver
    from planner.verify import verify

    parse_spec(solver)  # a bad spec is a usage error before any reading
    objectives = parse_objective(objective)
    inst = read_instance(instance)

    with terminal.LiveLine(enabled=not as_json) as live:
        options = SolveOptions(
            time_limit=time_limit,
            seed=seed,
            workers=workers,
            objective=objectives,
            progress=live.update,
            milp_backend=milp_backend,
            slots=slots,
            slot=slot,
        )
        previous = signal.getsignal(signal.SIGINT)

        def on_interrupt(signum: int, frame: FrameType | None) -> None:
            # A second Ctrl-C gives up on waiting for the solver.
            if options.stop.is_set():
                raise KeyboardInterrupt
            options.stop.set()

        signal.signal(signal.SIGINT, on_interrupt)
        t0 = time.perf_counter()
        try:
            sched = _in_thread(lambda: run_solver(inst, solver, options))
        finally:
            signal.signal(signal.SIGINT, previous)
        sched = sched.with_(
            wall_s=time.perf_counter() - t0,
            info={**sched.info, "instance_file": str(Path(instance))},
        )

    if sched.jobs:
        violations = verify(inst, sched)
        if violations:  # a planner bug: never write a schedule that breaks the rules
            terminal.print_error(
                f"solver {sched.solver} produced an invalid schedule; nothing written"
            )
            terminal.print_violations(violations)
            sys.exit(EXIT_INFEASIBLE)
    doc = schedule_document(inst, sched, objectives_of(inst, options))
    if sched.jobs:
        # Both texts are made before either file is written: a failure while making the
        # second must not leave the first behind (exit 3 writes nothing).
        texts = [(output, json_text(doc)), (gantt, gantt_csv(gantt_rows(sched, inst)))]
        for path, text in texts:
            if path:
                write_atomic(path, text)
    if as_json:
        terminal.print_json(doc)
    else:
        terminal.print_summary(doc, inst.time_unit, bool(inst.power_price))
        if output and sched.jobs:
            terminal.print_note(f"wrote {output}")
        if gantt and sched.jobs:
            terminal.print_note(f"wrote {gantt}")
    if not sched.jobs:
        reason = sched.info.get("reason", "no feasible schedule found")
        terminal.print_error(f"{sched.status}: {reason}")
        sys.exit(EXIT_INFEASIBLE)
    if options.stop.is_set():
        sys.exit(EXIT_INTERRUPTED)
