"""Shared input cases: a valid instance document (`base()`) and the table `BAD` of bad
inputs, each (id, mutation of `base()`, JSON path, message fragment). The reader's tests
(`test_read.py`) check the problem list; the CLI's (`test_cli.py`) that each exits 2 through
`plan solve` with nothing written."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

BASE: dict[str, Any] = {
    "version": 1,
    "name": "t",
    "cluster": {
        "nodes": [
            {"name": "v100", "count": 2, "gpus": 8, "gpu_mem_gb": 32, "cpus": 48, "mem_gb": 512},
            {"name": "small", "gpus": 4},
        ],
        "pools": {"power_kw": 40},
    },
    "jobs": [
        {"id": "j1", "model": "gpt2", "gpus": 8, "iterations": 100, "tenant": "nlp"},
        {"id": "j2", "duration": 5, "gpus": 0, "demand": {"power_kw": 3}, "after": ["j1"]},
        {"id": "j3", "model": "resnet18", "gpus": 1, "iterations": 10},
    ],
    "reservations": [
        {"id": "maint", "start": 0, "end": 10, "nodes": ["v100-0"]},
        {
            "id": "hold",
            "start": 0,
            "end": 10,
            "nodes": ["v100-1"],
            "gpus": [0, 1],
            "for": {"tenants": ["nlp"]},
        },
        {"id": "cap", "start": 5, "end": 9, "pool": "power_kw", "amount": 10},
    ],
}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value

    return f


def _del(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]

    return f


def _add_job(job: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["jobs"].append(job)


def _add_res(res: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["reservations"].append(res)


def _profile(stages: Any) -> Callable[[dict[str, Any]], None]:
    return _set(
        ["profiles"], {"gpt2": {"by_gpus": {"8": {"iteration_ms": 400, "stages_ms": stages}}}}
    )


BAD = [
    # structure: unknown fields, types, required, ranges
    (
        "priority-too-low",
        _set(["jobs", 0, "priority"], -(10**18)),
        "jobs[0].priority",
        "below the limit -1e+12",
    ),
    (
        "priority-too-high",
        _set(["jobs", 0, "priority"], 10**18),
        "jobs[0].priority",
        "larger than the limit 1e+12",
    ),
    (
        "release-just-over",
        _set(["jobs", 0, "release"], 10**12 + 1),
        "jobs[0].release",
        "1000000000001 is larger than the limit 1e+12",  # was "1e+12 is larger ..."
    ),
    ("unknown-top", _set(["horizn"], 5), "horizn", "did you mean 'horizon'"),
    ("unknown-job-field", _set(["jobs", 0, "gpu"], 8), "jobs[0].gpu", "did you mean 'gpus'"),
    (
        "unknown-node-field",
        _set(["cluster", "nodes", 0, "cpu"], 8),
        "cluster.nodes[0].cpu",
        "did you mean 'cpus'",
    ),
    (
        "unknown-res-field",
        _set(["reservations", 0, "ned"], 8),
        "reservations[0].ned",
        "did you mean 'end'",
    ),
    ("bool-is-not-int", _set(["jobs", 0, "gpus"], True), "jobs[0].gpus", "expected an integer"),
    ("float-time", _set(["jobs", 0, "release"], 1.5), "jobs[0].release", "expected an integer"),
    (
        "integral-float-time",
        _set(["jobs", 1, "duration"], 5.0),
        "jobs[1].duration",
        "expected an integer",
    ),
    ("negative-release", _set(["jobs", 0, "release"], -1), "jobs[0].release", "negative"),
    (
        "negative-res-start",
        _set(["reservations", 0, "start"], -3),
        "reservations[0].start",
        "negative",
    ),
    ("negative-horizon", _set(["horizon"], -1), "horizon", "negative"),
    ("string-weight", _set(["jobs", 0, "weight"], "1"), "jobs[0].weight", "expected a number"),
    ("missing-id", _del(["jobs", 0, "id"]), "jobs[0].id", "required"),
    ("missing-cluster", _del(["cluster"]), "cluster", "required"),
    ("missing-jobs", _del(["jobs"]), "jobs", "required"),
    (
        "missing-node-gpus",
        _del(["cluster", "nodes", 0, "gpus"]),
        "cluster.nodes[0].gpus",
        "required",
    ),
    ("no-nodes-for-gpu-job", _set(["cluster", "nodes"], []), "jobs[0]", "fits no node"),
    (
        "count-zero",
        _set(["cluster", "nodes", 0, "count"], 0),
        "cluster.nodes[0].count",
        "less than 1",
    ),
    (
        "count-huge",
        _set(["cluster", "nodes", 0, "count"], 10**9),
        "cluster.nodes[0].count",
        "more than the 100000",
    ),
    (
        "gpus-per-node-huge",
        _set(["cluster", "nodes", 0, "gpus"], 10**7),
        "cluster.nodes[0].gpus",
        "10000000 GPUs on a node is more than the 1024 supported",
    ),
    (
        "gpus-in-all-huge",  # 1,000 nodes of 1,024 GPUs and one of 4
        lambda d: d["cluster"]["nodes"][0].update(count=1_000, gpus=1_024),
        "cluster.nodes",
        "1024004 GPUs in all is more than the 1000000 supported",
    ),
    ("speed-zero", _set(["cluster", "nodes", 0, "speed"], 0), "cluster.nodes[0].speed", "> 0"),
    ("bad-time-unit", _set(["time_unit"], "h"), "time_unit", "not one of ms, s, min"),
    ("bad-objective", _set(["objective"], "makespn"), "objective", "did you mean 'makespan'"),
    ("bad-objective-list", _set(["objective"], ["makespan", "jct"]), "objective[1]", "not one of"),
    ("empty-objective", _set(["objective"], []), "objective", "empty"),
    (
        "objective-twice",
        _set(["objective"], ["makespan", "energy_kwh", "makespan"]),
        "objective[2]",
        "'makespan' is listed twice",
    ),
    ("bad-policy", _set(["policy"], {"priority": "lax"}), "policy.priority", "not one of"),
    (
        "max-group-5",
        _set(["interleaving"], {"max_group": 5}),
        "interleaving.max_group",
        "more than 4",
    ),
    (
        "max-group-1",
        _set(["interleaving"], {"max_group": 1}),
        "interleaving.max_group",
        "less than 2",
    ),
    (
        "overhead-key",
        _set(["interleaving"], {"overhead": {"5": 1.1}}),
        "interleaving.overhead.5",
        "group size",
    ),
    (
        "overhead-zero",
        _set(["interleaving"], {"overhead": {"2": 0}}),
        "interleaving.overhead.2",
        "> 0",
    ),
    (
        "enabled-not-bool",
        _set(["interleaving"], {"enabled": "yes"}),
        "interleaving.enabled",
        "true or false",
    ),
    ("version-2", _set(["version"], 2), "version", "unsupported"),
    ("pool-negative", _set(["cluster", "pools", "power_kw"], -1), "cluster.pools.power_kw", ">="),
    ("after-not-list", _set(["jobs", 1, "after"], "j1"), "jobs[1].after", "array"),
    # job kinds
    (
        "neither-kind",
        _add_job({"id": "x", "gpus": 1}),
        "jobs[3].duration",
        "either model + iterations",
    ),
    (
        "both-kinds",
        _add_job({"id": "x", "model": "gpt2", "gpus": 1, "iterations": 1, "duration": 3}),
        "jobs[3].duration",
        "not both",
    ),
    (
        "iterations-no-model",
        _add_job({"id": "x", "duration": 3, "gpus": 1, "iterations": 5}),
        "jobs[3].iterations",
        "needs a model",
    ),
    ("profiled-zero-gpus", _set(["jobs", 0, "gpus"], 0), "jobs[0].gpus", "less than 1"),
    ("profiled-no-iterations", _del(["jobs", 0, "iterations"]), "jobs[0].iterations", "required"),
    ("gpus-not-profiled", _set(["jobs", 0, "gpus"], 3), "jobs[0].gpus", "no profile for 3 GPUs"),
    ("unknown-model", _set(["jobs", 0, "model"], "gpt3"), "jobs[0].model", "unknown model 'gpt3'"),
    # duplicates
    (
        "dup-job",
        _add_job({"id": "j1", "duration": 1, "gpus": 0}),
        "jobs[3]",
        "duplicate job id 'j1'",
    ),
    (
        "dup-group",
        lambda d: d["cluster"]["nodes"].append({"name": "small", "gpus": 2}),
        "cluster.nodes[2]",
        "duplicate node group",
    ),
    (
        "dup-res",
        _add_res({"id": "cap", "start": 0, "end": 1, "pool": "power_kw", "amount": 1}),
        "reservations[3]",
        "duplicate reservation id",
    ),
    # references
    ("after-unknown", _set(["jobs", 1, "after"], ["j9"]), "jobs[1].after[0]", "unknown job 'j9'"),
    ("after-self", _set(["jobs", 0, "after"], ["j1"]), "jobs[0].after", "j1 -> j1"),
    (
        "demand-unknown-pool",
        _set(["jobs", 1, "demand"], {"power": 1}),
        "jobs[1].demand.power",
        "unknown pool",
    ),
    (
        "demand-over-capacity",
        _set(["jobs", 1, "demand"], {"power_kw": 41}),
        "jobs[1].demand.power_kw",
        "exceeds the pool's capacity",
    ),
    (
        "node-type-unknown",
        _set(["jobs", 0, "node_types"], ["v10"]),
        "jobs[0].node_types[0]",
        "unknown node group 'v10'",
    ),
    (
        "res-for-job-unknown",
        _set(["reservations", 0, "for"], {"jobs": ["jx"]}),
        "reservations[0].for.jobs[0]",
        "unknown job 'jx'",
    ),
    (
        "res-unknown-node",
        _set(["reservations", 0, "nodes"], ["v100-2"]),
        "reservations[0].nodes[0]",
        "unknown node 'v100-2'",
    ),
    (
        "res-node-twice",
        _set(["reservations", 0, "nodes"], ["v100-0", "v100-0"]),
        "reservations[0].nodes[1]",
        "node 'v100-0' is listed twice",
    ),
    (
        "res-gpu-outside",
        _set(["reservations", 1, "gpus"], [0, 8]),
        "reservations[1].gpus[1]",
        "outside node v100-1",
    ),
    (
        "res-gpu-small-node",
        _add_res({"id": "s", "start": 0, "end": 1, "nodes": ["small-0"], "gpus": [4]}),
        "reservations[3].gpus[0]",
        "GPUs 0-3",
    ),
    (
        "res-neither",
        _add_res({"id": "n", "start": 0, "end": 1}),
        "reservations[3]",
        "needs nodes or a pool",
    ),
    (
        "res-both",
        _add_res(
            {"id": "n", "start": 0, "end": 1, "nodes": ["v100-0"], "pool": "power_kw", "amount": 1}
        ),
        "reservations[3]",
        "not both",
    ),
    (
        "res-end-before-start",
        _set(["reservations", 0, "end"], 0),
        "reservations[0].end",
        "not after start",
    ),
    (
        "res-unknown-pool",
        _set(["reservations", 2, "pool"], "power"),
        "reservations[2].pool",
        "unknown pool",
    ),
    (
        "res-amount-over",
        _set(["reservations", 2, "amount"], 50),
        "reservations[2].amount",
        "capacity",
    ),
    (  # with "cap" (10 of 40 from 5 to 9) a second one holds 41 at time 8
        "res-pool-overbooked",
        _add_res({"id": "cap2", "start": 8, "end": 20, "pool": "power_kw", "amount": 31}),
        "reservations[3].amount",
        "with cap it holds 41 of pool 'power_kw' (capacity 40) at time 8",
    ),
    (  # reported where the overlap begins: at "cap", which starts later
        "res-pool-overbooked-earlier",
        _add_res({"id": "cap2", "start": 2, "end": 20, "pool": "power_kw", "amount": 31}),
        "reservations[2].amount",
        "with cap2 it holds 41 of pool 'power_kw' (capacity 40) at time 5",
    ),
    (
        "res-pool-no-amount",
        _del(["reservations", 2, "amount"]),
        "reservations[2].amount",
        "required",
    ),
    # times
    (
        "release-after-deadline",
        lambda d: d["jobs"][0].update(release=10, deadline=5),
        "jobs[0].deadline",
        "before release",
    ),
    (
        "release-after-horizon",
        lambda d: d.update(horizon=5) or d["jobs"][0].update(release=10),
        "jobs[0].release",
        "after the horizon",
    ),
    # fit
    ("too-many-nodes", _set(["jobs", 0, "gpus"], 32), "jobs[0]", "needs 4 nodes, the group has 2"),
    (
        "cpus-misfit",
        lambda d: d["jobs"][0].update(cpus_per_gpu=7, node_types=["v100"]),
        "jobs[0]",
        "needs 56 CPUs per node",
    ),
    (
        "explicit-misfit",
        _add_job({"id": "x", "duration": 1, "gpus": 6, "node_types": ["small"]}),
        "jobs[3]",
        "small: 6 GPUs is not a whole number of 4-GPU nodes",
    ),
    (
        "gpu-mem-misfit",
        lambda d: d.update(
            profiles={
                "gpt2": {
                    "gpu_mem_gb": 40,
                    "by_gpus": {
                        "8": {"iteration_ms": 4, "stages_ms": {"data": 1, "gpu": 2, "net": 1}}
                    },
                }
            }
        ),
        "jobs[0]",
        "model needs 40 GB of GPU memory",
    ),
    # inline profiles
    (
        "profile-stages-all-zero",  # a group's cycle would be 0 (contract §4)
        _profile({"data": 0, "gpu": 0, "net": 0}),
        "profiles.gpt2.by_gpus.8.stages_ms",
        "every stage is 0, but an iteration takes 400 ms",
    ),
    (
        "profile-negative-stage",
        _profile({"data": 1, "gpu": -1, "net": 0}),
        "profiles.gpt2.by_gpus.8.stages_ms.gpu",
        ">= 0",
    ),
    (
        "profile-missing-stage",
        _profile({"data": 1, "gpu": 1}),
        "profiles.gpt2.by_gpus.8.stages_ms.net",
        "required",
    ),
    (
        "profile-unknown-stage",
        _profile({"data": 1, "gpu": 1, "net": 0, "cpu": 1}),
        "profiles.gpt2.by_gpus.8.stages_ms.cpu",
        "unknown field",
    ),
    (
        "profile-bad-gpu-key",
        _set(["profiles"], {"gpt2": {"by_gpus": {"eight": {}}}}),
        "profiles.gpt2.by_gpus.eight",
        "not a GPU count",
    ),
    (
        "profile-name-mismatch",
        _set(
            ["profiles"],
            {
                "gpt2": {
                    "model": "gpt",
                    "by_gpus": {
                        "8": {"iteration_ms": 4, "stages_ms": {"data": 1, "gpu": 2, "net": 1}}
                    },
                }
            },
        ),
        "profiles.gpt2.model",
        "differs",
    ),
]
