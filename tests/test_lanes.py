"""The second lane (planner.solvers.lanes): a forked child computes one call while this
process computes another; the child's result is dropped when it fails, runs past its time
or the solve is stopped, and this process's result always comes back."""

from __future__ import annotations

import os
import threading
import time

import pytest

from planner.solvers import lanes
from planner.solvers.lanes import side_by_side

pytestmark = pytest.mark.skipif(lanes.lanes(2) < 2, reason="needs fork and two cores")


def test_the_child_computes_in_another_process():
    there, here, why = side_by_side(os.getpid, os.getpid, 5.0, threading.Event())
    assert here == os.getpid() and why is None
    assert there is not None and there != here
    # a result of some size crosses the pipe whole
    big = list(range(300_000))
    got, _, _ = side_by_side(lambda: big, lambda: 0, 5.0, threading.Event())
    assert got == big


def test_a_failing_child_gives_none_its_error_and_this_lane_its_result():
    def fail() -> int:
        raise ValueError("no plan")

    got = side_by_side(fail, lambda: 7, 5.0, threading.Event())
    assert got == (None, 7, "failed: ValueError: no plan")
    # a child that dies without a word
    assert side_by_side(lambda: os._exit(3), lambda: 8, 5.0, threading.Event()) == (
        None,
        8,
        "died (wait status 768)",
    )


def test_a_child_past_its_time_is_ended(monkeypatch):
    monkeypatch.setattr(lanes, "GRACE_S", 0.2)
    # (a child not ended would sleep its 30 s and return 1)
    got = side_by_side(lambda: time.sleep(30) or 1, lambda: 2, 0.1, threading.Event())
    assert got == (None, 2, "ended past its time")


def test_a_stop_ends_the_wait_for_the_child():
    stop = threading.Event()

    def here() -> int:
        stop.set()  # as Ctrl-C would while this lane works
        return 3

    got = side_by_side(lambda: time.sleep(30) or 1, here, 60.0, stop)
    assert got == (None, 3, "stopped")  # not the child's 1 after its 30 s


def test_one_worker_means_one_lane():
    assert lanes.lanes(1) == 1
