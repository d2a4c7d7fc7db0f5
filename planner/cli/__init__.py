"""The `plan` command: a thin click layer. Commands parse arguments, call the library,
and hand its values to `planner.cli.terminal` for printing."""

from __future__ import annotations

import click

from planner import __version__
from planner.cli.bench import bench
from planner.cli.commands import check, export, models, validate
from planner.cli.common import DEBUG_KEY
from planner.cli.convert import generate, import_
from planner.cli.replan import replan
from planner.cli.show import show
from planner.cli.simulate import simulate
from planner.cli.solve import solve

EXAMPLES = """\b
Examples (a clone also has the README's demo, instances/demo.json):
  plan generate --family dl --jobs 8 --nodes 1 -o demo.json
  plan validate demo.json
  plan solve demo.json -o plan.json --gantt gantt.csv
  plan solve demo.json --solver greedy:srsf --time-limit 10
  plan check demo.json plan.json
  plan export plan.json -o -
  plan show plan.json -o gantt.html
  plan import muri trace.csv --preemption -o trace.json
  plan simulate trace.json --policy muri-s -o realized.json --events events.jsonl
  plan bench demo.json --solvers greedy,cpsat --time-limit 10 -o results.csv
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXAMPLES)
@click.version_option(__version__, prog_name="plan")
@click.option("--debug", is_flag=True, help="On an internal error, show the traceback.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Plan deep-learning training jobs on a GPU cluster."""
    ctx.meta[DEBUG_KEY] = debug


for command in (
    solve,
    replan,
    simulate,
    validate,
    check,
    export,
    models,
    import_,
    generate,
    bench,
    show,
):
    main.add_command(command)
