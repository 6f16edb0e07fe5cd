"""A debate's documents at its turns: the passages a speech is shown, retrieved for its
side and its moment, and the citations it makes, checked; what a judge is told of them.

One place for every format: the engine calls these for each turn, whatever step it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from moot.prompts import PromptPack
from moot.records.transcript import CitationRecord, DebateEvidence, Turn, TurnEvidence

if TYPE_CHECKING:
    from moot.evidence import Library, Passage

# The most tokens of passages one speech is shown; fewer where its model's context, less
# the prompt and the reply, leaves less. About four passages of a paragraph each.
EVIDENCE_TOKENS = 600
# Tokens left spare in the context beside the prompt, the passages and the reply.
MARGIN_TOKENS = 64
# The most characters of what the other side just said that a query takes.
QUERY_CHARS = 1200

# The engine pack's steps: the passages a speech is shown with how to cite them, and what
# checking the debate's citations found, for a judge.
EVIDENCE_STEP = "evidence"
CHECKED_STEP = "checked"


@dataclass
class Documents:
    """The library a debate was given and the record its transcript keeps of it."""

    library: Library
    record: DebateEvidence
    budget: int = EVIDENCE_TOKENS

    def query(self, motion: str, claimed: str | None) -> str:
        """What a speech searches for: the motion, and what the other side just claimed
        (a rebuttal's matter), if it has spoken."""
        return f"{motion}\n{claimed[:QUERY_CHARS]}" if claimed else motion

    def passages(self, query: str, room: int) -> list[Passage]:
        """The passages that best match QUERY within ROOM tokens (and the debate's budget)."""
        return self.library.search(query, budget=min(self.budget, room))

    def tokens(self, text: str) -> int:
        """About how many tokens TEXT takes (the count `search` fits passages by)."""
        from moot.evidence import approx_tokens

        return approx_tokens(text)

    def remember(self, ledger: TurnEvidence) -> None:
        """A saved turn's LEDGER, replayed: the text of each passage it used, kept again."""
        for i in [*ledger.shown, *(c.id for c in ledger.citations if c.id)]:
            passage = self.library.get(i)
            if passage is not None:
                self.record.passages[passage.id] = passage.text

    def again(self, ids: Sequence[str]) -> list[Passage]:
        """The passages IDS named, as a saved turn was shown them (those still there)."""
        found = (self.library.get(i) for i in ids)
        return [p for p in found if p is not None]

    def ledger(self, shown: Sequence[Passage], text: str) -> TurnEvidence | None:
        """A speech's ledger: the passages it was shown and each citation TEXT makes,
        checked; the text of each passage used is kept in the debate's record."""
        citations = []
        for result in self.library.check(text):
            passage = result.passage
            citations.append(
                CitationRecord(
                    cited=result.citation.written,
                    id=passage.id if passage else None,
                    quote=result.citation.quote,
                    check=result.check.value,
                )
            )
            if passage is not None:
                self.record.passages[passage.id] = passage.text
        for passage in shown:
            self.record.passages[passage.id] = passage.text
        if not shown and not citations:
            return None
        return TurnEvidence(shown=[p.id for p in shown], citations=citations)


class _Kept:
    """The passages a saved debate used, as its transcript keeps them: enough to show a
    replayed speech what it was shown, never to search or check anew."""

    def __init__(self, passages: dict[str, str]) -> None:
        from moot.evidence import Passage

        self._by_id = {i: Passage(i, i.split(" ")[0], "", 0, text) for i, text in passages.items()}

    def get(self, cited: str) -> Passage | None:
        return self._by_id.get(cited)


def kept(record: DebateEvidence) -> Documents:
    """A saved debate's documents as its transcript keeps them (`moot judge`: its speeches
    replayed, its judges asked again with the prompts they were given, though the
    documents be gone)."""
    return Documents(_Kept(dict(record.passages)), record.model_copy(deep=True))  # type: ignore[arg-type]


def variables(passages: Sequence[Passage]) -> dict[str, Any]:
    """The evidence step's variables: the passages, each its id and text."""
    return {"passages": [{"id": p.id, "text": p.text} for p in passages]}


def checked_variables(turns: Sequence[Turn], labels: dict[str, str]) -> dict[str, Any]:
    """The checked step's variables: each earlier speech that cited a passage, by its
    seat's label and round, with each citation's id, quotation and result."""
    speeches = []
    for turn in turns:
        if turn.evidence is None or not turn.evidence.citations:
            continue
        speeches.append(
            {
                "speaker": labels.get(turn.role, turn.role),
                "round": turn.round,
                "citations": [c.model_dump() for c in turn.evidence.citations],
            }
        )
    return {"speeches": speeches}


SAMPLE_PASSAGES = {"passages": [{"id": "report.pdf p.2 ¶1", "text": "Revenue rose 12%."}]}
SAMPLE_CHECKED = {
    "speeches": [
        {
            "speaker": "Proposition",
            "round": 1,
            "citations": [
                {"cited": "report.pdf p.2 ¶1", "id": "report.pdf p.2 ¶1", "quote": quote,
                 "check": check}
                for check, quote in (("ok", None), ("ok", "Revenue rose"),
                                     ("unknown_id", None), ("quote_not_found", "It fell"))
            ],
        }
    ]
}  # fmt: skip


def check_pack(pack: PromptPack) -> None:
    """The engine pack's evidence steps render, before a debate given documents."""
    pack.validate(
        (EVIDENCE_STEP, CHECKED_STEP),
        {EVIDENCE_STEP: SAMPLE_PASSAGES, CHECKED_STEP: SAMPLE_CHECKED},
    )
