"""The append-only journal, a debate's records read back and checked, the transcript file
loaded and its Markdown."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

try:
    import fcntl
except ImportError:  # Windows: no lock, and a running debate reads as interrupted there
    fcntl = None  # type: ignore[assignment]

from moot._version import __version__
from moot.errors import RecordError, UsageError
from moot.records.files import (
    RECORD_LIMIT,
    read_bytes,
)
from moot.records.transcript import (
    JOURNAL,
    SCHEMA_VERSION,
    Record,
    Transcript,
    TurnRecord,
)


class Journal:
    """Append-only JSONL: each record is on disk (fsynced) before the debate goes on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Only a regular file of its own, never through a symlink; a FIFO fails at once.
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(path, flags, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(key="records.journal.not_regular_file", path=path)
            os.set_blocking(fd, True)
            _mend_torn_end(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fh = os.fdopen(fd, "a", encoding="utf-8")

    def append(self, record: Record) -> None:
        """RECORD as a line of JSON, its type first."""
        data = record.model_dump(mode="json", by_alias=True)
        line = json.dumps({"type": data["type"], **data}, ensure_ascii=False)
        self._fh.write(line + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


# -- the running debate's hold on its folder ---------------------------------------------

JOURNAL_FILE = "journal.jsonl"
_TRIES = 20  # a reader's brief shared hold (`running`) is waited out, 50 ms at a time


class Held:
    """A hold on a file (a running debate's on its journal): an exclusive `flock`, kept until
    every holder in this process has let it go, or until the process ends, when the system
    drops it, so that a debate killed mid-run reads as interrupted at once and resumes.
    Within one process a hold is shared: a server that holds a debate it has queued can run
    it, and the run's own hold joins the server's."""

    def __init__(self, key: str | None) -> None:
        self._key = key

    def release(self) -> None:
        if self._key is None:
            return
        with _HERE_LOCK:
            entry = _HERE[self._key]
            entry[1] -= 1
            if entry[1] == 0:
                os.close(entry[0])  # closing the file gives the lock back
                del _HERE[self._key]
        self._key = None


# The files this process holds, by their real path: [the locked descriptor, its holders].
_HERE: dict[str, list[int]] = {}
_HERE_LOCK = threading.Lock()


def hold_file(path: Path, *, tries: int = _TRIES) -> Held | None:
    """An exclusive hold on PATH for this process (joined if it holds it already); None
    while another process holds it. A system without `flock` (Windows), or a file moot
    cannot open, holds nothing (opening it to write says why)."""
    key = os.path.realpath(path)
    with _HERE_LOCK:
        if key in _HERE:
            _HERE[key][1] += 1
            return Held(key)
    if fcntl is None:
        return Held(None)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return Held(None)
    for attempt in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if attempt < tries - 1:
                time.sleep(0.05)
            continue
        with _HERE_LOCK:
            _HERE[key] = [fd, 1]
        return Held(key)
    os.close(fd)
    return None


def hold(folder: Path) -> Held:
    """Hold the debate in FOLDER for this process while it runs; refused (a UsageError)
    while another process holds it."""
    held = hold_file(folder / JOURNAL_FILE)
    if held is None:
        raise UsageError(key="records.journal.running", field="debate", folder=folder)
    return held


def held_here(path: Path) -> bool:
    """Whether this process holds PATH (`hold_file`)."""
    with _HERE_LOCK:
        return os.path.realpath(path) in _HERE


def locked(path: Path) -> bool:
    """Whether a process, this one included, holds PATH now. Never on a system without
    `flock`."""
    if held_here(path):
        return True
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def running(folder: Path) -> bool:
    """Whether a process holds the debate in FOLDER now (`hold`): it is running."""
    return locked(folder / JOURNAL_FILE)


def running_elsewhere(folder: Path) -> bool:
    """Whether another process holds the debate in FOLDER now: none other may resume it."""
    return not held_here(folder / JOURNAL_FILE) and running(folder)


def _mend_torn_end(fd: int) -> None:
    """A journal whose last line a crash cut short: drop that line, so the next record starts
    a line of its own (a whole record that only lacks its newline gets one)."""
    size = end = os.fstat(fd).st_size
    start = 0
    while end > 0:  # where the last line starts
        chunk = os.pread(fd, min(end, 65_536), max(0, end - 65_536))
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            start = end - len(chunk) + cut + 1
            break
        end -= len(chunk)
    if start == size:
        return
    if _whole_record(os.pread(fd, size - start, start)):
        os.write(fd, b"\n")
    else:
        os.ftruncate(fd, start)
    os.fsync(fd)


def _whole_record(line: bytes) -> bool:
    """What read_journal keeps of an unterminated last line: a record it accepts."""
    try:
        _journal_record(line, path=Path(), number=0)
    except UsageError:
        return False
    return True


# -- reading records back ------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


# No number moot writes (a seed, a count of tokens, a token id) has more digits than this; a
# longer one is refused where it is, before Python's own limit on integers turns it into an
# error that names nothing.
_MOST_DIGITS = 40


class _TooLong:
    """Where a JSON integer of more than _MOST_DIGITS digits stood."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def parse_json(text: str, *, name: str, path: str, hint: str, line: bool = False) -> object:
    """TEXT as JSON, each integer bounded; what is not JSON is a RecordError naming NAME
    (the file, or with LINE the file and the line) and, for an integer too long, where it
    stands."""

    too_long: list[_TooLong] = []

    def bounded(digits: str) -> int | _TooLong:
        length = len(digits.lstrip("-"))
        if length <= _MOST_DIGITS:
            return int(digits)
        too_long.append(_TooLong(length))
        return too_long[-1]

    try:
        data = json.loads(text, parse_int=bounded)
    except RecursionError:
        raise RecordError(
            key="records.journal.nested_too_deeply_moot_s", path=path, name=name, fix=hint
        ) from None
    except json.JSONDecodeError as exc:
        what = "is not JSON" if line else f"is not valid JSON: {exc.msg} (line {exc.lineno})"
        raise RecordError(
            key="records.journal.error", path=path, name=name, what=what, fix=hint
        ) from None
    found = _too_long(data) if too_long else None  # walked only when there is one to find
    if found is not None:
        where, digits = found
        raise RecordError(
            key="records.journal.integer_digits_longer_than_any",
            path=path,
            where=where,
            name=name,
            value=where or "the record",
            digits=digits,
            fix=hint,
        )
    return data


def _too_long(data: object) -> tuple[str, int] | None:
    """The JSON path of the first integer parse_json found too long, and its digits; walked
    without recursion (a record may be nested as deep as the parser allows)."""
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, _TooLong):
            return where, value.digits
        items: list[tuple[Any, object]] = []
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        for key, child in reversed(items):  # in the order they are written
            stack.append((f"{where}.{key}" if where else str(key), child))
    return None


def read_records(path: Path) -> list[Record]:
    """The records of a journal, each validated against moot's vocabulary (`transcript`). A
    torn last line (a crash mid-write: no newline after it) is ignored; any other line that
    is not a record is an error naming it. Only the regular file moot wrote there is read,
    never a symlink."""
    data = read_bytes(path, what="journal", limit=RECORD_LIMIT, follow_symlinks=False)
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the journal ends with its newline
    records = [
        (number, _journal_record(line, path=path, number=number))
        for number, line in enumerate(lines, start=1)
    ]
    if torn.strip():
        try:
            records.append(
                (len(lines) + 1, _journal_record(torn, path=path, number=len(lines) + 1))
            )
        except UsageError:
            pass  # cut short by a crash: the turn it held is run again
    _check_turn_order(records, path=path)
    return [record for _, record in records]


def read_journal(path: Path) -> list[dict[str, Any]]:
    """read_records, each record as the JSON it was read from (the fields it holds)."""
    return [
        record.model_dump(mode="json", by_alias=True, exclude_unset=True)
        for record in read_records(path)
    ]


JOURNAL_HINT = "the journal is damaged; start the debate again"


def _journal_record(line: bytes, *, path: Path, number: int) -> Record:
    where, hint = f"{path}: line {number}", JOURNAL_HINT
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            key="records.journal.not_utf_8_text_byte", path=str(path), where=f"line {number}",
            where_value=where, start=exc.start, fix=hint,
        ) from None  # fmt: skip
    try:
        record = parse_json(text, name=where, path=str(path), hint=hint, line=True)
        if not isinstance(record, dict):
            raise RecordError(
                key="records.journal.expected_object", path=str(path), where_value=where, fix=hint
            )
        if not isinstance(record.get("type"), str):
            raise RecordError(
                key="records.journal.type_expected_string",
                path=str(path),
                where_value=where,
                fix=hint,
            )
        return validate(JOURNAL, record, name=where, hint=hint)
    except RecordError as exc:  # the line, wherever in it the fault is
        raise RecordError(
            key="records.journal.on_line",
            path=str(path),
            where=f"line {number}",
            error=exc,
            fix=hint,
        ) from None


def _check_turn_order(records: list[tuple[int, Record]], *, path: Path) -> None:
    """The journal's turns are numbered 0, 1, 2… in the order they were written: a resumed
    debate reuses each by its place, so a number that skips or repeats is a damaged journal."""
    turns = 0
    for line, record in records:
        if not isinstance(record, TurnRecord):
            continue
        if record.index != turns:
            raise RecordError(
                key="records.journal.line_index_where_turn_comes",
                path=str(path),
                where=f"line {line}",
                path_value=path,
                line=line,
                index=record.index,
                turns=turns,
            )
        turns += 1


def check_version(record: dict[str, Any], *, name: str, hint: str) -> None:
    """A record says which moot wrote it, and from schema 1 which version of the records it
    holds; one written by a newer moot, or of a newer schema, is refused (its fields may mean
    something this moot does not know)."""
    version = record.get("moot_version")
    if version is None:
        raise UsageError(key="records.journal.moot_version_missing", name=name, fix=hint)
    parsed = _version(version)
    if parsed is None:
        raise UsageError(
            key="records.journal.moot_version_not_version", name=name, version=version, fix=hint
        )
    if parsed > (_version(__version__) or ()):
        raise UsageError(
            key="records.journal.was_written_by_moot_newer",
            name=name,
            version=version,
            version2=__version__,
        )
    schema = record.get("schema")
    if isinstance(schema, int) and schema > SCHEMA_VERSION:  # not an integer: validation says so
        raise UsageError(
            key="records.journal.holds_records_schema_newer_than",
            name=name,
            schema=schema,
            schema_version=SCHEMA_VERSION,
        )


_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:[.+-]?[A-Za-z][\w.+-]*)?")


def _version(value: object) -> tuple[int, ...] | None:
    """(0, 2) of "0.2.0" or "0.2.0rc1"; None if VALUE is not a version."""
    found = _VERSION.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return None
    parts = [int(p) for p in found.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def validate(
    model: type[M] | TypeAdapter[M], data: object, *, name: str, hint: str, prefix: str = ""
) -> M:
    """DATA (parsed JSON) as MODEL, strictly: a JSON type that is not the field's is refused,
    never converted. One line naming NAME and the field, else a UsageError. MODEL may be a
    union told apart by its `type` (a journal's records): the fault is named in the record
    its type says it is."""
    text = json.dumps(data)
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_json(text, strict=True)
        return model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":  # valid JSON, past the parser's depth
            raise RecordError(
                key="records.journal.nested_too_deeply_moot_s_2", path=name, name=name, fix=hint
            ) from None
        if first["type"] == "union_tag_invalid":
            kind = first["ctx"]["tag"]
            raise RecordError(
                key="records.journal.type_not_record_moot_knows", path=name, where="type",
                name=name, kind=kind, fix=hint,
            ) from None  # fmt: skip
        where = field_error(exc, prefix=prefix, tagged=isinstance(model, TypeAdapter))
        raise RecordError(
            key="records.journal.error_2",
            path=name,
            where=where.partition(":")[0],
            name=name,
            where_value=where,
            fix=hint,
        ) from None


_EXPECTED = {
    "string_type": "expected a string",
    "int_type": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "bool_type": "expected true or false",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "missing": "missing",
    "extra_forbidden": "not a field moot knows",
    "none_required": "expected null",
}


def field_error(exc: ValidationError, *, prefix: str = "", tagged: bool = False) -> str:
    """`turns.3.text: expected a string`: the first problem, where it is and what it needs
    (TAGGED: in a union told apart by its type, whose tag leads the error's place)."""
    first = exc.errors()[0]
    loc = first["loc"][1:] if tagged else first["loc"]
    where = ".".join([*([prefix] if prefix else []), *(str(part) for part in loc)])
    what = _EXPECTED.get(first["type"]) or first["msg"][0].lower() + first["msg"][1:]
    return f"{where or 'the record'}: {what}"


def load(path: Path) -> tuple[Transcript, dict[str, Any]]:
    """A saved transcript.json, read bounded and validated strictly (one written by a newer
    moot refused), with its raw record; a RecordError naming the file and the field."""
    return read_transcript(path)


def read_transcript(
    path: Path, *, follow_symlinks: bool = True, versioned: bool = True
) -> tuple[Transcript, dict[str, Any]]:
    """load, for each reader of a transcript: history shows one written by a newer moot
    (VERSIONED false), and reads a saved debate's own file only, never a symlink."""
    from moot.records.files import read_text

    text = read_text(path, what="transcript", limit=RECORD_LIMIT, follow_symlinks=follow_symlinks)
    name, hint = str(path), "pass the transcript.json of a debate moot saved"
    data = parse_json(text, name=name, path=name, hint=hint)
    if not isinstance(data, dict):
        raise RecordError(
            key="records.journal.not_moot_transcript_expected_object",
            path=name,
            name=name,
            fix=hint,
        )
    if versioned:
        check_version(data, name=name, hint=hint)
    transcript = validate(Transcript, data, name=name, hint=hint)
    for place, turn in enumerate(transcript.turns):
        if turn.index != place:  # a replay and a re-judging find each turn by its place
            where = f"turns.{place}.index"
            raise RecordError(
                key="records.journal.where_turn_stands",
                path=name,
                where=where,
                name=name,
                where_value=where,
                index=turn.index,
                place=place,
                fix=hint,
            )
    return transcript, data


def held_round(rnd: int | None, *, last: int, closing: bool = False) -> int | None:
    """The round a step belongs to, as a document names it: None after the rounds. moot
    numbers a step after the rounds None; transcripts and journals written before numbered
    it one past the last round held, so a CLOSING step (one that only comes after the
    rounds) or a round past LAST (the most rounds the debate could hold) reads as None too."""
    if rnd is None or closing or rnd > last:
        return None
    return rnd


def render_markdown(
    title: str, sections: list[tuple[str, str]], footer: str = "", *, notes: Sequence[str] = ()
) -> str:
    """A document of headed sections, in the order given; NOTES (Markdown paragraphs: what
    the document is built on) come first, under the title."""
    parts = [f"# {title}", ""]
    for note in notes:
        parts += [note, ""]
    for heading, body in sections:
        parts += [f"## {heading}", "", body.strip() or "—", ""]
    if footer:
        parts += ["---", "", footer, ""]
    return "\n".join(parts)
