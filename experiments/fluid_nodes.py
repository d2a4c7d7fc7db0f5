"""How far a plan of whole-node jobs is from its best per-node time-sharing.

    .venv/bin/python experiments/fluid_nodes.py DATA_DIR [--trace trace1] [--window 2]
        [--limit 60] [--search 200] [--seed 1]

For an all-at-zero window of 60 Muri jobs (as `experiments/preemption_targets.py` loads
it, 8 x 8 V100) whose jobs all take whole nodes (trace1 jobs 120-179 are all 8-GPU jobs),
plans it with `auto` without preemption (`--limit` s), so that every job stays on one
node, and asks whether a better use of interleaving on those nodes exists:

- per node, for a completion order j_1 .. j_n of its jobs, a linear programme gives the
  least sum of completions when the node may time-share any admissible groups of the
  jobs still running (contract §4 cycles; group types up to `max_group`): x_kS >= 0 is the
  time group (or solo job) S runs between the (k-1)-th and k-th completions,
  min sum_k (n - k + 1) sum_S x_kS  s.t.  sum_(l <= k, S holding j_k) rho_j(S) x_lS >= work_j
  (rho_j(S) = solo iteration / c(S), work in solo time units). Restart costs are left
  out, so the figure is at most what such a plan costs;
- the order of each node is improved by moving one job at a time, then for `--search`
  seconds jobs move or swap between two nodes (each node's order improved again).

It prints the plan's average JCT, the LP's with the plan's own orders, after the order
search and after the node search. Every plan it starts from passes `planner.verify`.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from preemption_targets import load  # noqa: E402

from planner.bounds.lp import quiet_highs  # noqa: E402
from planner.durations import (  # noqa: E402
    group_cycle,
    inadmissible_reason,
    solo_duration,
    solo_iteration_ms,
    stage_tuple,
)
from planner.instance import Instance, Job  # noqa: E402
from planner.metrics import metrics  # noqa: E402
from planner.schedule import Schedule  # noqa: E402
from planner.solvers.dispatch import solve  # noqa: E402
from planner.solvers.options import SolveOptions  # noqa: E402
from planner.verify import verify  # noqa: E402

Rates = dict[frozenset[str], dict[str, float]]


def node_rates(inst: Instance, jobs: list[Job]) -> Rates:
    """Each admissible group of `jobs` (and each job alone) with its members' rates."""
    out: Rates = {}
    for k in range(1, inst.interleaving.max_group + 1):
        for combo in itertools.combinations(jobs, k):
            ids = frozenset(j.id for j in combo)
            if k == 1:
                out[ids] = {combo[0].id: 1.0}
            elif inadmissible_reason(inst, list(combo)) is None:
                gps = [inst.gpu_profile(j) for j in combo]
                c = group_cycle([stage_tuple(g) for g in gps], inst.interleaving.overhead)
                out[ids] = {j.id: solo_iteration_ms(g) / c for j, g in zip(combo, gps, strict=True)}
    return out


def order_cost(order: list[str], work: dict[str, int], rates: Rates) -> float:
    """The LP of the module docstring: least sum of completions for this order."""
    import highspy

    n = len(order)
    cols = [(k, s) for k in range(n) for s in rates if s <= set(order[k:])]
    h = quiet_highs()
    nc = len(cols)
    h.addVars(nc, np.zeros(nc), np.full(nc, highspy.kHighsInf))
    cost = np.array([n - k for k, _ in cols], dtype=float)
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), cost)
    for k, j in enumerate(order):
        idx = [i for i, (p, s) in enumerate(cols) if p <= k and j in s]
        val = np.array([rates[cols[i][1]][j] for i in idx])
        h.addRow(work[j], highspy.kHighsInf, len(idx), np.array(idx, dtype=np.int32), val)
    h.run()
    return float(h.getInfo().objective_function_value)


class Nodes:
    def __init__(self, inst: Instance, orders: list[list[str]]) -> None:
        self.inst = inst
        self.by_id = {j.id: j for j in inst.jobs}
        self.work = {j.id: solo_duration(inst, j) for j in inst.jobs}
        self.memo: dict[tuple[str, ...], float] = {}
        self.orders = orders

    def cost(self, order: list[str]) -> float:
        key = tuple(order)
        if key not in self.memo:
            rates = node_rates(self.inst, [self.by_id[i] for i in order])
            self.memo[key] = order_cost(order, self.work, rates)
        return self.memo[key]

    def improve(self, order: list[str]) -> tuple[list[str], float]:
        """Move one job to another place while that lowers the cost."""
        best, better = self.cost(order), True
        while better:
            better = False
            for i, k in itertools.permutations(range(len(order)), 2):
                o = order[:]
                o.insert(k, o.pop(i))
                c = self.cost(o)
                if c < best - 1e-6:
                    best, order, better = c, o, True
        return order, best


def window_parser(doc: str) -> argparse.ArgumentParser:
    """The options of this script and `fluid_pooled.py`: the window and the plan's limit."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--trace", default="trace1")
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--limit", type=float, default=60.0)
    return ap


def window_plan(args: argparse.Namespace) -> tuple[Instance, Schedule]:
    """The window (all at 0, without preemption) and `auto`'s verified plan of it."""
    inst = load(args.data / f"{args.trace}.csv", False, first=60, offset=60 * args.window)
    s = solve(inst, "auto", SolveOptions(time_limit=args.limit))
    assert not verify(inst, s), "the plan does not pass planner.verify"
    print(f"plan ({s.solver}): avg JCT {metrics(inst, s)['avg_jct']:,.0f} s", flush=True)
    return inst, s


def main() -> None:
    ap = window_parser(__doc__ or "")
    ap.add_argument("--search", type=float, default=200.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    inst, s = window_plan(args)
    if any(j.gpus != inst.nodes[0].gpus for j in inst.jobs):
        sys.exit("every job of the window must take one whole node")
    by_node: dict[str, list[tuple[int, str]]] = {}
    for job in s.jobs:
        by_node.setdefault(job.placement[0].node, []).append((job.end, job.id))
    nodes = Nodes(inst, [[j for _, j in sorted(v)] for v in by_node.values()])
    n = len(inst.jobs)
    print(f"LP, the plan's orders: {sum(map(nodes.cost, nodes.orders)) / n:,.0f} s")
    costs = []
    for i, o in enumerate(nodes.orders):
        nodes.orders[i], c = nodes.improve(o)
        costs.append(c)
    print(f"LP, orders improved: {sum(costs) / n:,.0f} s", flush=True)
    rng, t0 = random.Random(args.seed), time.perf_counter()
    while time.perf_counter() - t0 < args.search:
        a, b = rng.sample(range(len(nodes.orders)), 2)
        oa, ob = nodes.orders[a][:], nodes.orders[b][:]
        i = rng.randrange(len(oa))
        if rng.random() < 0.5:
            k = rng.randrange(len(ob))
            oa[i], ob[k] = ob[k], oa[i]
        else:
            ob.append(oa.pop(i))
        oa, ca = nodes.improve(sorted(oa, key=nodes.work.__getitem__))
        ob, cb = nodes.improve(sorted(ob, key=nodes.work.__getitem__))
        if ca + cb < costs[a] + costs[b] - 1e-6:
            nodes.orders[a], nodes.orders[b], costs[a], costs[b] = oa, ob, ca, cb
    print(f"LP, after {args.search:.0f} s of node search: {sum(costs) / n:,.0f} s")


if __name__ == "__main__":
    main()
