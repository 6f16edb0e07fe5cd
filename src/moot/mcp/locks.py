"""Which process runs a saved debate or tournament: a server holds its journal (or the
tournament's `playing.lock`) from the moment it is asked for it until it ends
(`journal.hold_file`, a hold the debate's own run joins), so that another `moot mcp` on
the same data directory (each client starts its own) lists it as running elsewhere, not
interrupted, and never resumes it meanwhile. A hold goes with its process: a server that
is killed holds nothing, and its debates are interrupted."""

from __future__ import annotations

from pathlib import Path

from moot.records.journal import Held, hold_file, locked


def hold(path: Path) -> Held | None:
    """An exclusive hold on PATH, kept until `release`; None where another process holds
    it."""
    return hold_file(path, tries=1)


def release(held: Held | None) -> None:
    if held is not None:
        held.release()


def held_elsewhere(path: Path) -> bool:
    """Whether a server (another, or this one for a debate it runs) holds PATH."""
    return locked(path)
