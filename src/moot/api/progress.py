"""`progress=True` of the Python API: one line on stderr as each turn of a debate ends, and
as each debate of a tournament ends, in the debate's language. Off by default: the library
prints nothing of its own."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from moot.events import Event, TurnFinished
from moot.models.labels import model_label
from moot.words import words

if TYPE_CHECKING:
    from moot.tournaments.controls import ControlEvent
    from moot.tournaments.run import TournamentEvent


def _clean(text: str) -> str:
    """TEXT on one line, without control characters: a model's label or name is outside
    input, and a line of progress must not move the cursor or clear the screen."""
    return "".join(c if c.isprintable() else " " for c in text)


class TurnLines:
    """A listener that writes a line as each turn ends: its number, its heading, its model,
    tokens and seconds (`moot run`'s line under a speech)."""

    def __init__(self, language: str, *, stream: TextIO | None = None) -> None:
        self.said = words(language)
        self.stream = stream

    def __call__(self, event: Event) -> None:
        if not isinstance(event, TurnFinished):
            return
        turn = event.turn
        spent = self.said.say(
            "spent",
            model=model_label(turn.model),
            tokens=turn.completion_tokens,
            seconds=f"{turn.duration_ms / 1000:.1f}",
        )
        out = self.stream or sys.stderr  # looked up now: a caller may redirect it
        print(_clean(f"moot: {turn.index + 1}. {event.label} · {spent}"), file=out, flush=True)


class DebateLines:
    """A tournament's listener that writes a line as each debate ends, counting them."""

    def __init__(self, language: str, *, stream: TextIO | None = None) -> None:
        self.said = words(language)
        self.stream = stream
        self.ended = 0

    def __call__(self, event: TournamentEvent | ControlEvent) -> None:
        from moot.tournaments.run import DebateDone, DebateFailed  # a debate alone never loads them

        if not isinstance(event, DebateDone | DebateFailed):
            return
        self.ended += 1
        pair = event.pairing
        vs = self.said.say("tour_vs", a=pair.proposition, b=pair.opposition)
        if isinstance(event, DebateFailed):
            outcome = event.message
        elif event.verdict.winner == "draw":
            outcome = self.said.say("tour_draw")
        else:
            winner = event.verdict.winner
            side = pair.proposition if winner == "proposition" else pair.opposition
            outcome = self.said.say(
                "tour_wins",
                model=side,
                side=self.said.name(winner),
                margin=self.said.shown(str(event.verdict.margin)),
            )
        out = self.stream or sys.stderr
        print(_clean(f"moot: {self.ended}. {vs} · {outcome}"), file=out, flush=True)
