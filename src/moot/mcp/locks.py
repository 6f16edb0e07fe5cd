"""Which process runs a saved debate: a server holds a lock on the journal of each debate
it runs, from the moment it is asked for it until it ends, so that another `moot mcp` on
the same data directory (each client starts its own) lists it as running elsewhere, not
interrupted, and never resumes it meanwhile. A lock goes with its process: a server that
is killed holds nothing, and its debates are interrupted."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def hold(journal: Path) -> int | None:
    """An exclusive lock on JOURNAL, kept until `release`; None where another holds it."""
    fd = os.open(journal, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the file lets its lock go


def held_elsewhere(journal: Path) -> bool:
    """Whether a server (another, or this one for a debate it runs) holds JOURNAL's lock."""
    try:
        fd = os.open(journal, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
