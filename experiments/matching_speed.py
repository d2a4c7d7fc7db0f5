"""Muri's matching (`planner/simulate/matching.py`): rustworkx's blossom against networkx's.

    .venv/bin/pip install networkx   # the comparison only; planner needs rustworkx
    .venv/bin/python experiments/matching_speed.py INSTANCE.json [INSTANCE.json ...]

Runs `muri-s` over each (preemptive) instance, e.g. `plan import muri cluster_trace.csv
--preemption` or `plan generate --family dl --jobs 2000 --nodes 32 --preemption --seed 1`,
records every type-level matching solved exactly (at most `EXACT_NODES` nodes after the
reduction), then solves each again with both libraries on the same reduced graph: seconds
each, and how many answers differ in total weight or in the pairs of types chosen.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Hashable, Sequence
from pathlib import Path

try:
    import networkx as nx
except ImportError:  # `-h` works without it; a run says to install it
    nx = None

import planner.simulate.matching as matching
from planner.read import read_instance
from planner.simulate import simulate
from planner.simulate.muri import Muri

Call = tuple[list[Hashable], list[int], dict[tuple[int, int], float]]


def record(path: Path) -> list[Call]:
    """The exact matchings a muri-s run solves, with their weights tabulated."""
    calls: list[Call] = []
    solve = matching._solve_types

    def spy(types: Sequence[Hashable], counts: Sequence[int], w: matching.Weight) -> dict:
        cnt, _ = matching._reduce(types, list(counts), w)
        if sum(cnt) <= matching.EXACT_NODES:
            n = len(types)
            table = {(a, b): w(types[a], types[b]) for a in range(n) for b in range(n)}
            calls.append((list(types), list(counts), table))
        return solve(types, counts, w)

    matching._solve_types = spy
    try:
        simulate(read_instance(path), Muri("muri-s"))
    finally:
        matching._solve_types = solve
    return calls


def both(call: Call) -> tuple[float, float, dict, dict]:
    """Seconds and type pairs of networkx's and rustworkx's (`matching.blossom`) matching
    of one reduced graph (`matching.node_graph`)."""
    types, counts, table = call
    index = {t: k for k, t in enumerate(types)}

    def w(a: Hashable, b: Hashable) -> float:
        return table[(index[a], index[b])]

    cnt, _ = matching._reduce(types, counts, w)
    owner, edges = matching.node_graph(types, cnt, w)
    t0 = time.perf_counter()
    g = nx.Graph()
    g.add_nodes_from(range(len(owner)))
    g.add_weighted_edges_from(edges)
    by_nx = matching.type_pairs(nx.max_weight_matching(g), owner)
    t1 = time.perf_counter()
    by_rx = matching.type_pairs(matching.blossom(len(owner), edges), owner)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, by_nx, by_rx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", type=Path, nargs="+")
    args = ap.parse_args()
    if nx is None:
        raise SystemExit("this comparison needs networkx: .venv/bin/pip install networkx")
    print("| instance | exact matchings | networkx (s) | rustworkx (s) | weight differs |", end="")
    print(" pairs differ |")
    print("| --- | --- | --- | --- | --- | --- |")
    for path in args.instances:
        calls = record(path)
        s_nx = s_rx = 0.0
        weight_diff = pair_diff = 0
        for call in calls:
            a, b, by_nx, by_rx = both(call)
            s_nx, s_rx = s_nx + a, s_rx + b
            table = call[2]
            wn = sum(table[k] * c for k, c in by_nx.items())
            wr = sum(table[k] * c for k, c in by_rx.items())
            weight_diff += abs(wn - wr) > 1e-9
            pair_diff += by_nx != by_rx
        print(
            f"| {path.name} | {len(calls):,} | {s_nx:.2f} | {s_rx:.2f} | {weight_diff} | "
            f"{pair_diff} |"
        )


if __name__ == "__main__":
    main()
