"""planner.read / planner.validate / planner.catalogue: valid input, defaults, and every kind
of bad input reported with its JSON path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cases import BAD, base

from planner.catalogue import catalogue_rows, load_catalogue
from planner.errors import InputError
from planner.instance import DEFAULT_OVERHEAD
from planner.read import instance_from_dict, read_instance

CATALOGUE = load_catalogue()


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
    # Of the catalogue, only the models jobs use are carried.
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
    # an inline profile no job uses is kept: a job added by `plan replan` may name it
    assert inst.profiles["unused"].by_gpus[1].iteration_ms == 1


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


@pytest.mark.parametrize(
    ("mutate", "path", "fragment"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_input(mutate: Callable[[dict[str, Any]], None], path: str, fragment: str) -> None:
    d = base()
    mutate(d)
    found = problems_of(d)
    assert any(p == path and fragment in m for p, m in found), found


def _bad_now(d: dict[str, Any]) -> None:
    d["now"] = "30"
    d["jobs"][1].update(state="done", started=0, ended=20, after=[])  # j2, no GPUs


def _bad_cluster(d: dict[str, Any]) -> None:
    d["cluster"] = None


def _running_on(d: dict[str, Any], node: str) -> None:
    d["now"] = 30
    d["jobs"][2].update(state="running", started=0, placement=[{"node": node, "gpus": [0]}])


def _bad_cluster_live(d: dict[str, Any]) -> None:
    _running_on(d, "small-0")
    d["cluster"] = None


def _bad_node_group_live(d: dict[str, Any]) -> None:
    _running_on(d, "small-0")  # the good group: its node is known all the same
    d["cluster"]["nodes"][0]["gpus"] = "x"


def _model_and_duration(d: dict[str, Any]) -> None:
    d["jobs"][1]["model"] = "gpt2"  # j2: a duration and no GPUs


def _elastic_model_and_duration(d: dict[str, Any]) -> None:
    d["jobs"][0].update(gpus=[8, 4], duration=5)  # j1: a model, GPU counts to choose from


@pytest.mark.parametrize(
    ("mutate", "only"),
    [
        (_bad_now, ("now", 'expected an integer, got string "30"')),
        (_bad_cluster, ("cluster", "expected an object, got null")),
        (_bad_cluster_live, ("cluster", "expected an object, got null")),
        (_bad_node_group_live, ("cluster.nodes[0].gpus", 'expected an integer, got string "x"')),
        (
            _model_and_duration,
            ("jobs[1].duration", "a job has either model + iterations or a duration, not both"),
        ),
        (
            _elastic_model_and_duration,
            ("jobs[0].duration", "a job has either model + iterations or a duration, not both"),
        ),
    ],
    ids=[
        "now",
        "cluster",
        "cluster-live",
        "node-group-live",
        "model-and-duration",
        "elastic-model-and-duration",
    ],
)
def test_a_bad_value_brings_no_problems_that_only_follow_from_it(
    mutate: Callable[[dict[str, Any]], None], only: tuple[str, str]
) -> None:
    # a bad `now` was read as 0, so a job ended at 20 was "after now 0"; a null cluster
    # has no pools, so every demand named an "unknown pool"; a job with a model and a
    # duration got the model's rules too ("gpus: 0 is less than 1", "iterations: missing");
    # with a bad cluster, a running job's placement named an "unknown node"
    d = base()
    d["reservations"] = [r for r in d["reservations"] if "pool" not in r]
    mutate(d)
    assert problems_of(d) == [only]


def test_a_null_duration_beside_a_model_is_not_given() -> None:
    """As a null `model` beside a duration is: no "not both" problem."""
    d = base()
    d["jobs"][0]["duration"] = None
    inst = instance_from_dict(d, catalogue=CATALOGUE)
    assert inst.job_by_id["j1"].model == "gpt2"


def test_a_null_duration_without_a_model_is_a_missing_one() -> None:
    # "expected an integer, got null null" before
    d = base()
    d["jobs"][1].update(model=None, duration=None)
    assert problems_of(d) == [
        (
            "jobs[1].duration",
            "required field is missing (a job has either model + iterations + gpus, or "
            "duration + gpus)",
        )
    ]


def test_a_null_where_an_integer_is_required_is_named_once() -> None:
    # "expected an integer, got null null" before
    d = base()
    d["jobs"][0]["iterations"] = None
    assert problems_of(d) == [("jobs[0].iterations", "expected an integer, got null")]


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


def test_a_job_with_a_bad_field_still_has_its_after_checked() -> None:
    # its unknown `after` was told only once the duration was mended
    d = base()
    d["jobs"][0].update(weight=-1, after=[7, "nope"])
    assert problems_of(d) == [
        ("jobs[0].weight", "-1 must be >= 0"),
        ("jobs[0].after[0]", "expected a non-empty string, got integer 7"),
        ("jobs[0].after[1]", "unknown job 'nope'"),
    ]


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


def test_a_key_twice_in_one_object_is_refused(tmp_path: Path) -> None:
    # the parser kept the last value silently
    path = tmp_path / "dup.json"
    doc = '{"version": 1, "cluster": {"nodes": [{"name": "n", "count": 1, "gpus": 2}]}, '
    path.write_text(doc + '"jobs": [{"id": "a", "duration": 5, "gpus": 1, "gpus": 2}]}')
    with pytest.raises(InputError) as e:
        read_instance(path)
    problems = [(p.path, p.message) for p in e.value.problems]
    assert problems == [("jobs[0].gpus", 'key "gpus" appears twice in the object')]


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
