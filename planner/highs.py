"""HiGHS without its banner: highspy prints one on stdout when the first Highs object of a
process is made, and library code must not print (README, "Where things are"). Shared by
the interval LP bound (`planner.bounds.lp`) and the MILP's HiGHS back end."""

from __future__ import annotations

import os
import sys

_banner_done = False


def silence_banner() -> None:
    """Make the process's first Highs object with stdout pointed elsewhere (once)."""
    global _banner_done
    if _banner_done:
        return
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    _banner_done = True
