"""An adversarial review's evidence requests on the page: before a round someone asked
evidence for, the requests go to the job's pages (kept for a page opened later) and the
review waits for the page's answer: the evidence's text (pasted, or a file of this machine
the browser read; nothing leaves the machine) or none. The answer is checked here as the
review checks it (`check_given`), so a problem is shown beside the field and the review is
handed only what it takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.errors import MootError, UsageError
from moot.formats.adversarial.evidence import EvidenceAsked, EvidenceGiven, check_given
from moot.formats.adversarial.schemas import EVIDENCE_BYTES
from moot.web.waiting import PageWait, Wire

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


class WebEvidence(PageWait[tuple[int, EvidenceAsked]]):
    """The page's side of a debate's proposals (`moot.Debate`'s ask): a request for evidence
    is put to the page; any other proposal is answered as when no one is there ("")."""

    def __init__(self) -> None:
        super().__init__(
            stopped=STOPPED,
            hint="resume it from the history: it is asked again",
            done="evidence_done",
        )
        self._asked = 0

    # -- the debate's side ----------------------------------------------------------------

    def ask(self, proposal: str) -> str:
        if not isinstance(proposal, EvidenceAsked):
            return ""
        with self._lock:
            self._asked += 1
            number = self._asked
        reply = self._wait(number, (number, proposal), asked_wire(number, proposal))
        assert isinstance(reply, str)
        return reply  # "", or an EvidenceGiven

    # -- the page's side ------------------------------------------------------------------

    def answer(self, body: Mapping[str, Any]) -> None:
        """The page's answer to the open request: {"ask", "skip": true} goes on without,
        {"ask", "text", "name"} gives the evidence. NotAsked when that request is not open;
        a UsageError saying what is wrong with the evidence, which the review would refuse."""
        with self._lock:
            opened = self._open
            if opened is None or body.get("ask") != opened[0] or isinstance(body.get("ask"), bool):
                raise NotAsked(key="web.evidence.debate_not_waiting_this_evidence")
            number, asked = opened
            try:
                reply = _reply(asked, body)
            except UsageError as exc:
                if asked.language == "en":
                    raise
                # Said in the review's language, with what evidence must be.
                raise UsageError(
                    key="web.evidence.refused",
                    field=exc.field,
                    error=exc,
                    n=asked.room,
                    limit=EVIDENCE_BYTES,
                ) from None
            self._give(number, reply)


def _reply(asked: EvidenceAsked, body: Mapping[str, Any]) -> str:
    """The review's answer BODY holds: "" to go on without, or the evidence given, checked."""
    if body.get("skip") is True:
        return ""
    text, name = body.get("text"), body.get("name", "")
    if not isinstance(text, str) or not isinstance(name, str):
        raise UsageError(key="web.evidence.evidence_text_file_name_none")
    given = EvidenceGiven(name, text)
    check_given(given, room=asked.room, language=asked.language)
    return given
