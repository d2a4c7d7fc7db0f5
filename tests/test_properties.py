"""Property-based tests (hypothesis): generated valid instances get schedules the verifier
accepts from every solver; mutated instances and schedules end in exit 0, 1 or 2, never
in a traceback. Example counts are small so the suite stays quick."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import EXACT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.cli import main
from planner.online import POLICIES, infeasible_reason, make_policy
from planner.read import instance_from_dict
from planner.schedule import schedule_from_dict
from planner.simulate import inapplicable, result_to_schedule_dict, simulate
from planner.solvers import GREEDY_RULES, SolveOptions, solve
from planner.verify import verify

HOSTILE = Path(__file__).resolve().parent / "hostile" / "files"
MODELS = ("bert", "resnet18", "vgg16", "gpt2", "dqn")
QUICK = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def instances(
    draw: st.DrawFn, max_jobs: int = 6, min_jobs: int = 0, crowded: bool = False
) -> dict[str, Any]:
    """A valid instance: nodes of 8 GPUs, profiled and explicit jobs, releases, weights,
    priorities, dependencies on earlier jobs, a power pool, optional interleaving,
    preemption with a restart cost, and a maintenance window on the first node.
    `crowded`: one node and releases within 30 units, so that jobs wait and interleave."""
    n_jobs = draw(st.integers(min_jobs, max_jobs))
    jobs: list[dict[str, Any]] = []
    for i in range(n_jobs):
        job: dict[str, Any] = {"id": f"j{i}", "gpus": draw(st.sampled_from([1, 2, 4, 8]))}
        if draw(st.booleans()):
            job["model"] = draw(st.sampled_from(MODELS))
            job["iterations"] = draw(st.integers(1, 3000))
        else:
            job["duration"] = draw(st.integers(1, 500))
            job["gpus"] = draw(st.sampled_from([0, job["gpus"]]))
        job["release"] = draw(st.integers(0, 30 if crowded else 300))
        job["weight"] = draw(st.sampled_from([0, 0.5, 1, 3]))
        job["priority"] = draw(st.integers(0, 2))
        job["demand"] = {"power_kw": draw(st.sampled_from([0, 0.5, 2]))}
        if i and draw(st.booleans()):
            pred = draw(st.integers(0, i - 1))
            job["after"] = [f"j{pred}"]
            # R9 with a dependency on a lower-priority job is infeasible (contract §5):
            # a successor never outranks its predecessor here.
            job["priority"] = min(job["priority"], jobs[pred]["priority"])
        jobs.append(job)
    doc: dict[str, Any] = {
        "name": "generated",
        "cluster": {
            "nodes": [{"name": "n", "count": 1 if crowded else draw(st.integers(1, 3)), "gpus": 8}],
            "pools": {"power_kw": draw(st.sampled_from([2, 5, 100]))},
        },
        "policy": {"priority": draw(st.sampled_from(["strict", "none"]))},
        "jobs": jobs,
    }
    if draw(st.booleans()):
        # Muri's measured overhead, or one so small that a group's work takes less than
        # the ceiling's tolerance (durations.ceil_units: a unit, never 0)
        overhead = draw(st.sampled_from([1.33 / 1.015, 0.5, 1e-6, 1e-15]))
        doc["interleaving"] = {"enabled": True, "max_group": 2, "overhead": {"2": overhead}}
    if draw(st.booleans()):
        doc["policy"]["preemption"] = {"enabled": True, "restart": draw(st.integers(0, 20))}
    if draw(st.booleans()):
        start = draw(st.integers(0, 200))
        window = {"id": "maintenance", "start": start, "end": start + draw(st.integers(1, 100))}
        doc["reservations"] = [window | {"nodes": ["n-0"]}]
    return doc


@QUICK
@given(instances())
def test_every_greedy_rule_passes_verify(doc: dict[str, Any]) -> None:
    inst = instance_from_dict(doc, file="<generated>")
    for rule in GREEDY_RULES:
        sched = solve(inst, f"greedy:{rule}", SolveOptions())
        assert sched.status in ("optimal", "feasible"), (rule, sched.info)
        assert {a.id for a in sched.jobs} == {j.id for j in inst.jobs}
        assert verify(inst, sched) == [], rule


@QUICK
@given(instances(crowded=True))
def test_every_simulation_policy_passes_verify(doc: dict[str, Any]) -> None:
    inst = instance_from_dict(doc, file="<generated>")
    for name in POLICIES:
        policy = make_policy(name)
        if inapplicable(inst, policy) is not None or infeasible_reason(inst) is not None:
            continue
        res = simulate(inst, policy)
        sched = schedule_from_dict(result_to_schedule_dict(inst, res))
        assert verify(inst, sched) == [], name


@settings(max_examples=6, deadline=None)
@given(instances(max_jobs=3, min_jobs=1))
def test_exact_solvers_and_auto_pass_verify_on_tiny_instances(doc: dict[str, Any]) -> None:
    inst = instance_from_dict(doc, file="<generated>")
    for spec in (*EXACT, "auto"):
        name, _, backend = spec.partition(":")
        opts = SolveOptions(time_limit=1.0, workers=1, milp_backend=backend or "cbc")
        sched = solve(inst, name, opts)
        assert sched.status in ("optimal", "feasible"), (spec, sched.info)
        assert verify(inst, sched) == [], spec


def run_cli(folder: Path, *args: str) -> int:
    old = Path.cwd()
    os.chdir(folder)
    try:
        r = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    assert r.exit_code in (0, 1, 2), r.output
    return r.exit_code


def byte_edits() -> st.SearchStrategy[list[tuple[str, float, bytes]]]:
    edit = st.tuples(
        st.sampled_from(["replace", "insert", "delete"]),
        st.floats(0, 1),
        st.binary(min_size=1, max_size=4)
        | st.sampled_from([b"[", b"{", b'"', b"NaN", b"1e999", b"-", b"\xff", b"\x00"]),
    )
    return st.lists(edit, min_size=1, max_size=4)


def mutate_bytes(data: bytes, edits: list[tuple[str, float, bytes]]) -> bytes:
    for op, where, chunk in edits:
        i = int(where * len(data))
        if op == "replace":
            data = data[:i] + chunk + data[i + len(chunk) :]
        elif op == "insert":
            data = data[:i] + chunk + data[i:]
        else:
            data = data[:i] + data[i + len(chunk) :]
    return data


@QUICK
@given(byte_edits(), byte_edits())
def test_byte_mutations_never_crash(tmp_path: Path, inst_edits: Any, sched_edits: Any) -> None:
    folder = tmp_path
    (folder / "i.json").write_bytes(mutate_bytes((HOSTILE / "good.json").read_bytes(), inst_edits))
    (folder / "s.json").write_bytes(
        mutate_bytes((HOSTILE / "good.schedule.json").read_bytes(), sched_edits)
    )
    run_cli(folder, "validate", "i.json")
    run_cli(folder, "check", str(HOSTILE / "good.json"), "s.json")
    run_cli(folder, "check", "i.json", "s.json")
    run_cli(folder, "solve", "i.json", "--solver", "greedy", "-o", "out.json")


HOSTILE_VALUES = st.sampled_from(
    [None, -1, 0, 1e308, -1e308, 10**30, 2.5, True, "", "x", [], {}, [[[]]], {"a": {}}]
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside `doc`."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, (*prefix, i))
    return out


def set_at(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@QUICK
@given(st.data())
def test_structural_mutations_never_crash(tmp_path: Path, data: st.DataObject) -> None:
    for name, target in (("good.json", "i.json"), ("good.schedule.json", "s.json")):
        doc = json.loads((HOSTILE / name).read_text())
        where = data.draw(st.sampled_from(paths(doc)))
        value = data.draw(HOSTILE_VALUES)
        delete = bool(where) and data.draw(st.booleans())
        (tmp_path / target).write_text(json.dumps(set_at(doc, where, value, delete)))
    run_cli(tmp_path, "validate", "i.json")
    run_cli(tmp_path, "check", str(HOSTILE / "good.json"), "s.json")
    run_cli(tmp_path, "check", "i.json", "s.json")
    run_cli(tmp_path, "export", "s.json", "--gantt", "g.csv", "--instance", "i.json")
    run_cli(tmp_path, "solve", "i.json", "--solver", "greedy:fifo", "-o", "out.json")


IMPORTS = (
    ("psplib", HOSTILE / "psplib-good.sm"),
    ("jobshop", HOSTILE.parent.parent.parent / "instances" / "jobshop" / "ft06.jss"),
    ("muri", HOSTILE / "trace.csv"),
)


@QUICK
@given(st.sampled_from(IMPORTS), byte_edits())
def test_mutated_import_files_never_crash(
    tmp_path: Path, source: tuple[str, Path], edits: Any
) -> None:
    kind, path = source
    (tmp_path / "in.txt").write_bytes(mutate_bytes(path.read_bytes(), edits))
    code = run_cli(tmp_path, "import", kind, "in.txt", "-o", "out.json")
    assert code in (0, 2)
    if code == 0:
        run_cli(tmp_path, "validate", "out.json")


def true_depth(v: Any) -> int:
    if isinstance(v, dict):
        return 1 + max((true_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((true_depth(x) for x in v), default=0)
    return 0


TRICKY_TEXT = st.text(alphabet='[]{}"\\ \n/aé\u2028', max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES, st.booleans())
def test_nesting_scan_matches_the_parsed_depth(value: Any, ascii_only: bool) -> None:
    from planner.jsonio import nesting_depth

    text = json.dumps(value, ensure_ascii=ascii_only)
    assert nesting_depth(text) == true_depth(value)
