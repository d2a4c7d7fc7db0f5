"""Documented upper bounds on the numbers the tool accepts (README, "What we chose where
the contract is silent"). They keep every value finite, so no Infinity reaches a schedule
and CP-SAT never sees 1e308. A time or a weight alone fits 64-bit integers; a weighted sum
can still pass 2**63 (weights near 10**6 times completions near 10**12 over ten jobs): CP-SAT
then refuses its model and the start is returned (README)."""

from __future__ import annotations

MAX_NUMBER = 10**12  # any number in an instance (times, capacities, demands, iterations)
MAX_WEIGHT = 10**6  # a job's weight
MAX_DURATION = 10**12  # a job's duration in time units, also when derived from its profile
# a time in a schedule (start, end): past 2**53 the metrics, computed in floats, lose whole
# time units (and past about 10**308 they cannot be computed at all)
MAX_SCHEDULE_TIME = 2**53
MAX_GENERATED_JOBS = 200_000  # `plan generate --jobs`
# node groups are expanded into Node objects: a typo like count 10**9 must not hang the reader
# (also the most `plan generate --nodes` and `plan import muri --nodes` take)
MAX_NODES = 100_000
# the planners keep one timeline per GPU: 10**7 GPUs on a node (a typo) ran `plan solve
# --time-limit 1` past 60 s and out of memory, and a SIGINT went unheard; a million GPUs
# in all (1,000 nodes of 1,024) plan six jobs in about 10 s and 380 MB, 100,000 nodes of 8
# in 3 s (`plan solve --solver greedy --time-limit 2`, one run each)
MAX_GPUS_PER_NODE = 1_024
MAX_GPUS = 1_000_000  # in the whole cluster
