"""The live instance `plan replan --live` writes (contract §9): the instance's own
document with each job's state at `now`, the changes' added jobs, and the reservations
as the live instance keeps them, so that `plan check` takes it with the new schedule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.changes import Changes
from planner.instance import Instance, Live, Reservation
from planner.live.state import STATE_FIELDS
from planner.replan import DOWN


def live_document(
    raw: Mapping[str, Any], live: Instance, changes: Changes | None
) -> dict[str, Any]:
    """The live instance as an instance document (contract §9), from the instance's own
    document `raw`: what `plan check` takes with the replanned schedule."""
    doc = dict(raw)
    doc["now"] = live.now
    jobs = []
    for j in [*raw.get("jobs", []), *(changes.documents if changes else ())]:
        job = live.job_by_id.get(j["id"])
        if job is None:
            continue  # cancelled
        out = {k: v for k, v in j.items() if k not in STATE_FIELDS}
        if not job.demand:
            out.pop("demand", None)  # a done job that ran in several segments (_state_at)
        if job.live is not None:
            out.update(_state_fields(job.live))
        for name, left in (("iterations", job.iterations), ("duration", job.duration)):
            if left is not None and name in out and out[name] != left:
                out[name] = left  # a stopped job's work left (_left)
        jobs.append(out)
    doc["jobs"] = jobs
    own = {r.get("id") for r in raw.get("reservations", []) if isinstance(r, dict)}
    down = [r for r in live.reservations if r.id.startswith(DOWN) and r.id not in own]
    doc["reservations"] = [*_kept_docs(raw, live), *map(_down_doc, down)]
    if live.horizon is not None:
        doc["horizon"] = live.horizon  # a node down for good may set or move it (_for_good)
    return doc


def _kept_docs(raw: Mapping[str, Any], live: Instance) -> list[Any]:
    """The document's reservations as the live instance keeps them (`_released`: without
    cancelled jobs in `for.jobs`, and without those that admitted only them; `_for_good`:
    an earlier replan's node down for good, to the new end)."""
    by_id = {r.id: r for r in live.reservations}
    out = []
    for r in raw.get("reservations", []):
        kept = by_id.get(r.get("id"))
        if kept is None:
            continue
        if kept.end != r.get("end"):
            r = {**r, "end": kept.end}
        admits = r.get("for")
        if isinstance(admits, dict):
            for key, left in (("jobs", kept.admits.jobs), ("tenants", kept.admits.tenants)):
                if key in admits:
                    admits = {**admits, key: [x for x in admits[key] if x in left]}
            r = {**r, "for": admits}
        out.append(r)
    return out


def _state_fields(live: Live) -> dict[str, Any]:
    out: dict[str, Any] = {"state": live.state, "started": live.started}
    if live.ended is not None:
        out["ended"] = live.ended
    if live.placement:
        out["placement"] = [{"node": n, "gpus": list(g)} for n, g in live.placement]
    if live.group is not None:
        out["group"] = live.group
    if live.progress is not None:
        out["progress"] = live.progress
    return out


def _down_doc(r: Reservation) -> dict[str, Any]:
    return {"id": r.id, "start": r.start, "end": r.end, "nodes": list(r.nodes), "for": None}
