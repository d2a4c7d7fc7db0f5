"""`plan simulate`: a policy run online over an instance (contract §10)."""

from __future__ import annotations

import time
from threading import Event
from typing import TYPE_CHECKING, Any

import click

import planner.cli.terminal as terminal
from planner.cli.common import EXIT_INFEASIBLE, EXIT_INTERNAL, EXIT_INTERRUPTED, fail, handle_errors
from planner.cli.interrupts import Interrupts
from planner.cli.params import SECONDS, FileName
from planner.cli.show import show_page
from planner.errors import InputError, Problem, UsageError

if TYPE_CHECKING:
    from planner.instance import Instance
    from planner.schedule import Schedule
    from planner.simulate.model import Policy, SimResult


@click.command()
@click.argument("instance", type=FileName())
@click.option(
    "--policy",
    required=True,
    help="fifo, sjf, srsf, priority, srtf, srsf-p, tiresias, muri-s, muri-l, regroup or "
    "plan[:SOLVER].",
)
@click.option("--interval", type=click.IntRange(min=1), help="Also decide every S time units.")
@click.option(
    "--budget",
    type=SECONDS,
    default=1.0,
    show_default=True,
    help="plan[:SOLVER]: seconds of planning per decision.",
)
@click.option("--blind", is_flag=True, help="Hide the jobs' iterations from the policy.")
@click.option(
    "-o",
    "--output",
    type=FileName(),
    help="Write the realized schedule here ('-': standard output).",
)
@click.option("--gantt", type=FileName(), help="Write the Gantt CSV here.")
@click.option("--events", type=FileName(), help="Write one JSON line per decision.")
@click.option("--show", type=FileName(), help="Write the Gantt chart (HTML) here.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary instead of tables.")
@handle_errors
def simulate(
    instance: str,
    policy: str,
    interval: int | None,
    budget: float,
    blind: bool,
    output: str | None,
    gantt: str | None,
    events: str | None,
    show: str | None,
    as_json: bool,
) -> None:
    """Run POLICY online over INSTANCE: jobs are revealed at their release, the policy
    decides at every release and completion, and the realized schedule is written.

    Ctrl-C or SIGTERM stops the run and writes nothing (exit 130 / 143): a schedule of the
    jobs realized so far is not a schedule of the instance."""
    from planner.online import make_policy
    from planner.outputs import STDOUT, check_outputs, check_pictures, files_only, one_print
    from planner.read import instance_record, read_instance
    from planner.simulate import inapplicable

    files_only({"--gantt": gantt, "--events": events, "--show": show})
    one_print(output, as_json)
    printed = output == STDOUT  # `-o -`: the realized schedule on standard output, as plan solve
    if printed:
        output, as_json = None, True

    try:
        pol = make_policy(policy, budget=budget, blind=blind)
    except ValueError as e:
        raise UsageError(f"--policy: {e}") from None
    check_pictures(show, html_option="--show")
    check_outputs([output, gantt, events, show], [instance])
    inst = read_instance(instance)
    why = inapplicable(inst, pol)
    if why is not None:
        raise InputError(instance, [Problem("policy.preemption", f"policy {policy} {why}")])
    _feasible_or_exit(inst)
    doc, realized, res = _run(inst, pol, interval, bool(events), not as_json)
    doc["info"].update(instance_record(instance, output))
    files = _files(inst, doc, realized, res, output, gantt, events)
    from planner.outputs import write_all

    if show:
        files[show] = show_page(doc, inst, show)
    write_all(files)
    if printed:
        terminal.print_json(doc)
    elif as_json:
        terminal.print_json(_summary(doc, list(files)))
    else:
        terminal.print_summary(doc, inst.time_unit, bool(inst.power_price))
        terminal.print_simulation(doc["info"]["simulation"])
        for path in files:
            terminal.print_note(f"wrote {path}")


def _feasible_or_exit(inst: Instance) -> None:
    """Exit 1 naming the jobs when no policy can run every job (`infeasible_reason`)."""
    from planner.online import infeasible_reason

    reason = infeasible_reason(inst)
    if reason is not None:
        fail(EXIT_INFEASIBLE, f"no schedule exists: {reason}; nothing written")


def _run(
    inst: Instance, pol: Policy, interval: int | None, keep: bool, bar: bool
) -> tuple[dict[str, Any], Schedule, SimResult]:
    """Simulate under the progress bar and the signal handlers; verify the result. The
    document, the realized schedule read back from it (what was verified) and the run."""
    from planner.schedule import schedule_from_dict
    from planner.simulate import Stopped, result_to_schedule_dict
    from planner.simulate import simulate as run_policy
    from planner.simulate.output import missed_limits
    from planner.verify import verify

    shown = terminal.SimProgress(bar, len(inst.jobs), inst.time_unit)
    with shown, Interrupts(Event()) as signals:
        t0 = time.perf_counter()
        try:
            res = run_policy(
                inst, pol, interval=interval, events=keep, progress=shown.update, stop=signals.stop
            )
        except Stopped as e:
            fail(signals.exit_code or EXIT_INTERRUPTED, f"interrupted: {e}; nothing written")
        wall = time.perf_counter() - t0
    doc = result_to_schedule_dict(inst, res, wall)
    realized = schedule_from_dict(doc)
    violations = verify(inst, realized)
    if violations:  # never write a realized schedule that breaks the rules
        late = missed_limits(inst, realized, violations)
        if late is not None:  # the policy's doing: an online policy may miss them
            what = f"missed the deadline or horizon of {late} job(s)"
        else:  # an engine bug: exit 3, as for any bug of ours (README, exit codes)
            what = "broke the rules"
        code = EXIT_INFEASIBLE if late is not None else EXIT_INTERNAL
        fail(code, f"simulation {pol.name} {what}; nothing written", violations)
    return doc, realized, res


def _files(
    inst: Instance,
    doc: dict[str, Any],
    realized: Schedule,
    res: SimResult,
    output: str | None,
    gantt: str | None,
    events: str | None,
) -> dict[str, str]:
    from planner.export import schedule_files
    from planner.simulate.model import events_jsonl

    files = schedule_files(inst, realized, doc, output, gantt)
    if events:
        files[events] = events_jsonl(res.events)
    return files


def _summary(doc: dict[str, Any], written: list[str]) -> dict[str, Any]:
    return {
        "instance": doc["instance"],
        "solver": doc["solver"],
        "metrics": doc["metrics"],
        "simulation": doc["info"]["simulation"],
        "wall_s": doc["wall_s"],
        "written": written,
    }
