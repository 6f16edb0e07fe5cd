"""An adversarial review's evidence requests on the page: before a round someone asked
evidence for, the requests go to the job's pages (kept for a page opened later) and the
review waits for the page's answer: the evidence's text (pasted, or a file of this machine
the browser read; nothing leaves the machine) or none. The answer is checked here as the
review checks it (`check_given`), so a problem is shown beside the field and the review is
handed only what it takes."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any

from moot.errors import MootError, UsageError
from moot.formats.adversarial.evidence import EvidenceAsked, EvidenceGiven, check_given
from moot.formats.adversarial.schemas import EVIDENCE_BYTES
from moot.inference.human import SeatLeft

Wire = dict[str, Any]
_CLOSED = object()
STOPPED = "the debate was stopped while it waited for the evidence asked for"


class NotAsked(MootError):
    """An answer to an evidence request that is not open (answered, or never asked)."""


def asked_wire(number: int, asked: EvidenceAsked) -> Wire:
    """What the page shows of a request for evidence: who asked for what, before which
    round, and the room left for it."""
    return {
        "type": "evidence",
        "ask": number,
        "round": asked.round,
        "requests": [{"name": n, "request": r} for n, r in asked.requests.items()],
        "room": asked.room,
        "bytes": EVIDENCE_BYTES,
        "language": asked.language,
    }


class WebEvidence:
    """The page's side of a debate's proposals (`moot.Debate`'s ask): a request for evidence
    is put to the page; any other proposal is answered as when no one is there ("")."""

    def __init__(self) -> None:
        self._publish: Callable[[Wire], None] = lambda item: None
        self._answers: queue.Queue[object] = queue.Queue()
        self._lock = threading.Lock()
        self._open: tuple[int, EvidenceAsked] | None = None
        self._asked = 0
        self._closed = False

    def attach(self, publish: Callable[[Wire], None]) -> None:
        """Where each request goes: the job's pages."""
        self._publish = publish

    def close(self) -> None:
        """The debate stops: a request waiting for its answer is left."""
        with self._lock:
            self._closed = True
        self._answers.put(_CLOSED)

    # -- the debate's side ----------------------------------------------------------------

    def ask(self, proposal: str) -> str:
        if not isinstance(proposal, EvidenceAsked):
            return ""
        with self._lock:
            if self._closed:
                raise SeatLeft(STOPPED, hint="resume it from the history: it is asked again")
            self._asked += 1
            number = self._asked
            self._open = (number, proposal)
        self._publish(asked_wire(number, proposal))
        try:
            while True:
                item = self._answers.get()
                if item is _CLOSED:
                    raise SeatLeft(STOPPED, hint="resume it from the history: it is asked again")
                assert isinstance(item, tuple)
                answered, reply = item
                if answered == number:
                    assert isinstance(reply, str)
                    return reply  # "", or an EvidenceGiven
        finally:
            with self._lock:
                self._open = None
            self._publish({"type": "evidence_done", "ask": number})

    # -- the page's side ------------------------------------------------------------------

    def answer(self, body: Mapping[str, Any]) -> None:
        """The page's answer to the open request: {"ask", "skip": true} goes on without,
        {"ask", "text", "name"} gives the evidence. NotAsked when that request is not open;
        a UsageError saying what is wrong with the evidence, which the review would refuse."""
        with self._lock:
            opened = self._open
            if opened is None or body.get("ask") != opened[0] or isinstance(body.get("ask"), bool):
                raise NotAsked(
                    "the debate is not waiting for this evidence",
                    hint="reload the page: it shows what the debate asks now",
                )
            number, asked = opened
            reply = _reply(asked, body)
            self._open = None  # answered: a second answer to it is refused
            self._answers.put((number, reply))


def _reply(asked: EvidenceAsked, body: Mapping[str, Any]) -> str:
    """The review's answer BODY holds: "" to go on without, or the evidence given, checked."""
    if body.get("skip") is True:
        return ""
    text, name = body.get("text"), body.get("name", "")
    if not isinstance(text, str) or not isinstance(name, str):
        raise UsageError("the evidence is text, with a file name or none", hint="reload the page")
    given = EvidenceGiven(name, text)
    check_given(given, room=asked.room, language=asked.language)
    return given
