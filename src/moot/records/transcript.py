"""moot's records: one typed vocabulary for what happens in a debate.

A debate's journal (`journal.jsonl`) is these records, one a line, each told by its `type`:
the debate's header (`debate`), each finished turn (`turn`), a round's score (`score`), why
the rounds ended (`stop`) and a choice made outside any turn (`kept`). The transcript
(`transcript.json`) is built from them. Their JSON Schema is what `moot schema journal` and
`moot schema transcript` print (docs/records.md).

The header and the transcript carry `schema`: the version of this vocabulary. Records
written before it had one hold no `schema`; they are of the first form, whose fields this
one keeps, and read as schema 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from moot._version import __version__

__all__ = [
    "JOURNAL",
    "SCHEMAS",
    "SCHEMA_VERSION",
    "CitationRecord",
    "DebateEvidence",
    "DebateRecord",
    "KeptRecord",
    "ModelInfo",
    "Record",
    "ScoreRecord",
    "StopReason",
    "StopRecord",
    "Transcript",
    "Turn",
    "TurnEvidence",
    "TurnRecord",
    "json_schema",
    "reading_saved",
    "saved_reply",
]

SCHEMA_VERSION = 1

StopReason = Literal[
    "converged", "hard_cap", "resolved", "interrupted", "completed", "cap", "incomplete", "failed"
]


Checked = Literal["ok", "unknown_id", "quote_not_found"]


class CitationRecord(BaseModel):
    """One id a speech cited and what checking it found (`moot.evidence.Check`): the id as
    written, the passage it names (None: no passage has it), the quotation attributed to it."""

    cited: str
    id: str | None = None
    quote: str | None = None
    check: Checked


class TurnEvidence(BaseModel):
    """What a turn had of the debate's documents: the ids of the passages its prompt showed,
    in order, and each citation its text made, checked."""

    shown: list[str] = Field(default_factory=list)
    citations: list[CitationRecord] = Field(default_factory=list)

    def count(self, check: str) -> int:
        return sum(c.check == check for c in self.citations)


class CitationTally(BaseModel):
    """How one seat's or one model's citations checked over a debate: `supported` (`ok`),
    `unsupported` (the rest: `unknown_id`, an id no passage has, and `quote_not_found`, a
    quotation its passage does not hold)."""

    cited: int = 0
    supported: int = 0
    unsupported: int = 0
    unknown_id: int = 0
    quote_not_found: int = 0

    def add(self, check: str) -> None:
        self.cited += 1
        if check == "ok":
            self.supported += 1
            return
        self.unsupported += 1
        if check == "unknown_id":
            self.unknown_id += 1
        elif check == "quote_not_found":
            self.quote_not_found += 1


class CitationSummary(BaseModel):
    """Every seat's and every model's citations, checked: by role, in the order the seats
    first spoke, and by model reference. A seat shown passages that cited none counts 0."""

    seats: dict[str, CitationTally] = Field(default_factory=dict)
    models: dict[str, CitationTally] = Field(default_factory=dict)


def citation_summary(turns: Sequence[Turn]) -> CitationSummary:
    """The summary of TURNS' evidence ledgers (turns with none are not counted)."""
    summary = CitationSummary()
    for turn in turns:
        if turn.evidence is None:
            continue
        seat = summary.seats.setdefault(turn.role, CitationTally())
        model = summary.models.setdefault(turn.model, CitationTally())
        for c in turn.evidence.citations:
            seat.add(c.check)
            model.add(c.check)
    return summary


class DebateEvidence(BaseModel):
    """The documents a debate was given (`--evidence`): the paths as given (absolute), the
    files read (by the names their passages cite), those left out and why, and the text of
    every passage a turn was shown or cited, by id: nothing else of a document is kept.
    A finished debate's also sums its citations up, by seat and by model (`summary`)."""

    paths: list[str]
    files: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    passages: dict[str, str] = Field(default_factory=dict)
    summary: CitationSummary | None = None
    # Whether the debate's folder keeps each document's whole extracted text (its evidence
    # cache, `--keep-sources`); by default it keeps only `passages`.
    keep_sources: bool = False

    @model_serializer(mode="wrap")
    def _no_summary_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The journal's header, written before any turn, has no summary; a debate that keeps
        # only its passages saves as one did before the choice existed.
        data: dict[str, Any] = handler(self)
        if "summary" in data and data["summary"] is None:
            del data["summary"]
        if data.get("keep_sources") is False:
            del data["keep_sources"]
        return data


class Turn(BaseModel):
    """One finished step of a debate: who said what, with which model, at what cost."""

    index: int
    round: int | None  # None: after the rounds (closing speeches, verdict, brief)
    role: str
    step: str
    model: str
    temperature: float
    seed: int | None = None
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    duration_ms: int = 0
    ttft_ms: int = 0  # to the first token: mostly evaluating the prompt
    finish_reason: str = "stop"
    accepted: bool | None = None  # points of information: accepted or declined
    note: str | None = None  # e.g. "degenerate: the reply is empty"
    # A turn with a length limit (words; 字 in Chinese): the limit, the length shown, whether
    # the engine cut the model's text to fit, and what about the turn is flagged.
    limit: int | None = None
    length: int | None = None
    cut: bool = False
    flags: list[str] = Field(default_factory=list)
    data: dict[str, Any] | None = None  # a structured reply, validated
    # What the model thought before it answered: kept beside the turn, never shown to another
    # seat (every prompt is built from `text`). None: it did not think aloud.
    reasoning: str | None = None
    # The kind of reminder the kept draw was told (a draw again: prompts' REDRAW_KINDS).
    redraw: str | None = None
    # What the draws that were not kept cost, summed: prompt_tokens, cached_tokens,
    # completion_tokens, duration_ms, ttft_ms (the figures above are the kept draw's).
    discarded: dict[str, int] | None = None
    # A local model's tokens for the reply (moot.inference.protocol.Generated): what a later
    # step that quotes the reply after its own prompt takes instead of evaluating it again.
    generated: dict[str, Any] | None = None
    # The values of a judging step's decision read as probabilities before its reply was
    # asked: field → {"probabilities": {value: p}, "method": how they were obtained,
    # "samples": replies counted}. None: the reply's own values decided (a debate saved
    # before moot read them, a person's seat, a step that decides nothing).
    choices: dict[str, dict[str, Any]] | None = None
    # The turn's evidence ledger, in a debate given documents: the passages it was shown
    # and the citations it made, each checked. None: no documents, or a turn shown none
    # that cited none.
    evidence: TurnEvidence | None = None

    @model_serializer(mode="wrap")
    def _unread_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A turn whose values were not read, or that saw no documents, saves as one did
        # before `choices` and `evidence` existed; a journal's turn that cited no passage
        # (`TurnRecord.passages`) as one did before `passages`.
        data: dict[str, Any] = handler(self)
        for key in ("choices", "evidence"):
            if key in data and data[key] is None:
                del data[key]
        if "passages" in data and not data["passages"]:
            del data["passages"]
        return data


M = TypeVar("M", bound=BaseModel)

# The validation context of a structured reply read back from a saved turn (a resumed debate,
# a re-judged one): there, and only there, a reply schema that has changed since reads the
# form an earlier moot saved; a model's reply now is held to the schema as it is.
SAVED_REPLY = "saved_reply"


def saved_reply(turn: Turn, schema: type[M]) -> M:
    """TURN's structured reply as it was saved, read back by SCHEMA (a ValidationError, as
    `model_validate` raises it, where it does not fit)."""
    return schema.model_validate(turn.data or {}, context={SAVED_REPLY: True})


def reading_saved(context: object) -> bool:
    """Whether a validator is reading a saved reply back (`saved_reply`): its context."""
    return isinstance(context, dict) and context.get(SAVED_REPLY) is True


class ModelInfo(BaseModel):
    id: str
    sha256: str | None = None


class _Debate(BaseModel):
    """What a debate is: the fields its journal's header and its transcript share."""

    # `schema` in the file, whoever dumps it; a field of that name would hide BaseModel.schema.
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    schema_version: int = Field(default=SCHEMA_VERSION, alias="schema")
    moot_version: str = __version__
    format: str
    motion: str
    language: str
    seed: int
    models: dict[str, ModelInfo]
    refs: dict[str, str] = Field(default_factory=dict)  # role → the reference as given
    sampling: dict[str, float] = Field(default_factory=dict)  # role → temperature
    prompt_pack: str = ""  # sha256 of the templates
    params: dict[str, Any] = Field(default_factory=dict)
    stop_reason: StopReason | None = None
    # The day the debate began (ISO, the machine's local date): a resumed debate keeps it, so
    # its document is dated as it began. None: a record from before moot kept the day.
    began: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    # The documents given with --evidence. None: none were (a record then saves as one did
    # before documents could be given).
    evidence: DebateEvidence | None = None

    @model_serializer(mode="wrap")
    def _no_documents_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if "evidence" in data and data["evidence"] is None:
            del data["evidence"]
        return data


class Transcript(_Debate):
    """Everything a debate produced and what is needed to replay it."""

    turns: list[Turn] = Field(default_factory=list)
    scores: dict[str, dict[str, Any]] = Field(default_factory=dict)  # round → score record
    result: dict[str, Any] | None = None

    def header(self) -> DebateRecord:
        """The journal's first record: the debate as it begins, before any turn."""
        return DebateRecord.model_validate(self.model_dump(exclude={"turns", "scores", "result"}))


# -- the journal's records -------------------------------------------------------------------


class DebateRecord(_Debate):
    """The journal's first line: the debate's setup, as the transcript will record it."""

    type: Literal["debate"] = "debate"
    moot_version: str  # the moot that wrote it: a journal of a newer one is refused


class TurnRecord(Turn):
    """A finished turn, on disk before the debate goes on; a resumed debate reuses it."""

    type: Literal["turn"] = "turn"
    # In a debate given documents, the text of each passage the turn cited, by id (those an
    # id of the documents names): what a reader of a debate that did not finish opens a
    # citation to, the transcript's ledger not being written yet. Empty: it cited none, or a
    # journal written before the journal kept them.
    passages: dict[str, str] = Field(default_factory=dict)  # saved only where not empty

    @classmethod
    def of(cls, turn: Turn, passages: Mapping[str, str] | None = None) -> TurnRecord:
        return cls.model_validate({**turn.model_dump(), "passages": dict(passages or {})})

    def turn(self) -> Turn:
        return Turn.model_validate(self.model_dump(exclude={"type", "passages"}))


class ScoreRecord(BaseModel):
    """A round's score (Oxford's completeness): the judge's score and reasoning, and the
    rest of its record (its rubric, the checks code made) as the format gave them.

    The journal's line and the event a debate's listeners get (`moot.events.Scored`) are
    this one record: the engine writes it and emits the same object."""

    model_config = ConfigDict(extra="allow")

    type: Literal["score"] = "score"
    round: int
    score: float
    # The score that ends the rounds (the format's min_score), as the live view shows it;
    # None in journals written before it was kept there.
    threshold: float | None = None
    reasoning: str = ""

    def record(self) -> dict[str, Any]:
        """What the transcript keeps of it under `scores`, by round (the threshold is the
        transcript's `params`)."""
        return self.model_dump(exclude={"type", "round", "threshold"})


class StopRecord(BaseModel):
    """Why the rounds ended; written once, and emitted as it is (`moot.events.Stopped`)."""

    type: Literal["stop"] = "stop"
    reason: StopReason


class KeptRecord(BaseModel):
    """A choice a format made outside any turn (the plan a user confirmed, a decision on a
    point of information), as JSON: a resumed debate goes on with it."""

    type: Literal["kept"] = "kept"
    key: str
    value: Any = None


Record = Annotated[
    DebateRecord | TurnRecord | ScoreRecord | StopRecord | KeptRecord,
    Field(discriminator="type"),
]
JOURNAL: TypeAdapter[Record] = TypeAdapter(Record)


# -- their JSON Schema --------------------------------------------------------------------------

SCHEMAS = ("transcript", "journal")
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(what: str) -> dict[str, Any]:
    """The JSON Schema of a transcript.json (WHAT "transcript") or of one line of a
    journal.jsonl ("journal"), as moot reads them: what validates against it, moot reads."""
    if what == "transcript":
        schema = Transcript.model_json_schema(by_alias=True)
        # Written by every moot: a transcript without it is refused (transcript.check_version).
        schema["required"] = [*schema.get("required", []), "moot_version"]
        title = "moot transcript"
    elif what == "journal":
        schema = JOURNAL.json_schema(by_alias=True)
        title = "a line of a moot journal"
    else:
        raise ValueError(f"no schema {what!r}: one of {', '.join(SCHEMAS)}")
    schema.pop("title", None)
    return {"$schema": DIALECT, "title": f"{title}, schema {SCHEMA_VERSION}", **schema}
