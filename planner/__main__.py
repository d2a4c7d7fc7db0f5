"""`python -m planner` is `plan`."""

from planner.launch import run

run()
