"""A turn's failure as a value: a timeout, a backend error or an invalid reply ends that turn,
never the debate. Shared by the formats whose rulebooks say so (challenge, adversarial).
And what every format's document says of the flagged or failed turns it is built on."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from moot.engine.turns import is_failed
from moot.errors import CallTimeoutError, MootError, StructuredReplyError
from moot.inference.protocol import parse_error, sanitize
from moot.records.journal import held_round
from moot.records.transcript import Turn
from moot.words import words as moot_words


@dataclass(frozen=True)
class Outcome:
    """What one engine call came to: its turn, or why it failed (sanitized metadata)."""

    turn: Turn | None
    error: str | None = None
    timed_out: bool = False


def attempt(call: Callable[[], Turn], schema: type[BaseModel] | None = None) -> Outcome:
    """Run one turn; a timeout, a backend error, empty or repeated output, or a structured
    reply that stayed invalid is that turn's failure, never the end of the debate."""
    try:
        turn = call()
    except CallTimeoutError as exc:
        return Outcome(None, sanitize(f"timeout: {exc.message}"), timed_out=True)
    except StructuredReplyError as exc:
        # Only metadata: the reply itself may hold anything, control characters included.
        return Outcome(None, parse_error(exc, exc.raw, schema or BaseModel))
    except MootError as exc:
        return Outcome(None, sanitize(f"{type(exc).__name__}: {exc.message}"))
    if turn.note and turn.note.startswith("degenerate reply"):
        return Outcome(None, sanitize(turn.note))
    return Outcome(turn)


# -- degraded turns: what a document is built on, said in its header ---------------------


@dataclass(frozen=True)
class Degraded:
    """A turn that was flagged or failed: where it stands and why, in moot's own words."""

    round: int | None  # None: after the rounds (0: before them, as the decision framing)
    role: str
    step: str
    why: str
    failed: bool = False  # no reply at all (`engine.turns.is_failed`): not even a flagged one

    def record(self) -> dict[str, object]:
        return {"round": self.round, "role": self.role, "step": self.step, "why": self.why}


def degraded(turns: Iterable[Turn], *, closing: Collection[str], last: int) -> list[Degraded]:
    """Every turn with a flag or a note, in order. A turn of a CLOSING step, or numbered
    past LAST (the most rounds the debate could hold), is after the rounds, however an
    earlier moot numbered it."""
    found = []
    for turn in turns:
        reasons = [*turn.flags, *([turn.note] if turn.note else [])]
        if not reasons:
            continue
        rnd = held_round(turn.round, last=last, closing=turn.step in closing)
        why = sanitize(" ".join("; ".join(reasons).split()))
        found.append(Degraded(rnd, turn.role, turn.step, why, is_failed(turn)))
    return found


_WORDS = {
    "en": {
        "round": "round {n}",
        "why": " ({why})",
        "and": "; ",
        "end": ".",
        "own": "⚠️ This {document} comes from a degraded reply: {turns}",
        "missing": "⚠️ This {document} is missing the judge's reply: {turns}",
        "built": "Built on {n} degraded {turn}: {turns}",
        "also": "Also built on {n} degraded {turn}: {turns}",
        "turn": "turn",
        "turns": "turns",
    },
    "zh": {
        "round": "第{n}轮",
        "why": "（{why}）",
        "and": "；",
        "end": "。",
        "own": "⚠️ 本{document}出自有缺陷的回答：{turns}",
        "missing": "⚠️ 本{document}缺少裁判的回答：{turns}",
        "built": "基于{n}处有缺陷的发言：{turns}",
        "also": "另基于{n}处有缺陷的发言：{turns}",
    },
}


def degraded_notes(
    items: Sequence[Degraded],
    language: str,
    *,
    seat: Callable[[str], str],
    step: Callable[[str], str],
    own: Collection[str],
    document: str,
) -> list[str]:
    """The lines a document's header gives its degraded turns, as Markdown quotes: first
    the document's own reply (a step in OWN: the brief, the verdict) if it is one of them
    (said to be missing where it gave nothing at all, as a timeout), then every other, each
    by its round, its seat (SEAT names a role) and its step (STEP names one), and why. None
    when nothing is degraded."""
    words = _WORDS.get(language, _WORDS["en"])
    shown = moot_words(language).shown  # the recorded flags, in the document's language

    def said(group: Sequence[Degraded]) -> str:
        return words["and"].join(_place(d, words, seat, step, shown) for d in group)

    mine = [d for d in items if d.step in own]
    rest = [d for d in items if d.step not in own]
    notes = []
    if mine:
        key = "missing" if any(d.failed for d in mine) else "own"
        notes.append(words[key].format(document=document, turns=said(mine)))
    if rest:
        turn = words.get("turn" if len(rest) == 1 else "turns", "")
        key = "also" if mine else "built"
        notes.append(words[key].format(n=len(rest), turn=turn, turns=said(rest)))
    return [f"> {note}{words['end']}" for note in notes]


def _place(
    d: Degraded,
    words: dict[str, str],
    seat: Callable[[str], str],
    step: Callable[[str], str],
    shown: Callable[[str], str],
) -> str:
    where = [words["round"].format(n=d.round)] if d.round else []
    why = words["why"].format(why=shown(d.why))
    return " · ".join([*where, seat(d.role), step(d.step)]) + why
