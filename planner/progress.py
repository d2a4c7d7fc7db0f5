"""Progress under preemption and regrouping (contract §8): how far each member of a group
gets, and when it leaves.

Pure arithmetic on numbers and stage tuples, built on the cycle and solo-iteration formulas
of `planner.durations`; the verifier and anyone else who needs §8 ends may use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planner.durations import StageTuple, group_cycle, solo_iteration_ms, stage_tuple
from planner.instance import Instance, Job

# Float slack, in ms, when deciding that a stop instant has been reached.
_EPS_MS = 1e-6


@dataclass(frozen=True)
class Runner:
    """One member of a set of segments that start together (a group, or one solo segment).

    Times are ms after the segments' common start. An explicit-duration job is a runner
    whose "iteration" is one time unit: `work` in time units, `solo_ms` = the unit in ms.
    """

    work: float  # iterations still to do when the segment starts
    stages: StageTuple  # (data, gpu / speed, net) on the segment's node
    solo_ms: float  # solo iteration time on that node
    restart_ms: float = 0.0  # restart cost at the segment's start (0 for a first segment)
    stop_ms: float | None = None  # an earlier segment's end; None: runs until its work is done

    @staticmethod
    def of_job(
        inst: Instance,
        j: Job,
        speed: float,
        work: float,
        restart_ms: float = 0.0,
        stop_ms: float | None = None,
    ) -> Runner:
        """A segment of `j` (as the GPU count it runs at) on a node of `speed`: its
        profile's stages, or one "iteration" per time unit for an explicit duration."""
        if not j.profiled:
            return Runner(work, (0.0, 0.0, 0.0), inst.unit_ms, restart_ms, stop_ms)
        gp = inst.gpu_profile(j)
        return Runner(
            work, stage_tuple(gp, speed), solo_iteration_ms(gp, speed), restart_ms, stop_ms
        )


@dataclass(frozen=True)
class Leave:
    """When a runner left its co-runners and what it did until then."""

    at_ms: float
    done: float  # iterations done in this segment
    finished: bool  # its work was done at `at_ms`


def run_together(runners: Sequence[Runner], overhead: Mapping[int, float]) -> list[Leave]:
    """Run segments that start together on one GPU set by the rate rule of §8.

    At every instant the runners still running are each other's co-runners. One in its
    restart counts as a co-runner but makes no progress; the others make one iteration per
    cycle `c(G)` of all running members (their solo iteration time when alone). A runner
    leaves when its work is done, or at its `stop_ms` when that comes first. With no
    restart and no stop this repeats `durations.member_elapsed_ms` operation for operation,
    so a version-1 group gets exactly its §4 ends.
    """
    n = len(runners)
    rem = [float(r.work) for r in runners]
    restart = [r.restart_ms for r in runners]
    done = [0.0] * n
    out: list[Leave | None] = [None] * n
    active = list(range(n))
    now = 0.0
    while active:
        moving = [i for i in active if restart[i] <= 0]
        if len(active) == 1:
            cyc = runners[active[0]].solo_ms
        else:
            cyc = group_cycle([runners[i].stages for i in active], overhead)
        step = min((rem[i] for i in moving), default=math.inf)  # iterations to a finish
        delta = step * cyc if moving else math.inf
        other = min(
            [restart[i] for i in active if restart[i] > 0]
            + [_stop(runners[i]) - now for i in active if runners[i].stop_ms is not None],
            default=math.inf,
        )
        if other < delta:
            delta = other
            step = other / cyc if moving else 0.0
        now += delta
        for i in active:
            if restart[i] > 0:
                restart[i] = max(0.0, restart[i] - delta)
        for i in moving:
            rem[i] -= step
            done[i] += step
        still = []
        for i in active:
            if i in moving and rem[i] <= 0:
                out[i] = Leave(now, done[i], True)
            elif runners[i].stop_ms is not None and _stop(runners[i]) - now <= _EPS_MS:
                out[i] = Leave(_stop(runners[i]), done[i], False)
            else:
                still.append(i)
        active = still
    return [leave for leave in out if leave is not None]


def _stop(r: Runner) -> float:
    assert r.stop_ms is not None
    return r.stop_ms
