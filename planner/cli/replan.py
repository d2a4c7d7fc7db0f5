"""`plan replan`: a schedule under way, replanned from time T (contract §9)."""

from __future__ import annotations

from dataclasses import replace

import click

import planner.cli.terminal as terminal
from planner.cli.common import handle_errors
from planner.cli.params import FileName
from planner.cli.solve import SolveArgs, plan_and_write, solve_options
from planner.limits import MAX_NUMBER


@click.command()
@click.argument("instance", type=FileName())
@click.argument("schedule", type=FileName())
@click.option(
    "--now",
    "now",
    type=click.IntRange(min=0, max=MAX_NUMBER),  # the instance's own limit on times
    required=True,
    help="Replan from T.",
)
@click.option(
    "--changes",
    type=FileName(),
    help="JSON: add, cancel, nodes_down, progress, finished (README, Replanning).",
)
@click.option(
    "--live",
    "live_out",
    type=FileName(),
    help="Write the live-state instance here (plan check takes it with the new schedule).",
)
@solve_options
@handle_errors
def replan(
    instance: str,
    schedule: str,
    now: int,
    changes: str | None,
    live_out: str | None,
    args: SolveArgs,
) -> None:
    """Replan SCHEDULE of INSTANCE from time T: what started keeps running (or is done),
    the rest is planned again, after the changes."""
    from planner.changes import read_changes
    from planner.export import json_text
    from planner.live_file import live_document
    from planner.outputs import check_outputs, files_only
    from planner.read import raw_json, read_instance, read_schedule
    from planner.replan import (
        check_now,
        check_plan_in_force,
        horizon_at_the_cap,
        live_instance,
        state_counts,
    )

    outs, settings = args.prepared()
    files_only({"--live": live_out})
    check_outputs([*outs.paths(), live_out], [instance, schedule, changes])
    inst = read_instance(instance)
    check_now(inst, now, instance)
    sched = read_schedule(schedule)
    check_plan_in_force(inst, sched, schedule)
    ch = read_changes(changes) if changes else None
    live = live_instance(inst, sched, now, ch, source=changes or instance, instance_source=instance)
    if not outs.as_json:
        n = state_counts(inst, live)
        counts = ", ".join(f"{n[s]} {s}" for s in ("done", "running", "waiting"))
        left = f" ({n['stopped']} stopped, with the work left)" if n["stopped"] else ""
        terminal.print_note(f"at {now}: {counts}{left}")
        if horizon_at_the_cap(inst, live):
            terminal.print_note(
                f"nodes down for good hold their nodes to the horizon, {live.horizon:,}: the"
                " most an instance may hold, so no plan may end later"
            )
    extra = (
        ((live_out, json_text(live_document(raw_json(instance), live, ch))),) if live_out else ()
    )
    # the schedule names the live instance when it is written, as `plan check` needs it
    source = live_out or instance
    # the plan in force is a start (`planner.live.residual.Residual.start_of`): kept when nothing
    # better is found and it still holds
    settings = replace(settings, start=sched)
    plan_and_write(live, source, args.solver, settings, replace(outs, extra=extra))
