"""How far a plan is from fluid plans that may move jobs between GPUs at will.

    .venv/bin/python experiments/fluid_pooled.py DATA_DIR [--trace trace1] [--window 2]
        [--limit 60]

For an all-at-zero window of 60 Muri jobs (as `experiments/preemption_targets.py` loads
it, 8 x 8 V100), plans it with `auto` without preemption (`--limit` s) and takes that
plan's completion order, and SPT's. For a completion order j_1 .. j_n, phase k lasts from
the (k-1)-th to the k-th completion, and two linear programmes give the least sum of
completions when the cluster's GPUs are one pool (every GPU count in Muri's traces is a
power of two or a multiple of a node, so a set of groups within the GPUs packs onto the
nodes) and restarts are free:

- *overlapping*: y_kG >= 0 is the time group (or solo job) G runs in phase k, with
  sum_G gpus_G y_kG <= GPUs * T_k and, per job, sum_(G holding j) y_kG <= T_k. A
  relaxation of every such plan: it does not ask that the groups running at once be
  disjoint;
- *configurations*: a column is a set of disjoint groups within the GPUs, run together
  for some time in phase k. Columns are generated from the duals by a greedy packing
  (value per GPU) and a local search (swap two members, or a member for an idle job), a
  heuristic: the value is that of a plan that exists (without restart costs), not the
  LP's optimum.

Both need  sum_(k <= position of j) (work done on j in phase k) >= work_j  (rho_j(G) =
solo iteration / c(G), contract §4; groups of one GPU count; work in solo time units) and
minimise sum_k (n - k + 1) T_k. The plan it starts from must pass `planner.verify`.
`experiments/fluid_nodes.py` asks the same with every job kept on its node.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fluid_nodes import node_rates, window_parser, window_plan  # noqa: E402

from planner.bounds.lp import quiet_highs  # noqa: E402
from planner.durations import solo_duration  # noqa: E402
from planner.instance import Instance, Job  # noqa: E402

Group = tuple[str, ...]
Kind = tuple[int, str]


class Pool:
    """The window's group types: multisets of kinds (GPU count, model) of one GPU count and
    their members' rates (jobs of one kind have the same stages, so a few stand for all)."""

    def __init__(self, inst: Instance) -> None:
        self.capacity = sum(n.gpus for n in inst.nodes)
        self.kind = {j.id: (j.gpus, j.model) for j in inst.jobs}
        self.work = {j.id: float(solo_duration(inst, j)) for j in inst.jobs}
        first: dict[tuple[int, str], list[Job]] = {}
        for j in inst.jobs:
            first.setdefault((j.gpus, j.model), []).append(j)
        self.types: dict[tuple[Kind, ...], dict[Kind, float]] = {}
        for gpus in {j.gpus for j in inst.jobs}:
            reps = [
                j
                for (g, _), jobs in first.items()
                if g == gpus
                for j in jobs[: inst.interleaving.max_group]
            ]
            for ids, rates in node_rates(inst, reps).items():
                key = tuple(sorted(self.kind[i] for i in ids))
                self.types.setdefault(key, {self.kind[i]: r for i, r in rates.items()})

    def key(self, g: Sequence[str]) -> tuple[Kind, ...]:
        return tuple(sorted(self.kind[j] for j in g))

    def rate(self, g: Group, j: str) -> float:
        return self.types[self.key(g)][self.kind[j]]

    def gpus(self, g: Sequence[str]) -> int:
        return self.kind[g[0]][0]

    def best(
        self,
        free: set[str],
        score: Callable[[str, float], float],
        per_group: Callable[[int], float] = lambda gpus: 0.0,
        room: int | None = None,
    ) -> tuple[float, Group]:
        """The group of `free` jobs of at most `room` GPUs with the largest sum of
        score(member, its rate) + per_group(its GPUs), per GPU when `room` is given: per
        type, the best-scoring jobs of each of its kinds."""
        by_kind: dict[Kind, list[str]] = {}
        for j in free:
            by_kind.setdefault(self.kind[j], []).append(j)
        top: tuple[float, Group] = (-np.inf, ())
        for key, rates in self.types.items():
            gpus = key[0][0]
            need = Counter(key)
            if room is not None and gpus > room:
                continue
            if any(len(by_kind.get(m, ())) < c for m, c in need.items()):
                continue
            members = [
                j
                for m, c in need.items()
                for j in sorted(by_kind[m], key=lambda j, m=m: -score(j, rates[m]))[:c]
            ]
            worth = sum(score(j, rates[self.kind[j]]) for j in members) + per_group(gpus)
            top = max(top, (worth / gpus if room is not None else worth, tuple(members)))
        return top


def overlapping(pool: Pool, order: list[str]) -> float:
    """The relaxation of the module docstring (column generation), as average JCT."""
    import highspy

    n, inf = len(order), highspy.kHighsInf
    h = quiet_highs()
    h.addVars(n, np.zeros(n), np.full(n, inf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.arange(n, 0, -1, dtype=float))
    for k in range(n):  # row k: sum_G gpus_G y_kG - GPUs * T_k <= 0
        h.addRow(-inf, 0.0, 1, np.array([k], np.int32), np.array([-float(pool.capacity)]))
    work = {j: n + i for i, j in enumerate(order)}
    for j in order:
        h.addRow(pool.work[j], inf, 0, np.array([], np.int32), np.array([]))
    one = {}
    for k in range(n):
        for j in order[k:]:  # row: sum_(G holding j) y_kG - T_k <= 0
            one[k, j] = h.getNumRow()
            h.addRow(-inf, 0.0, 1, np.array([k], np.int32), np.array([-1.0]))

    def add(k: int, g: Group) -> None:
        rows = [k] + [one[k, j] for j in g] + [work[j] for j in g]
        vals = [float(pool.gpus(g))] + [1.0] * len(g) + [pool.rate(g, j) for j in g]
        h.addCol(0.0, 0.0, inf, len(rows), np.array(rows, np.int32), np.array(vals))

    for k in range(n):
        for j in order[k:]:
            add(k, (j,))
    while True:
        h.run()
        value = float(h.getInfo().objective_function_value) / n
        d = list(h.getSolution().row_dual)
        added = 0
        for k in range(n):
            worth, g = pool.best(
                set(order[k:]),
                lambda j, r, k=k, d=d: r * d[work[j]] + d[one[k, j]],
                lambda gpus, k=k, d=d: gpus * d[k],
            )
            if worth > 1e-9 * n:
                add(k, g)
                added += 1
        if not added:
            return value


def pack(pool: Pool, alive: list[str], dual: dict[str, float]) -> tuple[list[Group], float]:
    """A set of at most `nodes` disjoint groups of high dual value: greedy, then swaps of
    two members or of a member and an idle job while that gains."""

    def value(g: list[str]) -> float | None:
        rates = pool.types.get(pool.key(g))
        return None if rates is None else sum(rates[pool.kind[j]] * dual[j] for j in g)

    free, chosen, room = set(alive), [], pool.capacity
    while room > 0:
        worth, g = pool.best(free, lambda j, r: r * dual[j], room=room)
        if not g or worth <= 0:
            break
        chosen.append(list(g))
        free -= set(g)
        room -= pool.gpus(g)
    vals = [value(g) or 0.0 for g in chosen]

    def gain() -> bool:
        """Make the first move that gains; False when none does."""
        for a in range(len(chosen)):
            for i in range(len(chosen[a])):
                for j in sorted(set(alive) - {j for g in chosen for j in g}):
                    ga = chosen[a][:i] + [j] + chosen[a][i + 1 :]
                    va = value(ga)
                    if va is not None and va > vals[a] + 1e-9:
                        chosen[a], vals[a] = ga, va
                        return True
                for b in range(a + 1, len(chosen)):
                    for i2 in range(len(chosen[b])):
                        ga, gb = chosen[a][:], chosen[b][:]
                        ga[i], gb[i2] = gb[i2], ga[i]
                        va, vb = value(ga), value(gb)
                        if va is not None and vb is not None and va + vb > vals[a] + vals[b] + 1e-9:
                            chosen[a], chosen[b], vals[a], vals[b] = ga, gb, va, vb
                            return True
        return False

    while gain():
        pass
    return [tuple(g) for g in chosen], sum(vals)


def configurations(pool: Pool, order: list[str]) -> float:
    """The column generation of the module docstring, as average JCT."""
    import highspy

    n, inf = len(order), highspy.kHighsInf
    h = quiet_highs()
    for j in order:
        h.addRow(pool.work[j], inf, 0, np.array([], np.int32), np.array([]))
    row = {j: i for i, j in enumerate(order)}
    seen: set[tuple[int, frozenset[Group]]] = set()

    def add(k: int, config: list[Group]) -> bool:
        key = (k, frozenset(config))
        if key in seen:
            return False
        seen.add(key)
        rows = [row[j] for g in config for j in g]
        vals = [pool.rate(g, j) for g in config for j in g]
        h.addCol(float(n - k), 0.0, inf, len(rows), np.array(rows, np.int32), np.array(vals))
        return True

    for k in range(n):  # the first jobs still running that fit, each alone
        config, room = [], pool.capacity
        for j in order[k:]:
            if pool.kind[j][0] <= room:
                config.append((j,))
                room -= pool.kind[j][0]
        add(k, config)
    while True:
        h.run()
        value = float(h.getInfo().objective_function_value) / n
        dual = dict(zip(order, h.getSolution().row_dual, strict=True))
        added = 0
        for k in range(n):
            config, worth = pack(pool, order[k:], dual)
            added += worth > (n - k) * (1 + 1e-9) and add(k, config)
        if not added:
            return value


def main() -> None:
    inst, s = window_plan(window_parser(__doc__ or "").parse_args())
    pool = Pool(inst)
    orders = {
        "the plan's completion order": [a.id for a in sorted(s.jobs, key=lambda a: a.end)],
        "SPT": sorted(pool.work, key=pool.work.__getitem__),
    }
    for name, order in orders.items():
        print(f"{name}: overlapping {overlapping(pool, order):,.0f} s", flush=True)
        print(f"{name}: configurations {configurations(pool, order):,.0f} s", flush=True)


if __name__ == "__main__":
    main()
