"""Saved debates in moot's data directory: list, read and delete them."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from moot.config import debates_dir
from moot.errors import UsageError
from moot.transcript import make_private_dir, read_journal

JOURNAL = "journal.jsonl"


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
    journal = folder / JOURNAL
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


# -- a folder for a new debate -----------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A folder held by one new debate: its journal exists, so no other debate can take it."""

    path: Path
    created: bool  # the folder was made for this debate

    def release(self) -> None:
        """Give the folder back if the debate wrote nothing: its empty journal goes, and the
        folder too when it was made for the debate and is empty."""
        try:
            journal = self.path / JOURNAL
            if journal.stat().st_size == 0:
                journal.unlink()
            if self.created:
                self.path.rmdir()  # fails, harmlessly, unless the folder is empty
        except OSError:
            pass


def claim(out: Path | None, *, motion: str) -> Claim:
    """The folder a new debate writes to: OUT, or a fresh one in moot's data directory.

    Two debates never share one: a fresh folder is made with an exclusive mkdir (another
    debate on the same motion in the same second gets `…-2`), and the journal is created
    exclusively, so a folder that holds a debate (or is being claimed) is refused.
    """
    if out is None:
        folder, created = _fresh_folder(motion), True
    else:
        folder, created = out, not out.is_dir()
        try:
            make_private_dir(out)
        except OSError as exc:
            raise _unwritable(out, exc) from exc
    try:
        os.close(os.open(folder / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        raise UsageError(
            f"{folder} already holds a debate",
            hint="choose an empty folder with --out (`moot resume` continues an interrupted one)",
        ) from None
    except OSError as exc:
        raise _unwritable(folder, exc) from exc
    return Claim(folder, created)


def _fresh_folder(motion: str) -> Path:
    root = debates_dir()
    try:
        make_private_dir(root)
    except OSError as exc:
        raise _unwritable(root, exc) from exc
    slug = re.sub(r"[^\w]+", "-", motion.lower()).strip("-")[:40] or "debate"
    name = f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{slug}"
    for n in range(1, 1000):
        path = root / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _unwritable(root, exc) from exc
        return path
    raise UsageError(f"too many debates named {name} in {root}", hint="wait a second")


def _unwritable(path: Path, exc: OSError) -> UsageError:
    return UsageError(
        f"cannot write to {path}: {exc.strerror or exc}",
        hint="choose a folder you can write to with --out, or free some space",
    )
