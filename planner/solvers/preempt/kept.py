"""Muri's grouping without preemption: groups formed when they start and kept until their
members end (contract v1 groups), run in `planner.simulate`'s engine.

At each release or completion, what runs keeps its GPUs. The waiting jobs, in `muri-s`'s
order (remaining GPU-time), become candidates as in Muri (first fit on the free GPUs, each
fitting job booking a GPU set for itself and the next `max_group - 1` jobs of its GPU
count); while the candidates need more GPUs than are free, jobs of the same GPU count are
merged by Muri's maximum-weight matching on interleaving efficiency. The groups, in the
order of their best member, start first fit where they fit now; the rest wait. Every run
keeps its members together to the end, so the plan needs no preemption.
"""

from __future__ import annotations

from planner.simulate.engine import View
from planner.simulate.model import Decision, SimJob, Want
from planner.simulate.muri import Muri
from planner.simulate.packer import Packer
from planner.simulate.policies import jobs_of, until


class KeptMuri(Muri):
    preemptive = False

    def __init__(self) -> None:
        super().__init__("muri-s")
        self.name = "muri-kept"

    def _packer(self, view: View) -> Packer:
        p = Packer(view.instance, view.now)
        by_id = {s.id: s for s in view.jobs}
        for info in view.runs.values():
            p.book_running(info.placement, [by_id[a].job for a in info.members])
        return p

    def _capacity(self, view: View) -> int:
        return self._packer(view).free_gpus

    def decide(self, view: View) -> Decision:
        wants = [Want(info.members, info.placement) for info in view.runs.values()]
        waiting = sorted((s for s in view.jobs if s.run is None), key=self._key)
        if not waiting:
            return Decision(tuple(wants))
        sub = View(view.instance, view.now, tuple(waiting), view.runs)
        cands = self._kept_candidates(view, waiting)
        packs = self._group(view, cands) if cands else []
        rank = {s.id: i for i, s in enumerate(waiting)}
        packs.sort(key=lambda pk: min(rank[m.id] for m in pk))
        p = self._packer(view)
        for pk in packs:
            pl = p.place(jobs_of(pk), until(sub, pk))
            if pl is not None:
                wants.append(Want(tuple(m.id for m in pk), pl))
        return Decision(tuple(wants))

    def _kept_candidates(self, view: View, order: list[SimJob]) -> dict[int, list[SimJob]]:
        """Muri's candidates (see planner.simulate.muri) on the GPUs no run holds."""
        size = view.instance.interleaving.max_group
        by_k: dict[int, list[SimJob]] = {}
        for s in order:
            by_k.setdefault(s.gpus, []).append(s)
        taken = dict.fromkeys(by_k, 0)
        p = self._packer(view)
        for s in order:
            lst = by_k[s.gpus]
            first = taken[s.gpus] < len(lst) and lst[taken[s.gpus]].id == s.id
            if first and p.place([s.job], until(view, [s])) is not None:
                taken[s.gpus] = min(taken[s.gpus] + size, len(lst))
        return {k: lst[: taken[k]] for k, lst in by_k.items() if taken[k]}
