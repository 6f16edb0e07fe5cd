"""Saved debates in moot's data directory: list, read and delete them.

A debate folder holds moot's own files: `journal.jsonl` (from the first turn), and once it
finished `transcript.json` and its format's document (`debate.md`, `decision.md`). Only
these are read, only as regular files in the folder (never through a symlink), and each
under a size limit: a folder is untrusted input like any other file.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from moot.config import data_dir, debates_dir
from moot.errors import MootError, RecordError, UsageError
from moot.records import files
from moot.records.files import make_private_dir
from moot.records.journal import read_records, read_transcript
from moot.records.transcript import DebateRecord, Record, TurnRecord

JOURNAL = "journal.jsonl"
TRANSCRIPT = "transcript.json"

_SET_HOME = "set MOOT_HOME to a folder you can write to"
_IS_IT_MOOTS = "is it a folder moot wrote? `moot history rm ID` deletes a saved one"


@dataclass(frozen=True)
class SavedDebate:
    id: str  # the folder name
    path: Path
    format: str
    motion: str
    turns: int
    finished: bool  # transcript.json written: the debate ran to its end
    problem: str | None = None  # why its files cannot be read; None when they can
    language: str = "en"  # the debate's, as its files record it

    @property
    def status(self) -> str:
        if self.problem is not None:
            return "unreadable"
        return "finished" if self.finished else "interrupted"


# -- reading a debate folder -------------------------------------------------------------


def _read_text(path: Path, what: str) -> str:
    return files.read_text(path, what=what, limit=files.RECORD_LIMIT, follow_symlinks=False)


def _read_transcript(path: Path) -> dict[str, Any]:
    """The saved transcript, checked as replay and check read it: a record that does not
    validate is refused with the field it fails on (one written by a newer moot is shown)."""
    try:
        _, data = read_transcript(path, follow_symlinks=False, versioned=False)
    except RecordError as exc:
        raise RecordError(exc.message, path=exc.path, where=exc.where, hint=_IS_IT_MOOTS) from None
    _check_record(path, "saved transcript", data)
    return data


def _read_journal(path: Path) -> list[Record]:
    """The journal's records, checked as resume reads them: a torn last line (a crash
    mid-write) is left out; any other line that is not a record is refused, naming it."""
    records = read_records(path)
    if not records:
        return records
    if not isinstance(records[0], DebateRecord):
        raise RecordError(
            f"journal {path} is not moot's: line 1 is not a debate's header",
            path=str(path),
            where="line 1",
            hint=_IS_IT_MOOTS,
        )
    return records


def _check_record(path: Path, what: str, data: dict[str, Any]) -> None:
    for key in ("format", "motion"):
        if not isinstance(data.get(key, ""), str):
            raise UsageError(f"{what} {path} is not moot's: {key!r} is not text", hint=_IS_IT_MOOTS)


def _summary(folder: Path) -> SavedDebate | None:
    """The debate saved in FOLDER; None when it holds none of moot's files. A folder whose
    files cannot be read is a debate all the same, with the problem named."""
    transcript, journal = folder / TRANSCRIPT, folder / JOURNAL
    try:
        if os.path.lexists(transcript):
            data = _read_transcript(transcript)
            turns, finished = len(data.get("turns", [])), True
        elif os.path.lexists(journal):
            records = _read_journal(journal)
            data = records[0].model_dump() if records else {}
            turns, finished = sum(isinstance(r, TurnRecord) for r in records), False
        else:
            return None
    except UsageError as exc:
        return SavedDebate(folder.name, folder, "?", "?", 0, False, problem=exc.message)
    return SavedDebate(
        folder.name,
        folder,
        str(data.get("format", "?")),
        str(data.get("motion", "?")),
        turns,
        finished,
        language=str(data.get("language", "en")),
    )


def _data_error(exc: OSError, doing: str) -> UsageError:
    """What is wrong with moot's data folder, named as the user can fix it: MOOT_HOME."""
    home, root = data_dir(), debates_dir()
    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        on_the_way = (root, *root.parents)
        bad = next((p for p in on_the_way if os.path.lexists(p) and not p.is_dir()), root)
        return UsageError(f"moot's data folder {bad} is not a folder", hint=_SET_HOME)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return UsageError(
            f"cannot {doing} moot's data folder {home}: {exc.strerror}",
            hint="free some space, or save elsewhere with --out",
        )
    return UsageError(
        f"cannot {doing} moot's data folder {home}: {exc.strerror or exc}", hint=_SET_HOME
    )


def list_debates() -> list[SavedDebate]:
    """Every debate in moot's data directory, oldest first (their names start with the
    time); a folder that is a symlink, or holds none of moot's files, is not one."""
    root = debates_dir()
    try:
        with os.scandir(root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return []  # nothing saved yet
    except OSError as exc:
        raise _data_error(exc, "read") from None
    found = []
    for entry in entries:
        try:
            real_folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if real_folder and (debate := _summary(Path(entry.path))) is not None:
            found.append(debate)
    return found


def find(ref: str, *, readable: bool = True) -> SavedDebate:
    """A saved debate by folder name (or a unique prefix of it), or a folder path. With
    READABLE, a debate whose files cannot be read is refused, naming the problem."""
    if not ref.strip():
        raise UsageError("name a saved debate", hint="see `moot history list`")
    path = _expand(ref)
    if path.is_dir():
        found = _summary(path)
        if found is not None:
            return _checked(found, readable)
    matches = [d for d in list_debates() if d.id == ref or d.id.startswith(ref)]
    exact = [d for d in matches if d.id == ref]
    if len(exact) == 1 or len(matches) == 1:
        return _checked((exact or matches)[0], readable)
    if matches:
        raise UsageError(f"{ref!r} names {len(matches)} debates", hint="give more of the id")
    if path.is_dir():
        raise UsageError(
            f"{path} is not a saved debate: it holds no {JOURNAL} or {TRANSCRIPT}",
            hint="name a debate folder moot wrote, or an id from `moot history list`",
        )
    raise UsageError(f"no saved debate {ref!r}", hint="see `moot history list`")


def _expand(ref: str) -> Path:
    try:
        return Path(ref).expanduser()
    except RuntimeError:  # ~user of no such user
        return Path(ref)


def _checked(debate: SavedDebate, readable: bool) -> SavedDebate:
    if readable and debate.problem is not None:
        saved = debate.path.parent.resolve() == debates_dir().resolve()
        hint = (
            f"`moot history rm {debate.id}` deletes it" if saved else "is it a folder moot wrote?"
        )
        raise UsageError(debate.problem, hint=hint)
    return debate


def document(debate: SavedDebate) -> str | None:
    """The debate's document as its format wrote it, or None when there is none (it did
    not finish, or its format is not one moot knows)."""
    from moot.formats import NAMES, get_format

    if debate.format not in NAMES:
        return None
    path = debate.path / get_format(debate.format).document
    if not os.path.lexists(path):
        return None
    return _read_text(path, "saved document")


def turns(debate: SavedDebate) -> list[dict[str, Any]]:
    """The debate's finished turns: from its transcript, or from its journal if it did
    not finish."""
    transcript, journal = debate.path / TRANSCRIPT, debate.path / JOURNAL
    if os.path.lexists(transcript):
        return list(_read_transcript(transcript).get("turns", []))
    if os.path.lexists(journal):
        return [
            r.turn().model_dump(mode="json")
            for r in _read_journal(journal)
            if isinstance(r, TurnRecord)
        ]
    return []


# -- deleting ----------------------------------------------------------------------------


def deletable(ref: str | SavedDebate) -> SavedDebate:
    """The debate REF names, if moot may delete it: one it saved in its data directory
    (a folder there, not a symlink to one elsewhere), readable or not."""
    debate = ref if isinstance(ref, SavedDebate) else find(ref, readable=False)
    if debate.path.is_symlink() or debate.path.parent.resolve() != debates_dir().resolve():
        raise UsageError(
            f"{debate.path} is not in moot's data directory",
            hint="moot only deletes debates it saved itself; remove other folders yourself",
        )
    return debate


def remove(ref: str | SavedDebate) -> SavedDebate:
    """Delete one debate moot saved in its data directory (never a folder elsewhere)."""
    debate = deletable(ref)
    _rmtree(debate.path)
    return debate


@dataclass(frozen=True)
class Cleared:
    """What `remove_all` did: the debates deleted, and each that could not be, with why."""

    gone: list[SavedDebate]
    failed: list[tuple[SavedDebate, MootError]]


def remove_all() -> Cleared:
    """Delete every debate `list_debates` lists, and nothing else in the data directory;
    one that cannot be deleted is reported and the others are deleted all the same."""
    gone, failed = [], []
    for debate in list_debates():
        try:
            _rmtree(debate.path)
        except MootError as exc:
            failed.append((debate, exc))
        else:
            gone.append(debate)
    return Cleared(gone, failed)


def _rmtree(path: Path) -> None:
    try:
        shutil.rmtree(path)  # never follows a symlink inside the folder
    except OSError as exc:
        raise MootError(
            f"could not delete {path}: {exc.strerror or exc}", hint="check its permissions"
        ) from None


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


def claim(out: Path | str | None, *, motion: str) -> Claim:
    """The folder a new debate writes to: OUT, or a fresh one in moot's data directory.

    Two debates never share one: a fresh folder is made with an exclusive mkdir (another
    debate on the same motion in the same second gets `…-2`), and the journal is created
    exclusively, so a folder that holds a debate (or is being claimed) is refused. OUT may
    exist (its other files are left alone, and so is its mode) or is made private.
    """
    if out is None:
        folder, created = _fresh_folder(motion), True
    else:
        folder = out_folder(out)
        created = _out_folder(folder)
    if os.path.lexists(folder / TRANSCRIPT):
        raise _holds_a_debate(folder)
    try:
        os.close(os.open(folder / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        raise _holds_a_debate(folder) from None
    except OSError as exc:
        raise _unwritable(folder, exc) from exc
    return Claim(folder, created)


def _holds_a_debate(folder: Path) -> UsageError:
    return UsageError(
        f"{folder} already holds a debate",
        hint="choose an empty folder with --out (`moot resume` continues an interrupted one)",
    )


def out_folder(out: Path | str, *, name: str = "--out") -> Path:
    """The folder OUT names for a command's output (a debate's, a tournament's, a
    calibration's), `~` expanded; refused when it names no folder of its own: empty, or the
    working folder, where the output would spill among the files already there. NAME is
    how the caller calls it: the option (`--out`), or the keyword of the Python API (`out`)."""
    example = f"{name} ./debate" if name.startswith("-") else f"{name}='./debate'"
    if not str(out).strip() or Path(out) == Path("."):
        raise UsageError(
            f"{name} names no folder of its own (it is empty, or the working folder)",
            hint=f"name the folder to write to, e.g. {example}",
            field="out",
        )
    try:
        return Path(out).expanduser()
    except RuntimeError:
        raise UsageError(
            f"{name} {out}: no such user", hint="check the path after ~", field="out"
        ) from None


def _out_folder(folder: Path) -> bool:
    """Make FOLDER (True) or find it made (False); its mode is set only when made."""
    try:
        folder.mkdir(mode=0o700)
        return True
    except FileExistsError:
        pass
    except FileNotFoundError:  # its parents are missing: made private too
        try:
            make_private_dir(folder.parent)
            folder.mkdir(mode=0o700)
            return True
        except FileExistsError:
            pass
        except OSError as exc:
            raise _unwritable(folder, exc) from exc
    except OSError as exc:
        raise _unwritable(folder, exc) from exc
    try:
        mode = folder.stat().st_mode  # a symlink to a folder is that folder
    except OSError as exc:
        raise _unwritable(folder, exc) from exc
    if stat.S_ISDIR(mode):
        return False
    kind = "a file" if stat.S_ISREG(mode) else "not a folder"
    raise UsageError(f"--out {folder} is {kind}, not a folder", hint="name a folder with --out")


def _fresh_folder(motion: str) -> Path:
    root = debates_dir()
    try:
        make_private_dir(root)
    except OSError as exc:
        raise _data_error(exc, "write to") from exc
    slug = re.sub(r"[^\w]+", "-", motion.lower()).strip("-")[:40] or "debate"
    name = f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{slug}"
    for n in range(1, 1000):
        path = root / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _data_error(exc, "write to") from exc
        return path
    raise UsageError(f"too many debates named {name} in {root}", hint="wait a second")


def _unwritable(path: Path, exc: OSError) -> UsageError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "free some space, or choose another folder with --out"
    elif isinstance(exc, NotADirectoryError):
        hint = "a folder on its path is a file; choose another folder with --out"
    else:
        hint = "choose a folder you can write to with --out"
    return UsageError(f"cannot write to {path}: {exc.strerror or exc}", hint=hint)
