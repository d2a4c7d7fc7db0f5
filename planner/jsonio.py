"""Reading and writing the tool's text files safely: one reader for every JSON and CSV
input (instances, schedules, bench results, Muri traces) and one JSON writer.

A hostile file must end in a clear InputError (exit 2), never in a traceback or in
reading without end. So a file must be a regular file of at most `MAX_FILE_BYTES`, be
valid UTF-8 (the error names the byte offset), and JSON must nest at most `MAX_DEPTH`
deep (checked by a linear scan before `json.loads`, whose recursion would fail first)
and contain no NaN or Infinity, which are not JSON numbers, and no lone surrogate escape
(`"\\ud800"`: Python reads it, but no UTF-8 output can hold it, so an id or name carrying it
failed at the first file written). The limits are in the README ("What we chose where the
contract is silent").
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from planner.checker import join
from planner.errors import InputError, Problem

MAX_FILE_BYTES = 256 * 1024 * 1024  # 256 MiB: a 100k-job instance is about 20 MB
MAX_DEPTH = 64  # the contract's documents nest at most 6 deep


def _fail(file: str, message: str) -> InputError:
    return InputError(file, [Problem("$", message)])


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; InputError if it is missing, not a regular file, or too large."""
    file = str(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before fstat refuses it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _fail(file, "not a regular file (a directory, device or pipe)")
            if st.st_size > MAX_FILE_BYTES:
                raise _fail(file, f"larger than the {MAX_FILE_BYTES // 2**20} MiB limit")
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise _fail(file, "file not found") from None
    except IsADirectoryError:
        raise _fail(file, "not a regular file (a directory, device or pipe)") from None
    except OSError as e:
        raise _fail(file, f"cannot read the file: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:  # grew while being read
        raise _fail(file, f"larger than the {MAX_FILE_BYTES // 2**20} MiB limit")
    return data


def decode(data: bytes, file: str) -> str:
    """Strict UTF-8 (a leading byte-order mark is dropped); the error names the offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _fail(file, f"not valid UTF-8 at byte offset {e.start}") from None


def read_text(path: str | Path) -> str:
    """A text file read safely (see the module docstring)."""
    return decode(read_bytes(path), str(path))


_ESCAPE = re.compile(rb"\\.", re.DOTALL)  # a backslash and the character it escapes
_DELETE = bytes(b for b in range(256) if b not in b'[]{}"')
_QUOTED = re.compile(rb'"[^"]*"')
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside strings, without recursion and at C speed:
    drop escape pairs, keep only brackets and quotes, drop the empty strings `""` this
    leaves (removing two adjacent quotes keeps every other quote's parity), then the rare
    strings holding brackets; the running depth is accumulated over what is left.
    Unbalanced text gets some count; `json.loads` reports it afterwards."""
    data = _ESCAPE.sub(b"", text.encode("utf-8", "surrogatepass"))
    data = data.translate(None, _DELETE).replace(b'""', b"")
    if b'"' in data:
        data = _QUOTED.sub(b"", data).replace(b'"', b"")  # and an unterminated one
    return max(itertools.accumulate(map(_STEP.__getitem__, data)), default=0)


class _Refused:
    """What the parser met where no value may be (NaN, Infinity, a number too large for a
    float, a key given twice): left in its place, so that the error can name its JSON path
    (the parser's hooks are not told where they are)."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


class _Hooks:
    """The parser's hooks for one document; `refused` counts what they left in it."""

    def __init__(self) -> None:
        self.refused = 0

    def refuse(self, why: str) -> _Refused:
        self.refused += 1
        return _Refused(why)

    def constant(self, name: str) -> Any:
        return self.refuse(f"{name} is not a JSON number")

    def number(self, text: str) -> Any:
        value = float(text)
        if math.isinf(value):  # 1e999 parses to Infinity
            return self.refuse(f"{text} is too large for a number")
        return value

    def unique_keys(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """An object whose keys are all different: with a key twice, which value holds
        would be a guess (the parser keeps the last)."""
        out = dict(pairs)
        if len(out) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    out[key] = self.refuse(f"key {json.dumps(key)} appears twice in the object")
                seen.add(key)
        return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and any("\ud800" <= c <= "\udfff" for c in text)


def _unwritable(value: Any) -> str | None:
    """Why a parsed value may not stand in a document, or None."""
    if isinstance(value, _Refused):
        return value.why
    if isinstance(value, str) and _has_surrogate(value):
        return "a lone surrogate escape (\\ud800-\\udfff unpaired): no UTF-8 text holds it"
    return None


def _found(data: Any) -> list[Problem]:
    """Every key and leaf value `_unwritable` refuses, at its JSON path, in document order.
    A path is built only for what is refused (from a chain of (parent, step) pairs)."""
    out: list[Problem] = []
    todo: list[tuple[Any, Any]] = [(data, None)]
    while todo:
        value, trail = todo.pop()
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                todo += ((item, (trail, key)), (key, (trail, key)))
        elif isinstance(value, list):
            todo.extend((item, (trail, i)) for i, item in reversed(list(enumerate(value))))
        elif why := _unwritable(value):
            out.append(Problem(_path(trail), why))
    return out


def _path(trail: Any) -> str:
    steps = []
    while trail is not None:
        trail, step = trail
        steps.append(step)
    at = "$"
    for step in reversed(steps):
        at = f"{at}[{step}]" if isinstance(step, int) else join(at, step)
    return at


# the C encoder without ASCII escapes: text with a lone surrogate fails to encode
_AS_TEXT = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _encodable(data: Any) -> bool:
    try:
        _AS_TEXT(data).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def loads(text: str, file: str) -> Any:
    """Parse JSON text from `file`; every problem is an InputError naming the file."""
    if nesting_depth(text) > MAX_DEPTH:
        raise _fail(file, f"JSON nested deeper than {MAX_DEPTH} levels")
    hooks = _Hooks()
    data = _parse(text, file, hooks)
    # rare: only then walk the document (an escaped emoji is a surrogate pair, which
    # encodes, so the encoder answers first: 3x faster than the walk)
    if hooks.refused or (_SURROGATE_ESCAPE.search(text) and not _encodable(data)):
        found = _found(data)
        if found:
            raise InputError(file, found)
    return data


def _parse(text: str, file: str, hooks: _Hooks) -> Any:
    try:
        return json.loads(
            text,
            parse_constant=hooks.constant,
            parse_float=hooks.number,
            object_pairs_hook=hooks.unique_keys,
        )
    except json.JSONDecodeError as e:
        raise _fail(file, f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except (ValueError, RecursionError) as e:
        raise _fail(file, f"malformed JSON: {e}") from None


def read_json(path: str | Path) -> Any:
    """A JSON file read and parsed safely."""
    return loads(read_text(path), str(path))


# The C encoder: `json.dumps` with an indent runs the pure-Python one, over 5x slower
# (a realized schedule of trace4: 3.8 s against 0.7 s written this way, README "The CLI").
_ONE_LINE = json.JSONEncoder(allow_nan=False, separators=(", ", ": ")).encode
EXPANDED_DEPTH = 2  # the document and its values get a line per item; deeper, one line


def _lines(data: Any, depth: int, out: list[str]) -> None:
    if depth >= EXPANDED_DEPTH or not isinstance(data, dict | list | tuple) or not data:
        out.append(_ONE_LINE(data))
        return
    pad = "\n" + " " * (depth + 1)
    is_object = isinstance(data, dict)
    out.append("{" if is_object else "[")
    items = data.items() if isinstance(data, dict) else enumerate(data)
    for k, (key, value) in enumerate(items):
        out.append(("," if k else "") + pad)
        if is_object:
            # a key that is not a string is written as json.dumps does: 1 -> "1"; it
            # refuses other keys (a tuple)
            if not isinstance(key, str | int | float | bool | None):
                raise TypeError(f"keys must be str, int, float, bool or None, not {type(key)}")
            out.append(_ONE_LINE(key if isinstance(key, str) else _ONE_LINE(key)) + ": ")
        _lines(value, depth + 1, out)
    out.append("\n" + " " * depth + ("}" if is_object else "]"))


def dumps(data: Any) -> str:
    """The JSON text the tool writes, never NaN or Infinity (ValueError): a line for each
    key of the document and for each item of the lists and objects it holds (a job of
    `jobs`, a key of `info`); everything deeper stays on its item's line."""
    out: list[str] = []
    _lines(data, 0, out)
    text = "".join(out) + "\n"
    if _SURROGATE_ESCAPE.search(text):  # rare (an emoji is written as a pair of them)
        out = []
        _lines(_with_printable_text(data), 0, out)
        text = "".join(out) + "\n"
    return text


def printable(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD. Python gives the bytes of a file name or
    an argument that are not UTF-8 as lone surrogates; written as `\\udcXX` escapes they
    made a file that every reader here refuses (`loads`), so `plan check` refused the
    schedule `plan solve` wrote for `café.json` in Latin-1 (tests/test_cli.py)."""
    if not _has_surrogate(text):
        return text
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def _with_printable_text(data: Any) -> Any:
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {_with_printable_text(k): _with_printable_text(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_with_printable_text(v) for v in data]
    return data
