"""Read an instance (contract §2) into `planner.instance.Instance`, refusing bad input.

The orchestrator of the input layer: JSON text, then pass 1 (`planner.structure`: types,
fields, defaults, JSON paths), the model catalogue (`planner.catalogue`, only when a job
names a model that is not inline), then pass 2 (`planner.validate`: cross-references,
cycles, fit). Every problem of both passes is reported at once, in document order.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.catalogue import load_catalogue
from planner.errors import InputError, Problem
from planner.instance import Instance, Node, Profile
from planner.jsonio import read_json
from planner.schedule import Schedule, ScheduleFormatError, schedule_from_dict
from planner.structure import TOP_FIELDS, parse_structure
from planner.structure_items import Parsed
from planner.validate import cross_check


def build_instance(p: Parsed, profiles: Mapping[str, Profile]) -> Instance:
    groups = tuple(g for _, g in p.node_groups)
    nodes: list[Node] = []
    for g in groups:
        for i in range(g.count):
            nodes.append(Node(name=f"{g.name}-{i}", group=g, index=len(nodes)))
    return Instance(
        name=p.name,
        jobs=tuple(j for _, j in p.jobs),
        node_groups=groups,
        nodes=tuple(nodes),
        profiles=dict(profiles),
        pools=dict(p.pools),
        reservations=tuple(r for _, r in p.reservations),
        time_unit=p.time_unit,
        horizon=p.horizon,
        interleaving=p.interleaving,
        priority_policy=p.priority_policy,
        preemption=p.preemption,
        objective=p.objective,
        now=p.now,
        power_price=tuple(p.power_price),
    )


def instance_from_dict(
    d: Any, file: str = "<dict>", catalogue: Mapping[str, Profile] | None = None
) -> Instance:
    """Validate an instance dict and build the Instance; InputError lists every problem.

    `catalogue` (default: `planner.catalogue.load_catalogue()`, loaded only when a job names
    a model that is not inline) resolves model names; inline `profiles` take precedence.
    `Instance.profiles` holds the profiles of the models jobs use and every inline profile:
    a job that `plan replan` adds may name an inline model no job uses yet (contract §2,
    §9; tests/test_live.py).
    """
    default_name = Path(file).stem if file != "<dict>" else "instance"
    parsed, problems = parse_structure(d, default_name)
    used = sorted({j.model for _, j in parsed.jobs if j.model is not None})
    missing = [m for m in used if m not in parsed.profile_names]
    if missing and catalogue is None:
        catalogue = load_catalogue()
    available: dict[str, Profile] = dict(catalogue or {})
    available.update(parsed.profiles)
    profiles = {m: available[m] for m in used if m in available} | parsed.profiles
    instance = build_instance(parsed, profiles)
    problems += cross_check(parsed, instance, available)
    if problems:
        raise InputError(file, sorted(problems, key=_document_order))
    return instance


def _document_order(p: Problem) -> tuple[int, int]:
    """Sort key: top-level section in contract order, then item index (the sort is stable,
    so one item's structural problems stay before its cross-reference problems)."""
    head = p.path.split(".")[0]
    name, _, rest = head.partition("[")
    rank = TOP_FIELDS.index(name) if name in TOP_FIELDS else (-1 if name == "$" else 99)
    if name == "cluster" and "[" in p.path:
        rest = p.path.split("[", 1)[1]
    index = int(rest.split("]")[0]) if rest[:1].isdigit() else -1
    return rank, index


def read_instance(path: str | Path, catalogue: Mapping[str, Profile] | None = None) -> Instance:
    """Read and validate an instance file (contract §2)."""
    return instance_from_dict(raw_json(path), file=str(path), catalogue=catalogue)


def read_schedule(path: str | Path) -> Schedule:
    """Read a schedule file (contract §5), its shape checked (not its rules: that is
    `planner.verify`); InputError lists every problem with its JSON path."""
    try:
        return schedule_from_dict(read_json(path))
    except ScheduleFormatError as e:
        raise InputError(str(path), [Problem(p, m) for p, m in e.problems]) from None


def raw_json(path: str | Path) -> Any:
    """A JSON file's value; InputError (path "$") when it cannot be read or parsed
    (`planner.jsonio.read_json`: regular files only, size and nesting capped, strict UTF-8,
    no NaN or Infinity)."""
    return read_json(path)


def instance_record(instance: str | Path, schedule: str | None) -> dict[str, str]:
    """What a schedule written to `schedule` records of the instance file it was made from:
    the path as typed (`info.instance_file`) and, for a schedule written to a file, the
    path from that file's folder (`info.instance_relative`), which `recorded_instance`
    finds from any folder, and in a copy of the whole project, the copy's."""
    out = {"instance_file": str(Path(instance))}
    if schedule is not None and schedule != "-":
        here = Path(schedule).absolute().parent
        with contextlib.suppress(ValueError):  # another drive (Windows): no such path
            out["instance_relative"] = os.path.relpath(Path(instance).absolute(), here)
    return out


def recorded_instance(info: Any, schedule_path: str | Path) -> str | None:
    """The instance file a schedule records, looked for from the schedule's folder
    (`info.instance_relative`: `plan solve inst/i.json -o out/s.json` recorded only the
    typed path, not found from out/ or anywhere else, tests/test_show.py -k typed_relative),
    then as written (`info.instance_file`), as written from the schedule's folder, and by
    its name beside the schedule; None when it is not there."""
    if not isinstance(info, dict):
        return None
    recorded, relative = info.get("instance_file"), info.get("instance_relative")
    folder = Path(schedule_path).parent
    candidates = [folder / relative] if isinstance(relative, str) else []
    if isinstance(recorded, str):
        candidates += [Path(recorded), folder / recorded, folder / Path(recorded).name]
    for candidate in candidates:
        try:
            if candidate.is_file():
                return str(candidate)
        except (OSError, ValueError):  # a name too long, unreadable, or with a NUL: not there
            continue
    return None


def foreign_jobs(ids: list[Any], inst: Instance, path: str | Path) -> list[Problem]:
    """The jobs a schedule names that an instance does not hold."""
    known = inst.job_by_id
    return [
        Problem(f"jobs[{i}].id", f"job {j} is not in the instance {path}")
        for i, j in enumerate(ids)
        if isinstance(j, str) and j not in known
    ]
