"""PSPLIB single-mode RCPSP (`.sm`) files to the contract's instance JSON.

The library and its credit: README, "Data and credits". Each renewable resource R1..Rk
becomes a cluster pool with its capacity; each non-dummy activity becomes an
explicit-duration job `j<n>` with `gpus: 0`, its resource requests as `demand` and its
predecessors in `after`.

The supersource and supersink (activities with duration 0 and no requests, first and
last) are dropped: they constrain nothing, and the makespan (max end) is the same.
The cluster has no nodes: the project needs only its pools.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from planner.importers import (
    WHOLE,
    FormatError,
    not_whole,
    project_instance,
    shown,
    within_limit,
)
from planner.precedence import cycles

# `R 1  R 2 ...` after `duration` and in RESOURCEAVAILABILITIES; N (nonrenewable) and D
# (doubly constrained) columns are multi-mode features this importer does not model.
RESOURCES = re.compile(r"(?:\s*R\s*[0-9]+)*\s*")


class PsplibFormatError(FormatError):
    pass


def _section(lines: list[str], title: str) -> int:
    for i, line in enumerate(lines):
        if line.strip().upper().startswith(title):
            return i
    raise PsplibFormatError("$", f"no {title!r} section: not a PSPLIB .sm file")


def _line(lines: list[str], i: int, where: str, expected: str) -> str:
    if i >= len(lines):
        raise PsplibFormatError(f"line {i + 1}", f"the file ends in {where}: expected {expected}")
    return lines[i]


def _ints(line: str, i: int, field: Callable[[int], str]) -> list[int]:
    """The whole numbers of line `i` (0-based); `field(k)` names field k (1-based)."""
    out = []
    for k, token in enumerate(line.split(), 1):
        if not WHOLE.fullmatch(token):
            raise PsplibFormatError(f"line {i + 1}, field {k}", not_whole(field(k), token))
        out.append(int(token))
    return out


def _rows(
    lines: list[str], i: int, n_jobs: int, where: str, field: Callable[[int], str]
) -> dict[int, tuple[int, list[int]]]:
    """The lines of jobs 1..n_jobs from line `i` on, in order and each once, as
    {job: (line index, fields)}, then the section's closing line of '*'. A dropped,
    repeated or extra line is an error: read on, it would take the next section's
    numbers as jobs."""
    rows: dict[int, tuple[int, list[int]]] = {}
    for job in range(1, n_jobs + 1):
        while _line(lines, i, where, f"the line of job {job} of {n_jobs}").strip() == "":
            i += 1
        first = lines[i].split()[0]
        if not WHOLE.fullmatch(first):
            raise PsplibFormatError(
                f"line {i + 1}",
                f"{where} ends after {job - 1} of the file's {n_jobs} jobs "
                f"(found {shown(lines[i].strip())})",
            )
        nums = _ints(lines[i], i, field)
        if nums[0] != job:
            raise PsplibFormatError(
                f"line {i + 1}, field 1",
                f"expected job {job}, found job {nums[0]}: {where} lists jobs 1..{n_jobs} in "
                "order, each once",
            )
        if len(nums) < 2 or nums[1] != 1:
            found = f"{field(2)} {nums[1]}" if len(nums) >= 2 else f"no {field(2)}"
            raise PsplibFormatError(
                f"line {i + 1}, field 2",
                f"job {job} has {found}: only single-mode .sm files (1) are supported",
            )
        rows[job] = (i, nums)
        i += 1
    while _line(lines, i, where, "a line of '*' after the last job").strip() == "":
        i += 1
    if not lines[i].lstrip().startswith("*"):
        raise PsplibFormatError(
            f"line {i + 1}",
            f"expected the end of {where} (a line of '*') after job {n_jobs}: the file "
            f"declares {n_jobs} jobs (supersource and supersink included)",
        )
    return rows


def parse_sm(text: str, name: str = "psplib") -> dict[str, Any]:
    """Parse a single-mode `.sm` file into an instance dict (objective: makespan).
    PsplibFormatError names the line (and field) of the first thing wrong."""
    lines = text.splitlines()
    n_jobs = _job_count(lines)
    succ, succ_line = _successors(lines, n_jobs)
    _no_cycle(succ, succ_line)
    res_names, dur, req, req_line = _requests(lines, n_jobs)
    caps, caps_line = _capacities(lines, res_names)
    for j, asks in req.items():  # the instance would refuse it, naming a JSON path
        for k, (q, cap) in enumerate(zip(asks, caps, strict=True)):
            if q > cap:
                raise PsplibFormatError(
                    f"line {req_line[j] + 1}, field {4 + k}",
                    f"job {j} requests {q} of {res_names[k]}, more than the {cap} available "
                    f"(line {caps_line + 1})",
                )

    def dummy(j: int) -> bool:
        return dur[j] == 0 and not any(req[j]) and j in (1, n_jobs)

    pred: dict[int, list[int]] = {j: [] for j in dur}
    for a, bs in succ.items():
        for b in bs:
            pred[b].append(a)
    jobs = []
    for j in sorted(dur):
        if dummy(j):
            continue
        demand = {r: q for r, q in zip(res_names, req[j], strict=True) if q}
        entry: dict[str, Any] = {"id": f"j{j}", "duration": dur[j], "gpus": 0, "demand": demand}
        after = [f"j{a}" for a in sorted(_through_dummies(pred, j, dummy))]
        if after:
            entry["after"] = after
        jobs.append(entry)
    return project_instance(name, dict(zip(res_names, caps, strict=True)), jobs)


def _through_dummies(pred: dict[int, list[int]], j: int, dummy: Callable[[int], bool]) -> set[int]:
    """The jobs `j` waits for, a dropped dummy standing for the jobs it waits for (in a
    standard file the source waits for none; a file whose dummy has predecessors and
    successors keeps their order)."""
    out: set[int] = set()
    todo, seen = list(pred[j]), set()
    while todo:
        a = todo.pop()
        if a in seen:
            continue
        seen.add(a)
        if dummy(a):
            todo.extend(pred[a])
        else:
            out.add(a)
    return out


def _job_count(lines: list[str]) -> int:
    """The 'jobs (incl. supersource/sink )' line's number."""
    for i, line in enumerate(lines):
        if line.lower().startswith("jobs (incl. supersource/sink )"):
            value = line.split(":", 1)[1].split() if ":" in line else []
            if len(value) != 1 or not WHOLE.fullmatch(value[0]) or int(value[0]) < 1:
                raise PsplibFormatError(f"line {i + 1}", "expected the number of jobs after ':'")
            return int(value[0])
    raise PsplibFormatError("$", "no 'jobs (incl. supersource/sink )' line: not a PSPLIB .sm file")


def _successors(lines: list[str], n_jobs: int) -> tuple[dict[int, list[int]], dict[int, int]]:
    """PRECEDENCE RELATIONS: each job's successors, and the index of its line."""
    where = "PRECEDENCE RELATIONS"
    i = _section(lines, "PRECEDENCE RELATIONS:") + 1
    if not _line(lines, i, where, "its header").lower().startswith("jobnr."):
        raise PsplibFormatError(
            f"line {i + 1}", "expected the header 'jobnr.  #modes  #successors  successors'"
        )
    names = {1: "job number", 2: "mode count", 3: "successor count"}
    prec = _rows(lines, i + 1, n_jobs, where, lambda k: names.get(k, "successor"))
    succ: dict[int, list[int]] = {}
    for job, (i, nums) in prec.items():
        listed = nums[3:]
        if len(nums) < 3 or len(listed) != nums[2]:
            declared = f"declares {nums[2]}" if len(nums) >= 3 else "has no successor count"
            raise PsplibFormatError(
                f"line {i + 1}, field 3",
                f"job {job} {declared} successor(s) but lists {len(listed)}",
            )
        for k, b in enumerate(listed, 4):
            if not 1 <= b <= n_jobs:
                raise PsplibFormatError(
                    f"line {i + 1}, field {k}", f"successor {b} is not a job (1..{n_jobs})"
                )
        succ[job] = listed
    return succ, {job: i for job, (i, _) in prec.items()}


def _no_cycle(succ: dict[int, list[int]], line: dict[int, int]) -> None:
    """Refuse a cycle of successors on the line and field of the one that closes it (the
    instance would refuse it too, naming a JSON path and not the line)."""
    found = cycles(succ)
    if found:
        loop, a = found[0], found[0][-1]
        raise PsplibFormatError(
            f"line {line[a] + 1}, field {succ[a].index(loop[0]) + 4}",
            f"successor {loop[0]} of job {a} closes a cycle of successors: "
            + " -> ".join(str(x) for x in [*loop, loop[0]]),
        )


def _requests(
    lines: list[str], n_jobs: int
) -> tuple[list[str], dict[int, int], dict[int, list[int]], dict[int, int]]:
    """REQUESTS/DURATIONS: the resources' names, each job's duration and requests, and the
    index of its line."""
    where = "REQUESTS/DURATIONS"
    i = _section(lines, "REQUESTS/DURATIONS:") + 1
    header = _line(lines, i, where, "its header")
    head, _, rest = header.partition("duration")
    if not head.lower().startswith("jobnr.") or not RESOURCES.fullmatch(rest):
        raise PsplibFormatError(
            f"line {i + 1}",
            "expected the header 'jobnr. mode duration R 1 R 2 ...' (renewable resources only)",
        )
    res_names = [f"R{n}" for n in re.findall(r"[0-9]+", rest)]
    twice = sorted({r for r in res_names if res_names.count(r) > 1}, key=res_names.index)
    if twice:  # one pool of that name would take the second column's requests alone
        raise PsplibFormatError(f"line {i + 1}", f"resource {twice[0]} is listed twice")
    if not _line(lines, i + 1, where, "a line of '-'").lstrip().startswith("-"):
        raise PsplibFormatError(f"line {i + 2}", "expected a line of '-' under the header")
    names = {1: "job number", 2: "mode", 3: "duration"}
    names |= {k: f"request of {r}" for k, r in enumerate(res_names, 4)}
    rows = _rows(lines, i + 2, n_jobs, where, lambda k: names.get(k, "field"))
    dur: dict[int, int] = {}
    req: dict[int, list[int]] = {}
    for job, (i, nums) in rows.items():
        if len(nums) != 3 + len(res_names):
            raise PsplibFormatError(
                f"line {i + 1}",
                f"job {job}: expected {3 + len(res_names)} fields (job, mode, duration and "
                f"{len(res_names)} resource requests), found {len(nums)}",
            )
        within_limit(nums[2], f"line {i + 1}, field 3", f"job {job}: duration", PsplibFormatError)
        dur[job] = nums[2]
        req[job] = nums[3:]
    return res_names, dur, req, {job: i for job, (i, _) in rows.items()}


def _capacities(lines: list[str], res_names: list[str]) -> tuple[list[int], int]:
    """RESOURCEAVAILABILITIES: one capacity per resource of REQUESTS/DURATIONS, and the
    index of their line."""
    where = "RESOURCEAVAILABILITIES"
    i = _section(lines, "RESOURCEAVAILABILITIES:") + 1
    header = _line(lines, i, where, "its header")
    if not RESOURCES.fullmatch(header) or re.findall(r"[0-9]+", header) != [
        n[1:] for n in res_names
    ]:
        raise PsplibFormatError(
            f"line {i + 1}",
            f"expected the header {'  '.join(n[0] + ' ' + n[1:] for n in res_names)!r}, the "
            "resources of REQUESTS/DURATIONS",
        )
    values = _line(lines, i + 1, where, "the capacities")
    names = {k: f"capacity of {r}" for k, r in enumerate(res_names, 1)}
    caps = _ints(values, i + 1, lambda k: names.get(k, "field"))
    if len(caps) != len(res_names):
        raise PsplibFormatError(
            f"line {i + 2}",
            f"expected {len(res_names)} capacities (one per resource), found {len(caps)}",
        )
    for k, (cap, name) in enumerate(zip(caps, res_names, strict=True), 1):
        within_limit(cap, f"line {i + 2}, field {k}", f"capacity of {name}", PsplibFormatError)
    return caps, i + 1
