"""The policies the preemptive planner runs in `planner.simulate`'s engine.

`KeyedMuri` is Muri's policy (`muri-s`, interleaving) with a planner's order: a job's key is
`remaining solo time x GPUs^gpu_exp / weight x mult[job]` (muri-s is gpu_exp = 1, no
weight, every mult 1), and with `regroup` Muri's groups re-formed for throughput and
better-mixing waiting jobs admitted into them (`regroup.py`). `KeyedSrsf` is the same
order without groups (`srsf-p` when the exponent is 1), for instances without
interleaving and as the search's other branch (on all-at-zero 60-job windows of
trace1-trace2, srsf-p beats muri-s: grouping slows the short jobs SRPT would finish first;
experiments/preemption_targets.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from planner.instance import Instance
from planner.simulate.matching import TypeMatcher
from planner.simulate.model import SimJob, View
from planner.simulate.muri import Muri, Pack
from planner.simulate.policies import PreemptivePolicy
from planner.solvers.preempt.regroup import Rates, admit, regroup


@dataclass(frozen=True)
class Keys:
    """One point of the search: the GPU exponent, whether weights divide, per-job factors,
    and how groups form: "muri" (Muri's matching), "solo" (none: srsf-p's rule) or
    "filler" (`filler.py`, with `slack`) or "weighted" (`weighted.py`, with `beta`; None:
    its BETA)."""

    gpu_exp: float = 1.0
    weighted: bool = False
    mult: Mapping[str, float] = field(default_factory=dict)
    mode: str = "muri"
    slack: float = 0.0
    regroup: bool = False
    beta: float | None = None

    @property
    def shape(self) -> tuple[float, bool, str, float, bool]:
        """Everything but the per-job factors: one structured candidate of the search."""
        return (self.gpu_exp, self.weighted, self.mode, self.slack, self.regroup)

    @property
    def policy(self) -> str:
        """The policy's name as the schedule reports it."""
        if self.mode == "muri" and self.regroup:
            return "muri-s+regroup"
        names = {"muri": "muri-s", "solo": "srsf-p", "weighted": "weighted"}
        return names.get(self.mode, f"filler:{self.slack:g}")

    def key(self, s: SimJob) -> tuple[float, int, str]:
        rest = s.remaining_solo if s.remaining_solo is not None else 0.0
        k = rest * max(1, s.gpus) ** self.gpu_exp * self.mult.get(s.id, 1.0)
        if self.weighted:
            k /= max(s.job.weight, 1e-9)
        return (k, s.released, s.id)


# The regroup start of the planner's search and the policy `plan[:SOLVER]` falls back on
# (solvers/rolling.py): GPUs^1.5 in the order. Online, one run each, avg JCT: cluster_trace
# 110,314 s (GPUs^1: 111,674 s; 1.75: 109,602 s; 2: 110,890 s); first 600 jobs of trace2
# 220,943 s (1: 221,211; 1.75: 224,218); first 400 of trace1 1,403,549 s (1: 1,424,348;
# 1.75: 1,413,533); first 200 of trace1, trace2, trace4 within 0.2% of the others. These
# were measured before `regroup.admit`; with it GPUs^1.5 gives 103,034 s on cluster_trace.
REGROUP = Keys(regroup=True, gpu_exp=1.5)


class Memo:
    """What Muri's policy learns about one instance that no job order changes: matching
    weights, type-level matchings and group rates, and the weighted policy's member rates
    per kind of group (`weighted.py`). The search's engine runs share one (on
    cluster_trace.csv a later run takes 0.74 s instead of 1.19 s)."""

    def __init__(self, instance: Instance):
        self.instance = instance
        self.weights: dict[tuple[int, tuple[str, ...]], float] = {}
        self.matchers: dict[int, TypeMatcher] = {}
        self.rates = Rates(instance)
        self.weighted_rates: dict[tuple[int, tuple[str, ...]], dict[str, float] | None] = {}


class KeyedMuri(Muri):
    def __init__(self, keys: Keys, memo: Memo | None = None):
        super().__init__("muri-s")
        self.keys = keys
        self.memo = memo
        if memo is not None:
            self._weights, self._matchers = memo.weights, memo.matchers

    def _key(self, s: SimJob) -> tuple[float, int, str]:
        return self.keys.key(s)

    def _group(self, view: View, cands: dict[int, list[SimJob]]) -> list[Pack]:
        if not self.keys.regroup:
            return super()._group(view, cands)
        if self.memo is None or self.memo.instance is not view.instance:
            self.memo = Memo(view.instance)
        packs = self._merge_biggest_first(view, cands)
        packs = regroup(self.memo.rates, packs, view.instance.interleaving.max_group)
        return admit(self.memo.rates, packs, self._waiting(view, cands))

    def _waiting(self, view: View, cands: dict[int, list[SimJob]]) -> dict[int, list[SimJob]]:
        """Per GPU count the jobs that are not candidates, in the policy's order."""
        taken = {s.id for v in cands.values() for s in v}
        out: dict[int, list[SimJob]] = {}
        for s in sorted(view.jobs, key=self._key):
            if s.id not in taken:
                out.setdefault(s.gpus, []).append(s)
        return out

    def _merge_biggest_first(self, view: View, cands: dict[int, list[SimJob]]) -> list[Pack]:
        """Muri's merging (matched pairs in order, until the demand fits), but the largest
        GPU count is merged up to `max_group` before the next: one merge of 32-GPU jobs
        frees the GPUs of four merges of 8-GPU ones, and the short jobs are mostly the small
        ones. Muri merges round by round, counts in order of their first job. On
        cluster_trace.csv with the throughput search (`regroup.py`), online, one run each:
        115,125 s average JCT; biggest count first, round by round 112,226 s; each count
        to the end first 111,674 s (with GPUs^1.5 in the order: 110,314 s)."""
        excess = sum(k * len(v) for k, v in cands.items()) - self._capacity(view)
        out: list[Pack] = []
        for k in sorted(cands, reverse=True):
            packs: list[Pack] = [[s] for s in cands[k]]
            for _round in range(view.instance.interleaving.max_group):
                if excess <= 0:
                    break
                packs, excess = self._merge_round(view, packs, excess)
            out.extend(packs)
        return out


class KeyedSrsf(PreemptivePolicy):
    def __init__(self, keys: Keys):
        super().__init__("srsf-p")
        self.key = keys.key


class Deadline(threading.Event):
    """Set once the time limit has passed or the caller's stop is set. The engine looks at
    it at every decision, so a run under way ends with the time limit (on the first 600
    jobs of trace2 one run takes about 9 s), the first start's too: the greedy plan, made
    before the starts, answers then. With strict priorities one engine run of 3,000
    generated mixed jobs takes about 50 s; uncut, `auto --time-limit 20` took 64 s.
    `solvers.rolling.gains` does not trust a plan whose engine starts were cut. Muri's
    kept grouping (`kept.py`) stops its runs with one too."""

    def __init__(self, deadline: float, other: threading.Event):
        super().__init__()
        self.deadline, self.other = deadline, other

    def is_set(self) -> bool:
        return self.other.is_set() or time.perf_counter() >= self.deadline


def online_regroup() -> KeyedMuri:
    """The regroup rule as an online policy of its own, `plan simulate --policy regroup`:
    it decides from the released jobs only, as every policy of contract §10 does (README,
    "Simulating policies": 1.17x better than `muri-s` on cluster_trace.csv)."""
    pol = KeyedMuri(REGROUP)
    pol.name = "regroup"
    return pol
