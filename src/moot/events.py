"""What a debate tells its listeners as it runs: the live view, the web app and
`moot.Debate` consume the same typed events.

Each is told apart by its `type`, as the journal's records are (moot.records), and what the
journal records is an event as it is: a round's score is the journal's `ScoreRecord`
(`Scored` names it here), the end of the rounds its `StopRecord` (`Stopped`), and a finished
turn's event carries the turn the journal's `turn` line holds. The rest (a turn starting,
its tokens, notices) are pydantic dataclasses the journal does not keep. The page's
server-sent events are their JSON (`EVENTS.dump_python`; web/wire.py), whose JSON Schema
`moot schema events` prints (docs/records.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter
from pydantic.dataclasses import dataclass

from moot.records import transcript as records
from moot.records.transcript import ScoreRecord, StopRecord, Turn

__all__ = [
    "EVENTS",
    "SCHEMAS",
    "Event",
    "Listener",
    "Notice",
    "Scored",
    "Stopped",
    "Token",
    "TurnFinished",
    "TurnStarted",
    "json_schema",
]


@dataclass(frozen=True)
class TurnStarted:
    """A turn begins: who speaks, at which step; `streams` is False for JSON steps."""

    index: int
    round: int | None  # None: after the rounds
    role: str
    step: str
    label: str
    streams: bool  # False for structured (JSON) steps
    type: Literal["turn_started"] = "turn_started"


@dataclass(frozen=True)
class Token:
    """A piece of a speech as it streams; `reasoning`: of the thinking before it, which the
    live view shows dimmed (or not at all) and nothing else ever reads."""

    role: str
    text: str
    reasoning: bool = False
    type: Literal["token"] = "token"


@dataclass(frozen=True)
class TurnFinished:
    """A turn is over: `turn` is the Turn the transcript keeps, the one the journal's `turn`
    line holds (`records.TurnRecord.of(turn)`); `label` its heading; in a debate given
    documents, `passages`: the text of each passage the turn was shown or cited, by id, as
    the transcript's evidence ledger keeps it (what a reader of the turn opens a citation
    to)."""

    turn: Turn
    label: str
    passages: dict[str, str] = Field(default_factory=dict)
    type: Literal["turn_finished"] = "turn_finished"


# A round's score and the end of the rounds are the journal's records themselves: a listener
# gets the object the journal wrote. The old names stay: `isinstance(event, Scored)` and
# `event.round`, `.score`, `.threshold`, `.reasoning`, `.reason` read as they did (the type
# on the wire is the record's: "score", "stop"; keywords only, as for any pydantic model).
Scored = ScoreRecord
Stopped = StopRecord


@dataclass(frozen=True)
class Notice:
    level: str  # "info" | "warn" | "error"
    message: str
    type: Literal["notice"] = "notice"


Event = TurnStarted | Token | TurnFinished | Scored | Notice | Stopped
Listener = Callable[[Event], None]
# The events told apart by `type`: their JSON, and its schema.
EVENTS: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Field(discriminator="type")])


# -- their JSON Schema --------------------------------------------------------------------

SCHEMAS = (*records.SCHEMAS, "events")


def json_schema(what: str) -> dict[str, Any]:
    """The JSON Schema of moot's records (records.json_schema), or with WHAT "events" of one
    event of a debate as the page's server-sent events carry it: what validates against it,
    `EVENTS` reads back."""
    if what != "events":
        return records.json_schema(what)
    schema = EVENTS.json_schema()
    schema.pop("title", None)
    title = f"an event of a moot debate, schema {records.SCHEMA_VERSION}"
    return {"$schema": records.DIALECT, "title": title, **schema}
