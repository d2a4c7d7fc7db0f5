"""Seeded synthetic instances (`plan generate`), as dicts in the contract's JSON form.

Families:
- "mixed": every feature at once: two node groups of different speeds and GPU counts with
  CPU and memory limits, a pool with a reservation admitting a tenant, a GPU maintenance
  window, a tenant hold on some GPUs, two priority classes under strict priority, release
  times, dependency chains, explicit-duration jobs (some GPU-less with pool demand only),
  soft dues, a few loose hard deadlines, node_types restrictions, interleaving enabled.
- "dl": Muri-shaped: one V100 node group of 8 GPUs per node, catalogue models, GPU counts
  weighted like the Muri traces, Poisson arrivals at a load of about 1.2.
- "rcpsp": explicit durations, no GPUs, four pools and precedence (PSPLIB-like).

`preemption=True` enables `policy.preemption` (contract §8) on the same jobs: profiled jobs
restart at their catalogue cost; explicit-duration jobs at `EXPLICIT_RESTART` time units
("mixed", "dl"), or at no cost ("rcpsp", as in the preemptive project-scheduling literature).

`elastic=True` (contract §12) offers every profiled job the GPU counts of its profile between
half and twice its count that fit a node group it may use, its own count first (so it stays
the default and every guarantee below still holds for it).

Every instance is valid and feasible: hard deadlines and the horizon are set from a serial
bound that any list schedule meets (latest release + last reservation end + the sum of every
job's slowest duration, plus one unit per job for group rounding), so the greedy planner
always finds a schedule. Strict-priority instances chain only jobs of the same priority,
so precedence never forces a lower-priority job before a higher one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from planner.catalogue import load_catalogue
from planner.durations import solo_iteration_ms
from planner.instance import Profile

FAMILIES = ("mixed", "dl", "rcpsp")

# Share of GPU counts in the Muri traces (cluster_trace.csv: 8 GPUs dominate).
DL_GPU_WEIGHTS = {1: 0.10, 2: 0.05, 4: 0.06, 8: 0.70, 16: 0.02, 32: 0.07}

# Restart cost (time units) of an explicit-duration job in a preemptive "mixed" instance: a
# checkpoint-and-reload of about ten seconds, in the range Muri measured for training jobs.
EXPLICIT_RESTART = 10


def generate(
    family: str, jobs: int, nodes: int, seed: int, preemption: bool = False, elastic: bool = False
) -> dict[str, Any]:
    """A random instance of `family` with `jobs` jobs on about `nodes` nodes."""
    doc = _family(family, jobs, nodes, seed)
    if elastic:
        _make_elastic(doc)
    if preemption:
        restart = 0 if family == "rcpsp" else EXPLICIT_RESTART
        doc["policy"]["preemption"] = {"enabled": True, "restart": restart}
    return doc


def _make_elastic(doc: dict[str, Any]) -> None:
    cat = load_catalogue()
    groups = doc["cluster"]["nodes"]
    for job in doc["jobs"]:
        prof = cat.get(job.get("model") or "")
        if prof is None or not isinstance(job.get("gpus"), int):
            continue
        g = job["gpus"]
        allowed = [
            n
            for n in groups
            if job.get("node_types") in (None, []) or n["name"] in job["node_types"]
        ]
        others = [
            c
            for c in sorted(prof.by_gpus)
            if c != g and g <= 2 * c <= 4 * g and any(_count_fits(job, c, n) for n in allowed)
        ]
        if others:
            job["gpus"] = [g, *others]


def _count_fits(job: Mapping[str, Any], gpus: int, group: Mapping[str, Any]) -> bool:
    """`gpus` GPUs of the job fit nodes of `group` (whole nodes when more than one)."""
    per = group["gpus"]
    if gpus > per and (gpus % per or gpus // per > group.get("count", 1)):
        return False
    on_node = min(gpus, per)
    for cap, need in (("cpus", "cpus_per_gpu"), ("mem_gb", "mem_gb_per_gpu")):
        if group.get(cap) is not None and on_node * job.get(need, 0) > group[cap]:
            return False
    return True


def _family(family: str, jobs: int, nodes: int, seed: int) -> dict[str, Any]:
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}: use one of {', '.join(FAMILIES)}")
    if jobs < 1 or nodes < 1:
        raise ValueError("jobs and nodes must be at least 1")
    rng = random.Random(seed)
    if family == "mixed":
        return _mixed(rng, jobs, nodes, seed)
    if family == "dl":
        return _dl(rng, jobs, nodes, seed)
    return _rcpsp(rng, jobs, nodes, seed)


def _iterations(rng: random.Random, it_ms: float, lo_s: float, hi_s: float) -> int:
    """Iterations for a log-uniform solo length between lo_s and hi_s seconds."""
    secs = math.exp(rng.uniform(math.log(lo_s), math.log(hi_s)))
    return max(1, round(secs * 1000 / it_ms))


def _solo_s(p: Profile, gpus: int, iterations: int, speed: float) -> int:
    return math.ceil(iterations * solo_iteration_ms(p.by_gpus[gpus], speed) / 1000)


def _weighted(rng: random.Random, weights: Mapping[int, float]) -> int:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


# (name, count, gpus per node, speed, gpu_mem_gb, cpus, mem_gb)
_NodeGroup = tuple[str, int, int, float, float, float, float]


def _mixed(rng: random.Random, n_jobs: int, n_nodes: int, seed: int) -> dict[str, Any]:
    cat = load_catalogue()
    n_fast = max(1, n_nodes // 2)
    n_slow = max(1, n_nodes - n_fast)
    groups: list[_NodeGroup] = [
        ("a100", n_fast, 8, 1.5, 40.0, 64.0, 512.0),
        ("v100", n_slow, 4, 1.0, 16.0, 32.0, 256.0),
    ]
    cluster_nodes = [
        {
            "name": n,
            "count": c,
            "gpus": g,
            "gpu_type": n.upper(),
            "gpu_mem_gb": m,
            "cpus": cpu,
            "mem_gb": mem,
            "speed": s,
            "gpu_idle_w": 50,
            "gpu_busy_w": 300,
        }
        for n, c, g, s, m, cpu, mem in groups
    ]
    span = 600 * n_jobs // max(1, n_nodes)  # releases spread over this window
    jobs: list[dict[str, Any]] = []
    slowest: dict[str, int] = {}
    last_of_class: dict[int, str] = {}
    for i in range(n_jobs):
        job = _mixed_job(rng, f"j{i}", span, groups, cat, slowest)
        # Chains only within a priority class (strict priority stays satisfiable).
        prio = job["priority"]
        if prio in last_of_class and rng.random() < 0.25:
            job["after"] = [last_of_class[prio]]
        last_of_class[prio] = job["id"]
        jobs.append(job)

    if not any(j.get("tenant") == "nlp" for j in jobs):
        jobs[0]["tenant"] = "nlp"  # the reservations below name this tenant
    reservations = _mixed_reservations(rng)
    bound = _serial_bound(jobs, slowest, reservations)
    for job in jobs:
        if rng.random() < 0.1:
            job["deadline"] = job["release"] + bound
    return {
        "version": 1,
        "name": f"mixed-{n_jobs}-{n_nodes}-s{seed}",
        "time_unit": "s",
        "horizon": 2 * bound,
        "cluster": {"nodes": cluster_nodes, "pools": {"power_kw": 20.0}},
        "interleaving": {"enabled": True, "max_group": 4},
        "policy": {"priority": "strict"},
        "objective": ["total_weighted_jct"],
        "jobs": jobs,
        "reservations": reservations,
    }


def _fits(group: _NodeGroup, gpus: int, need_mem: float | None) -> bool:
    """Whether a job of `gpus` GPUs (and `need_mem` GB per GPU) fits node group `group`."""
    _, count, per, _, gmem, _, _ = group
    if gpus > per and (gpus % per or gpus // per > count):
        return False
    return not (need_mem is not None and need_mem > gmem)


def _mixed_job(
    rng: random.Random,
    jid: str,
    span: int,
    groups: list[_NodeGroup],
    cat: Mapping[str, Profile],
    slowest: dict[str, int],
) -> dict[str, Any]:
    """One job of the mixed family (without `after`); records its slowest solo duration."""
    prio = 1 if rng.random() < 0.3 else 0
    job: dict[str, Any] = {
        "id": jid,
        "release": rng.randrange(0, span + 1),
        "priority": prio,
        "weight": rng.choice([1.0, 1.0, 2.0]),
    }
    kind = rng.random()
    if kind < 0.12:  # GPU-less job using only the pool
        job.update(
            duration=rng.randint(5, 120), gpus=0, demand={"power_kw": float(rng.randint(1, 8))}
        )
        slowest[jid] = job["duration"]
    else:
        gpus = _weighted(rng, {1: 0.3, 2: 0.25, 4: 0.25, 8: 0.2})
        ok = [g for g in groups if _fits(g, gpus, None)]
        if kind < 0.25:  # explicit-duration GPU job
            job.update(duration=rng.randint(30, 900), gpus=gpus)
            slowest[jid] = job["duration"]
        else:
            fitting = [
                m for m in sorted(cat) if any(_fits(g, gpus, cat[m].gpu_mem_gb) for g in groups)
            ]
            model = rng.choice(fitting)
            ok = [g for g in groups if _fits(g, gpus, cat[model].gpu_mem_gb)]
            it_ms = cat[model].by_gpus[gpus].iteration_ms
            iters = _iterations(rng, it_ms, 30, 1800)
            job.update(model=model, gpus=gpus, iterations=iters)
            slowest[jid] = max(_solo_s(cat[model], gpus, iters, g[3]) for g in ok)
        if rng.random() < 0.3:
            per = min(gpus, min(g[2] for g in ok))
            job["cpus_per_gpu"] = float(rng.randint(1, 32 // max(per, 4)))
            job["mem_gb_per_gpu"] = float(rng.choice([8, 16, 32]))
        if rng.random() < 0.2 and len(ok) > 1:
            job["node_types"] = [rng.choice(ok)[0]]
        if rng.random() < 0.15:
            job["demand"] = {"power_kw": float(rng.randint(1, 5))}
    if rng.random() < 0.4:
        job["tenant"] = rng.choice(["nlp", "vision"])
    if rng.random() < 0.3:
        job["due"] = job["release"] + 2 * slowest[jid] + rng.randint(0, 600)
    return job


def _mixed_reservations(rng: random.Random) -> list[dict[str, Any]]:
    """A maintenance window, a tenant's GPUs and a tenant's share of the power pool."""
    maint_end = rng.randint(300, 1800)
    return [
        {"id": "maint", "start": 0, "end": maint_end, "nodes": ["v100-0"], "for": None},
        {
            "id": "nlp-hold",
            "start": rng.randint(0, 600),
            "end": rng.randint(1200, 3600),
            "nodes": ["a100-0"],
            "gpus": [0, 1, 2, 3],
            "for": {"tenants": ["nlp"]},
        },
        {
            "id": "power-nlp",
            "start": rng.randint(0, 300),
            "end": rng.randint(900, 2400),
            "pool": "power_kw",
            "amount": 6.0,
            "for": {"tenants": ["nlp"]},
        },
    ]


def _serial_bound(
    jobs: list[dict[str, Any]], slowest: Mapping[str, int], reservations: list[dict[str, Any]]
) -> int:
    """An end time every list schedule meets: when a job is placed, everything placed so far
    has ended by the running bound, so it can start then at the latest."""
    last_release = max((j.get("release", 0) for j in jobs), default=0)
    last_res = max((r["end"] for r in reservations), default=0)
    return last_release + last_res + sum(slowest[j["id"]] + 1 for j in jobs)


def _dl(rng: random.Random, n_jobs: int, n_nodes: int, seed: int) -> dict[str, Any]:
    cat = load_catalogue()
    models = sorted(cat)
    total_gpus = 8 * n_nodes
    weights = {g: w for g, w in DL_GPU_WEIGHTS.items() if g <= total_gpus}
    mean_gpus = sum(g * w for g, w in weights.items()) / sum(weights.values())
    specs = []
    for _ in range(n_jobs):
        gpus = _weighted(rng, weights)
        model = rng.choice(models)
        it_ms = cat[model].by_gpus[gpus].iteration_ms
        specs.append((gpus, model, _iterations(rng, it_ms, 60, 6 * 3600)))
    mean_s = sum(_solo_s(cat[m], g, it, 1.0) for g, m, it in specs) / n_jobs
    # Poisson arrivals at a load of about 1.2 (offered GPU-time / capacity).
    gap = mean_s * mean_gpus / (total_gpus * 1.2)
    t = 0.0
    jobs = []
    for i, (gpus, model, iters) in enumerate(specs):
        jobs.append(
            {
                "id": f"j{i}",
                "model": model,
                "gpus": gpus,
                "iterations": iters,
                "release": int(t),
                "priority": 1 if rng.random() < 0.2 else 0,
            }
        )
        t += rng.expovariate(1.0 / gap) if gap > 0 else 0.0
    return {
        "version": 1,
        "name": f"dl-{n_jobs}-{n_nodes}-s{seed}",
        "time_unit": "s",
        "cluster": {
            "nodes": [
                {
                    "name": "v100",
                    "count": n_nodes,
                    "gpus": 8,
                    "gpu_type": "V100",
                    "gpu_mem_gb": 32,
                    "gpu_idle_w": 60,
                    "gpu_busy_w": 300,
                }
            ]
        },
        "interleaving": {"enabled": True, "max_group": 4},
        "policy": {"priority": "none"},
        "objective": ["total_weighted_jct"],
        "jobs": jobs,
    }


def _rcpsp(rng: random.Random, n_jobs: int, n_nodes: int, seed: int) -> dict[str, Any]:
    pools = {f"R{k}": float(rng.randint(5, 15)) for k in range(1, 5)}
    jobs = []
    for i in range(n_jobs):
        demand = {
            r: float(rng.randint(0, int(cap))) for r, cap in pools.items() if rng.random() < 0.5
        }
        job: dict[str, Any] = {
            "id": f"a{i}",
            "duration": rng.randint(1, 10),
            "gpus": 0,
            "demand": {r: v for r, v in demand.items() if v > 0},
        }
        if i:
            preds = rng.sample(range(max(0, i - 10), i), k=min(i, rng.randint(0, 2)))
            if preds:
                job["after"] = [f"a{p}" for p in sorted(preds)]
        jobs.append(job)
    return {
        "version": 1,
        "name": f"rcpsp-{n_jobs}-s{seed}",
        "time_unit": "s",
        # GPU-less jobs need no node; one token node keeps the cluster well-formed.
        "cluster": {
            "nodes": [{"name": "none", "count": max(1, n_nodes), "gpus": 1}],
            "pools": pools,
        },
        "policy": {"priority": "none"},
        "objective": ["makespan"],
        "jobs": jobs,
    }
