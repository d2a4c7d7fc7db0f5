"""Anytime improvement of a greedy plan (`search.py`: the search; `sampling.py`: the list
orders it tries)."""

from planner.solvers.improve.search import improve

__all__ = ["improve"]
