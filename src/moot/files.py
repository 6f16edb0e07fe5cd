"""Files written safely: atomic replace, create-only, private folders."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dir(path: Path) -> Path:
    """Create a directory readable only by its owner (debates can be sensitive)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def _private_temp(path: Path, data: str) -> str:
    """DATA in a fsynced 0600 temp file beside PATH; returns the temp file's name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def write_atomic(path: Path, data: str) -> None:
    """Write via a temp file, fsync, rename: a reader never sees a half-written file."""
    tmp = _private_temp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def create_atomic(path: Path, data: str) -> bool:
    """Create PATH holding DATA unless it exists (then False): written to a temp file and
    linked into place, so a reader never sees it half-written and no writer replaces it."""
    tmp = _private_temp(path, data)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
    finally:
        Path(tmp).unlink(missing_ok=True)
    _fsync_dir(path.parent)
    return True
