"""planner.read / planner.validate / planner.catalogue: valid input, defaults, and every kind
of bad input reported with its JSON path."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planner.catalogue import catalogue_rows, load_catalogue
from planner.errors import InputError
from planner.instance import DEFAULT_OVERHEAD
from planner.read import instance_from_dict, read_instance

CATALOGUE = load_catalogue()

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

CONTRACT_EXAMPLE: dict[str, Any] = {
    "version": 1,
    "name": "demo",
    "time_unit": "s",
    "horizon": 864000,
    "cluster": {
        "nodes": [
            {
                "name": "v100",
                "count": 8,
                "gpus": 8,
                "gpu_type": "V100",
                "gpu_mem_gb": 32,
                "cpus": 48,
                "mem_gb": 512,
                "speed": 1.0,
                "gpu_idle_w": 60,
                "gpu_busy_w": 300,
            }
        ],
        "pools": {"power_kw": 40},
    },
    "interleaving": {"enabled": True, "max_group": 4},
    "policy": {"priority": "strict"},
    "objective": ["total_weighted_jct"],
    "profiles": {},
    "jobs": [
        {
            "id": "j1",
            "model": "gpt2",
            "gpus": 8,
            "iterations": 10956,
            "release": 0,
            "priority": 0,
            "weight": 1.0,
            "due": None,
            "deadline": None,
            "after": [],
            "cpus_per_gpu": 4,
            "mem_gb_per_gpu": 32,
            "tenant": "nlp",
            "node_types": None,
        },
        {"id": "t1", "duration": 7, "gpus": 0, "demand": {"power_kw": 3}, "after": ["j1"]},
    ],
    "reservations": [
        {"id": "maint", "start": 0, "end": 3600, "nodes": ["v100-0"], "for": None},
        {
            "id": "nlp-hold",
            "start": 0,
            "end": 7200,
            "nodes": ["v100-1"],
            "gpus": [0, 1, 2, 3],
            "for": {"tenants": ["nlp"]},
        },
        {
            "id": "power-cap",
            "start": 100,
            "end": 200,
            "pool": "power_kw",
            "amount": 10,
            "for": None,
        },
    ],
}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def problems_of(d: Any) -> list[tuple[str, str]]:
    with pytest.raises(InputError) as e:
        instance_from_dict(d, file="x.json", catalogue=CATALOGUE)
    assert e.value.file == "x.json"
    return [(p.path, p.message) for p in e.value.problems]


# ------------------------------------------------------------------ valid input


def test_minimal_instance_defaults_and_expansion() -> None:
    inst = instance_from_dict(base(), catalogue=CATALOGUE)
    assert [n.name for n in inst.nodes] == ["v100-0", "v100-1", "small-0"]
    assert [n.index for n in inst.nodes] == [0, 1, 2]
    assert inst.time_unit == "s" and inst.horizon is None
    assert inst.priority_policy == "strict"
    assert inst.objective == ("total_weighted_jct",)
    assert inst.interleaving.enabled is False
    small = inst.group_by_name["small"]
    assert small.count == 1 and small.cpus is None and small.mem_gb is None
    assert small.gpu_mem_gb is None and small.speed == 1.0 and small.gpu_busy_w == 0.0
    j1, j2, j3 = inst.jobs
    assert (j1.release, j1.priority, j1.weight, j1.after, j1.node_types) == (0, 0, 1.0, (), None)
    assert j1.cpus_per_gpu == 0.0 and j1.due is None and j1.deadline is None
    assert j2.duration == 5 and j2.model is None and j2.demand == {"power_kw": 3.0}
    assert j2.after == ("j1",)
    # Only the models jobs use are carried.
    assert set(inst.profiles) == {"gpt2", "resnet18"}
    maint, hold, cap = inst.reservations
    assert maint.gpus is None and not maint.admits.tenants and not maint.admits.jobs
    assert hold.gpus == (0, 1) and hold.admits.tenants == frozenset({"nlp"})
    assert cap.pool == "power_kw" and cap.amount == 10.0 and cap.nodes == ()


def test_contract_example_parses() -> None:
    inst = instance_from_dict(CONTRACT_EXAMPLE, catalogue=CATALOGUE)
    assert inst.name == "demo" and inst.horizon == 864000
    assert len(inst.nodes) == 8 and inst.nodes[-1].name == "v100-7"
    assert inst.interleaving.enabled and inst.interleaving.max_group == 4
    assert dict(inst.interleaving.overhead) == dict(DEFAULT_OVERHEAD)
    assert inst.job_by_id["j1"].tenant == "nlp"
    assert inst.profiles["gpt2"].by_gpus[8].iteration_ms == 437
    assert inst.eligible_groups(inst.job_by_id["j1"])[0].name == "v100"


def test_read_instance_from_file_uses_stem_as_default_name(tmp_path: Path) -> None:
    d = base()
    del d["name"]
    f = tmp_path / "my-cluster.json"
    f.write_text(json.dumps(d))
    assert read_instance(f, catalogue=CATALOGUE).name == "my-cluster"


def test_options_objective_string_overhead_and_interleaving_default_on() -> None:
    d = base()
    d.update(
        time_unit="min",
        objective="makespan",
        policy={"priority": "none"},
        interleaving={"overhead": {"2": 1.2}, "max_group": 3},
    )
    inst = instance_from_dict(d, catalogue=CATALOGUE)
    assert inst.time_unit == "min" and inst.objective == ("makespan",)
    assert inst.priority_policy == "none"
    assert inst.interleaving.enabled and inst.interleaving.max_group == 3
    assert inst.interleaving.overhead[2] == 1.2
    assert inst.interleaving.overhead[3] == DEFAULT_OVERHEAD[3]


def test_inline_profile_overrides_catalogue() -> None:
    d = base()
    d["profiles"] = {
        "gpt2": {
            "batch_size": 2,
            "gpu_mem_gb": 10,
            "by_gpus": {"8": {"iteration_ms": 100, "stages_ms": {"data": 1, "gpu": 80, "net": 10}}},
        },
        "unused": {
            "model": "unused",
            "by_gpus": {"1": {"iteration_ms": 1, "stages_ms": {"data": 0, "gpu": 1, "net": 0}}},
        },
    }
    inst = instance_from_dict(d, catalogue=CATALOGUE)
    assert inst.profiles["gpt2"].by_gpus[8].iteration_ms == 100
    assert list(inst.profiles["gpt2"].by_gpus) == [8]
    assert "unused" not in inst.profiles


def test_no_catalogue_needed_when_all_models_inline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PLANNER_MODELS", str(tmp_path / "nowhere"))
    d = base()
    d["jobs"] = [{"id": "a", "model": "m", "gpus": 1, "iterations": 3}]
    d["profiles"] = {
        "m": {"by_gpus": {"1": {"iteration_ms": 5, "stages_ms": {"data": 1, "gpu": 3, "net": 0}}}}
    }
    d["reservations"] = []
    inst = instance_from_dict(d)
    assert inst.jobs[0].model == "m"


# ------------------------------------------------------------------ bad input


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
    ("speed-zero", _set(["cluster", "nodes", 0, "speed"], 0), "cluster.nodes[0].speed", "> 0"),
    ("bad-time-unit", _set(["time_unit"], "h"), "time_unit", "not one of ms, s, min"),
    ("bad-objective", _set(["objective"], "makespn"), "objective", "did you mean 'makespan'"),
    ("bad-objective-list", _set(["objective"], ["makespan", "jct"]), "objective[1]", "not one of"),
    ("empty-objective", _set(["objective"], []), "objective", "empty"),
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
        "res-for-tenant-unknown",
        _set(["reservations", 1, "for"], {"tenants": ["cv"]}),
        "reservations[1].for.tenants[0]",
        "no job has tenant 'cv'",
    ),
    (
        "res-unknown-node",
        _set(["reservations", 0, "nodes"], ["v100-2"]),
        "reservations[0].nodes[0]",
        "unknown node 'v100-2'",
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


@pytest.mark.parametrize(
    ("mutate", "path", "fragment"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_input(mutate: Callable[[dict[str, Any]], None], path: str, fragment: str) -> None:
    d = base()
    mutate(d)
    found = problems_of(d)
    assert any(p == path and fragment in m for p, m in found), found


def test_root_not_an_object() -> None:
    assert problems_of([1, 2]) == [("$", "expected an object, got array")]


def test_cycle_named_in_order() -> None:
    d = base()
    d["jobs"] += [
        {"id": "a", "duration": 1, "gpus": 0, "after": ["b"]},
        {"id": "b", "duration": 1, "gpus": 0, "after": ["c"]},
        {"id": "c", "duration": 1, "gpus": 0, "after": ["a", "j1"]},
    ]
    found = problems_of(d)
    assert found == [
        ("jobs[3].after", "cycle in after (each job waits for the next): a -> b -> c -> a")
    ]


def test_all_problems_listed_at_once() -> None:
    d = base()
    d["jobs"][0]["gpus"] = True
    d["jobs"][1]["after"] = ["nope"]
    d["jobs"][2]["model"] = "resnet"
    d["reservations"][0]["nodes"] = ["v100-7"]
    d["time_unit"] = "hours"
    d["extra"] = 1
    paths = {p for p, _ in problems_of(d)}
    assert {
        "jobs[0].gpus",
        "jobs[1].after[0]",
        "jobs[2].model",
        "reservations[0].nodes[0]",
        "time_unit",
        "extra",
    } <= paths


def test_broken_job_id_still_known_to_references() -> None:
    # j1 has a type error; j2's `after: ["j1"]` must not add an "unknown job" problem.
    d = base()
    d["jobs"][0]["weight"] = "heavy"
    assert problems_of(d) == [("jobs[0].weight", 'expected a number, got string "heavy"')]


def test_unknown_field_alone_still_cross_checked() -> None:
    d = base()
    d["jobs"][0]["gpu"] = 1
    d["jobs"][0]["gpus"] = 3
    paths = [p for p, _ in problems_of(d)]
    assert paths == ["jobs[0].gpu", "jobs[0].gpus"]


def test_malformed_json_has_line_and_column(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{\n  "name": "x",\n  "jobs": [1,\n}\n')
    with pytest.raises(InputError) as e:
        read_instance(f, catalogue=CATALOGUE)
    assert e.value.file == str(f)
    [p] = e.value.problems
    assert p.path == "$" and "line 4, column 1" in p.message


def test_nan_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "nan.json"
    d = base()
    f.write_text(json.dumps(d).replace('"count": 2', '"count": NaN'))
    with pytest.raises(InputError) as e:
        read_instance(f, catalogue=CATALOGUE)
    assert "NaN" in e.value.problems[0].message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        read_instance(tmp_path / "none.json")
    assert [(p.path, p.message) for p in e.value.problems] == [("$", "file not found")]


# ------------------------------------------------------------------ catalogue


def test_catalogue_has_eight_models_at_all_gpu_counts() -> None:
    assert sorted(CATALOGUE) == sorted(
        ["vgg16", "vgg19", "resnet18", "shufflenet_v2_x1_0", "bert", "gpt2", "a2c", "dqn"]
    )
    for prof in CATALOGUE.values():
        assert list(prof.by_gpus) == [1, 2, 4, 8, 16, 32]
        assert prof.gpu_mem_gb is not None and 0 < prof.gpu_mem_gb < 32
        assert prof.batch_size is not None
    gpt2 = CATALOGUE["gpt2"].by_gpus[8]
    assert (gpt2.iteration_ms, gpt2.stages.data, gpt2.stages.gpu, gpt2.stages.net) == (
        437,
        0.6,
        419,
        49,
    )
    assert CATALOGUE["gpt2"].gpu_mem_gb + CATALOGUE["dqn"].gpu_mem_gb <= 32  # type: ignore[operator]
    rows = catalogue_rows()
    assert [r["model"] for r in rows] == sorted(CATALOGUE)
    assert rows[0]["gpus"] == [1, 2, 4, 8, 16, 32]
    gpt2_row = next(r for r in rows if r["model"] == "gpt2")
    assert gpt2_row["iteration_ms"][gpt2_row["gpus"].index(8)] == 437


def test_catalogue_from_env_and_bad_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    good = {
        "model": "m",
        "by_gpus": {"2": {"iteration_ms": 3, "stages_ms": {"data": 1, "gpu": 1, "net": 1}}},
    }
    (tmp_path / "m.json").write_text(json.dumps(good))
    monkeypatch.setenv("PLANNER_MODELS", str(tmp_path))
    assert list(load_catalogue()) == ["m"]
    (tmp_path / "z.json").write_text(json.dumps({"model": "y", "by_gpus": {}}))
    with pytest.raises(InputError) as e:
        load_catalogue()
    assert e.value.file.endswith("z.json")
    assert {p.path for p in e.value.problems} == {"model", "by_gpus"}
