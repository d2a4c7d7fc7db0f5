"""Documented upper bounds on the numbers the tool accepts (README, "What we chose where
the contract is silent"). They keep every value finite and small enough for the solvers'
64-bit integer arithmetic: times and weighted sums stay far below 2**63 even summed over
a million jobs, so no Infinity reaches a schedule and CP-SAT never sees 1e308."""

from __future__ import annotations

MAX_NUMBER = 10**12  # any number in an instance (times, capacities, demands, iterations)
MAX_WEIGHT = 10**6  # a job's weight
MAX_DURATION = 10**12  # a job's duration in time units, also when derived from its profile
# a time in a schedule (start, end): past 2**53 the metrics, computed in floats, lose whole
# time units (and past about 10**308 they cannot be computed at all)
MAX_SCHEDULE_TIME = 2**53
MAX_GENERATED_JOBS = 200_000  # `plan generate --jobs`
