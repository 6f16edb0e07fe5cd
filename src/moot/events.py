"""What a debate tells its listeners as it runs: the live view, the web app and
`moot.Debate` consume the same typed events.

Each is a pydantic dataclass told apart by its `type`, as the journal's records are
(moot.records): the page's server-sent events are their JSON (`EVENTS.dump_python`), and
a finished turn's event carries the turn the journal records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter
from pydantic.dataclasses import dataclass

from moot.records import Turn

__all__ = [
    "EVENTS",
    "Event",
    "Listener",
    "Notice",
    "Scored",
    "Stopped",
    "Token",
    "TurnFinished",
    "TurnStarted",
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
    turn: Turn
    label: str
    type: Literal["turn_finished"] = "turn_finished"


@dataclass(frozen=True)
class Scored:
    round: int
    score: float
    threshold: float
    reasoning: str
    type: Literal["scored"] = "scored"


@dataclass(frozen=True)
class Notice:
    level: str  # "info" | "warn" | "error"
    message: str
    type: Literal["notice"] = "notice"


@dataclass(frozen=True)
class Stopped:
    reason: str
    type: Literal["stopped"] = "stopped"


Event = TurnStarted | Token | TurnFinished | Scored | Notice | Stopped
Listener = Callable[[Event], None]
# The events told apart by `type`: their JSON, and its schema.
EVENTS: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Field(discriminator="type")])
