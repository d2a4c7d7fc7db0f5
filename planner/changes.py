"""The changes file of `plan replan` (README, "Replanning"): what arrives, leaves, breaks,
has progressed or has finished by `now`, read and checked on its own. `planner.replan.live_instance`
applies the changes to the live state and checks them against it, reporting the file's
own problems (`Changes.problems`) with its, so one run lists them all: a part with a value
that cannot be read is left out of the checks against the live state (they would report
its absence), the other parts are checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from planner.checker import Checker, kind
from planner.errors import Problem
from planner.instance import Job
from planner.read import raw_json
from planner.structure_items import Parsed, parse_job
from planner.validate import after_cycles

CHANGE_FIELDS = ("add", "cancel", "nodes_down", "progress", "finished")


@dataclass(frozen=True)
class Changes:
    add: tuple[Job, ...] = ()
    cancel: tuple[str, ...] = ()
    nodes_down: tuple[tuple[str, int | None], ...] = ()  # (node, until or None: for good)
    progress: Mapping[str, float] = field(default_factory=dict)
    finished: Mapping[str, int] = field(default_factory=dict)  # running job -> its end
    documents: tuple[Any, ...] = ()  # the added jobs' JSON objects, for `live_document`
    problems: tuple[Problem, ...] = ()  # the file's own, reported by `live_instance`


def read_changes(path: str) -> Changes:
    """The changes file (README, "Replanning"); its problems go with the changes, and
    `live_instance` reports them with those it finds (InputError naming every one)."""
    d = raw_json(path)
    ck = Checker()
    changes = changes_from_dict(d, ck)
    return replace(changes, problems=tuple(ck.problems))


def changes_from_dict(d: Any, ck: Checker) -> Changes:
    """The changes in `d`, problems into `ck`. A part with a value that cannot be read
    (not an unknown field) is left empty: checked against the instance, it would be
    reported again as missing, or with shifted positions."""
    top = ck.obj(d, "$", CHANGE_FIELDS)
    if top is None:
        return Changes()
    fatal = ck.fatal
    parsed = Parsed()
    add = top.get("add", [])
    if not isinstance(add, list):
        ck.add("add", f"expected an array of jobs, got {kind(add)}")
        add = []
    for i, job in enumerate(add):
        if isinstance(job, dict) and "state" in job:
            ck.add(f"add[{i}].state", "an added job is waiting: it has no state")
            # read as the waiting job it is: as the state it names, it was told to give
            # `started` and `placement`, which an added job may not have
            job = {k: v for k, v in job.items() if k != "state"}
        parse_job(job, f"add[{i}]", ck, parsed)
    for p in after_cycles(parsed):  # only among added jobs: the others cannot wait for them
        ck.add(p.path, p.message)
    added = tuple(j for _, j in parsed.jobs) if ck.fatal == fatal else ()
    cancel = ck.str_list(top, "cancel", "$", default=[]) or []  # all or nothing
    fatal = ck.fatal
    down = _down_list(top.get("nodes_down", []), ck)
    if ck.fatal > fatal:  # positions would shift
        down = []
    progress: dict[str, float] = {}
    for jid, v in (ck.mapping(top.get("progress", {}), "progress") or {}).items():
        x = ck.num_value(v, f"progress.{jid}")
        if x is not None:
            progress[jid] = x
    finished: dict[str, int] = {}
    for jid, v in (ck.mapping(top.get("finished", {}), "finished") or {}).items():
        t = ck.int_value(v, f"finished.{jid}")
        if t is not None:
            finished[jid] = t
    documents = tuple(add) if added else ()
    return Changes(added, tuple(cancel), tuple(down), progress, finished, documents)


def _down_list(v: Any, ck: Checker) -> list[tuple[str, int | None]]:
    if not isinstance(v, list):
        ck.add("nodes_down", f"expected an array of node names, got {kind(v)}")
        return []
    out: list[tuple[str, int | None]] = []
    for i, item in enumerate(v):
        path = f"nodes_down[{i}]"
        if isinstance(item, dict):
            ck.obj(item, path, ("node", "until"))
            node = ck.string(item, "node", path)
            until = ck.integer(item, "until", path, default=None, nullable=True)  # null: for good
        else:
            node, until = ck.str_value(item, path), None
        if node is not None:
            out.append((node, until))
    return out
