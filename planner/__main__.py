"""`python -m planner` is `plan`."""

from planner.cli import main

main(prog_name="plan")
