"""`plan show`: a schedule as a picture (contract §11): an interactive HTML Gantt chart
and, with `--png`, a static one. The schedule is drawn as given, not verified."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

import planner.cli.terminal as terminal
from planner.cli.common import handle_errors, schedule_instance, stops_on_signals
from planner.cli.params import FileName
from planner.errors import UsageError
from planner.instance import Instance
from planner.show.colours import COLOUR_BY

COLOUR_CHOICE = click.Choice(list(COLOUR_BY))


@click.command()
@click.argument("schedule", type=FileName())
@click.option(
    "--instance",
    type=FileName(),
    help="Instance file, for models, priorities, tenants, reservations and pools "
    "[default: the file recorded in the schedule, when readable].",
)
@click.option(
    "-o",
    "--output",
    type=FileName(),
    help="Write the HTML page here ('-': standard output).",
)
@click.option("--png", type=FileName(), help="Write a PNG picture here.")
@click.option("--open", "open_", is_flag=True, help="Open the HTML page in a browser.")
@click.option("--colour-by", type=COLOUR_CHOICE, default="group", show_default=True)
@handle_errors
@stops_on_signals
def show(
    schedule: str,
    instance: str | None,
    output: str | None,
    png: str | None,
    open_: bool,
    colour_by: str,
) -> None:
    """Draw SCHEDULE as a Gantt chart: a lane per node, a row per GPU."""
    from planner.outputs import STDOUT, check_outputs, check_pictures, files_only, write_all
    from planner.read import recorded_instance
    from planner.show.data import header_numbers, off_the_cluster
    from planner.show.files import read_document, show_files
    from planner.show.segments import document_segments

    if not output and not png:
        raise UsageError("give -o page.html and/or --png picture.png")
    files_only({"--png": png})
    if open_ and output == STDOUT:
        raise UsageError("--open needs the page in a file: give -o page.html")
    check_pictures(output, png)
    doc = read_document(schedule)
    for where, problem in header_numbers(doc)[1]:  # informational: drawn without it
        terminal.print_note(f"{schedule}: {where}: {problem}; left out of the header")
    recorded = recorded_instance(doc.get("info"), schedule)
    check_outputs([output, png], [schedule, instance or recorded])  # before drawing
    jobs = doc.get("jobs")
    ids = [a.get("id") for a in jobs if isinstance(a, dict)] if isinstance(jobs, list) else []
    inst = schedule_instance(schedule, ids, doc.get("instance"), instance, doc.get("info"))
    if inst is not None:  # drawn as given: a placement the cluster does not have is noted
        for where, problem in off_the_cluster(document_segments(doc)[0], inst):
            terminal.print_note(f"{schedule}: {where}: {problem}")
    files = show_files(doc, inst, output, png, colour_by)
    page = files.pop(STDOUT, None)  # `-o -`: the page on standard output
    if isinstance(page, str):  # before the files: once they are written, signals wait
        terminal.print_raw(page)
    write_all(files)
    for written in files:
        terminal.print_note(f"wrote {written}")
    if open_ and output:
        click.launch(output)


def show_page(doc: Mapping[str, Any], instance: Instance, path: str) -> str:
    """The Gantt page of a schedule document a command has just made (`--show`), which
    the command writes with its other outputs."""
    from planner.show.files import show_files

    page = show_files(doc, instance, path)[path]
    assert isinstance(page, str)  # the HTML page is text
    return page
