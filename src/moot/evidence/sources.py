"""The documents a debate is given: the files named and those found in the folders named,
each with the name its passages cite, or a warning saying why it was left out."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from moot.errors import MootError, Phrase, UsageError
from moot.evidence.read import KINDS
from moot.records.files import MIB, read_bytes

# A folder walked for documents holds at most this many files (of any kind), and is
# walked this deep at most: a home folder named by mistake is refused, not read for hours.
MAX_FILES = 10_000
MAX_DEPTH = 32
# The largest document read; a larger one is left out unread, with a warning.
MAX_BYTES = 100 * MIB


@dataclass(frozen=True)
class Skipped:
    """A file left out, and why: `reason` is a `Phrase` or the error met reading it, each
    shown in a debate's language by `moot.words.words(language).error(reason)`."""

    file: str
    reason: Phrase | MootError

    def __str__(self) -> str:
        return str(self.reason)


@dataclass(frozen=True)
class Source:
    """A document to read: where it is, the name its passages cite, its kind."""

    path: Path
    name: str
    kind: str


@dataclass(frozen=True)
class Loaded:
    """A document's bytes and their sha256, read once."""

    source: Source
    data: bytes
    sha256: str


def find(
    paths: list[Path], *, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES
) -> tuple[list[Source], list[Skipped]]:
    """The documents among PATHS (files, and folders walked recursively), and the files
    left out. A path that does not exist, or a folder of more than MAX_FILES files, is a
    UsageError; a file of another kind, over MAX_BYTES, or a link out of its folder is
    left out with a warning."""
    sources: list[Source] = []
    skipped: list[Skipped] = []
    other: dict[str, int] = {}
    for given in paths:
        path = Path(given).expanduser()
        if not path.exists() and not path.is_symlink():
            raise UsageError(key="evidence.no_such_path", path=str(path))
        if path.is_dir():
            found = _walk(path, max_files=max_files, max_bytes=max_bytes)
            sources += found[0]
            skipped += found[1]
            for suffix, n in found[2].items():
                other[suffix] = other.get(suffix, 0) + n
        else:
            kind = KINDS.get(path.suffix.lower())
            if kind is None:
                skipped.append(Skipped(path.name, Phrase("evidence.skipped.kind", file=path.name)))
                continue
            problem = _too_big(path, path.name, max_bytes)
            if problem:
                skipped.append(problem)
            else:
                sources.append(Source(path, path.name, kind))
    if other:
        listed = ", ".join(sorted(other))
        total = sum(other.values())
        skipped.append(Skipped("", Phrase("evidence.skipped.kinds", count=total, kinds=listed)))
    return _unique(sources, skipped), skipped


def _walk(
    root: Path, *, max_files: int, max_bytes: int
) -> tuple[list[Source], list[Skipped], dict[str, int]]:
    sources: list[Source] = []
    skipped: list[Skipped] = []
    other: dict[str, int] = {}
    real_root = root.resolve()
    seen = 0

    def unreadable(exc: OSError) -> None:
        # A folder that cannot be listed (its permissions) is left out with a warning, as
        # a file that cannot be read is, never passed over in silence.
        where = Path(exc.filename) if exc.filename else root
        name = where.relative_to(root).as_posix() if where != root else root.name
        error = UsageError(
            key="records.files.cannot_read",
            what="evidence folder",
            path=where,
            value=exc.strerror or exc,
        )
        skipped.append(Skipped(name, error))

    for folder, dirs, files in os.walk(root, onerror=unreadable, followlinks=False):
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        if depth >= MAX_DEPTH:
            dirs.clear()
        # Hidden files and folders (.git, .DS_Store, an editor's swap file) are no one's
        # evidence, and a repository's objects would fill the file cap.
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files = [f for f in files if not f.startswith(".")]
        for entry in sorted(files) + [d for d in dirs if (here / d).is_symlink()]:
            seen += 1
            if seen > max_files:
                raise UsageError(key="evidence.too_many_files", path=str(root), limit=max_files)
            path = here / entry
            name = path.relative_to(root).as_posix()
            kind = KINDS.get(path.suffix.lower())
            if path.is_symlink():
                # A link inside the folder is read where it points, once; one out of it
                # would read what the user did not give.
                if not path.resolve().is_relative_to(real_root):
                    skipped.append(Skipped(name, Phrase("evidence.skipped.outside", file=name)))
                continue
            if kind is None:
                suffix = path.suffix.lower() or "(none)"
                other[suffix] = other.get(suffix, 0) + 1
                continue
            problem = _too_big(path, name, max_bytes)
            if problem:
                skipped.append(problem)
            else:
                sources.append(Source(path, name, kind))
    return sources, skipped, other


def _too_big(path: Path, name: str, max_bytes: int) -> Skipped | None:
    """A warning if PATH is not a regular file or is over MAX_BYTES: told by its size,
    never by reading it."""
    try:
        info = path.stat()
    except OSError as exc:
        error = UsageError(
            key="records.files.cannot_read",
            what="evidence file",
            path=path,
            value=exc.strerror or exc,
        )
        return Skipped(name, error)
    if not stat.S_ISREG(info.st_mode):
        return Skipped(name, Phrase("evidence.skipped.not_a_file", file=name))
    if info.st_size > max_bytes:
        return Skipped(
            name, Phrase("evidence.skipped.too_big", file=name, size=info.st_size, limit=max_bytes)
        )
    return None


def _unique(sources: list[Source], skipped: list[Skipped]) -> list[Source]:
    """SOURCES, a file named twice once, and a second file of the same name left out."""
    out: list[Source] = []
    paths: set[Path] = set()
    names: set[str] = set()
    for source in sources:
        real = source.path.resolve()
        if real in paths:
            continue
        if source.name in names:
            skipped.append(
                Skipped(source.name, Phrase("evidence.skipped.same_name", file=str(source.path)))
            )
            continue
        paths.add(real)
        names.add(source.name)
        out.append(source)
    return out


def load(source: Source, *, max_bytes: int) -> Loaded | Skipped:
    """SOURCE's bytes and sha256, or why they cannot be read (read as a regular file under
    MAX_BYTES: a FIFO is refused without blocking, a file grown meanwhile refused)."""
    try:
        data = read_bytes(source.path, what="evidence file", limit=max_bytes)
    except UsageError as error:
        return Skipped(source.name, error)
    return Loaded(source, data, hashlib.sha256(data).hexdigest())
