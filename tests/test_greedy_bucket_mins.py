"""The event-driven engine keeps each bucket's best rank from one start to the next
(`greedy/bucket_mins.py`) instead of recomputing every bucket. At every look, each kept
value must equal the one computed from scratch (the bucket's tree, the free GPUs of its
node groups, its priority level's limit), and the bucket returned must be the best one
not parked, on instances with strict priorities, pools, reservations, dependencies and
interleaving groups."""

from __future__ import annotations

import bisect
from typing import Any

import pytest

from planner.generate import generate
from planner.groups import candidate_groups
from planner.precedence import effective_priorities
from planner.read import instance_from_dict
from planner.solvers.greedy import RULES, rule_ranks
from planner.solvers.greedy.bucket_mins import BucketMins
from planner.solvers.greedy.events import _Engine
from planner.solvers.greedy.trees import INF

ORIGINAL_TOP = BucketMins.top


def from_scratch(engine: _Engine, k: int) -> int:
    """Bucket `k`'s best rank that may start now, from the engine's state alone."""
    b = engine.queue.buckets[k]
    if not b.count:
        return INF
    if b.gpus and not any(engine.occ.can_fit(gi, b.gpus) for gi in b.groups):
        return INF
    if not engine.strict:
        return b.tree.min_all()
    limit = engine.released_by_prio.limit(b.prio)
    return b.tree.prefix_min(bisect.bisect_left(b.rels, limit))


def checked_run(doc: dict[str, Any], rule: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Plan `doc` with `rule` on the event engine, checking every look; the looks made
    and those with a bucket parked."""
    inst = instance_from_dict(doc)
    interleave = rule == "interleave" and inst.interleaving.enabled
    cands = candidate_groups(inst) if interleave else ()
    strict = inst.priority_policy == "strict"
    eff = effective_priorities(inst) if interleave and strict else None
    engine = _Engine(
        inst, rule_ranks(inst, rule), interleave, "total_weighted_jct", cands, None, eff
    )
    looks = parked = 0

    def top(self: BucketMins) -> tuple[int, int] | None:
        nonlocal looks, parked
        looks += 1
        parked += bool(self.parked)
        got = ORIGINAL_TOP(self)
        # a parked bucket's value is recomputed when the next epoch begins
        values = {
            k: from_scratch(engine, k) for k in range(len(self.value)) if k not in self.parked
        }
        assert values == {k: self.value[k] for k in values}
        open_ = [(r, k) for k, r in values.items() if r < INF]
        assert got == min(open_, default=None)
        return got

    monkeypatch.setattr(BucketMins, "top", top)
    res = engine.run()
    assert res.assignments is not None or res.reason
    return looks, parked


@pytest.mark.parametrize("rule", RULES)
def test_kept_bucket_minima_equal_the_recomputed_ones(
    rule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    looks = parked = 0
    for seed in range(6):
        doc = generate("mixed", 40 + 10 * seed, 2 + seed % 3, seed)
        if seed % 2:
            doc["policy"]["priority"] = "none"
        if seed % 3:
            doc["cluster"]["pools"] = {"power_kw": 8.0}  # binding: demands fail, buckets park
        n, p = checked_run(doc, rule, monkeypatch)
        looks, parked = looks + n, parked + p
    assert looks > 200 and parked > 0  # the checks ran, with pool demands that failed
