"""Shared evidence in an adversarial review: what every seat is shown, the participants'
requests for more, and the file the user may supply between rounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from moot.engine.rules import length_units
from moot.engine.turns import Engine
from moot.errors import UsageError
from moot.formats.adversarial import text
from moot.formats.adversarial.schemas import (
    EVIDENCE_BYTES,
    EVIDENCE_HINT,
    SUPPLEMENT_UNITS,
    Evidence,
    evidence_text,
    read_evidence,
)
from moot.formats.base import SAVED_HINT
from moot.records.journal import validate
from moot.records.transcript import Transcript

MAX_ASKS = 3  # a path that cannot be read is asked for again, this many times in all


def shown(given: list[Evidence], supplied: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evidence as the record shows it: the --evidence files, then each supplied one
    with the round it was first shown in; by file name (where it lies is no evidence)."""
    files = [{"name": Path(e.name).name, "text": e.text, "round": None} for e in given]
    more = [
        {"name": Path(s["name"]).name, "text": s["text"], "round": s["round"]} for s in supplied
    ]
    return files + more


class EvidenceAsked(str):
    """What the user is asked before a round: the text a terminal shows (a str, so a front
    end shows it as any proposal), and what a front end with a form of its own needs (the
    page of `moot serve`): the round, each participant's request by name, the room left for
    what is supplied (words, 字), the review's language."""

    round: int
    requests: dict[str, str]
    room: int
    language: str

    def __new__(
        cls, shown: str, *, round: int, requests: dict[str, str], room: int, language: str
    ) -> EvidenceAsked:
        asked = super().__new__(cls, shown)
        asked.round, asked.requests, asked.room = round, dict(requests), room
        asked.language = language
        return asked


class EvidenceGiven(str):
    """An answer that is the evidence itself, not a path to read: what the page sends, text
    pasted into it or a file of this machine the browser read. The str is its name."""

    text: str

    def __new__(cls, name: str, text: str) -> EvidenceGiven:
        given = super().__new__(cls, name)
        given.text = text
        return given


PASTED = "pasted.txt"  # the name of evidence given with none (text pasted into the page)
NAME_CHARS = 200  # a given name longer than this is no file name


def check_given(given: EvidenceGiven, *, room: int, language: str) -> Evidence:
    """GIVEN as evidence, held to what an evidence file is held to (`read_evidence`): at
    most EVIDENCE_BYTES as UTF-8 (a byte-order mark dropped), not empty, no binary bytes,
    within ROOM words (字); by its name without any folder (PASTED when it has none)."""
    what = text.label(language, "evidence_file")
    hint = EVIDENCE_HINT.format(n=room)
    name = Path(str(given).replace("\\", "/")).name.strip() or PASTED
    odd = any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or 0xD800 <= ord(c) < 0xE000 for c in name)
    if len(name) > NAME_CHARS or odd:
        raise UsageError(
            key="formats.adversarial.evidence.not_file_name",
            what=what,
            name=name[:NAME_CHARS],
            fix=hint,
        )
    try:
        size = len(given.text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: JSON can carry one, UTF-8 cannot
        raise UsageError(
            key="formats.adversarial.evidence.not_utf_8_text", what=what, name=name
        ) from None
    if size > EVIDENCE_BYTES:
        raise UsageError(
            key="formats.adversarial.evidence.bytes_over_moot_s_limit",
            what=what,
            name=name,
            size=size,
            evidence_bytes=EVIDENCE_BYTES,
            fix=hint,
        )
    return evidence_text(given.text.removeprefix("\ufeff"), name=name, what=what, room=room)


def supplement(
    engine: Engine,
    rnd: int,
    requests: dict[str, str],
    supplied: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """Before round RND: the requests of the round before are shown to the user, who may
    name a file to show every seat from this round on, or go on without (Enter; always
    without when no one can be asked); the page may give the evidence itself (an
    EvidenceGiven). Nothing is fetched: only a file already here is read. Kept in the
    journal, so a resumed review goes on with the same evidence."""
    room = SUPPLEMENT_UNITS - sum(length_units(s["text"]) for s in supplied)
    lang = engine.language
    what = text.label(lang, "evidence_file")

    def decide() -> dict[str, Any] | None:
        if room <= 0:
            engine.notice(text.label(lang, "evidence_full"), "warn")
            return None
        shown = text.evidence_asked(lang, rnd, requests)
        asked = EvidenceAsked(shown, round=rnd, requests=requests, room=room, language=lang)
        for _ in range(MAX_ASKS):
            reply = engine.ask(asked)
            try:
                if isinstance(reply, EvidenceGiven):
                    found = check_given(reply, room=room, language=lang)
                elif not reply.strip():
                    return None
                else:
                    found = read_evidence(Path(reply.strip()).expanduser(), what=what, room=room)
            except UsageError as exc:
                said = text.evidence_unread(lang, reply.strip(), room, exc.message, exc.hint)
                engine.notice(said, "warn")
                continue
            return {"round": rnd, "name": found.name, "text": found.text}
        return None

    kept = engine.keep(f"evidence:{rnd}", decide)
    if kept:
        engine.notice(text.evidence_given(lang, rnd, Path(kept["name"]).name), "info")
    return kept if isinstance(kept, dict) else None


class _Supplied(BaseModel):
    model_config = ConfigDict(strict=True)

    round: int
    name: str
    text: str


class _AllSupplied(BaseModel):
    supplied: list[_Supplied]


def supplied_kept(saved: Transcript) -> dict[str, Any]:
    """The evidence the user supplied between a saved review's rounds, each under the key
    `supplement` kept it by: a new judge (`moot judge`) is shown what the first one was."""
    supplied = (saved.result or {}).get("supplied")
    if not isinstance(supplied, list):
        return {}
    read = validate(_AllSupplied, {"supplied": supplied}, name="result.supplied", hint=SAVED_HINT)
    return {f"evidence:{s.round}": s.model_dump() for s in read.supplied}
