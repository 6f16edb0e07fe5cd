"""What every store reader shares: the reference and the rows it yields, and bounded reads of
folders it does not own (a link is followed, a loop is named, a folder is read to a limit)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from moot.errors import ModelIntegrityError, ModelNotFoundError, Phrase, UsageError
from moot.models import architectures, gguf_check, hub_cache

MAX_ENTRIES = 10_000  # per folder: far more models than a disk holds
GGUF = ".gguf"


@dataclass(frozen=True)
class StoreRef:
    """A model in another tool's store, named the way that tool names it."""

    kind: str  # "ollama", "lmstudio" or "llamacpp"
    ref: str  # the reference in full, as `moot models list` shows it
    parts: tuple[str, ...]  # what the store's reader looks it up by
    name: str  # the tool's own name for it, for hints: `ollama pull NAME`


@dataclass(frozen=True)
class Found:
    """A model's files on disk, first one first, and the sha256 each should have."""

    files: tuple[Path, ...]
    expected: tuple[str | None, ...]


@dataclass(frozen=True)
class Listed:
    """One row a store yields for `moot models list`: a model's files, or why there are none."""

    ref: str
    name: str
    kind: str
    files: tuple[Path, ...] = ()
    expected: tuple[str | None, ...] = ()
    problem: str = ""  # why this is not usable; "" when nothing is wrong yet
    size: int | None = None  # what its files should take, when they are not all there


class Unreadable(Exception):
    """A folder or file of a store that cannot be read; its one line says why (`said`, in
    words of its own; `reason`, its English)."""

    def __init__(self, said: Phrase) -> None:
        super().__init__(str(said))
        self.said = said
        self.reason = str(said)


def kind_of(path: Path) -> str:
    """What PATH is, its links followed (a loop is named, never followed forever): one of
    file, dir, missing, dangling, loop, other (a FIFO, a device, a socket) or unreadable."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "dangling" if os.path.islink(path) else "missing"
    except NotADirectoryError:
        return "missing"
    except OSError as exc:
        return "loop" if exc.errno == errno.ELOOP else "unreadable"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def describe(path: Path, kind: str) -> Phrase:
    """One line saying why PATH, of KIND (from kind_of), is not a file or folder moot can read."""
    if kind == "loop":
        return Phrase("models.stores.base.symlink_loop", path=path)
    if kind == "dangling":
        try:
            target = os.readlink(path)
        except OSError:
            return Phrase("models.stores.base.symlink_to_nothing", path=path)
        return Phrase("models.stores.base.symlink_to_missing", path=path, target=target)
    if kind == "other":
        return Phrase("models.stores.base.not_regular_file", path=path)
    if kind == "missing":
        return Phrase("models.stores.base.does_not_exist", path=path)
    try:
        os.stat(path)
    except OSError as exc:
        return Phrase("models.stores.base.cannot_read_why", path=path, why=exc.strerror or str(exc))
    return Phrase("models.stores.base.cannot_read", path=path)


def refuse(path: Path, kind: str, *, hint: str) -> UsageError:
    """The error for a PATH that kind_of found is no file moot can read."""
    return UsageError(key="models.stores.base.refused", reason=describe(path, kind), fix=hint)


def entries(folder: Path) -> list[tuple[str, Path, str]]:
    """(name, path, kind) of what FOLDER holds, sorted by name; Unreadable when it cannot be
    listed or holds more than MAX_ENTRIES."""
    found: list[tuple[str, Path, str]] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if len(found) == MAX_ENTRIES:
                    raise Unreadable(
                        Phrase("models.stores.base.too_many_entries", folder=folder, n=MAX_ENTRIES)
                    )
                path = Path(entry.path)
                found.append((entry.name, path, kind_of(path)))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable(Phrase("models.stores.base.symlink_loop", path=folder)) from None
        why = exc.strerror or str(exc)
        raise Unreadable(
            Phrase("models.stores.base.cannot_read_folder", path=folder, why=why)
        ) from None
    return sorted(found)


def unique(roots: list[Path]) -> list[Path]:
    """ROOTS without the ones that are the same folder as an earlier one (a link to it)."""
    seen: set[str] = set()
    out: list[Path] = []
    for root in roots:
        real = os.path.realpath(root)
        if real not in seen:
            seen.add(real)
            out.append(root)
    return out


def is_gguf(name: str) -> bool:
    return name.lower().endswith(GGUF) and not name.startswith(".")


def offered(folder_files: list[tuple[str, Path, str]]) -> list[tuple[str, Path, str]]:
    """The GGUFs among FOLDER_FILES that may be models: not a later part of a split, not a
    projector or an adapter (told by its name, or by its header when that can be read)."""
    out = []
    for name, path, kind in folder_files:
        if not is_gguf(name) or kind in ("dir", "missing"):
            continue
        if hub_cache.is_later_shard(name) or "mmproj" in name.lower():
            continue
        if kind == "file":
            try:
                fit = architectures.unfit(gguf_check.check(path))
            except ModelIntegrityError:
                fit = None  # shown, and refused, with what its header check says
            if fit is not None and fit.part:
                continue
        out.append((name, path, kind))
    return out


def with_shards(path: Path, *, what: str, hint: str) -> tuple[Path, ...]:
    """PATH, and the other parts beside it when it is the first of a split model; a part
    that is missing is a ModelNotFoundError naming it."""
    names = hub_cache.split_names(path.name)
    files = tuple(path.with_name(n) for n in names)
    for i, part in enumerate(files[1:], start=2):
        kind = kind_of(part)
        if kind == "missing":
            raise ModelNotFoundError(
                key="models.stores.base.part_split_model_missing",
                what=what,
                i=i,
                n_files=len(files),
                part=part,
                fix=hint,
            )
        if kind != "file":
            raise refuse(part, kind, hint=hint)
    return files


def either(looked: list[Path]) -> str | Phrase:
    """The folders a store was looked for in, said as one or the other."""
    if len(looked) == 1:
        return str(looked[0])
    return Phrase(
        "models.stores.either", first=str(looked[0]), other=", ".join(map(str, looked[1:]))
    )
