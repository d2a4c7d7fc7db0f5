"""`plan import` (public benchmark and trace files) and `plan generate` (synthetic)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

import planner.cli.terminal as terminal
from planner.cli.common import handle_errors, stops_on_signals
from planner.cli.params import SEED, FileName
from planner.errors import UsageError
from planner.limits import MAX_GPUS_PER_NODE, MAX_NODES

# The options every command that writes an instance shares (`plan import`, `plan generate`).
OUTPUT_OPTION = click.option(
    "-o",
    "--output",
    required=True,
    type=FileName(allow_dash=True),
    help="Write the instance here ('-': standard output).",
)
JSON_OPTION = click.option(
    "--json", "as_json", is_flag=True, help="Print what was written as JSON."
)


def _write_instance(doc: dict[str, Any], output: str, source: str, as_json: bool) -> None:
    """Validate what a converter made before writing it: a bad file is never written."""
    from planner.export import write_json
    from planner.jsonio import dumps
    from planner.outputs import STDOUT
    from planner.read import instance_from_dict

    inst = instance_from_dict(doc, file=source)
    if output == STDOUT:
        terminal.print_raw(dumps(doc))
        return
    write_json(output, doc)
    if as_json:
        terminal.print_json({"output": output, "jobs": len(inst.jobs), "nodes": len(inst.nodes)})
    else:
        nodes = f"{len(inst.nodes)} node" + ("" if len(inst.nodes) == 1 else "s")
        terminal.print_note(f"wrote {output}: {len(inst.jobs)} jobs, {nodes}")


@click.command("import")
@click.argument("kind", type=click.Choice(["psplib", "jobshop", "muri"]))
@click.argument("file", type=FileName())
@OUTPUT_OPTION
@JSON_OPTION
@click.option("--name", help="Instance name (default: the file's stem).")
@click.option(
    "--nodes",
    type=click.IntRange(min=1, max=MAX_NODES),
    default=8,
    show_default=True,
    help="muri: number of nodes (at most 100,000).",
)
@click.option(
    "--gpus-per-node",
    type=click.IntRange(min=1, max=MAX_GPUS_PER_NODE),
    default=8,
    show_default=True,
    help="muri: GPUs per node.",
)
@click.option("--first", type=click.IntRange(min=1), help="muri: keep only this many jobs.")
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="muri: skip this many jobs first.",
)
@click.option("--all-at-zero", is_flag=True, help="muri: release every job at time 0.")
@click.option(
    "--strict-priority",
    is_flag=True,
    help="muri: enforce the trace's priority classes strictly (default: none).",
)
@click.option(
    "--preemption",
    is_flag=True,
    help="muri: allow preemption; restart costs come from the model catalogue (contract §8).",
)
@click.option(
    "--elastic",
    is_flag=True,
    help="muri: offer each job the GPU counts its profile has between half and twice its "
    "trace count, the trace count first (contract §12).",
)
@click.option(
    "--time-unit",
    type=click.Choice(["ms", "s", "min"]),
    default="s",
    show_default=True,
    help="muri: time unit of the instance.",
)
@handle_errors
@stops_on_signals
def import_(
    kind: str,
    file: str,
    output: str,
    name: str | None,
    nodes: int,
    gpus_per_node: int,
    first: int | None,
    offset: int,
    all_at_zero: bool,
    strict_priority: bool,
    preemption: bool,
    elastic: bool,
    time_unit: str,
    as_json: bool,
) -> None:
    """Convert a PSPLIB .sm, a job-shop .jss or a Muri trace .csv file to an instance."""
    from planner.importers.convert import convert_file
    from planner.outputs import check_outputs, one_print

    if kind != "muri":
        _refuse_muri_options(kind)
    one_print(output, as_json)
    check_outputs([output], [file])
    params = click.get_current_context().params
    muri = {option: params[option] for option in MURI_OPTIONS} if kind == "muri" else None
    doc = convert_file(kind, file, name or Path(file).stem, muri)
    _write_instance(doc, output, file, as_json)


MURI_OPTIONS = (
    "nodes",
    "gpus_per_node",
    "first",
    "offset",
    "all_at_zero",
    "strict_priority",
    "preemption",
    "elastic",
    "time_unit",
)


def _refuse_muri_options(kind: str) -> None:
    """A Muri-only option given with another format is a usage error: ignored, it would
    write an instance without what the user asked for (say, no preemption)."""
    ctx = click.get_current_context()
    given = [
        f"--{name.replace('_', '-')}"
        for name in MURI_OPTIONS
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    ]
    if given:
        raise UsageError(f"{', '.join(given)}: for muri traces only, not {kind}")


BUSY_FROM_JOBS = 10_000  # from here generating takes seconds: show a spinner


@click.command()
@click.option(
    "--family",
    type=click.Choice(["dl", "rcpsp", "mixed"]),
    default="dl",
    show_default=True,
    help="dl: Muri-like training jobs; rcpsp: PSPLIB-like durations, pools and "
    "precedence; mixed: every feature at once.",
)
@click.option(
    "--jobs",
    "n_jobs",
    type=click.IntRange(min=1),
    required=True,
    help="Number of jobs (at most 200,000).",
)
@click.option(
    "--nodes",
    type=click.IntRange(min=1, max=MAX_NODES),
    required=True,
    help="Number of nodes, at most 100,000 (mixed: half a100, half v100, at least one of each).",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Same seed, same instance.")
@OUTPUT_OPTION
@click.option("--preemption", is_flag=True, help="Allow preemption (contract §8).")
@click.option(
    "--elastic",
    is_flag=True,
    help="Offer profiled jobs the GPU counts between half and twice theirs (contract §12).",
)
@JSON_OPTION
@handle_errors
@stops_on_signals
def generate(
    family: str,
    n_jobs: int,
    nodes: int,
    seed: int,
    output: str,
    preemption: bool,
    elastic: bool,
    as_json: bool,
) -> None:
    """Write a seeded synthetic instance."""
    from planner.generate import generate as make
    from planner.limits import MAX_GENERATED_JOBS
    from planner.outputs import check_outputs, one_print

    if n_jobs > MAX_GENERATED_JOBS:
        raise UsageError(
            f"--jobs {n_jobs}: at most {MAX_GENERATED_JOBS} jobs per generated instance "
            "(larger instances exceed what the solvers can plan; generate several)"
        )
    one_print(output, as_json)
    check_outputs([output])
    with terminal.busy(f"generating {n_jobs} jobs…", enabled=n_jobs >= BUSY_FROM_JOBS):
        doc = make(family, n_jobs, nodes, seed, preemption=preemption, elastic=elastic)
        _write_instance(doc, output, f"<generated {family}>", as_json)
