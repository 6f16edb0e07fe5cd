"""A person's seat on the page: each time the seat is asked, the ask goes to the job's pages
(kept for a page opened later) and the debate waits for the answer the page posts back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.errors import UsageError
from moot.inference.human import Ask, Said, form_fields
from moot.web.waiting import PageWait, Wire

SPEECH_LIMIT = 20_000  # characters of one typed turn: far past any step's limit
STOPPED = "the debate was stopped while a person's seat waited for its answer"


def ask_wire(ask: Ask) -> Wire:
    """What the page shows of an ask: the seat's view, the step and its limit, the question or
    the fields to fill in."""
    return {
        "type": "seat",
        "ask": ask.number,
        "kind": ask.kind,
        "role": ask.role,
        "label": ask.label,
        "instruction": ask.instruction(),
        "language": ask.language,
        "limit": ask.limit,
        "units": ask.units,
        "messages": [{"role": m.role, "content": m.content} for m in ask.messages],
        "question": ask.question,
        "fields": [f.wire() for f in form_fields(ask.schema)] if ask.schema else [],
        "problem": ask.problem,
        "draft": dict(ask.draft) if ask.draft is not None else None,
        "turn": ask.turn,
    }


class WebSeat(PageWait[Ask]):
    """The console of a human seat in a job of `moot serve`."""

    def __init__(self) -> None:
        super().__init__(
            stopped=STOPPED,
            hint="resume it from the history: the seat is asked again",
            done="seat_done",
        )

    @property
    def waiting(self) -> Ask | None:
        with self._lock:
            return self._open

    # -- the debate's side ----------------------------------------------------------------

    def _ask(self, ask: Ask) -> Any:
        return self._wait(ask.number, ask, ask_wire(ask))

    def speech(self, ask: Ask) -> Said:
        return Said(str(self._ask(ask)))

    def decision(self, ask: Ask) -> bool:
        return bool(self._ask(ask))

    def form(self, ask: Ask) -> Mapping[str, Any]:
        value = self._ask(ask)
        return value if isinstance(value, Mapping) else {}

    # -- the page's side ------------------------------------------------------------------

    def answer(self, body: Mapping[str, Any]) -> str | None:
        """The page's answer to the open ask; what is wrong with it, in one line, else None.
        An answer to an ask that is no longer open is refused: the page shows an old one. An
        answer of the wrong kind (a list for a speech) is a UsageError naming its field."""
        with self._lock:
            ask = self._open
            if ask is None or body.get("ask") != ask.number:
                return "the seat is not waiting for this answer"
            problem, value = _value(ask, body)
            if problem is None:
                self._give(ask.number, value)
        return problem


def _value(ask: Ask, body: Mapping[str, Any]) -> tuple[str | None, Any]:
    """The answer BODY holds for ASK, or what is wrong with it."""
    if ask.kind == "speech":
        text = body.get("text")
        if not isinstance(text, str):
            raise UsageError(key="web.seat.speech_text", field="text")
        if len(text) > SPEECH_LIMIT:
            return f"the speech is over {SPEECH_LIMIT:,} characters", None
        return None, text
    if ask.kind == "decision":
        accept = body.get("accept")
        if not isinstance(accept, bool):
            raise UsageError(key="web.seat.answer_accept_decline", field="accept")
        return None, accept
    data = body.get("data")
    if not isinstance(data, dict):
        raise UsageError(key="web.seat.reply_set_fields", field="data")
    return None, data
