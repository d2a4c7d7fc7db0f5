"""The output files of one command: checked before any work, written as a set.

`check_outputs` runs before solving, so a plan is never lost to an output path that
cannot be written: every path must be writable (its folder, or the nearest existing
ancestor, accepts a new file; nothing on the way is a regular file; not under /proc or
/sys), no two outputs may be the same file, and no output may be one of the inputs.
An existing output must also be replaceable: not immutable or append-only, and not another
user's in a folder with the sticky bit (such as /tmp).
An output that is a symbolic link is replaced, not followed (as `mv` or a rename does):
the checks look at the link and its folder, and the new file takes the link's place, so
a link that another user left in a shared folder such as /tmp cannot send the write to
a file of theirs choosing.
`write_all` writes every file of the set to a temporary file beside its target and
renames them only when all were written; should a rename still fail, the files renamed
before it get their old content back (kept as hard links meanwhile), so the set is written
whole or not at all.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from planner.errors import UsageError, WriteError

PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
STDOUT = "-"  # an output named "-" is standard output, which the command prints itself


def _refuse(path: str, reason: str) -> WriteError:
    return WriteError(path, reason)


def _nearest_existing(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _probe(folder: Path, path: str) -> None:
    """Create and remove a file in `folder`: the only test that also holds for root and
    for read-only mounts (os.access says yes to root on a read-only folder)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".plan-probe.", dir=folder)
    except OSError as e:
        raise _refuse(path, f"{folder} is not writable ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(tmp)


def output_path(path: str) -> Path:
    """Where an output goes: its folders resolved, its own name not (a symbolic link named
    as the output is replaced by the new file, not followed)."""
    p = Path(path)
    return Path(os.path.realpath(p.parent)) / p.name


def check_output(path: str) -> Path:
    """Where an output goes (`output_path`), or UsageError saying why it cannot be written."""
    try:
        return _checked_output(path)
    except OSError as e:  # a name too long for the file system (ENAMETOOLONG), ...
        raise _refuse(path, e.strerror or str(e)) from None


def _checked_output(path: str) -> Path:
    # "y/", "y/.", "y/..", ".", "/": a folder's name (pathlib drops the slash and the dot)
    if path.endswith(("/", "/.")) or Path(path).name in ("", ".."):
        raise _refuse(path, "it names a folder")
    target = output_path(path)
    if any(target == d or d in target.parents for d in PSEUDO_FILESYSTEMS):
        raise _refuse(path, "it is under a system folder (/proc, /sys, /dev)")
    link = target.is_symlink()
    if not link and target.is_dir():
        raise _refuse(path, "it is a directory")
    if not link and target.exists() and not target.is_file():
        raise _refuse(path, "it exists and is not a regular file")
    folder = _nearest_existing(target.parent)
    if not folder.is_dir():
        raise _refuse(path, f"{folder} is a file, not a folder")
    _probe(folder, path)
    if os.path.lexists(target):
        _check_replaceable(target, path, link)
    # the folders to make and the file: a name too long would fail after the folders are
    # made (Path.exists says False, without an error, for such a name)
    most = os.pathconf(folder, "PC_NAME_MAX")
    for part in target.relative_to(folder).parts:
        if len(os.fsencode(part)) > most:
            raise _refuse(path, f"a name in it is longer than {most} bytes")
    return target


def _check_replaceable(target: Path, path: str, link: bool) -> None:
    """UsageError if the existing `target` (a symbolic link when `link`: the link itself)
    cannot be renamed over. Opening a file for writing changes nothing and fails with EPERM
    when it is immutable or append-only (other errors, such as a read-only mode, do not
    stop a rename); a link has no such flags, and opening it would follow it."""
    if not link:
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
        except PermissionError as e:
            if e.errno == 1:  # EPERM, not EACCES
                raise _refuse(path, f"it cannot be replaced ({e.strerror})") from None
        except OSError:
            pass
    folder, me = target.parent.stat(), os.geteuid()
    owner = target.lstat().st_uid
    if folder.st_mode & stat.S_ISVTX and me not in (0, folder.st_uid, owner):
        raise _refuse(
            path, "it cannot be replaced: it is another user's, in a folder with the sticky bit"
        )


def _identity(path: Path, follow: bool = True) -> object:
    """What makes two paths the same file: the inode when it exists (hard links too); of
    a symbolic link itself when not `follow`."""
    try:
        st = path.stat() if follow else path.lstat()
    except OSError:
        return path
    return (st.st_dev, st.st_ino)


# What to do instead of giving a page option a picture's name (`check_pictures`).
_PICTURE = {
    "-o": "for a picture use --png",
    "--show": "for a picture use plan show SCHEDULE --png",
    "--report": "give it an .html name",  # plan bench: the report has no picture of its own
}


def check_pictures(
    html: str | None = None, png: str | None = None, html_option: str = "-o"
) -> None:
    """The Gantt page goes to an HTML name and the picture to a PNG one: `-o g.png` would
    get a page under a picture's name (UsageError naming what to use instead)."""
    if html and Path(html).suffix.lower() == ".png":
        raise _refuse(html, f"{html_option} writes the HTML page; {_PICTURE[html_option]}")
    if png and Path(png).suffix.lower() in (".html", ".htm"):
        raise _refuse(png, "--png writes a PNG picture; for the page use -o")


def no_link(option: str, path: str) -> None:
    """UsageError when `path` is a symbolic link: for an output that is read and appended
    to as the command goes (`plan bench -o`), replacing the link at the end would have
    written through it before."""
    if os.path.islink(path):
        raise _refuse(path, f"it is a symbolic link, and {option} is appended to: give the file")


def files_only(options: Mapping[str, str | None]) -> None:
    """UsageError for an output option given as `-` that a command does not print: a file
    named `-` was written instead (README: `-o -` is standard output where it can be)."""
    for option, path in options.items():
        if path == STDOUT:
            raise UsageError(f"{option} -: this output is written to a file only; give a file name")


def one_print(output: str | None, as_json: bool) -> None:
    """UsageError for `-o -` with `--json` where they print different things (the output
    itself, or the JSON summary of writing it): one of them was silently dropped."""
    if output == STDOUT and as_json:
        raise UsageError("-o - and --json both print to standard output: give one of them")


def check_outputs(outputs: Sequence[str | None], inputs: Sequence[str | None] = ()) -> None:
    """Every output writable, no two the same file, none an input (UsageError otherwise)."""
    seen: dict[object, str] = {}
    ins = {_identity(Path(os.path.realpath(i))): i for i in inputs if i}
    if sum(out == STDOUT for out in outputs) > 1:
        raise _refuse(STDOUT, "only one output can go to standard output")
    for out in outputs:
        if out == "":  # not "no output": a shell variable left empty, say
            raise UsageError(
                "an output file name is empty: give a file name, or leave the option out"
            )
        if out is None or out == STDOUT:
            continue
        target = _identity(check_output(out), follow=False)
        if target in seen:
            raise _refuse(out, f"it is the same file as the output {seen[target]}")
        # a link to an input is refused too: whoever names it means that file
        through = _identity(Path(os.path.realpath(out)))
        for hit in (target, through):
            if hit in ins:
                raise _refuse(out, f"it is the input file {ins[hit]}")
        seen[target] = out


def _write_temp(target: Path, content: str | bytes) -> str:
    # encoded first: a signal during a big page's encoding left an empty temporary file
    data = content.encode("utf-8") if isinstance(content, str) else content
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # mkstemp makes the file private (0600); give it the usual mode for new files.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _keep(target: Path) -> Path | None:
    """A hard link to the existing `target` (a symbolic link itself, when it is one), to put
    it back if the set cannot be completed; None when there is no target or it cannot be
    linked (a file system without links)."""
    if not os.path.lexists(target):
        return None
    for _ in range(10):
        kept = target.parent / f".{target.name}.old.{secrets.token_hex(4)}"
        try:
            os.link(target, kept, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError:
            return None
        return kept
    return None


_sets_written = 0  # by this process, so far (`sets_written`)


def sets_written() -> int:
    """How many sets `write_all` has written in full: a command's signal handler ignores a
    stop that comes after its outputs are in place (`planner.cli.common.stops_on_signals`)."""
    return _sets_written


def write_all(files: Mapping[str, str | bytes]) -> None:
    """Write every (path, text or bytes; text as UTF-8) to a temporary file, then rename
    all; on any failure every target is as it was and UsageError names the path and the
    reason. A symbolic link named as an output is replaced (`output_path`)."""
    global _sets_written
    temps: list[tuple[str, Path]] = []
    kept: dict[Path, Path | None] = {}
    placed: list[tuple[Path, bool]] = []  # renamed into place, and whether it existed
    named: dict[Path, str] = {}  # the user's name of each target, for messages
    try:
        for path, text in files.items():
            target = output_path(path)
            named[target] = path
            try:
                temps.append((_write_temp(target, text), target))
            except OSError as e:
                raise _refuse(path, e.strerror or str(e)) from None
        kept = {target: _keep(target) for _, target in temps}
        # an existing file that could not be kept cannot be put back: rename it last
        temps.sort(key=lambda t: os.path.lexists(t[1]) and kept[t[1]] is None)
        for tmp, target in temps:
            existed = os.path.lexists(target)
            try:
                os.replace(tmp, target)
            except OSError as e:
                reason = f"it cannot be replaced ({e.strerror or e})"
                raise _refuse(named[target], reason) from None
            placed.append((target, existed))
        _sets_written += bool(temps)  # an empty set writes nothing
    except BaseException:
        for target, existed in reversed(placed):
            back = kept.get(target)
            if back is not None:
                os.replace(back, target)
            elif not existed:
                target.unlink(missing_ok=True)
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        for back in kept.values():
            if back is not None:
                back.unlink(missing_ok=True)
