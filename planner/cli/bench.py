"""`plan bench`: run solvers over many instances, one CSV row per (instance, solver, repeat).

Each solve gets `--solver-threads` (default 1) internal threads, so `--workers N` processes
use about N cores. Rows already in the results file are skipped (resume); see
`planner.batch.results` for how the file is written and `planner.batch.summary` for the
ratios in the summary table.
"""

from __future__ import annotations

from typing import Any

import click

import planner.cli.terminal as terminal
from planner.cli.common import EXIT_INFEASIBLE, EXIT_USAGE, fail, handle_errors
from planner.cli.interrupts import Interrupted, Stopping
from planner.cli.params import SECONDS, SEED, THREADS, FileName
from planner.errors import UsageError, WriteError

DEFAULT_SOLVERS = "greedy:fifo,greedy:srsf,greedy:interleave,cpsat,milp"
DEFAULT_BASELINE = "greedy:fifo"
# every run is a row held in memory: 10^8 repeats ran out of it (exit 3) after 12 s
MAX_REPEAT = 1000


def parse_solvers(text: str) -> list[str]:
    from planner.solvers import parse_spec

    solvers = list(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    if not solvers:
        raise UsageError("--solvers: give at least one solver")
    for s in solvers:
        if s.startswith("simulate:"):  # a policy simulated online (contract §10)
            from planner.online import check_spec

            try:
                check_spec(s)
            except ValueError as e:
                raise UsageError(f"--solvers: {e}") from None
        else:
            try:
                parse_spec(s)
            except UsageError as e:  # bench also runs policies online
                raise UsageError(f"--solvers: {e}, or simulate:POLICY") from None
    return solvers


@click.command()
@click.argument("instances", nargs=-1, required=True, type=FileName(dir_okay=True))
@click.option(
    "-o",
    "--output",
    required=True,
    type=FileName(),
    help="Results CSV; rows already in it are skipped.",
)
@click.option(
    "--solvers",
    default=DEFAULT_SOLVERS,
    show_default=True,
    help="Comma-separated solver specs; simulate:POLICY runs a policy online.",
)
@click.option(
    "--time-limit",
    type=SECONDS,
    default=10.0,
    show_default=True,
    help="Seconds per solve.",
)
@click.option(
    "--workers",
    type=THREADS,
    default=2,
    show_default=True,
    help="Solves at a time (1: in this process).",
)
@click.option(
    "--solver-threads",
    type=THREADS,
    default=1,
    show_default=True,
    help="Threads inside each solve (CP-SAT workers).",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1, max=MAX_REPEAT),
    default=1,
    show_default=True,
    help="Runs per (instance, solver), with seeds seed, seed+1, ... (at most 1,000).",
)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option(
    "--baseline",
    help="Solver the ratios are relative to [default: greedy:fifo when among --solvers, "
    "else the first of them].",
)
@click.option(
    "--margin",
    type=SECONDS,
    help="Seconds beyond the time limit before a run is killed "
    "[default: 10 + half the time limit].",
)
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option(
    "--address", help="Ray cluster address (ray.init(address=...)); default: a local Ray instance."
)
@click.option("--retry-failed", is_flag=True, help="Rerun rows whose status is error or timeout.")
@click.option("--report", type=FileName(), help="Write the benchmark as an HTML report.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@handle_errors
def bench(
    instances: tuple[str, ...],
    output: str,
    solvers: str,
    time_limit: float,
    workers: int,
    solver_threads: int,
    repeat: int,
    seed: int,
    baseline: str | None,
    margin: float | None,
    executor: str,
    address: str | None,
    retry_failed: bool,
    report: str | None,
    as_json: bool,
) -> None:
    """Benchmark solvers on INSTANCES (files, or folders of *.json) into a CSV.

    \b
    One row per (instance, solver, repeat); rows already in the -o file are skipped, so an
    interrupted bench resumes where it stopped. Rows are appended as runs finish and the
    file is rewritten in instance/solver/repeat order at the end.
    A bad instance file, a solver exception or a run killed after time limit + margin
    becomes a row with status error / timeout and the reason; the bench goes on.
    Summary ratios are reference / solver per instance (> 1: better than the reference).
    Ray: --executor ray starts a local Ray instance, or joins --address; remote workers
    need the planner package installed (instance files are sent with the tasks).
    """
    from planner.batch.suite import make_tasks, run_bench
    from planner.batch.summary import summarize

    files, specs, baseline = _checked(
        instances, output, solvers, baseline, executor, address, report
    )
    tasks = make_tasks(files, specs, repeat, seed, time_limit, solver_threads, margin)
    # In-process runs fork each job: no refresh thread then (a fork copies no threads
    # but may copy a lock one of them holds).
    live = workers > 1 or executor == "ray"
    try:
        with Stopping(), terminal.BenchProgress(enabled=not as_json, auto_refresh=live) as progress:
            result = run_bench(
                tasks,
                output,
                executor,
                workers,
                address,
                retry_failed,
                on_start=progress.start,
                on_row=progress.advance,
            )
    except Interrupted as e:  # run_bench has put the finished rows in order
        fail(e.exit_code, f"interrupted: {output} holds the finished runs; rerun to resume")
    summary = summarize(result.rows, baseline or None, specs)
    unwritten = _write_report(report, result.rows, baseline, specs)
    summary["output"] = str(output)
    summary["skipped"] = result.skipped
    if as_json:
        terminal.print_json(summary)
    else:
        terminal.print_bench_summary(summary)
        if result.dropped_lines:
            terminal.print_note(f"dropped {result.dropped_lines} torn line(s) of {output}")
        terminal.print_note(f"{result.ran} run(s), {result.skipped} already in {output}")
        if report and unwritten is None:
            terminal.print_note(f"wrote {report}")
    if unwritten is not None:
        why = f"cannot write {unwritten.path}: {unwritten.reason}; the runs are in {output}"
        fail(EXIT_USAGE, why)
    code = exit_code(result.rows)
    if code == EXIT_USAGE:
        fail(code, f"every instance is bad input (the error column of {output})")
    if code == EXIT_INFEASIBLE:
        fail(code, f"no run gave a verified schedule (the rows of {output})")


def _checked(
    instances: tuple[str, ...],
    output: str,
    solvers: str,
    baseline: str | None,
    executor: str,
    address: str | None,
    report: str | None,
) -> tuple[list[str], list[str], str]:
    """The instance files, the solver specs and the baseline, once every option is known
    to be usable (UsageError otherwise), before any run."""
    from planner.batch.executors import check_executor
    from planner.batch.suite import collect_instances
    from planner.outputs import check_outputs, check_pictures, files_only, no_link

    # the results file is where a rerun resumes from: it cannot be standard output
    files_only({"-o": output, "--report": report})
    no_link("-o", output)  # it is appended to as runs finish
    specs = parse_solvers(solvers)
    if baseline is None:
        baseline = DEFAULT_BASELINE if DEFAULT_BASELINE in specs else specs[0]
    elif baseline and baseline not in specs:
        raise UsageError(f"--baseline {baseline} is not among --solvers")
    check_pictures(report, None, "--report")
    check_executor(executor, address)
    files = collect_instances(instances)
    check_outputs([output, report], files)
    return files, specs, baseline


def _write_report(
    report: str | None, rows: list[dict[str, Any]], baseline: str, specs: list[str]
) -> WriteError | None:
    """The --report page, or why it could not be written (the rows are in -o already)."""
    if not report:
        return None
    from planner.show.files import write_report

    try:
        write_report(report, rows, baseline or None, specs)
    except WriteError as e:
        return e
    return None


def exit_code(rows: list[dict[str, Any]]) -> int:
    """Contract §7 for a whole bench: 0 when some run gave a verified schedule; else 2
    when no instance file could be read, 1 otherwise (no schedule found). The rows are
    written either way: they say what went wrong with each run."""
    from planner.batch.run import unread

    if not rows or any(r.get("verified") for r in rows):
        return 0
    if all(unread(r) for r in rows):
        return EXIT_USAGE
    return EXIT_INFEASIBLE
