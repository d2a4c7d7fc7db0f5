"""The greedy schedule as a CP-SAT solution hint.

Nodes the model treats as interchangeable are first relabelled in the greedy schedule the
way the symmetry breaking expects (`planner.solvers.symmetry.relabel_for_symmetry`), so
the hint satisfies it. A greedy interleaving group that
is not among the model's candidates leaves its members' option literals unhinted.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from planner.schedule import Schedule
from planner.solvers.cpsat.objective import Objective
from planner.solvers.cpsat.variables import CpsatModel
from planner.solvers.symmetry import relabel_for_symmetry


class Values:
    """Hint values keyed by variable index (CP-SAT variables overload `==`)."""

    def __init__(self) -> None:
        self.by_index: dict[int, tuple[cp_model.IntVar, int]] = {}

    def __setitem__(self, var: cp_model.IntVar, v: int) -> None:
        self.by_index[var.index] = (var, int(v))

    def get(self, var: cp_model.IntVar) -> int | None:
        got = self.by_index.get(var.index)
        return None if got is None else got[1]


def hint_values(cm: CpsatModel, objs: list[Objective], sched: Schedule) -> Values:
    ren = relabel_for_symmetry(cm.instance, sched)
    vals = Values()
    by_id = {a.id: a for a in sched.jobs}
    members = {g.id: tuple(sorted(g.jobs)) for g in sched.groups}
    cand = {(gv.cand.jobs, gv.node_group.name): i for i, gv in enumerate(cm.groups)}
    chosen_groups: dict[int, set[str]] = {}
    node_gpus: dict[tuple[str, str], tuple[int, ...]] = {}  # (job, node) -> indices
    for jid, jv in cm.jobs.items():
        a = by_id.get(jid)
        if a is None:
            continue
        vals[jv.start], vals[jv.end], vals[jv.size] = a.start, a.end, a.end - a.start
        nodes = {ren.get(p.node, p.node): p.gpus for p in a.placement}
        for n, g in nodes.items():
            node_gpus[(jid, n)] = g
        if not jv.options:
            continue
        ng = cm.instance.node_by_name[next(iter(nodes))].group.name if nodes else None
        gi = cand.get((members[a.group], ng or "")) if a.group in members else None
        if a.group is not None and gi is None:
            continue  # a group the model does not know
        count = sum(len(set(g)) for g in nodes.values())  # the count it runs at (§12)
        for o in jv.options:
            if o.kind == "member":
                on = o.group == gi
            elif o.kind == "solo":
                on = gi is None and set(o.nodes) == set(nodes) and o.gpus == count
            else:
                on = gi is None and o.node_group.name == ng and o.gpus == count
            vals[o.lit] = int(on)
            if o.kind == "multi":
                for n, y in o.nodes.items():
                    vals[y] = int(on and n in nodes)
        if gi is not None:
            chosen_groups[gi] = set(nodes)
            vals[cm.groups[gi].start] = a.start
    for i, gv in enumerate(cm.groups):
        placed = chosen_groups.get(i)
        vals[gv.lit] = int(placed is not None)
        for n, y in gv.nodes.items():
            vals[y] = int(placed is not None and n in placed)
    for u in cm.uses:  # GPUs per class, from the greedy indices
        if not u.gpus or len(u.per_class) < 2:
            continue
        got = node_gpus.get((u.jobs[0], u.node.name), ())
        classes = cm.classes[u.node.name]
        counts = [len(set(got) & set(c)) for c in classes] if got else None
        left = u.gpus
        for k, var in u.per_class.items():
            if isinstance(var, int):
                continue
            want = counts[k] if counts else min(left, len(classes[k]))
            vals[var] = want
            left -= want
    starts = {jid: vals.get(jv.start) for jid, jv in cm.jobs.items()}
    for x, jobs in cm.priority_vars:
        ss = [v for v in (starts[j] for j in jobs) if v is not None]
        if len(ss) == len(jobs):
            vals[x] = max(ss)
    for ob in objs:
        for key, var in ob.aux.items():
            if key == "makespan":
                vals[var] = max((a.end for a in sched.jobs), default=0)
            else:
                due = cm.instance.job_by_id[key].due or 0
                vals[var] = max(0, by_id[key].end - due) if key in by_id else 0
    return vals


def add_hint(cm: CpsatModel, objs: list[Objective], sched: Schedule) -> int:
    vals = hint_values(cm, objs, sched)
    set_hints(cm.model, list(vals.by_index), [v for _, v in vals.by_index.values()])
    return len(vals.by_index)


def set_hints(model: cp_model.CpModel, index: list[int], value: list[int]) -> None:
    """Hint variable `index[k]` (a negated literal's index is negative) at `value[k]`, all
    at once in the model's proto: `CpModel.add_hint`, one call per variable, took 3.1 of
    the 10.4 s of building and hinting 256,292 variables (`plan replan --solver cpsat`
    of a 1,144-job live state, the comment above `cpsat.solve.BUILD_OPTIONS_PER_S`)."""
    pairs = [(i, v) if i >= 0 else (-i - 1, 1 - v) for i, v in zip(index, value, strict=True)]
    hint = model.proto.solution_hint  # not(b) = v above is b = 1 - v
    hint.vars.extend(i for i, _ in pairs)
    hint.values.extend(v for _, v in pairs)
