"""A preemptive regrouping rule for whole-node windows: at each completion, the best groups.

    .venv/bin/python experiments/weighted_regroup.py DATA_DIR [--beta 0.25] [--mip-seconds 5]
        [-o schedule.json] [--trace trace1] [--window 2]

For an all-at-zero window of 60 Muri jobs with preemption (as `preemption_targets.py` loads
it, 8 x 8 V100) whose jobs all take whole nodes (trace1 jobs 120-179 do), runs this rule:
at time 0 and at every completion, run until the next completion the configuration of at
most one group per node (disjoint admissible groups of the running jobs, up to `max_group`
members, GPU memory checked) of greatest  sum_j rho_j / remaining_j^beta  (rho_j = solo
iteration / c(group), contract §4; remaining solo work in time units; beta = 1: SRPT's
index). Rates depend only on the members' models, so a configuration is a small MIP over
model-multiset counts (highspy, `--mip-seconds` each; a model's jobs, ranked by weight, take
its slots by falling rate). Its slices leave restarts out; they are realized as a contract
schedule: a group going on unchanged on its node stays one segment, any other starts new
segments (restarts charged by `planner.progress.run_together`, as `planner.verify` counts
them; the slice lengthened by the largest), finished jobs leave their groups, and a job not
done after the last slice runs alone on the first free node. It prints greedy:sjf's average
JCT, the rule's realized one, their ratio, slices, segments, wall time and planner.verify's
violations; `-o` writes the schedule document (`plan check` reads it). How the rule was found:
docs/PREEMPTION.md, "Found on 2026-12-02, last".
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from preemption_targets import load  # noqa: E402

from planner.bounds.lp import quiet_highs  # noqa: E402
from planner.durations import (  # noqa: E402
    inadmissible_reason,
    restart_units,
    solo_duration,
    solo_iteration_ms,
    stage_tuple,
)
from planner.export import schedule_document, write_json  # noqa: E402
from planner.instance import Instance, Job  # noqa: E402
from planner.metrics import metrics  # noqa: E402
from planner.progress import Runner, run_together  # noqa: E402
from planner.schedule import Assignment, Group, Placement, Schedule, Segment  # noqa: E402
from planner.solvers.dispatch import solve  # noqa: E402
from planner.solvers.options import SolveOptions  # noqa: E402
from planner.solvers.preempt.weighted import member_rates  # noqa: E402
from planner.verify import verify  # noqa: E402

Rates = dict[tuple[str, ...], dict[str, float]]  # model multiset -> member rate per model
Slice = tuple[list[frozenset[str]], float]  # the groups run, for how long (time units)


def rate_table(inst: Instance) -> Rates:
    """Every admissible model multiset of the window (and each model alone), with rates."""
    by_model: dict[str, list[Job]] = {}
    for j in inst.jobs:
        by_model.setdefault(j.model or "", []).append(j)
    for js in by_model.values():  # the rates below stand for every job of a model
        assert len({stage_tuple(inst.gpu_profile(j)) for j in js}) == 1
    mem = inst.nodes[0].group.gpu_mem_gb
    out: Rates = {}
    for k in range(1, inst.interleaving.max_group + 1):
        for ms in itertools.combinations_with_replacement(sorted(by_model), k):
            cnt = Counter(ms)
            if any(len(by_model[m]) < c for m, c in cnt.items()):
                continue
            rep = [j for m, c in cnt.items() for j in by_model[m][:c]]
            rates = member_rates(inst, rep, mem)
            if rates is not None:
                out[ms] = rates
    return out


def best_configuration(
    rates: Rates, model: dict[str, str], weight: dict[str, float], nodes: int, seconds: float
) -> tuple[list[dict[str, float]], bool]:
    """At most `nodes` disjoint groups of the weighted jobs of greatest sum rho_j * w_j
    (each a dict job -> rate), and whether the MIP was solved to optimality."""
    import highspy

    ranked = {
        m: sorted((j for j in weight if model[j] == m), key=lambda j: -weight[j])
        for m in set(model.values())
    }
    kinds = [
        (ms, Counter(ms), r)
        for ms, r in rates.items()
        if all(len(ranked[m]) >= c for m, c in Counter(ms).items())
    ]
    h = quiet_highs()
    nk = len(kinds)
    h.addVars(nk, np.zeros(nk), np.full(nk, float(nodes)))  # y_M: groups of multiset M
    ints = np.full(nk, highspy.HighsVarType.kInteger)
    h.changeColsIntegrality(nk, np.arange(nk, dtype=np.int32), ints)
    h.addRow(0, nodes, nk, np.arange(nk, dtype=np.int32), np.ones(nk))
    cost: list[float] = [0.0] * nk
    slots: dict[tuple[str, int], list[int]] = {}  # x_Mmr: the r-th job of m in an M slot
    for i, (_, cnt, r) in enumerate(kinds):
        for m, c in cnt.items():
            cols = list(range(len(cost), len(cost) + len(ranked[m])))
            cost += [-r[m] * weight[j] for j in ranked[m]]
            h.addVars(len(cols), np.zeros(len(cols)), np.ones(len(cols)))
            ones = [1.0] * len(cols)  # sum_r x_Mmr = count of m in M * y_M
            h.addRow(0, 0, len(cols) + 1, np.array([*cols, i], np.int32), np.array([*ones, -c]))
            for rank, col in enumerate(cols):
                slots.setdefault((m, rank), []).append(col)
    for cols in slots.values():
        h.addRow(-highspy.kHighsInf, 1, len(cols), np.array(cols, np.int32), np.ones(len(cols)))
    h.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), np.array(cost))
    h.setOptionValue("time_limit", seconds)
    h.run()
    y = h.getSolution().col_value
    groups: list[dict[str, float]] = []
    free: dict[str, list[tuple[float, int]]] = {m: [] for m in ranked}
    for i, (_, cnt, r) in enumerate(kinds):
        for _ in range(round(y[i])):
            for m, c in cnt.items():
                free[m] += [(r[m], len(groups))] * c
            groups.append({})
    for m, sl in free.items():  # the best-weighted jobs to the fastest slots
        for rank, (rho, g) in enumerate(sorted(sl, key=lambda s: -s[0])):
            groups[g][ranked[m][rank]] = rho
    return groups, h.getModelStatus() == highspy.HighsModelStatus.kOptimal


def run_rule(inst: Instance, rates: Rates, beta: float, seconds: float) -> tuple[list[Slice], int]:
    """The rule's slices, each its configuration run to the next completion, and how many
    MIPs stopped at the time limit."""
    model = {j.id: j.model or "" for j in inst.jobs}
    work = {j.id: float(solo_duration(inst, j)) for j in inst.jobs}
    left, slices, limited = dict(work), [], 0
    while left:
        w = {j: 1.0 / max(v, 1.0) ** beta for j, v in left.items()}
        groups, optimal = best_configuration(rates, model, w, len(inst.nodes), seconds)
        limited += not optimal
        dt = min(left[j] / r for g in groups for j, r in g.items())
        for g in groups:
            for j, r in g.items():
                left[j] -= r * dt
        for j in [j for j, v in left.items() if v <= 1e-6 * work[j] + 1e-9]:
            del left[j]
        slices.append(([frozenset(g) for g in groups], dt))
    return slices, limited


class Realize:
    """The slices as a contract schedule with restarts (module docstring)."""

    def __init__(self, inst: Instance) -> None:
        self.inst, self.unit = inst, inst.unit_ms
        self.job = {j.id: j for j in inst.jobs}
        self.left = {j.id: float(j.iterations or 0) for j in inst.jobs}
        self.segs: dict[str, list[tuple[int, int, str, str | None]]] = {j: [] for j in self.job}
        self.done: dict[str, int] = {}
        self.open: dict[str, dict[str, Any]] = {}  # node -> unit: members, start, restarts
        self.groups: list[Group] = []

    def unit_at(self, node: str, members: list[str], start: int) -> dict[str, Any]:
        label = None
        if len(members) > 1:
            label = f"r{len(self.groups) + 1}"
            self.groups.append(Group(label, tuple(members)))
        restart = {
            j: restart_units(self.inst, self.job[j]) * self.unit if self.segs[j] else 0.0
            for j in members
        }
        return dict(node=node, members=members, start=start, label=label, restart=restart)

    def progress(self, u: dict[str, Any], until: int, close: bool) -> dict[str, int]:
        """The members that finish by `until` and when; `close` records the segments."""
        stop = (until - u["start"]) * self.unit
        gps = [self.inst.gpu_profile(self.job[j]) for j in u["members"]]
        runners = [
            Runner(self.left[j], stage_tuple(g), solo_iteration_ms(g), u["restart"][j], stop)
            for j, g in zip(u["members"], gps, strict=True)
        ]
        leaves = run_together(runners, self.inst.interleaving.overhead)
        fin = {
            j: u["start"] + math.ceil(lv.at_ms / self.unit - 1e-9)
            for j, lv in zip(u["members"], leaves, strict=True)
            if lv.finished
        }
        if close:
            for j, lv in zip(u["members"], leaves, strict=True):
                self.left[j] = max(0.0, self.left[j] - lv.done)
                self.segs[j].append((u["start"], fin.get(j, until), u["node"], u["label"]))
                if j in fin:
                    self.done[j] = fin[j]
        return fin

    def admissible(self, g: list[str]) -> frozenset[str]:
        """`g` less the jobs with least work left until it may run as a group (§4)."""
        mem = self.inst.nodes[0].group.gpu_mem_gb
        while len(g) >= 2 and inadmissible_reason(self.inst, [self.job[j] for j in g], 1.0, mem):
            g.remove(min(g, key=self.left.__getitem__))
        return frozenset(g)

    def run(self, slices: list[Slice]) -> int:
        """Realize the slices; the number of jobs left to run alone after them."""
        t, names = 0, [n.name for n in self.inst.nodes]
        for conf, dt in slices:
            fin = {n: self.progress(u, t, False) for n, u in self.open.items()}
            gone = set(self.done).union(*fin.values())
            groups = [self.admissible([j for j in g if j not in gone]) for g in conf]
            groups = [g for g in groups if g]
            keep: dict[str, frozenset[str]] = {}
            for n, u in self.open.items():
                still = frozenset(u["members"]) - set(fin[n])
                if still and still in groups and still not in keep.values():
                    keep[n] = still
            for n in [n for n in self.open if n not in keep]:
                self.progress(self.open.pop(n), t, True)
            free = [n for n in names if n not in keep]
            ext = 0
            for g, n in zip([g for g in groups if g not in keep.values()], free, strict=False):
                self.open[n] = u = self.unit_at(n, sorted(g), t)
                ext = max([ext] + [math.ceil(r / self.unit) for r in u["restart"].values()])
            t += max(1, math.ceil(dt)) + ext
        for n in list(self.open):
            self.progress(self.open.pop(n), 10**9, True)
        free_at = {
            n: max([t] + [s[1] for ss in self.segs.values() for s in ss if s[2] == n])
            for n in names
        }
        rest = sorted((j for j in self.job if j not in self.done), key=self.left.__getitem__)
        for j in rest:
            n = min(free_at, key=free_at.__getitem__)
            self.progress(self.unit_at(n, [j], free_at[n]), 10**10, True)
            free_at[n] = self.done[j]
        return len(rest)

    def schedule(self) -> Schedule:
        gpus = tuple(range(self.inst.nodes[0].gpus))
        jobs = []
        for j, ss in self.segs.items():
            segs = [Segment(s, e, (Placement(n, gpus),), g) for s, e, n, g in ss if e > s]
            jobs.append(Assignment(j, 0, 0).with_pieces(segs))
        live = {p.group for a in jobs for p in a.pieces() if p.group}
        groups = tuple(g for g in self.groups if g.id in live)
        return Schedule(self.inst.name, "weighted-regroup", "feasible", tuple(jobs), groups)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--trace", default="trace1")
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--beta", type=float, default=0.25)
    ap.add_argument("--mip-seconds", type=float, default=5.0)
    ap.add_argument("-o", "--output", type=Path)
    args = ap.parse_args()
    inst = load(args.data / f"{args.trace}.csv", True, first=60, offset=60 * args.window)
    if any(j.gpus != inst.nodes[0].gpus for j in inst.jobs):
        sys.exit("every job of the window must take one whole node")
    sjf = metrics(inst, solve(inst, "greedy:sjf", SolveOptions()))["avg_jct"]
    print(f"greedy:sjf: avg JCT {sjf:,.1f} s", flush=True)
    t0 = time.perf_counter()
    rates = rate_table(inst)
    slices, limited = run_rule(inst, rates, args.beta, args.mip_seconds)
    real = Realize(inst)
    alone, s = real.run(slices), real.schedule()
    wall = time.perf_counter() - t0
    avg = metrics(inst, s)["avg_jct"]
    nseg = sum(len(a.pieces()) for a in s.jobs)
    print(
        f"rule (beta {args.beta}): {len(rates)} admissible multisets, {len(slices)} slices, "
        f"{nseg} segments, {len(s.groups)} groups, {alone} jobs run alone at the end, "
        f"{limited} MIPs stopped at --mip-seconds"
    )
    print(f"rule realized: avg JCT {avg:,.1f} s; sjf / rule {sjf / avg:.3f}; wall {wall:.1f} s")
    print(f"planner.verify: {len(verify(inst, s))} violations")
    if args.output:
        write_json(args.output, schedule_document(inst, s.with_(wall_s=wall), inst.objective))
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
