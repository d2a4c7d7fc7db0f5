"""What the rule checks share: the violation type, a job's segments as pieces, group
members, and small predicates (contract §5)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from planner.instance import Instance, Job
from planner.schedule import Assignment, Segment


@dataclass(frozen=True)
class Violation:
    rule: str  # "R1".."R11"
    message: str
    job: str | None = None
    node: str | None = None
    gpu: int | None = None
    time: int | None = None

    def __str__(self) -> str:
        where = []
        if self.job is not None:
            where.append(f"job {self.job}")
        if self.node is not None:
            where.append(f"node {self.node}")
        if self.gpu is not None:
            where.append(f"GPU {self.gpu}")
        if self.time is not None:
            where.append(f"t={self.time}")
        head = f"{self.rule} " + (", ".join(where) + ": " if where else "")
        return head + self.message


def is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def zero_length(inst: Instance, job: Job) -> bool:
    if job.duration is not None:
        return job.duration == 0
    return not job.iterations


def members_of(pieces: list[Assignment]) -> dict[str, list[Assignment]]:
    """Group label -> its members' segments, from the segments' `group`, in job-id order."""
    out: dict[str, list[Assignment]] = defaultdict(list)
    for p in sorted(pieces, key=lambda p: p.id):
        if p.group is not None:
            out[p.group].append(p)
    return dict(out)


def pieces_of(a: Assignment) -> list[Assignment]:
    """A job's segments as one-segment assignments, so per-segment rules read them alike."""
    return [Assignment(a.id, g.start, g.end, g.placement, g.group) for g in a.pieces()]


def span_of(a: Assignment) -> Assignment:
    """The job from its first segment's start to its last segment's end (contract §8)."""
    segs = a.pieces()
    return replace(a, start=segs[0].start, end=segs[-1].end)


Key = tuple[str, int]  # a segment: (job id, its start)


def piece_key(p: Assignment) -> Key:
    return (p.id, p.start)


# --- a segment's GPU count (contract §12: R3, R5) ----------------------------------


def piece_count(a: Assignment | Segment) -> int:
    """The GPU count a segment runs at: the size of its placement (contract §12)."""
    return sum(len(set(p.gpus)) for p in a.placement)


def gpus_text(count: int) -> str:
    """ "1 GPU", "4 GPUs": `planner.errors.gpus_phrase`'s wording, kept here because the
    verifier imports only the data it checks (tests/test_import_graph.py)."""
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def job_for(inst: Instance, a: Assignment) -> Job:
    """The job as it runs in segment `a`: at the segment's count when that is one of an
    elastic job's counts; else the job itself (R5 reports a count it may not run at)."""
    j = inst.job_by_id[a.id]
    c = piece_count(a)
    return j.at_count(c) if j.elastic and c in j.gpu_counts else j


# --- valid GPU indices (R6, R7, R10) ------------------------------------------------


def valid_gpus(inst: Instance, a: Assignment) -> dict[str, set[int]]:
    """Node -> the segment's GPU indices that exist there (R5 reports the others)."""
    out: dict[str, set[int]] = defaultdict(set)
    for p in a.placement:
        node = inst.node_by_name.get(p.node)
        if node is None:
            continue
        out[p.node].update(g for g in p.gpus if is_int(g) and 0 <= g < node.gpus)
    return out


def some_names(names: Sequence[str], limit: int = 8) -> str:
    """A readable list of names, cut after `limit` (big overloads name thousands)."""
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")
