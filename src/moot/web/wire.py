"""What the page reads: events, saved debates and documents as plain JSON-ready values."""

from __future__ import annotations

import importlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from moot import history
from moot.errors import MootError
from moot.events import EVENTS, Event, Scored, TurnFinished
from moot.formats import NAMES as FORMATS
from moot.formats import get_format
from moot.models.labels import model_labels
from moot.records import files
from moot.records.journal import read_records
from moot.records.transcript import DebateRecord, Turn
from moot.web.finished import when
from moot.words import words

Wire = dict[str, Any]

# The turn fields the page shows; the rest (seeds, token counts, the generated tokens) stay in
# transcript.json. Every field a Turn requires is among them, so what the page is sent of a
# finished turn still reads back as its event (`moot schema events`).
_TURN_FIELDS = (
    "index",
    "round",
    "role",
    "step",
    "model",
    "temperature",
    "text",
    "reasoning",  # a thinking model's own: shown folded beside its turn, never in its text
    "accepted",
    "note",
    "limit",
    "length",
    "cut",
    "flags",
    "data",
    "completion_tokens",
    "duration_ms",
    "evidence",  # the ledger: the passages shown, each citation and what its check found
)


def event(ev: Event, language: str = "en") -> Wire:
    """One debate event as the page reads it, in a debate in LANGUAGE: the event's JSON (a
    score and the stop: the journal's records as they are written), a finished turn's the
    fields of it the page shows, its flags and note in LANGUAGE's words. Each validates
    against `moot schema events` and reads back through `EVENTS`."""
    if isinstance(ev, TurnFinished):
        dumped = EVENTS.dump_python(ev, mode="json", exclude={"turn"})
        return {**dumped, "turn": turn(ev.turn, language)}
    return EVENTS.dump_python(ev, mode="json")


def turn(t: Turn | dict[str, Any], language: str = "en") -> Wire:
    """A turn's fields the page shows; its flags and note (recorded in English) as a debate
    in LANGUAGE shows them."""
    data = t.model_dump(mode="json") if isinstance(t, Turn) else t
    shown = {name: data.get(name) for name in _TURN_FIELDS}
    say = words(language).shown
    if isinstance(shown["flags"], list):
        shown["flags"] = [say(f) if isinstance(f, str) else f for f in shown["flags"]]
    if isinstance(shown["note"], str):
        shown["note"] = say(shown["note"])
    return shown


# -- documents ----------------------------------------------------------------------------


def document_html(markdown: str) -> str:
    """A document's Markdown as HTML the page can show as it is: raw HTML in it is escaped,
    links and images stay text (nothing on the page points anywhere but the server)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.disable(["image", "link", "autolink", "html_inline", "html_block"])
    return md.render(markdown)


# -- saved debates ------------------------------------------------------------------------


def saved_summary(debate: history.SavedDebate, record: dict[str, Any] | None = None) -> Wire:
    """A saved debate as the history lists it: what tells two on one motion apart (when it
    began, its format, its models) with its state. RECORD: its transcript or journal header,
    read here when not given."""
    if record is None:  # the journal's first line says it, without reading every turn
        record = _header(debate.path) or _readable_record(debate)
    refs = _mapping(record.get("refs"))
    models = list(dict.fromkeys(str(r) for r in refs.values()))
    return {
        "id": debate.id,
        "format": debate.format,
        "motion": debate.motion,
        "turns": debate.turns,
        "status": debate.status,
        "problem": debate.problem,
        "date": when(debate.id),
        "models": models,
        "labels": model_labels(models),
    }


_HEADER_LIMIT = 256 * files.KIB  # a journal's header line: its settings, never its turns


def _header(folder: Path) -> dict[str, Any]:
    """A saved debate's journal header (its first line), or {} where it has none to read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW
    try:
        fd = os.open(folder / history.JOURNAL, flags)
    except OSError:
        return {}
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        with os.fdopen(os.dup(fd), "rb") as fh:
            line = fh.readline(_HEADER_LIMIT)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        data = json.loads(line)
    except ValueError:
        return {}
    return data if isinstance(data, dict) and data.get("type") == "debate" else {}


def _readable_record(debate: history.SavedDebate) -> dict[str, Any]:
    if debate.problem is not None:
        return {}
    try:
        return _record(debate.path)
    except MootError:
        return {}


def saved_debate(debate: history.SavedDebate) -> Wire:
    """A saved debate as the page shows it: its header, turns, scores and document."""
    record = _record(debate.path)
    language = str(record.get("language")) if record.get("language") in ("en", "zh") else "en"
    fmt = debate.format
    turns = [turn(t, language) for t in history.turns(debate)]
    for t in turns:
        t["label"] = turn_label(fmt, language, str(t.get("role")), str(t.get("step")))
    markdown = history.document(debate) if debate.finished else None
    params = _mapping(record.get("params"))
    threshold = params.get("min_score")
    if not isinstance(threshold, int | float):
        threshold = None
    scores = []
    for rnd, score in _mapping(record.get("scores")).items():
        # Each round's score as the live page got it: the journal's record, as its event.
        kept = {**_mapping(score), "round": rnd, "threshold": threshold, "type": "score"}
        try:
            scored = Scored.model_validate(kept)
        except ValidationError:
            continue  # a score the file holds that is not one: shown as no score
        scores.append(EVENTS.dump_python(scored, mode="json"))
    return {
        **saved_summary(debate, record),
        "language": language,
        "stop_reason": record.get("stop_reason"),
        "dry_run": bool(params.get("dry_run")),
        "list": turns,
        "scores": scores,
        "document": document_html(markdown) if markdown is not None else None,
        "files": downloads(debate),
        "passages": history.passages(debate),
    }


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _record(folder: Path) -> dict[str, Any]:
    """The transcript, or the journal's header for a debate that did not finish."""
    transcript = folder / history.TRANSCRIPT
    if os.path.lexists(transcript):
        data = files.read_json(
            transcript, what="saved transcript", limit=files.RECORD_LIMIT, follow_symlinks=False
        )
        return data if isinstance(data, dict) else {}
    journal = folder / history.JOURNAL
    if os.path.lexists(journal):
        headers = (r for r in read_records(journal) if isinstance(r, DebateRecord))
        return next((h.model_dump(mode="json", by_alias=True) for h in headers), {})
    return {}


def downloads(debate: history.SavedDebate) -> list[str]:
    """The files of a saved debate the page offers: the transcript and the document once it
    finished, the journal before."""
    if debate.finished:
        names = [history.TRANSCRIPT, document_name(debate.format)]
    else:
        names = [history.JOURNAL]
    return [n for n in names if n and _is_file(debate.path / n)]


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def document_name(fmt: str) -> str | None:
    return get_format(fmt).document if fmt in FORMATS else None


# -- labels of saved turns -----------------------------------------------------------------

# Where a format keeps the names of its seats and steps (as its documents name them).
_NAMES_IN = {
    "oxford": "moot.formats.oxford.flow",
    "challenge": "moot.formats.challenge.text",
    "adversarial": "moot.formats.adversarial.text",
}


def turn_label(fmt: str, language: str, role: str, step: str) -> str:
    """A saved turn's heading: its seat and step in the format's own words where it has
    them, else in the language's words for the identifiers."""
    return f"{seat_name(fmt, language, role)} · {_named(fmt, language, step, step=True)}"


def seat_name(fmt: str, language: str, role: str) -> str:
    """A seat's name in LANGUAGE: its format's own where it has one, else the language's
    word for the role, else the role spelled out ("Debater A")."""
    return _named(fmt, language, role, step=False)


def _named(fmt: str, language: str, identifier: str, *, step: bool) -> str:
    names: dict[str, str] = {}
    module = _NAMES_IN.get(fmt)
    if module is not None:
        table = getattr(importlib.import_module(module), "NAMES", {})
        names = table.get(language) or table.get("en") or {}
    found = names.get(identifier) or (names.get(f"{identifier}_step") if step else None)
    if found:
        return found
    worded = words(language).name(identifier, fmt)
    if worded != identifier:
        return worded
    if step:
        return identifier.replace("_", " ")
    spelled = " ".join(w.upper() if len(w) == 1 else w for w in identifier.split("_"))
    return spelled[:1].upper() + spelled[1:]
