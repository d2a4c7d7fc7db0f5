"""The problem data: small frozen dataclasses built by `planner.read` after validation.

Everything a planner or the verifier needs is here, already resolved: node groups are
expanded into nodes, model names into profiles, defaults filled in. Times are integers in
the instance's `time_unit`; profile times are milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

UNIT_MS: Mapping[str, float] = {"ms": 1.0, "s": 1000.0, "min": 60000.0}

# Float slack on every capacity and memory comparison (sums of GB, CPUs, pool amounts).
TOL = 1e-9


def over(load: float, cap: float) -> bool:
    """Whether `load` passes `cap` by more than float rounding: a relative `TOL` of the
    larger (sums of positive amounts err relatively; an absolute slack let 2e-10 pass a
    capacity of 1e-10 and refused 20,000,000.3 + 0.1 on 20,000,000.4, tests/test_verify.py).
    The verifier has its own copy (`verify.capacity`)."""
    return load > cap + TOL * max(abs(cap), abs(load))


OBJECTIVES = (
    "makespan",
    "total_weighted_jct",
    "total_weighted_tardiness",
    "energy_cost",
    "energy_kwh",
)
# Objectives that price the cluster's power draw (contract §12).
ENERGY_OBJECTIVES = ("energy_cost", "energy_kwh")

# Measured slowdown of real interleaving relative to solo runs on Muri's testbed (contract §4).
DEFAULT_OVERHEAD: Mapping[int, float] = {2: 1.33 / 1.015, 3: 1.5 / 1.015, 4: 1.37 / 1.015}


@dataclass(frozen=True)
class Stages:
    """Per-iteration stage times in ms: data loading, GPU compute, gradient sync."""

    data: float
    gpu: float
    net: float


@dataclass(frozen=True)
class GpuProfile:
    """A model's measured behaviour at one GPU count."""

    iteration_ms: float
    stages: Stages
    restart_ms: float | None = None  # measured stop-and-restart cost (contract §8)


@dataclass(frozen=True)
class Profile:
    model: str
    by_gpus: Mapping[int, GpuProfile]
    gpu_mem_gb: float | None = None
    batch_size: int | None = None
    # planner-made only (the rest of a stopped job, planner.live.resume): its jobs never group
    alone: bool = False


@dataclass(frozen=True)
class NodeGroup:
    """One entry of `cluster.nodes`: `count` identical nodes."""

    name: str
    count: int
    gpus: int
    gpu_type: str | None = None
    gpu_mem_gb: float | None = None
    cpus: float | None = None  # None: not limited
    mem_gb: float | None = None  # None: not limited
    speed: float = 1.0
    gpu_idle_w: float = 0.0
    gpu_busy_w: float = 0.0


@dataclass(frozen=True)
class Node:
    """One machine, `<group>-<i>`; `index` is its position in `Instance.nodes`."""

    name: str
    group: NodeGroup
    index: int

    @property
    def gpus(self) -> int:
        return self.group.gpus

    @property
    def speed(self) -> float:
        return self.group.speed


@dataclass(frozen=True)
class Live:
    """A job's present state (contract §9): running since `started`, or done.

    `placement` is a tuple of (node name, GPU indices); empty for a job with no GPUs (or a
    done job given without one). `progress` (running only) is the work done by `now`, in
    iterations (time units for an explicit-duration job); None: what §8 gives from `started`.
    """

    state: str  # "running" | "done"
    started: int
    ended: int | None = None  # done only
    placement: tuple[tuple[str, tuple[int, ...]], ...] = ()
    group: str | None = None
    progress: float | None = None


@dataclass(frozen=True)
class Job:
    """A job. `gpus` is the count a planner that does not choose runs it at; `gpu_counts`
    the counts it may run at (contract §12), `(gpus,)` for a job with one fixed count. For
    a job that lists counts, `gpus` is the first listed count (README, "What we chose
    where the contract is silent"); `at_count` gives the job as run at another count."""

    id: str
    gpus: int
    model: str | None = None  # profiled job: model + iterations
    iterations: int | None = None
    duration: int | None = None  # explicit job: solo duration in time units
    release: int = 0
    priority: int = 0
    weight: float = 1.0
    due: int | None = None
    deadline: int | None = None
    after: tuple[str, ...] = ()
    cpus_per_gpu: float = 0.0
    mem_gb_per_gpu: float = 0.0
    tenant: str | None = None
    node_types: tuple[str, ...] | None = None  # None: any node group
    demand: Mapping[str, float] = field(default_factory=dict)
    live: Live | None = None  # None: waiting (contract §9)
    gpu_counts: tuple[int, ...] = ()  # () means (gpus,)

    def __post_init__(self) -> None:
        if not self.gpu_counts:
            object.__setattr__(self, "gpu_counts", (self.gpus,))

    @property
    def profiled(self) -> bool:
        return self.model is not None

    @property
    def state(self) -> str:
        """ "waiting", "running" or "done" (contract §9)."""
        return self.live.state if self.live is not None else "waiting"

    @property
    def elastic(self) -> bool:
        """The plan chooses this job's GPU count (contract §12)."""
        return len(self.gpu_counts) > 1

    def at_count(self, gpus: int) -> Job:
        """The job run at `gpus` GPUs (its allowed counts unchanged)."""
        return self if gpus == self.gpus else replace(self, gpus=gpus)

    def run_at(self, gpus: int) -> Job:
        """The job as a placement of `gpus` GPUs runs it (contract §12): at that count when
        it is one of an elastic job's counts, else as it is."""
        return self.at_count(gpus) if self.elastic and gpus in self.gpu_counts else self

    @property
    def work(self) -> float:
        """What progress counts to (contract §8): iterations, or time units for a job with
        an explicit duration."""
        return float(self.duration if self.duration is not None else self.iterations or 0)

    def as_placed(self) -> Job:
        """A running or done job at its given placement's GPU count (contract §12: a
        segment runs at the size of its placement, any of the job's counts); any other
        job as it is."""
        if self.live is None or not self.live.placement:
            return self
        return self.at_count(sum(len(set(gpus)) for _, gpus in self.live.placement))

    def fixed_at(self, gpus: int) -> Job:
        """The job with `gpus` as its only count: what a planner that does not choose
        sees once the count is chosen."""
        return replace(self, gpus=gpus, gpu_counts=(gpus,))


@dataclass(frozen=True)
class Admits:
    """Whom a reservation lets in; both empty means nobody (`"for": null`)."""

    tenants: frozenset[str] = frozenset()
    jobs: frozenset[str] = frozenset()

    def admits(self, job: Job) -> bool:
        return job.id in self.jobs or (job.tenant is not None and job.tenant in self.tenants)


@dataclass(frozen=True)
class Reservation:
    """Either GPUs of nodes (`nodes`, optional `gpus`) or an amount of a pool."""

    id: str
    start: int
    end: int
    admits: Admits = Admits()
    nodes: tuple[str, ...] = ()
    gpus: tuple[int, ...] | None = None  # None: every GPU of the listed nodes
    pool: str | None = None
    amount: float = 0.0


@dataclass(frozen=True)
class Interleaving:
    enabled: bool = False
    max_group: int = 4
    overhead: Mapping[int, float] = field(default_factory=lambda: dict(DEFAULT_OVERHEAD))


@dataclass(frozen=True)
class Preemption:
    """`policy.preemption` (contract §8): may jobs be stopped and resumed, at what cost."""

    enabled: bool = False
    restart: int = 0  # time units, for jobs whose profile gives no restart_ms


@dataclass(frozen=True)
class PriceInterval:
    """`cluster.power_price` entry (contract §12): price per kWh over [start, end)."""

    start: int
    end: int
    price: float


@dataclass(frozen=True)
class Instance:
    name: str
    jobs: tuple[Job, ...]
    node_groups: tuple[NodeGroup, ...]
    nodes: tuple[Node, ...]
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    pools: Mapping[str, float] = field(default_factory=dict)
    reservations: tuple[Reservation, ...] = ()
    time_unit: str = "s"
    horizon: int | None = None
    interleaving: Interleaving = Interleaving()
    priority_policy: str = "strict"  # "strict" | "none"
    preemption: Preemption = Preemption()
    objective: tuple[str, ...] = ("total_weighted_jct",)
    now: int = 0  # contract §9: nothing not yet running starts before it
    power_price: tuple[PriceInterval, ...] = ()  # sorted by start, non-overlapping
    # A live state's residual (planner/live/residual.py) releases its waiting jobs at `now`; the
    # release each had before, by id: the greedy rules' arrival order (fifo's key) and the
    # release strict priority (R9) compares, as the contract does on the live state
    arrived: Mapping[str, int] = field(default_factory=dict)
    # A residual's stopped jobs, which it takes out of every R9 pair by moving their
    # priority and arrival (planner.live.residual._exempt_from_r9): the (priority, arrival) by id
    # that the greedy rules still order them by
    queued: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def order_priority(self, job: Job) -> int:
        """The priority the greedy rules order `job` by: its own (`queued`)."""
        return self.queued[job.id][0] if job.id in self.queued else job.priority

    def order_arrival(self, job: Job) -> int:
        """When the greedy rules take `job` to have arrived (fifo's key): its own (`queued`)."""
        return self.queued[job.id][1] if job.id in self.queued else self.arrival(job)

    def arrival(self, job: Job) -> int:
        """When `job` arrived: its release, or in a live state's residual the release it had
        before the residual moved it to `now` (`arrived`). R9 compares these."""
        return self.arrived.get(job.id, job.release) if self.arrived else job.release

    @property
    def is_live(self) -> bool:
        """Does the instance describe a present (a `now` or running / done jobs, §9)?"""
        return self.now > 0 or any(j.live is not None for j in self.jobs)

    @property
    def elastic(self) -> bool:
        """Some job lists more than one GPU count (contract §12)."""
        return any(j.elastic for j in self.jobs)

    @property
    def disjunctive(self) -> bool:
        """Every job that uses a pool needs all of it (a job shop's machines)."""
        return all(
            q >= self.pools.get(p, 0.0) for j in self.jobs for p, q in j.demand.items() if q > 0
        )

    @property
    def unit_ms(self) -> float:
        return UNIT_MS[self.time_unit]

    @cached_property
    def job_by_id(self) -> Mapping[str, Job]:
        return {j.id: j for j in self.jobs}

    @cached_property
    def runs_on_memo(self) -> dict[tuple[str, tuple[tuple[str, int], ...]], bool]:
        """`planner.simulate.packer.Packer.runs_on`'s answers, by node group and (job,
        GPU count) pairs: they follow from the instance alone, so every decision of a
        simulation shares them."""
        return {}

    @cached_property
    def node_by_name(self) -> Mapping[str, Node]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def group_by_name(self) -> Mapping[str, NodeGroup]:
        return {g.name: g for g in self.node_groups}

    def gpu_profile(self, job: Job) -> GpuProfile:
        """The profile entry a profiled job runs with (validated to exist)."""
        assert job.model is not None
        return self.profiles[job.model].by_gpus[job.gpus]

    def eligible_groups(self, job: Job) -> tuple[NodeGroup, ...]:
        """Node groups the job may run on: allowed by `node_types` and big enough (R5)."""
        if job.gpus == 0:
            return ()
        out = []
        for g in self.node_groups:
            if job.node_types is not None and g.name not in job.node_types:
                continue
            if self.misfit(job, g) is None:
                out.append(g)
        return tuple(out)

    def misfit(self, job: Job, g: NodeGroup) -> str | None:
        """Why `job` cannot run on nodes of group `g` (ignoring `node_types`), or None."""
        if job.gpus > g.gpus:
            if job.gpus % g.gpus:
                return f"{job.gpus} GPUs is not a whole number of {g.gpus}-GPU nodes"
            if job.gpus // g.gpus > g.count:
                return f"needs {job.gpus // g.gpus} nodes, the group has {g.count}"
        per_node = min(job.gpus, g.gpus)
        if g.cpus is not None and over(per_node * job.cpus_per_gpu, g.cpus):
            return f"needs {per_node * job.cpus_per_gpu:g} CPUs per node, nodes have {g.cpus:g}"
        if g.mem_gb is not None and over(per_node * job.mem_gb_per_gpu, g.mem_gb):
            return f"needs {per_node * job.mem_gb_per_gpu:g} GB per node, nodes have {g.mem_gb:g}"
        if job.model is not None and g.gpu_mem_gb is not None:
            # durations.group_gpu_mem for one job: a profile without gpu_mem_gb needs 0
            need = self.profiles[job.model].gpu_mem_gb
            if need is not None and over(need, g.gpu_mem_gb):
                return f"model needs {need:g} GB of GPU memory, GPUs have {g.gpu_mem_gb:g}"
        return None

    @cached_property
    def _nodes_by_group(self) -> Mapping[str, tuple[Node, ...]]:
        out: dict[str, list[Node]] = {g.name: [] for g in self.node_groups}
        for n in self.nodes:
            out.setdefault(n.group.name, []).append(n)
        return {name: tuple(nodes) for name, nodes in out.items()}

    def nodes_of(self, group: NodeGroup) -> tuple[Node, ...]:
        return self._nodes_by_group.get(group.name, ())
