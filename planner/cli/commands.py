"""`plan validate`, `plan check`, `plan export`, `plan models`."""

from __future__ import annotations

import click

import planner.cli.terminal as terminal
from planner.cli.common import (
    EXIT_INFEASIBLE,
    fail,
    handle_errors,
    schedule_instance,
    stops_on_signals,
)
from planner.cli.params import FileName


@click.command()
@click.argument("instance", type=FileName())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
@stops_on_signals
def validate(instance: str, as_json: bool) -> None:
    """Check an instance file only."""
    from planner.read import read_instance
    from planner.validate import idle_tenants

    inst = read_instance(instance)
    counts = {
        "jobs": len(inst.jobs),
        "nodes": len(inst.nodes),
        "GPUs": sum(n.gpus for n in inst.nodes),
        "reservations": len(inst.reservations),
    }
    if as_json:
        terminal.print_json({"valid": True, "instance": inst.name, **counts})
    else:
        terminal.print_validated(inst.name, counts)
        for note in idle_tenants(inst):
            terminal.print_note(f"{instance}: {note}")


@click.command()
@click.argument("instance", type=FileName())
@click.argument("schedule", type=FileName())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
@stops_on_signals
def check(instance: str, schedule: str, as_json: bool) -> None:
    """Verify a schedule against the rules R1-R11; exit 1 on violations."""
    from planner.read import read_instance, read_schedule
    from planner.verify import verify

    inst = read_instance(instance)
    sched = read_schedule(schedule)
    violations = verify(inst, sched)
    # The first thing to know when every job seems wrong: the schedule is of another instance.
    other = sched.instance if sched.instance != inst.name else None
    if other is not None and not as_json:
        # a warning, not an error: the verdict (and the exit code) is the rules'
        terminal.print_warning(f"{schedule} is a schedule of instance '{other}', not '{inst.name}'")
    if as_json:
        terminal.print_json(
            {
                "valid": not violations,
                "schedule_instance": sched.instance,
                "instance": inst.name,
                "violations": [
                    {
                        "rule": v.rule,
                        "job": v.job,
                        "node": v.node,
                        "gpu": v.gpu,
                        "time": v.time,
                        "message": v.message,
                    }
                    for v in violations
                ],
            }
        )
    elif violations:
        fail(EXIT_INFEASIBLE, None, violations)
    else:
        terminal.print_check_ok(schedule, len(sched.jobs))
    if violations:
        fail(EXIT_INFEASIBLE, None)


@click.command()
@click.argument("schedule", type=FileName())
@click.option(
    "--gantt",
    "-o",
    "--output",
    "gantt",
    required=True,
    type=FileName(allow_dash=True),
    help="Write the Gantt CSV here ('-': standard output; --gantt is the same).",
)
@click.option(
    "--instance",
    "instance",
    type=FileName(),
    help="Instance file, for the priority, tenant and model columns "
    "(default: the file recorded in the schedule, when readable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@handle_errors
@stops_on_signals
def export(schedule: str, gantt: str, instance: str | None, as_json: bool) -> None:
    """Write the Gantt CSV of a schedule."""
    from planner.export import gantt_csv, gantt_rows, write_gantt
    from planner.outputs import STDOUT, check_outputs, one_print
    from planner.read import read_schedule, recorded_instance

    one_print(gantt, as_json)
    sched = read_schedule(schedule)
    check_outputs([gantt], [schedule, instance or recorded_instance(sched.info, schedule)])
    ids = [a.id for a in sched.jobs]
    inst = schedule_instance(schedule, ids, sched.instance, instance, sched.info)
    if gantt == STDOUT:
        terminal.print_raw(gantt_csv(gantt_rows(sched, inst)))
        return
    write_gantt(gantt, sched, inst)
    if as_json:
        terminal.print_json({"output": gantt, "jobs": len(sched.jobs)})
    else:
        terminal.print_note(f"wrote {gantt}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
@stops_on_signals
def models(as_json: bool) -> None:
    """List the model catalogue."""
    from planner.catalogue import catalogue_rows, models_dir

    rows = catalogue_rows()
    if as_json:
        terminal.print_json(rows)
    else:
        terminal.print_models(rows, str(models_dir()))
