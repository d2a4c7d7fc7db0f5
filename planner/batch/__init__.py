"""`plan bench`: run many (instance, solver, repeat) jobs and collect one CSV row each.

- `suite`: the instance files, the task list and the loop that records rows;
- `run`: one job -> one row, never raising (a hard wall-clock guard in a forked child);
- `executors`: where the jobs run (in-process, a local process pool, or Ray);
- `results`: the CSV schema, resumption and crash-safe writing;
- `summary`: per-solver aggregates and ratios to a baseline solver and the best plain rule.
"""
