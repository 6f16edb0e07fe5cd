"""Saved debates in moot's data directory: list, read and delete them."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from moot.config import debates_dir
from moot.errors import UsageError
from moot.transcript import read_journal


@dataclass(frozen=True)
class SavedDebate:
    id: str  # the folder name
    path: Path
    format: str
    motion: str
    turns: int
    finished: bool  # transcript.json written: the debate ran to its end


def _summary(folder: Path) -> SavedDebate | None:
    transcript = folder / "transcript.json"
    journal = folder / "journal.jsonl"
    if transcript.is_file():
        data = json.loads(transcript.read_text(encoding="utf-8"))
        turns, finished = len(data.get("turns", [])), True
    elif journal.is_file():
        records = read_journal(journal)
        data = next((r for r in records if r.get("type") == "debate"), {})
        turns, finished = sum(r.get("type") == "turn" for r in records), False
    else:
        return None
    return SavedDebate(
        folder.name,
        folder,
        str(data.get("format", "?")),
        str(data.get("motion", "?")),
        turns,
        finished,
    )


def list_debates() -> list[SavedDebate]:
    root = debates_dir()
    if not root.is_dir():
        return []
    found = (_summary(p) for p in sorted(root.iterdir()) if p.is_dir())
    return [d for d in found if d is not None]


def find(ref: str) -> SavedDebate:
    """A saved debate by folder name (or a unique prefix of it), or a folder path."""
    path = Path(ref).expanduser()
    if path.is_dir():
        found = _summary(path)
        if found:
            return found
    matches = [d for d in list_debates() if d.id == ref or d.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no saved debate {ref!r}", hint="see `moot history list`")
    raise UsageError(f"{ref!r} names {len(matches)} debates", hint="give more of the id")


def remove(ref: str) -> SavedDebate:
    debate = find(ref)
    if debate.path.resolve().parent != debates_dir().resolve():
        raise UsageError(
            f"{debate.path} is not in moot's data directory",
            hint="moot only deletes debates it saved itself; remove other folders yourself",
        )
    shutil.rmtree(debate.path)
    return debate


def remove_all() -> list[SavedDebate]:
    gone = list_debates()
    for debate in gone:
        shutil.rmtree(debate.path)
    return gone
