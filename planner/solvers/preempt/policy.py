"""The policies the preemptive planner runs in `planner.simulate`'s engine.

`KeyedMuri` is Muri's policy (`muri-s`, interleaving) with a planner's order: a job's key is
`remaining solo time x GPUs^gpu_exp / weight x mult[job]` (muri-s is gpu_exp = 1, no
weight, every mult 1). `KeyedSrsf` is the same order without groups (`srsf-p` when the
exponent is 1), for instances without interleaving and as the search's other branch (on
all-at-zero 60-job windows of trace1-trace2, srsf-p beats muri-s: grouping slows the
short jobs SRPT would finish first; experiments/preemption_targets.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from planner.simulate.model import SimJob
from planner.simulate.muri import Muri
from planner.simulate.policies import PreemptivePolicy


@dataclass(frozen=True)
class Keys:
    """One point of the search: the GPU exponent, whether weights divide, per-job factors,
    and how groups form: "muri" (Muri's matching), "solo" (none: srsf-p's rule) or
    "filler" (`filler.py`, with `slack`)."""

    gpu_exp: float = 1.0
    weighted: bool = False
    mult: Mapping[str, float] = field(default_factory=dict)
    mode: str = "muri"
    slack: float = 0.0

    @property
    def policy(self) -> str:
        """The policy's name as the schedule reports it."""
        return {"muri": "muri-s", "solo": "srsf-p"}.get(self.mode, f"filler:{self.slack:g}")

    def key(self, s: SimJob) -> tuple[float, int, str]:
        rest = s.remaining_solo if s.remaining_solo is not None else 0.0
        k = rest * max(1, s.gpus) ** self.gpu_exp * self.mult.get(s.id, 1.0)
        if self.weighted:
            k /= max(s.job.weight, 1e-9)
        return (k, s.released, s.id)


class KeyedMuri(Muri):
    def __init__(self, keys: Keys):
        super().__init__("muri-s")
        self.keys = keys

    def _key(self, s: SimJob) -> tuple[float, int, str]:
        return self.keys.key(s)


class KeyedSrsf(PreemptivePolicy):
    def __init__(self, keys: Keys):
        super().__init__("srsf-p")
        self.key = keys.key
