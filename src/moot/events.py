"""What a debate tells its listeners as it runs: the live view, the web app and
`moot.Debate` consume the same typed events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from moot.transcript import Turn

__all__ = [
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


@dataclass(frozen=True)
class Token:
    """A piece of a speech as it streams; `reasoning`: of the thinking before it, which the
    live view shows dimmed (or not at all) and nothing else ever reads."""

    role: str
    text: str
    reasoning: bool = False


@dataclass(frozen=True)
class TurnFinished:
    turn: Turn
    label: str


@dataclass(frozen=True)
class Scored:
    round: int
    score: float
    threshold: float
    reasoning: str


@dataclass(frozen=True)
class Notice:
    level: str  # "info" | "warn" | "error"
    message: str


@dataclass(frozen=True)
class Stopped:
    reason: str


Event = TurnStarted | Token | TurnFinished | Scored | Notice | Stopped
Listener = Callable[[Event], None]
