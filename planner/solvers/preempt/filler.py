"""A clairvoyant regrouping policy for the preemptive planner: shortest remaining first,
each running job joined by "fillers" that hardly slow it down.

At each decision the jobs are taken in the planner's order (`policy.Keys`), first fit on the
whole cluster, each alone (as `srsf-p`). Then, front job by front job, a job not chosen and
of the same GPU count joins its group when the group stays admissible (contract §4) and
every member's cycle stays within `1 + slack` of its solo iteration time; among those, the
filler that progresses fastest in the group (its solo time / the cycle) is taken, up to
`max_group` members. Short jobs thus finish almost as fast as alone, while long jobs make
progress in their shadow; Muri's matching instead pairs by efficiency alone, which slows
the short jobs SRPT would finish first.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.instance import Instance, Job
from planner.simulate.model import Decision, Policy, SimJob, View
from planner.simulate.muri import group_on_first_fit
from planner.simulate.policies import first_fit, settle
from planner.solvers.preempt.policy import Keys


class Filler(Policy):
    preemptive = True

    def __init__(self, keys: Keys, slack: float):
        self.name = f"filler:{slack:g}"
        self.keys, self.slack = keys, slack
        self._cycles: dict[tuple[str, ...], float | None] = {}

    def decide(self, view: View) -> Decision:
        order = sorted(view.jobs, key=self.keys.key)
        chosen = first_fit(view, order)
        used = {g[0].id for g in chosen}
        size = view.instance.interleaving.max_group
        for grp in chosen:
            while len(grp) < size:
                best = self._best_filler(view.instance, grp, order, used)
                if best is None:
                    break
                grp.append(best)
                used.add(best.id)
        return Decision(settle(view, chosen))

    def _best_filler(
        self, inst: Instance, grp: Sequence[SimJob], order: Sequence[SimJob], used: set[str]
    ) -> SimJob | None:
        k = grp[0].gpus
        best: tuple[float, SimJob] | None = None
        for s in reversed(order):  # longest first: ties go to the job that waits longest
            if s.id in used or s.gpus != k or s.job.model is None:
                continue
            members = [m.job for m in grp] + [s.job]
            rate = self._filler_rate(inst, members)
            if rate is not None and (best is None or rate > best[0]):
                best = (rate, s)
        return None if best is None else best[1]

    def _filler_rate(self, inst: Instance, members: list[Job]) -> float | None:
        """The new member's progress rate in the group, or None if the group is not admissible
        (contract §4, on the first node group that can run the count, as Muri's matching
        sees it: its speed and GPU memory) or slows some member by more than the slack
        (same models and count, same answer)."""
        models = tuple(sorted(m.model or "" for m in members[:-1])) + (members[-1].model or "",)
        key = (*models, str(members[0].gpus))  # the rate depends on the count too (§12)
        if key in self._cycles:
            return self._cycles[key]
        rate = None
        found = group_on_first_fit(inst, members[0].gpus, models)
        if found is not None:
            _stages, solo, c = found
            if all(c <= (1 + self.slack) * x for x in solo[:-1]):
                rate = solo[-1] / c
        self._cycles[key] = rate
        return rate
