"""When a speaker's KV snapshot is worth keeping on disk: reading it back against evaluating
its tokens again, each at the rate this model and this disk were measured at.

A snapshot the memory budget cannot hold is written to a file rather than dropped when
reading it back would cost less than evaluating the tokens it holds; a spilled snapshot is
read back for a turn only when that costs less than evaluating the tokens it would spare.
Both rates are measured as the debate runs (every prompt evaluation, every file written or
read back); until a rate has been measured, keeping is assumed to pay, as it does for a
snapshot in memory.

Each process spills into a private folder of its own under moot's cache, `kv/moot-kv-*`,
and holds an exclusive `flock` on the lock file beside it (`moot-kv-*.lock`) for as long as
the folder exists. A process killed before it could remove its folder lets go of the lock
as it dies (the kernel releases it; a pid used again by another process changes nothing),
and the next process to spill or load a model here removes that folder: a lock nobody
holds is a folder nobody will read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock, and no folder is taken for another's leftover
    fcntl = None  # type: ignore[assignment]

# Fewer tokens than this time the call's overhead more than the evaluation.
MIN_MEASURED_TOKENS = 32
MIN_MEASURED_BYTES = 1 << 20
# Room a spill leaves on its disk for everything else.
DISK_RESERVE = 1 << 30


@dataclass
class RestoreCosts:
    """One model's measured rates: tokens it evaluates a second (prompt evaluation, in
    batches and alone as its prompts ask) and bytes of snapshot a second read back from disk
    and restored (seeded by the first file written until one is read)."""

    eval_rate: float | None = None
    read_rate: float | None = None
    read_measured: bool = False

    def evaluated(self, tokens: int, seconds: float) -> None:
        if tokens >= MIN_MEASURED_TOKENS and seconds > 0:
            self.eval_rate = _mean(self.eval_rate, tokens / seconds)

    def written(self, nbytes: int, seconds: float) -> None:
        """A file written: its rate stands for reading until a read is measured."""
        if not self.read_measured and nbytes >= MIN_MEASURED_BYTES and seconds > 0:
            self.read_rate = _mean(self.read_rate, nbytes / seconds)

    def read(self, nbytes: int, seconds: float) -> None:
        if nbytes >= MIN_MEASURED_BYTES and seconds > 0:
            rate = nbytes / seconds
            self.read_rate = _mean(self.read_rate if self.read_measured else None, rate)
            self.read_measured = True

    def reading_pays(self, nbytes: int, tokens: int) -> bool:
        """Whether reading NBYTES back costs less than evaluating TOKENS again."""
        if self.eval_rate is None or self.read_rate is None:
            return True
        return nbytes / self.read_rate < tokens / self.eval_rate

    def crossover(self, bytes_per_token: float, fixed: int = 0) -> float | None:
        """The prompt length, in tokens, above which reading a snapshot of BYTES_PER_TOKEN
        (and FIXED bytes more: the last position's logits) beats evaluating it; None where
        reading never pays or a rate is unknown."""
        if self.eval_rate is None or self.read_rate is None:
            return None
        per_token = 1 / self.eval_rate - bytes_per_token / self.read_rate
        return fixed / self.read_rate / per_token if per_token > 0 else None


def _mean(old: float | None, new: float) -> float:
    """A running figure: the latest measure weighs as much as all before it."""
    return new if old is None else (old + new) / 2


def disk_has_room(directory: Path, nbytes: int) -> bool:
    """Whether DIRECTORY's disk takes NBYTES and keeps DISK_RESERVE free."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(directory).free >= nbytes + DISK_RESERVE
    except OSError:
        return False


PREFIX = "moot-kv-"
LOCK = ".lock"


class SpillFolder:
    """This process's folder for spilled snapshots under ROOT, held (its lock file's
    `flock`) until `close` removes it; `sweep` removes first the folders of processes that
    ended without removing theirs."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        sweep(root)
        while True:
            fd, lock = tempfile.mkstemp(prefix=PREFIX, suffix=LOCK, dir=root)
            if _hold(fd, Path(lock)):
                folder = Path(lock[: -len(LOCK)])
                try:
                    folder.mkdir(mode=0o700)
                except FileExistsError:  # another's leftover of that very name: a new name
                    _let_go(fd, Path(lock))
                    continue
                self.path, self._lock, self._fd = folder, Path(lock), fd
                return
            os.close(fd)  # swept between its making and its holding: another name

    def close(self) -> None:
        """The folder and every file in it removed, then its lock."""
        shutil.rmtree(self.path, ignore_errors=True)
        _let_go(self._fd, self._lock)


def _hold(fd: int, lock: Path) -> bool:
    """Whether this process now holds LOCK (open as FD): False where a sweep removed the
    file before it was held (the descriptor then names a file no longer there)."""
    if fcntl is None:
        return True
    fcntl.flock(fd, fcntl.LOCK_EX)  # a sweep holds a lock only while it removes a folder
    try:
        return os.path.samestat(os.fstat(fd), os.stat(lock))
    except FileNotFoundError:
        return False


def _let_go(fd: int, lock: Path) -> None:
    lock.unlink(missing_ok=True)  # unlinked before it is let go: no sweep takes it for stale
    os.close(fd)


def sweep(root: Path) -> list[Path]:
    """Remove the spill folders under ROOT that no process holds: those of processes that
    were killed (or crashed) before removing their own; the folders removed. A folder with
    no lock file beside it (written by a moot before the locks) is removed too. Nothing is
    removed where `flock` is unknown (Windows)."""
    if fcntl is None:
        return []
    try:
        names = [e.name for e in os.scandir(root) if e.name.startswith(PREFIX)]
    except OSError:
        return []
    removed = []
    for name in names:
        if name.endswith(LOCK):
            folder = root / name[: -len(LOCK)]
            if _stale(root / name, folder):
                removed.append(folder)
        else:
            folder = root / name
            # Its lock is made before it and removed after it: looked for again now.
            lockless = not os.path.lexists(root / (name + LOCK))
            if lockless and folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _stale(lock: Path, folder: Path) -> bool:
    """Remove FOLDER and LOCK where no process holds LOCK; whether they were removed."""
    assert fcntl is not None
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # removed by its holder as it closed, or not a file moot made
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        same = os.path.samestat(os.fstat(fd), os.stat(lock))
    except OSError:  # held (its process is alive), or removed since it was listed
        same = False
    if not same:
        os.close(fd)
        return False
    if not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
    _let_go(fd, lock)
    return True
