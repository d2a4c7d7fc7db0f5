"""CP-SAT variables (the data -> variables step of `model.build`).

Every job has a main interval [start, end) (always present, variable size) that carries
release, deadline, horizon, precedence, priority, pools and the objective. A job with
GPUs chooses exactly one *option*:
- solo on one node (one literal per eligible node, duration at that node's speed);
- solo on `k` whole nodes of one node group (a literal per group and one per node,
  `sum(node literals) == k * group literal`);
- membership of one candidate interleaving group (`planner.groups`), whose literal is
  shared by all members; the group has its own start (members start with it) and is placed
  on one node (or whole nodes) by node literals.
Option intervals are optional intervals sharing the job's start and end variables, so the
chosen option fixes the job's duration. A group holds its GPUs through a group-level
interval from its start to its last member's end; members hold CPU and memory only while
they run. Each `Use` is what one option puts on one node; `constraints.py` adds the
node, pool and order rules over them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from planner.durations import solo_duration
from planner.groups import CandidateGroup
from planner.instance import Instance, Job, Node, NodeGroup


@dataclass
class Use:
    """Something that occupies a node while present: a solo job, one node of a multi-node
    job, a group's GPU hold (gpus > 0, no cpu/mem) or a group member (cpu/mem only)."""

    node: Node
    interval: cp_model.IntervalVar
    lit: cp_model.IntVar
    gpus: int  # GPUs taken on this node
    cpus: float
    mem: float
    jobs: tuple[str, ...]  # whose admission counts (all members for a group hold)
    start: cp_model.IntVar
    end: cp_model.LinearExprT
    # GPU class index -> number of GPUs of that class (constant or variable); filled later
    per_class: dict[int, int | cp_model.IntVar] = field(default_factory=dict)
    group: int | None = None  # index into CpsatModel.groups for group holds / members
    size: int = 0  # the interval's (fixed) length


@dataclass
class Option:
    """One way to run a job: a literal, its duration, and its node literals."""

    kind: str  # "solo" | "multi" | "member"
    lit: cp_model.IntVar
    duration: int
    node_group: NodeGroup
    nodes: dict[str, cp_model.IntVar]  # node name -> literal "runs on this node"
    group: int | None = None  # index into CpsatModel.groups
    gpus: int = 0  # the GPU count the job runs at in this option (contract §12)


@dataclass
class JobVars:
    job: Job
    start: cp_model.IntVar
    end: cp_model.IntVar
    size: cp_model.IntVar
    interval: cp_model.IntervalVar
    earliest_start: int
    earliest_end: int
    latest_end: int
    options: list[Option] = field(default_factory=list)


@dataclass
class GroupVars:
    cand: CandidateGroup
    lit: cp_model.IntVar
    start: cp_model.IntVar
    nodes: dict[str, cp_model.IntVar]
    node_group: NodeGroup


@dataclass
class CpsatModel:
    model: cp_model.CpModel
    instance: Instance
    horizon: int
    jobs: dict[str, JobVars]
    groups: list[GroupVars]
    uses: list[Use]
    classes: dict[str, list[tuple[int, ...]]]  # node -> GPU classes (tuples of indices)
    priority_vars: list[tuple[cp_model.IntVar, list[str]]]  # X >= start of these jobs
    exact: bool = True  # False when a conservative (restricting) model was used
    notes: list[str] = field(default_factory=list)
    # With a makespan objective: the makespan variable and the "tail" interval
    # [makespan, horizon) that fills every resource without fixed intervals. Nothing runs
    # after the makespan, so this is valid, and it lets the cumulative propagators
    # (energy, edge finding) push the makespan bound up directly.
    makespan: cp_model.IntVar | None = None
    tail: cp_model.IntervalVar | None = None

    def cumulative(
        self, ivs: list[cp_model.IntervalVar], dem: list, cap: int, fixed: bool = False
    ) -> None:
        """AddCumulative, plus the tail interval when there are no fixed intervals."""
        if self.tail is not None and not fixed:
            ivs, dem = ivs + [self.tail], dem + [cap]
        self.model.add_cumulative(ivs, dem, cap)


def _integral(values: list[float], scale: int) -> bool:
    # a value that scales to less than 1e-9 is not 0 (1e-10 CPUs at scale 1 made a node's
    # CPUs and every demand 0: any load fitted, tests/test_verify.py)
    return all(
        abs(v * scale - round(v * scale)) < 1e-9 and (round(v * scale) != 0 or v == 0)
        for v in values
    )


def scale_for(values: Iterable[float]) -> int:
    """Smallest power of ten (<= 1000) making all values integral, else 1000."""
    vals = list(values)
    return next((s for s in (1, 10, 100) if _integral(vals, s)), 1000)


# A capacity row's values (CPUs, memory, pool amounts) may be scaled further than
# `scale_for`'s 1,000, while their largest stays within what that scale allows a value of
# `planner.limits.MAX_NUMBER` (10^12 x 1,000): 0.3333 of a pool is exact at 10^4.
CAPACITY_SCALE_MAX = 10**6
CAPACITY_SCALED_MAX = 10**15


def capacity_scale(values: Iterable[float]) -> tuple[int, bool]:
    """The scale of one capacity row and whether it is exact: the smallest power of ten up
    to CAPACITY_SCALE_MAX that makes every value integral without scaling the largest past
    CAPACITY_SCALED_MAX; else 1,000, rounded (demands up, capacity down: inexact). A row
    whose largest value is under a thousandth is first scaled until that value is at least
    1 (a pool of 6e-10 rounded to thousandths held 0 and every demand 1: the model was
    infeasible, tests/test_conformance.py)."""
    vals = list(values)
    top = max((abs(v) for v in vals), default=0.0)
    base = 1 if top == 0 or top * 1000 >= 1 else 10 ** math.ceil(-math.log10(top))
    s = base
    while s <= base * CAPACITY_SCALE_MAX and top * s <= CAPACITY_SCALED_MAX:
        if _integral(vals, s):
            return s, True
        s *= 10
    return base * 1000, False


def scaled_exactly(values: Iterable[float]) -> bool:
    """Whether `scale_for` makes every value integral (at most three decimals), so that
    the scaled model computes them exactly."""
    return _integral(list(values), 1000)


def option_durations(instance: Instance, job: Job, groups: Sequence[CandidateGroup]) -> list[int]:
    """Every duration the job can have: solo per GPU count and eligible node group, each
    membership."""
    if job.gpus == 0 or job.duration is not None:
        return [solo_duration(instance, job)]
    out = [
        solo_duration(instance, jc, g.speed)
        for jc in (job.at_count(c) for c in job.gpu_counts)
        for g in instance.eligible_groups(jc)
    ]
    for c in groups:
        if job.id in c.jobs:
            out.append(c.durations[c.jobs.index(job.id)])
    return out


def add_job_variables(
    cm: CpsatModel, groups: Sequence[CandidateGroup], job_ub: dict[str, int]
) -> None:
    m, inst = cm.model, cm.instance
    for job in inst.jobs:
        durs = option_durations(inst, job, groups)
        lo, hi = job.release + min(durs), max(job.release + min(durs), job_ub[job.id])
        start = m.new_int_var(job.release, hi - min(durs), f"s_{job.id}")
        end = m.new_int_var(lo, hi, f"e_{job.id}")
        if job_ub[job.id] < lo:
            m.add(end <= job_ub[job.id])  # deadline/horizon too tight: proved infeasible
        size = m.new_int_var_from_domain(
            cp_model.Domain.from_values(sorted(set(durs))), f"d_{job.id}"
        )
        itv = m.new_interval_var(start, size, end, f"i_{job.id}")
        jv = JobVars(job, start, end, size, itv, job.release, lo, hi)
        cm.jobs[job.id] = jv
        if job.gpus == 0:
            continue
        for count in job.gpu_counts:  # one set of options per GPU count (contract §12)
            _solo_options(cm, jv, job.at_count(count))


def _solo_options(cm: CpsatModel, jv: JobVars, job: Job) -> None:
    """The options of running `job` alone at its `gpus`: per node, or on whole nodes."""
    m, inst, start, end = cm.model, cm.instance, jv.start, jv.end
    tag = f"{job.id}_{job.gpus}" if len(job.gpu_counts) > 1 else job.id
    for ng in inst.eligible_groups(job):
        d = solo_duration(inst, job, ng.speed)
        per_node = min(job.gpus, ng.gpus)
        cpus, mem = per_node * job.cpus_per_gpu, per_node * job.mem_gb_per_gpu
        if job.gpus <= ng.gpus:
            for node in inst.nodes_of(ng):
                lit = m.new_bool_var(f"x_{tag}_{node.name}")
                iv = m.new_optional_fixed_size_interval_var(start, d, lit, f"o_{tag}_{node.name}")
                m.add(end == start + d).only_enforce_if(lit)
                jv.options.append(Option("solo", lit, d, ng, {node.name: lit}, gpus=job.gpus))
                cm.uses.append(
                    Use(node, iv, lit, per_node, cpus, mem, (job.id,), start, end, size=d)
                )
        else:
            k = job.gpus // ng.gpus
            lit = m.new_bool_var(f"x_{tag}_{ng.name}")
            m.add(end == start + d).only_enforce_if(lit)
            lits = {}
            for node in inst.nodes_of(ng):
                y = m.new_bool_var(f"y_{tag}_{node.name}")
                m.add_implication(y, lit)
                iv = m.new_optional_fixed_size_interval_var(start, d, y, f"o_{tag}_{node.name}")
                lits[node.name] = y
                cm.uses.append(Use(node, iv, y, per_node, cpus, mem, (job.id,), start, end, size=d))
            m.add(sum(lits.values()) == k * lit)
            jv.options.append(Option("multi", lit, d, ng, lits, gpus=job.gpus))


def add_group_variables(cm: CpsatModel, groups: Sequence[CandidateGroup]) -> None:
    m, inst = cm.model, cm.instance
    need_members = any(g.cpus is not None or g.mem_gb is not None for g in inst.node_groups)
    for gi, c in enumerate(groups):
        ng = inst.group_by_name[c.node_group]
        members = [cm.jobs[j] for j in c.jobs]
        # (var.Proto() is unsafe in OR-Tools 9.15: bounds are kept in JobVars)
        lo = max(jv.earliest_start for jv in members)
        hi = min(jv.latest_end - d for jv, d in zip(members, c.durations, strict=True))
        lit = m.new_bool_var(f"z_{gi}")
        start = m.new_int_var(lo, max(lo, hi), f"zs_{gi}")
        if hi < lo:
            m.add(lit == 0)
        per_node = min(c.gpus, ng.gpus)
        k = max(1, c.gpus // ng.gpus)
        lits: dict[str, cp_model.IntVar] = {}
        for node in inst.nodes_of(ng):
            y = m.new_bool_var(f"z_{gi}_{node.name}")
            m.add_implication(y, lit)
            lits[node.name] = y
            hold = m.new_optional_fixed_size_interval_var(start, c.span, y, f"zh_{gi}_{node.name}")
            cm.uses.append(
                Use(
                    node,
                    hold,
                    y,
                    per_node,
                    0.0,
                    0.0,
                    c.jobs,
                    start,
                    start + c.span,
                    group=gi,
                    size=c.span,
                )
            )
            if need_members:
                for jv, d in zip(members, c.durations, strict=True):
                    iv = m.new_optional_fixed_size_interval_var(
                        start, d, y, f"zm_{gi}_{jv.job.id}_{node.name}"
                    )
                    cm.uses.append(
                        Use(
                            node,
                            iv,
                            y,
                            0,
                            per_node * jv.job.cpus_per_gpu,
                            per_node * jv.job.mem_gb_per_gpu,
                            (jv.job.id,),
                            start,
                            start + d,
                            group=gi,
                        )
                    )
        m.add(sum(lits.values()) == k * lit)
        for jv, d in zip(members, c.durations, strict=True):
            m.add(jv.start == start).only_enforce_if(lit)
            m.add(jv.end == start + d).only_enforce_if(lit)
            jv.options.append(Option("member", lit, d, ng, lits, gi, c.gpus))
        cm.groups.append(GroupVars(c, lit, start, lits, ng))


def add_makespan_variable(cm: CpsatModel) -> None:
    """The makespan variable (>= every end) and its tail interval (`CpsatModel.tail`)."""
    m = cm.model
    lo = max((jv.earliest_end for jv in cm.jobs.values()), default=0)
    ms = m.new_int_var(lo, max(lo, cm.horizon), "makespan")
    for jv in cm.jobs.values():
        m.add(ms >= jv.end)
    cm.makespan = ms
    if lo <= cm.horizon:
        cm.tail = m.new_interval_var(ms, cm.horizon - ms, cm.horizon, "tail")
