"""planner: plan deep-learning training jobs on a GPU cluster."""

__version__ = "0.1.0"
