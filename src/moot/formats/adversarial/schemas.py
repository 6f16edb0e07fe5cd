"""The adversarial format's parameters, the judge's per-round schema, votes and follow-ups."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.config import validate_params
from moot.engine.rules import length_units
from moot.errors import UsageError, concerning
from moot.formats.base import (
    MAX_MOTION,
    Documents,
    RunOptions,
    documents_param,
    keep_sources_param,
    param,
)
from moot.records.files import KIB, RECORD_LIMIT, read_json, read_text
from moot.records.journal import check_version, validate

# Words (字 in Chinese) each speaker is told: each sets its step's token budget.
LIMITS = {"answer": 200, "synthesis": 250}
# Earlier questions of a session that a follow-up carries; older ones fall away so the
# first round's prompt stays small.
SESSION_KEEP = 3

# Every prompt quotes the evidence, so it is bounded by what the context can hold beside
# the answers: words (字) over all --evidence files, and over all the files the user
# supplies when asked during the review (counted into the context up front, since it is
# sized before the first round).
EVIDENCE_BYTES = 64 * KIB  # one file, read before its words are counted
EVIDENCE_UNITS = 2000
SUPPLEMENT_UNITS = 800
MAX_EVIDENCE = 8  # --evidence files
EVIDENCE_HINT = "give a text or Markdown file of at most {n:,} words (字)"

# What round 1's prompt quotes of each earlier question it follows up on (answer.j2), as
# the context budget counts it (`quoted_words`): the question, as long as a motion may be
# when it is asked, and its final answer, one synthesis: the synthesizer's limit in words
# (字), to which moot cuts a model's, and the bytes evidence is given for as many words
# (64 KiB for 2,000), so that no padding between the words passes either.
EARLIER_UNITS = LIMITS["synthesis"]
EARLIER_BYTES = EARLIER_UNITS * EVIDENCE_BYTES // EVIDENCE_UNITS
MAX_PATH = 4096  # characters of a path as the user gave it: the system's own bound


# Bounded in characters as well, so that the params a saved debate records (a journal to
# resume, a transcript to replay) hold nothing a prompt could not quote.
class Earlier(BaseModel):
    """A question asked earlier in the session, and the final answer it got."""

    question: str = Field(max_length=MAX_MOTION)
    answer: str = Field(max_length=EARLIER_BYTES)


class Evidence(BaseModel):
    """A text every participant and the judge are shown as shared evidence: a file given with
    --evidence, or one the user supplied when a participant asked for it."""

    name: str = Field(max_length=MAX_PATH)  # the path as the user gave it
    text: str = Field(max_length=EVIDENCE_BYTES)


Rounds = Annotated[int, Field(ge=1, le=6)]


class AdversarialOptions(BaseModel):
    """The parameters a caller sets; out-of-range values are refused, never clamped."""

    model_config = ConfigDict(extra="forbid")

    rounds: Rounds = param(3, "number of rounds", label={"en": "Rounds", "zh": "轮数"})
    continue_from: Path | None = param(
        None,
        "follow up on a saved transcript",
        option="--continue",
        page=False,  # a saved transcript: named on the command line
    )
    # Its text files named one by one are also shown whole (`shared_whole`), bounded by
    # given_evidence before any is read.
    evidence: Documents = documents_param(
        "a document or folder of documents to cite (md, txt, html, pdf, docx); a text "
        "file named alone is also shown whole to every seat"
    )
    keep_sources: bool = keep_sources_param()


class AdversarialParams(BaseModel):
    """The rulebook's parameters: the options, the participants, what they were read into."""

    model_config = ConfigDict(extra="forbid")

    rounds: Rounds = 3
    participants: tuple[str, ...] = Field(min_length=2)  # model references, in --model order
    earlier: list[Earlier] = Field(default_factory=list)  # from --continue
    continued_from: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)  # from --evidence, read once
    keep_sources: bool = False  # the documents' whole text kept in the debate's folder


def make_params(given: AdversarialOptions, options: RunOptions) -> AdversarialParams:
    """Participants from repeated --model, the round cap from --rounds, --continue's context."""
    if len(options.models) < 2:
        raise UsageError(
            key="formats.adversarial.schemas.adversarial_format_needs_at_least",
            field=f"models.{len(options.models)}",
            n_models=len(options.models),
        )
    path = given.continue_from
    with concerning("params.continue_from"):
        earlier = load_session(path) if path else []
    with concerning("params.evidence"):
        evidence = given_evidence(shared_whole(given.evidence))
    return validate_params(
        AdversarialParams,
        rounds=given.rounds,
        participants=options.models,
        earlier=earlier,
        continued_from=str(path) if path else None,
        evidence=evidence,
        keep_sources=given.keep_sources,
    )


# -- evidence ---------------------------------------------------------------------------


def read_evidence(path: Path, *, what: str, room: int) -> Evidence:
    """One evidence file: a regular UTF-8 text file, not empty, no binary bytes, within
    ROOM words (字)."""
    text = read_text(path, what=what, limit=EVIDENCE_BYTES)
    return evidence_text(text, name=str(path), what=what, room=room)


def evidence_text(text: str, *, name: str, what: str, room: int) -> Evidence:
    """TEXT, read from the file NAME (or given on the page under that name), as evidence:
    not empty, no binary bytes, within ROOM words (字)."""
    hint = EVIDENCE_HINT.format(n=room)
    binary = next((c for c in text if ord(c) < 32 and c not in "\t\n\r\f"), None)
    if binary is not None:
        raise UsageError(
            key="formats.adversarial.schemas.not_text_holds_byte",
            what=what,
            name=name,
            binary=ord(binary),
            fix=hint,
        )
    units = length_units(text)
    if units == 0:
        raise UsageError(
            key="formats.adversarial.schemas.holds_no_words", what=what, name=name, fix=hint
        )
    if units > room:
        raise UsageError(
            key="formats.adversarial.schemas.words_over",
            what=what,
            name=name,
            units=units,
            room=room,
            fix=hint,
        )
    return Evidence(name=name, text=text.strip())


# What the debate's documents are read for only, never shown whole: folders, and the kinds
# of file that are not plain text.
_PASSAGES_ONLY = (".pdf", ".docx", ".html", ".htm")


def shared_whole(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The --evidence paths shown whole to every seat, as this format always showed them:
    the files named one by one, but for PDF, DOCX and HTML (their passages are shown, as
    every format shows them, and a folder's)."""
    return tuple(
        p for p in paths if not p.expanduser().is_dir() and p.suffix.lower() not in _PASSAGES_ONLY
    )


def given_evidence(paths: tuple[Path, ...]) -> list[Evidence]:
    """The --evidence files, in the order given, their words together within the bound."""
    if len(paths) > MAX_EVIDENCE:
        raise UsageError(
            key="formats.adversarial.schemas.evidence_given_times_over",
            n_paths=len(paths),
            max_evidence=MAX_EVIDENCE,
        )
    read: list[Evidence] = []
    for path in paths:
        room = EVIDENCE_UNITS - sum(length_units(e.text) for e in read)
        read.append(read_evidence(path, what="--evidence", room=room))
    return read


class _Asked(BaseModel):
    """An earlier question and answer as a transcript holds it, read before it is bounded."""

    question: str
    answer: str


class _SavedResult(BaseModel):
    final_answer: str | None = None
    session: list[_Asked] = Field(default_factory=list)


class _Saved(BaseModel):
    """What --continue reads of a saved adversarial transcript."""

    motion: str
    result: _SavedResult | None = None


def load_session(path: Path) -> list[Earlier]:
    """The earlier questions and final answers of a saved adversarial transcript, each held
    to what round 1's prompt has room for (the last SESSION_KEEP)."""
    hint = "give the transcript.json of an earlier `moot run --format adversarial`"
    data = read_json(path, what="--continue", limit=RECORD_LIMIT)
    if not isinstance(data, dict) or data.get("format") != "adversarial":
        raise UsageError(
            key="formats.adversarial.schemas.continue_not_transcript_adversarial_debate",
            path=path,
            fix=hint,
        )
    name = f"--continue {path}"
    check_version(data, name=name, hint=hint)
    saved = validate(_Saved, data, name=name, hint=hint)
    result = saved.result or _SavedResult()
    if not result.final_answer:
        raise UsageError(
            key="formats.adversarial.schemas.continue_that_debate_has_no", path=path, fix=hint
        )
    earlier = [*result.session, _Asked(question=saved.motion, answer=result.final_answer)]
    kept = earlier[-SESSION_KEEP:]
    for i, item in enumerate(kept, start=len(earlier) - len(kept)):
        if i == len(result.session):  # the debate itself
            where = ("motion", "result.final_answer")
        else:
            where = (f"result.session.{i}.question", f"result.session.{i}.answer")
        _check_earlier(item, name=name, where=where)
    return [Earlier(question=item.question, answer=item.answer) for item in kept]


def _check_earlier(item: _Asked, *, name: str, where: tuple[str, str]) -> None:
    """An earlier question and its final answer, within what the prompt has room for."""
    question, answer = where
    if len(item.question) > MAX_MOTION:
        raise UsageError(
            key="formats.adversarial.schemas.characters_over_limit_motion",
            name=name,
            question=question,
            n_question=len(item.question),
            max_motion=MAX_MOTION,
        )
    units, size = length_units(item.answer), len(item.answer.encode())
    if units > EARLIER_UNITS or size > EARLIER_BYTES:
        said = f"{units:,} words (字)" if units > EARLIER_UNITS else f"{size:,} bytes"
        raise UsageError(
            key="formats.adversarial.schemas.over_limit_final_answer_words",
            name=name,
            answer=answer,
            said=said,
            earlier_units=EARLIER_UNITS,
            earlier_bytes=EARLIER_BYTES,
        )


# -- the judge --------------------------------------------------------------------------

# Bounded so a grammar-constrained reply always closes within its budget; shorter in
# Chinese, where a character carries more and costs small tokenizers about a token.
_BOUNDS = {"en": 150, "zh": 60}
JUDGE_TOKENS = {"en": 500, "zh": 600}
MAX_CONFLICTS = 3


@cache
def judge_schema(names: tuple[str, ...], language: str) -> type[BaseModel]:
    """The judge's reply, with the participants' names as an enum: the grammar, and then
    validation, allow no winner and no conflicting party that is not a participant.

    Cached per name list, so the grammar built for it is built once.
    """
    who = Literal[names]  # type: ignore[valid-type]
    n = _BOUNDS.get(language, _BOUNDS["en"])
    text = Annotated[str, Field(min_length=1, max_length=n)]
    config = ConfigDict(extra="forbid")
    conflict = create_model(
        "Conflict",
        __config__=config,
        claim=(text, ...),
        participants=(list[who], Field(min_length=1, max_length=len(names))),
        why=(text, ...),
    )
    schema: type[BaseModel] = create_model(
        "ClaimAudit",
        __config__=config,
        claim_audit_complete=(bool, ...),
        critical_conflicts=(list[conflict], Field(max_length=MAX_CONFLICTS)),  # type: ignore[valid-type]
        resolved=(bool, ...),
        winner=(who, ...),
    )
    return schema


# -- votes ------------------------------------------------------------------------------

Vote = Literal["accept", "object"]
_VOTE = re.compile(
    r"^[\W_]*(?:vote|投票)?[\s*_]*[:：]?[\s*_]*(accept|object|接受|反对)(?![a-z])"
    r"[\s\W_]*(.*?)\s*$",
    re.IGNORECASE,
)
_WORDS = {"accept": "accept", "object": "object", "接受": "accept", "反对": "object"}
MIN_REASON = 3  # characters: "ACCEPT" alone gives no reason, and counts as no vote


@dataclass(frozen=True)
class Ballot:
    """A participant's vote on the shared conclusion, read from its reply's last line."""

    vote: Vote | None
    reason: str = ""

    @property
    def accepts(self) -> bool:
        return self.vote == "accept" and len(self.reason) >= MIN_REASON


def read_vote(reply: str) -> Ballot:
    """`VOTE: ACCEPT - reason` / `VOTE: OBJECT - reason` (投票：接受/反对 …) on the last line,
    an evidence request after it aside."""
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    while lines and _REQUEST.match(lines[-1].strip()):
        lines.pop()
    if not lines:
        return Ballot(None)
    found = _VOTE.match(lines[-1].strip())
    if not found:
        return Ballot(None)
    word = found.group(1).lower()
    return Ballot(_WORDS[word] if word in _WORDS else None, found.group(2).strip())  # type: ignore[arg-type]


# -- evidence requests ------------------------------------------------------------------

# A participant asks for supplemental evidence on a line of its own, before its vote:
# `EVIDENCE REQUEST: <what, and why the conclusion depends on it>` (证据请求：…).
_REQUEST = re.compile(
    r"^[\W_]*(?:evidence[\s_-]*request|证据请求)[\s*_]*[:：][\s*_]*(.*?)[\s*_]*$", re.IGNORECASE
)
# What a model writes when it asks for nothing; no request.
_NOTHING = re.compile(
    r"^[\W_]*(?:none|no(?:thing)?\b|n/?a\b|not (?:needed|required|necessary)"
    r"|(?:无|没有)[\W_]*$|不需要|无需|暂无)",
    re.IGNORECASE,
)


def read_request(reply: str) -> str | None:
    """The evidence a reply asks for, from its last `EVIDENCE REQUEST:` line; None if none."""
    found = None
    for line in reply.splitlines():
        match = _REQUEST.match(line.strip())
        if match:
            found = match.group(1).strip()
    if not found or len(found) < MIN_REASON or _NOTHING.match(found):
        return None
    return found
