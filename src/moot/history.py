"""Saved debates: list, find, read and delete them.

A debate is saved in a folder of moot's data directory (`debates/`), or in the folder a
caller named (`--out`, `out=`): such a folder outside the data directory is listed in its
index (`saved-elsewhere/`, one small file for each, named by the debate's id), so that the
history finds it too. Every command names a saved debate the same way (`find`): an id, a
unique prefix of one, a folder, or `last`.

A debate folder holds moot's own files: `journal.jsonl` (from the first turn), and once it
finished `transcript.json` and its format's document (`debate.md`, `decision.md`). Only
these are read, only as regular files in the folder (never through a symlink), and each
under a size limit: a folder is untrusted input like any other file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from moot import speeches
from moot.config import data_dir, debates_dir
from moot.errors import MootError, RecordError, UsageError
from moot.models.labels import model_labels
from moot.records import files
from moot.records.files import make_private_dir
from moot.records.journal import held_here, hold_file, read_records, read_transcript, running
from moot.records.transcript import (
    CitationSummary,
    DebateRecord,
    Record,
    Transcript,
    Turn,
    TurnRecord,
    citation_summary,
)

JOURNAL = "journal.jsonl"
TRANSCRIPT = "transcript.json"
JUDGED = "judged"  # `moot judge` writes judged/<judge>.json beside the transcript
# A debate given documents caches their paragraphs and index here (moot.evidence).
EVIDENCE = "evidence"
_EVIDENCE_PARTS = {"paragraphs", "index"}
LAST = "last"  # names the most recent saved debate
ELSEWHERE = "saved-elsewhere"  # the index of debates saved outside the data directory
_ENTRY_LIMIT = 16 * files.KIB  # an index entry: one folder's path
_CANDIDATES = 5  # an ambiguous prefix's candidates, named in its error

NONE_SAVED = 'no saved debates yet: `moot run "a motion"` runs one and saves it'


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
    entry: Path | None = None  # its entry in the index: saved outside the data directory
    error: MootError | None = field(default=None, compare=False, repr=False)  # the problem's
    dry_run: bool = False  # scripted words (`--dry-run`), no model's: said beside its status
    unjudged: bool = False  # finished, but its judge's last judging step gave no answer
    running: bool = False  # unfinished, and a process holds it now (`journal.hold`)

    @property
    def status(self) -> str:
        """unreadable, finished, unjudged (finished, the judge did not answer), running (in
        a process that holds it now), or interrupted (no process holds it: resumable)."""
        if self.problem is not None:
            return "unreadable"
        if self.finished:
            return "unjudged" if self.unjudged else "finished"
        return "running" if self.running else "interrupted"


# -- reading a debate folder -------------------------------------------------------------


def _read_text(path: Path, what: str) -> str:
    return files.read_text(path, what=what, limit=files.RECORD_LIMIT, follow_symlinks=False)


def _read_transcript(path: Path) -> dict[str, Any]:
    """The saved transcript, checked as replay and check read it: a record that does not
    validate is refused with the field it fails on (one written by a newer moot is shown)."""
    return _saved_transcript(path)[1]


def _saved_transcript(path: Path) -> tuple[Transcript, dict[str, Any]]:
    try:
        saved, data = read_transcript(path, follow_symlinks=False, versioned=False)
    except RecordError as exc:
        raise RecordError(
            key="history.not_moot_s_record", path=exc.path, where=exc.where, error=exc
        ) from None
    _check_record(path, "saved transcript", data)
    return saved, data


def _read_journal(path: Path) -> list[Record]:
    """The journal's records, checked as resume reads them: a torn last line (a crash
    mid-write) is left out; any other line that is not a record is refused, naming it."""
    records = read_records(path)
    if not records:
        return records
    if not isinstance(records[0], DebateRecord):
        raise RecordError(
            key="history.journal_not_moot_s_line", path=str(path), where="line 1", path_value=path
        )
    return records


def _check_record(path: Path, what: str, data: dict[str, Any]) -> None:
    for key in ("format", "motion"):
        if not isinstance(data.get(key, ""), str):
            raise UsageError(key="history.not_moot_s_not_text", what=what, path=path, key_value=key)


def _summary(folder: Path) -> SavedDebate | None:
    """The debate saved in FOLDER; None when it holds none of moot's files. A folder whose
    files cannot be read is a debate all the same, with the problem named."""
    transcript, journal = folder / TRANSCRIPT, folder / JOURNAL
    unjudged = False
    try:
        if os.path.lexists(transcript):
            saved, data = _saved_transcript(transcript)
            turns, finished, unjudged = len(data.get("turns", [])), True, ended_unjudged(saved)
        elif os.path.lexists(journal):
            records = _read_journal(journal)
            data = records[0].model_dump() if records else {}
            turns, finished = sum(isinstance(r, TurnRecord) for r in records), False
        else:
            return None
    except UsageError as exc:
        return SavedDebate(folder.name, folder, "?", "?", 0, False, problem=exc.message, error=exc)
    return SavedDebate(
        folder.name,
        folder,
        str(data.get("format", "?")),
        str(data.get("motion", "?")),
        turns,
        finished,
        language=str(data.get("language", "en")),
        dry_run=bool((data.get("params") or {}).get("dry_run")),
        unjudged=unjudged,
        running=not finished and running(folder),
    )


def ended_unjudged(saved: Transcript) -> bool:
    """Whether the finished debate SAVED ended without its judge's answer (as its format
    says, `formats.base.unjudged`): saved or not, as a decision is only with --out."""
    from moot.formats import get_format
    from moot.formats.base import unjudged as without_answer

    try:
        fmt = get_format(saved.format)
    except UsageError:  # a format this moot does not know: nothing to say of its judge
        return False
    return fmt.judging is not None and without_answer(saved, fmt.judging)


def _data_error(exc: OSError, doing: str) -> UsageError:
    """What is wrong with moot's data folder, named as the user can fix it: MOOT_HOME."""
    home, root = data_dir(), debates_dir()
    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        on_the_way = (root, *root.parents)
        bad = next((p for p in on_the_way if os.path.lexists(p) and not p.is_dir()), root)
        return UsageError(key="history.moot_s_data_folder_not", bad=bad)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return UsageError(
            key="history.cannot_moot_s_data_folder_2", doing=doing, home=home, strerror=exc.strerror
        )
    return UsageError(
        key="history.cannot_moot_s_data_folder", doing=doing, home=home, value=exc.strerror or exc
    )


def list_debates(*, elsewhere: bool = False) -> list[SavedDebate]:
    """Every debate in moot's data directory, oldest first (their names start with the
    time); a folder that is a symlink, or holds none of moot's files, is not one. With
    ELSEWHERE, the debates its index lists outside it too (`--out`), in the same order."""
    root = debates_dir()
    try:
        with os.scandir(root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        entries = []  # nothing saved here yet
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
    if elsewhere:
        found = sorted([*found, *_indexed()], key=lambda d: d.id)
    return found


def find(ref: str, *, readable: bool = True) -> SavedDebate:
    """The saved debate REF names, as every command names one: its id (the folder's name in
    the data directory, or its index entry's), a unique prefix of an id, its folder (or the
    transcript.json or journal.jsonl in it), or `last`, the most recent. With READABLE, a
    debate whose files cannot be read is refused, naming the problem."""
    if not ref.strip():
        raise UsageError(key="history.name_saved_debate")
    if ref == LAST:
        saved = list_debates(elsewhere=True)
        if not saved:
            raise UsageError(key="history.there_no_saved_debate_yet")
        return _checked(saved[-1], readable)
    path = _expand(ref)
    folder = path.parent if path.name in (TRANSCRIPT, JOURNAL) and path.is_file() else path
    if folder.is_dir():
        found = _summary(folder)
        if found is not None:
            return _checked(_as_indexed(found), readable)
    if _is_path(ref) and not os.path.lexists(path):
        raise UsageError(key="history.does_not_exist", ref=ref)
    matches = [d for d in list_debates(elsewhere=True) if d.id.startswith(ref)]
    exact = [d for d in matches if d.id == ref]
    if len(exact) == 1 or len(matches) == 1:
        return _checked((exact or matches)[0], readable)
    if matches:
        named = [d.id if d.entry is None else f"{d.id} ({d.path})" for d in matches]
        more = len(named) - _CANDIDATES
        listed = ", ".join(named[:_CANDIDATES]) + (f" and {more} more" if more > 0 else "")
        raise UsageError(
            key="history.names_debates", ref=ref, n_matches=len(matches), listed=listed
        )
    if folder.is_dir():
        raise UsageError(
            key="history.not_saved_debate_holds_no",
            folder=folder,
            journal=JOURNAL,
            transcript=TRANSCRIPT,
        )
    raise UsageError(key="history.no_saved_debate", ref=ref)


def transcript(ref: str) -> Path:
    """The transcript.json REF names, for a command that reads one (check, replay, judge): a
    file given by its path is read as it is, wherever it is; anything else names a saved
    debate as `find` does, which must have finished."""
    path = _expand(ref)
    if os.path.lexists(path) and not path.is_dir():
        return path
    debate = find(ref)
    saved = debate.path / TRANSCRIPT
    if not os.path.lexists(saved):
        if debate.running:  # not to be resumed: it goes on in the process that holds it
            raise UsageError(key="history.still_running", id=debate.id, transcript=TRANSCRIPT)
        raise UsageError(key="history.did_not_finish_has_no", id=debate.id, transcript=TRANSCRIPT)
    return saved


def _is_path(ref: str) -> bool:
    """REF is written as a path (an id never holds a separator nor starts with . or ~)."""
    return os.sep in ref or "/" in ref or ref.startswith((".", "~"))


def _expand(ref: str) -> Path:
    try:
        return Path(ref).expanduser()
    except RuntimeError:  # ~user of no such user
        return Path(ref)


def _in_data_dir(debate: SavedDebate) -> bool:
    """DEBATE is a folder of moot's data directory (not a symlink to one elsewhere)."""
    path = debate.path
    return not path.is_symlink() and path.parent.resolve() == debates_dir().resolve()


def _checked(debate: SavedDebate, readable: bool) -> SavedDebate:
    if readable and debate.problem is not None:
        # One saved elsewhere is not deleted once unreadable (deletable): its owner removes it.
        why = debate.error or debate.problem
        if _in_data_dir(debate):
            raise UsageError(key="history.unreadable", error=why, id=debate.id)
        raise UsageError(key="history.unreadable_elsewhere", error=why)
    return debate


# -- the index of debates saved elsewhere ------------------------------------------------


def elsewhere_dir() -> Path:
    """The index of the debates saved outside the data directory: one file for each, named
    by the debate's id, holding its folder's path."""
    return data_dir() / ELSEWHERE


def _entries() -> list[tuple[Path, Path | None]]:
    """Each index entry that can be read, and the folder it names (None: the entry is not
    one moot wrote)."""
    root = elsewhere_dir()
    try:
        with os.scandir(root) as it:
            names = sorted(e.name for e in it if e.name.endswith(".json"))
    except OSError:
        return []  # none yet, or unreadable: the data directory's own debates are listed
    found: list[tuple[Path, Path | None]] = []
    for name in names:
        entry = root / name
        try:
            text = files.read_text(entry, what="entry", limit=_ENTRY_LIMIT, follow_symlinks=False)
        except MootError:
            continue  # gone meanwhile, or not readable now: left as it is
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        folder = data.get("path") if isinstance(data, dict) else None
        named = Path(folder) if isinstance(folder, str) and os.path.isabs(folder) else None
        found.append((entry, named))
    return found


def _indexed() -> list[SavedDebate]:
    """The debates the index lists, each under its entry's id; an entry whose folder is gone
    or holds no debate any more is skipped, and pruned where that is sure (its folder's parent
    is there: a drive that is not mounted keeps its entries)."""
    found = []
    for entry, folder in _entries():
        if folder is None:
            _forget(entry)  # not an entry moot wrote
            continue
        try:
            st = os.lstat(folder)
        except OSError as exc:
            if isinstance(exc, (FileNotFoundError, NotADirectoryError)) and folder.parent.is_dir():
                _forget(entry)
            continue
        debate = _summary(folder) if stat.S_ISDIR(st.st_mode) else None
        if debate is None:
            _forget(entry)  # a file now, a symlink, or a folder of no debate
            continue
        found.append(replace(debate, id=entry.name.removesuffix(".json"), entry=entry))
    return found


def _as_indexed(debate: SavedDebate) -> SavedDebate:
    """DEBATE, found by its folder, under its index entry's id if the index lists it."""
    if _in_data_dir(debate):
        return debate
    for entry in _entry_of(debate.path):
        return replace(debate, id=entry.name.removesuffix(".json"), entry=entry)
    return debate


def _entry_of(folder: Path) -> list[Path]:
    """The index entries that name FOLDER."""
    try:
        real = folder.resolve()
    except (OSError, RuntimeError):
        return []
    return [entry for entry, named in _entries() if named == real]


def _index(folder: Path, motion: str) -> Path | None:
    """List FOLDER, just claimed outside the data directory, in the index under a fresh id
    (as a folder in the data directory would be named); an older entry for it goes. The
    debate is saved all the same where the index cannot be written: it is only not listed."""
    try:
        real = folder.resolve()
        if real.is_relative_to(data_dir().resolve()):
            return None  # in the data directory (a calibration's debates): not listed
        for old in _entry_of(real):
            _forget(old)
        root = make_private_dir(elsewhere_dir())
        record = json.dumps({"path": str(real)}, ensure_ascii=False) + "\n"
        for name in _names(motion):
            if os.path.lexists(debates_dir() / name):
                continue  # the id of a debate in the data directory
            if files.create_atomic(root / f"{name}.json", record):
                return root / f"{name}.json"
    except (OSError, RuntimeError, MootError):
        pass
    return None


def _forget(entry: Path) -> None:
    try:
        entry.unlink()
    except OSError:
        pass


def document(debate: SavedDebate) -> str | None:
    """The debate's document as its format wrote it, or None when there is none (it did
    not finish, or its format is not one moot knows)."""
    from moot.formats import NAMES, get_format

    if debate.format not in NAMES:
        return None
    path = debate.path / get_format(debate.format).document
    if not os.path.lexists(path):
        return None
    return speeches.brief(_read_text(path, "saved document"))


def write_export(path: Path, text: str) -> None:
    """Write an exported debate to PATH, a new file: one that exists is never replaced."""
    try:
        created = files.create_atomic(path, text)
    except OSError as exc:
        raise UsageError(
            key="history.cannot_write_export", path=str(path), value=exc.strerror or str(exc)
        ) from None
    if not created:
        raise UsageError(key="history.export_exists", path=str(path))


def speeches_of(debate: SavedDebate) -> list[Turn]:
    """The debate's finished turns, in order, as records: from its transcript, or from its
    journal if it did not finish."""
    transcript, journal = debate.path / TRANSCRIPT, debate.path / JOURNAL
    if os.path.lexists(transcript):
        return list(_saved_transcript(transcript)[0].turns)
    if os.path.lexists(journal):
        return [r.turn() for r in _read_journal(journal) if isinstance(r, TurnRecord)]
    return []


def full_markdown(debate: SavedDebate, *, labelled: bool = False) -> str:
    """The debate's brief (when it finished) and every speech after it, in its language;
    LABELLED: each speech's model by its short label (a screen's), not its full reference."""
    brief = document(debate) or ""
    said = speeches_of(debate)
    models = model_labels(t.model for t in said) if labelled else None
    every = speeches.markdown(said, fmt=debate.format, language=debate.language, models=models)
    return f"{brief.rstrip()}\n\n{every}" if brief.strip() else every


def html_page(debate: SavedDebate) -> str:
    """The debate as one self-contained HTML page: its brief and every speech, escaped."""
    return speeches.html_page(
        debate.motion,
        document(debate) or "",
        speeches_of(debate),
        fmt=debate.format,
        language=debate.language,
    )


def citations(debate: SavedDebate) -> CitationSummary | None:
    """Each seat's and each model's citations and what checking them found, the seats in
    the order they first spoke; None for a debate given no documents. Counted from the
    turns' ledgers (a transcript's own summary sums the same)."""
    said = speeches_of(debate)
    if not any(t.evidence is not None for t in said):
        return None
    return citation_summary(said)


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


def passages(debate: SavedDebate) -> dict[str, str]:
    """The text of each passage of its documents a saved debate kept, by id: its
    transcript's evidence ledger (every passage a turn was shown or cited) once it
    finished; before, the passages each turn its journal holds cited (a journal written
    before they were kept there: none). A debate given no documents: {}. Read from the
    debate's own folder alone, never from the documents."""
    transcript, journal = debate.path / TRANSCRIPT, debate.path / JOURNAL
    if os.path.lexists(transcript):
        saved = _saved_transcript(transcript)[0]
        return dict(saved.evidence.passages) if saved.evidence else {}
    kept: dict[str, str] = {}
    if os.path.lexists(journal):
        for r in _read_journal(journal):
            if isinstance(r, TurnRecord):
                kept.update(r.passages)
    return kept


# -- deleting ----------------------------------------------------------------------------


def deletable(ref: str | SavedDebate) -> SavedDebate:
    """The debate REF names, if moot may delete it: one it saved in its data directory (a
    folder there, not a symlink to one elsewhere), readable or not; or one its index lists
    elsewhere whose folder still holds nothing but a readable debate moot wrote."""
    debate = ref if isinstance(ref, SavedDebate) else find(ref, readable=False)
    if _in_data_dir(debate):
        return debate
    if debate.entry is None:
        raise UsageError(key="history.not_moot_s_data_directory", path=debate.path)
    _only_moots(debate)
    return debate


def _only_moots(debate: SavedDebate) -> None:
    """Refuse to delete the folder of DEBATE, saved elsewhere, unless it still looks like a
    debate moot wrote: a folder (not a symlink), its files readable, and nothing in it but
    the journal, the transcript, a format's document, `moot judge`'s judged/*.json and the
    cache of its documents (evidence/)."""
    from moot.formats import NAMES, get_format

    folder = debate.path
    yourself = f"moot deletes only a folder of its own files; remove {folder} yourself"
    if folder.is_symlink() or not folder.is_dir():
        raise UsageError(key="history.no_longer_debate_s_folder", folder=folder, fix=yourself)
    if debate.problem is not None:
        raise UsageError(key="history.no_longer_holds_debate_moot", folder=folder, fix=yourself)
    own = {JOURNAL, TRANSCRIPT, *(get_format(name).document for name in NAMES)}
    try:
        for entry in os.scandir(folder):
            if entry.name in own and entry.is_file(follow_symlinks=False):
                continue
            if entry.name == EVIDENCE and entry.is_dir(follow_symlinks=False):
                parts = {e.name for e in os.scandir(entry.path)}
                if parts <= _EVIDENCE_PARTS:
                    continue
            if entry.name == JUDGED and entry.is_dir(follow_symlinks=False):
                stray = [
                    j.name
                    for j in os.scandir(entry.path)
                    if not (j.name.endswith(".json") and j.is_file(follow_symlinks=False))
                ]
                if not stray:
                    continue
                raise UsageError(
                    key="history.holds_which_moot_did_not_2",
                    folder=folder,
                    judged=JUDGED,
                    stray=stray[0],
                    fix=yourself,
                )
            raise UsageError(
                key="history.holds_which_moot_did_not", folder=folder, name=entry.name, fix=yourself
            )
    except OSError as exc:
        raise UsageError(
            key="history.cannot_read", folder=folder, value=exc.strerror or exc, fix=yourself
        ) from None


def remove(ref: str | SavedDebate) -> SavedDebate:
    """Delete one debate moot saved: in its data directory, or elsewhere as `deletable`
    allows (never another folder); its index entry goes with it. A debate a process runs
    now is refused (a UsageError, `history.running_not_deleted`): the debate is held while
    it is deleted (`journal.hold_file`), so none can start on it between the look and the
    deletion."""
    debate = deletable(ref)
    journal = debate.path / JOURNAL
    held = None if held_here(journal) else hold_file(journal)  # this process's runs too
    if held is None:
        raise UsageError(key="history.running_not_deleted", field="debate", id=debate.id)
    try:
        _rmtree(debate.path)
    finally:
        held.release()
    if debate.entry is not None:
        _forget(debate.entry)
    return debate


@dataclass(frozen=True)
class Cleared:
    """What `remove_all` did: the debates deleted, each left because a process runs it,
    and each that could not be deleted, with why."""

    gone: list[SavedDebate]
    failed: list[tuple[SavedDebate, MootError]]
    running: list[SavedDebate] = field(default_factory=list)


def remove_all(*, elsewhere: bool = False) -> Cleared:
    """Delete every debate `list_debates` lists, and nothing else in the data directory;
    one that a process runs now is left, one that cannot be deleted is reported, and the
    others are deleted all the same. With ELSEWHERE, the debates the index lists too, each
    as `remove` deletes one."""
    gone, failed, left = [], [], []
    for debate in list_debates(elsewhere=elsewhere):
        try:
            remove(debate)
        except MootError as exc:
            if exc.key == "history.running_not_deleted":
                left.append(debate)
            else:
                failed.append((debate, exc))
        else:
            gone.append(debate)
    return Cleared(gone, failed, left)


def _rmtree(path: Path) -> None:
    try:
        shutil.rmtree(path)  # never follows a symlink inside the folder
    except OSError as exc:
        raise MootError(
            key="history.could_not_delete", path=path, value=exc.strerror or exc
        ) from None


# -- a folder for a new debate -----------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A folder held by one new debate: its journal exists, so no other debate can take it."""

    path: Path
    created: bool  # the folder was made for this debate
    entry: Path | None = None  # its entry in the index of debates saved elsewhere

    def release(self) -> None:
        """Give the folder back if the debate wrote nothing: its empty journal goes, with its
        index entry, and the folder too when it was made for the debate and is empty."""
        try:
            journal = self.path / JOURNAL
            if journal.stat().st_size == 0:
                if self.entry is not None:
                    _forget(self.entry)
                journal.unlink()
            if self.created:
                self.path.rmdir()  # fails, harmlessly, unless the folder is empty
        except OSError:
            pass


def claim(out: Path | str | None, *, motion: str, listed: bool = True) -> Claim:
    """The folder a new debate writes to: OUT, or a fresh one in moot's data directory,
    named after the time and MOTION (the motion as the user gave it: every front end claims
    here, so a debate's id reads the same from the terminal, the page and Python).

    Two debates never share one: a fresh folder is made with an exclusive mkdir (another
    debate on the same motion in the same second gets `…-2`), and the journal is created
    exclusively, so a folder that holds a debate (or is being claimed) is refused. OUT may
    exist (its other files are left alone, and so is its mode) or is made private. An OUT
    outside the data directory is LISTED in its index under an id named as a fresh folder
    would be, so that `moot history` finds it.
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
    entry = _index(folder, motion) if out is not None and listed else None
    return Claim(folder, created, entry)


def _holds_a_debate(folder: Path) -> UsageError:
    return UsageError(key="history.already_holds_debate", folder=folder)


def out_folder(out: Path | str, *, name: str = "--out") -> Path:
    """The folder OUT names for a command's output (a debate's, a tournament's, a
    calibration's), `~` expanded; refused when it names no folder of its own: empty, or the
    working folder, where the output would spill among the files already there. NAME is
    how the caller calls it: the option (`--out`), or the keyword of the Python API (`out`)."""
    example = f"{name} ./debate" if name.startswith("-") else f"{name}='./debate'"
    if not str(out).strip() or Path(out) == Path("."):
        raise UsageError(
            key="history.names_no_folder_own_empty", field="out", name=name, example=example
        )
    try:
        return Path(out).expanduser()
    except RuntimeError:
        raise UsageError(key="history.no_such_user", field="out", name=name, out=out) from None


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
    raise UsageError(key="history.out_not_folder", folder=folder, kind=kind)


def _fresh_folder(motion: str) -> Path:
    root = debates_dir()
    try:
        make_private_dir(root)
    except OSError as exc:
        raise _data_error(exc, "write to") from exc
    names = _names(motion)
    for name in names:
        path = root / name
        if os.path.lexists(elsewhere_dir() / f"{name}.json"):
            continue  # the id of a debate saved elsewhere
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _data_error(exc, "write to") from exc
        return path
    raise UsageError(key="history.too_many_debates_named", names=names[0], root=root)


def _names(motion: str) -> list[str]:
    """The ids a debate begun now on MOTION may take, in turn: the time and the motion's
    first words (`20250101-120000-cities-should-ban-cars`), then `…-2`, `…-3`."""
    slug = re.sub(r"[^\w]+", "-", motion.lower()).strip("-")[:40] or "debate"
    name = f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{slug}"
    return [name if n == 1 else f"{name}-{n}" for n in range(1, 1000)]


def _unwritable(path: Path, exc: OSError) -> UsageError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "free some space, or choose another folder with --out"
    elif isinstance(exc, NotADirectoryError):
        hint = "a folder on its path is a file; choose another folder with --out"
    else:
        hint = "choose a folder you can write to with --out"
    return UsageError(key="history.cannot_write", path=path, value=exc.strerror or exc, fix=hint)
