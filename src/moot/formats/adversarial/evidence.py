"""Shared evidence in an adversarial review: what every seat is shown, the participants'
requests for more, and the file the user may supply between rounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from moot.checks import length_units
from moot.engine import Engine
from moot.errors import UsageError
from moot.formats.adversarial import text
from moot.formats.adversarial.schemas import SUPPLEMENT_UNITS, Evidence, read_evidence
from moot.formats.base import SAVED_HINT
from moot.transcript import Transcript, validate

MAX_ASKS = 3  # a path that cannot be read is asked for again, this many times in all


def shown(given: list[Evidence], supplied: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evidence as the record shows it: the --evidence files, then each supplied one
    with the round it was first shown in; by file name (where it lies is no evidence)."""
    files = [{"name": Path(e.name).name, "text": e.text, "round": None} for e in given]
    more = [
        {"name": Path(s["name"]).name, "text": s["text"], "round": s["round"]} for s in supplied
    ]
    return files + more


def supplement(
    engine: Engine,
    rnd: int,
    requests: dict[str, str],
    supplied: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """Before round RND: the requests of the round before are shown to the user, who may
    name a file to show every seat from this round on, or go on without (Enter; always
    without when no one can be asked). Nothing is fetched: only a file already here is
    read. Kept in the journal, so a resumed review goes on with the same evidence."""
    room = SUPPLEMENT_UNITS - sum(length_units(s["text"]) for s in supplied)
    lang = engine.language
    what = text.label(lang, "evidence_file")

    def decide() -> dict[str, Any] | None:
        if room <= 0:
            engine.notice(text.label(lang, "evidence_full"), "warn")
            return None
        for _ in range(MAX_ASKS):
            reply = engine.ask(text.evidence_asked(lang, rnd, requests)).strip()
            if not reply:
                return None
            try:
                found = read_evidence(Path(reply).expanduser(), what=what, room=room)
            except UsageError as exc:
                shown = text.evidence_unread(lang, reply, room, exc.message, exc.hint)
                engine.notice(shown, "warn")
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
