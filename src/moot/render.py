"""The rich live view of a running debate: it consumes engine events and prints them."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from moot.engine.rules import length_units
from moot.events import Event, Notice, Scored, Stopped, Token, TurnFinished, TurnStarted
from moot.inference.human import HUMAN
from moot.models.labels import model_label
from moot.records.transcript import Turn
from moot.words import Words, words

_STYLES = {
    "proposition": "bold blue",
    "opposition": "bold red",
    "devil": "bold yellow",
    "chair": "bold magenta",
    "judge": "bold cyan",
}


# Steps after the rounds carry round None; these are shown so whatever their round (a
# tournament's verdict is numbered 0).
_CLOSING = ("rebuttal", "verdict", "brief")


# A speaker's reasoning is folded into one dim line: a mark of progress every so many pieces,
# then its length and how it ended.
_THOUGHT_DOT = 50
_THOUGHT_TAIL = 60


class LiveView:
    """Prints each step as it happens: a labelled header, the streamed speech, the score bar.

    A speaker's reasoning (Token.reasoning) is folded into one dim line, or left out with
    `hide_reasoning`."""

    def __init__(
        self,
        console: Console,
        *,
        quiet: bool = False,
        round_label: str = "Round {n}",
        units: str = "words",
        hide_reasoning: bool = False,
        typed_here: Collection[str] = (),
        closing_label: str = "",
        language: str = "en",
        models: Mapping[str, str] | None = None,
    ):
        self.console = console
        self.quiet = quiet
        self.round_label = round_label
        self.closing_label = closing_label  # the rule before the steps after the rounds
        self.units = units  # what a length limit counts: words, or 字
        self.words = words(language)  # moot's own words in the debate's language
        self.hide_reasoning = hide_reasoning
        # Each role's model as the header named it (`model_labels`); a role it lacks is
        # named by its turn's model.
        self.models = dict(models or {})
        # The roles a person holds at this terminal: what they typed is on the screen already.
        self.typed_here = frozenset(typed_here)
        self._round: int | None = 0
        self._streaming = False
        self._thought: list[str] = []  # the reasoning of the turn under way, folded
        self._midline = False  # a speech streamed so far ends mid-line

    def __call__(self, event: Event) -> None:
        if isinstance(event, Notice):
            self._notice(event)
        elif self.quiet:
            return
        elif isinstance(event, TurnStarted):
            self._started(event)
        elif isinstance(event, Token):
            self._token(event)
        elif isinstance(event, TurnFinished):
            self._finished(event)
        elif isinstance(event, Scored):
            self._scored(event)
        elif isinstance(event, Stopped):
            self.console.print()

    def _token(self, event: Token) -> None:
        if event.reasoning:
            if not self.hide_reasoning:
                self._think(event.text)
            return
        if event.role in self.typed_here:
            self._streaming = False
            return
        self._fold()
        shown = printable(event.text)
        self.console.file.write(shown)
        self.console.file.flush()
        if shown:
            self._midline = not shown.endswith("\n")

    def _think(self, text: str) -> None:
        if not self._thought:
            self.console.print(f"[dim]{self.words.say('thinking')}[/]", end="", highlight=False)
        self._thought.append(text)
        if len(self._thought) % _THOUGHT_DOT == 0:
            self.console.print("[dim].[/]", end="", highlight=False)

    def _fold(self) -> None:
        """End the folded line of reasoning: how long it was and how it ended."""
        if not self._thought:
            return
        thought = " ".join("".join(self._thought).split())
        self._thought = []
        tail = thought if len(thought) <= _THOUGHT_TAIL else "…" + thought[-_THOUGHT_TAIL:]
        size = f"{length_units(thought)} {self.units}"
        self.console.print(f"[dim] {size} · {safe(tail)}[/]", highlight=False)

    def _started(self, event: TurnStarted) -> None:
        self._fold()
        if event.round is None or event.step in _CLOSING:
            if self._round is not None:  # after the rounds: a rule, once
                self._round = None
                self.console.rule(
                    f"[bold]{safe(self.closing_label)}[/]" if self.closing_label else ""
                )
        elif event.round != self._round:
            self._round = event.round
            self.console.rule(f"[bold]{self.round_label.format(n=event.round)}[/]")
        style = _STYLES.get(event.role, "bold")
        self.console.print(f"\n[{style}]{safe(event.label)}[/]", highlight=False)
        self._streaming = event.streams
        if not event.streams:
            self.console.print("[dim]…[/]")

    def _finished(self, event: TurnFinished) -> None:
        turn = event.turn
        if self._thought:
            self._fold()  # all reasoning, no speech: the fold ends the line
        elif self._streaming and self._midline:
            self.console.file.write("\n")
        self._midline = False
        say, seconds = self.words.say, f"{turn.duration_ms / 1000:.1f}"
        if turn.model == HUMAN:
            stats = say("typed_in", seconds=seconds)
        else:
            model = self.models.get(turn.role) or model_label(turn.model)
            stats = say("spent", model=safe(model), tokens=turn.completion_tokens, seconds=seconds)
        if turn.limit is not None:
            stats += say("length", length=turn.length, limit=turn.limit, units=self.units)
            if turn.cut:
                stats += say("cut")
            elif turn.length is not None and turn.length > turn.limit:
                stats += say("over")
        self.console.print(f"[dim]{stats}[/]", highlight=False)

    def _scored(self, event: Scored) -> None:
        filled = int(round(event.score))
        bar = "█" * filled + "░" * (10 - filled)
        # The engine always sends the threshold; only a score journaled before it was kept lacks it.
        threshold = event.threshold
        mark = "✅" if threshold is not None and event.score >= threshold else "…"
        shown = f"{threshold:g}" if threshold is not None else "–"
        said = self.words.say("score", score=f"{event.score:.1f}", threshold=shown)
        self.console.print(f"[cyan]{bar}[/] {said} {mark}", highlight=False)
        if event.reasoning:
            self.console.print(f"[dim]{safe(event.reasoning)}[/]", highlight=False)

    def _notice(self, event: Notice) -> None:
        # A notice can come while a speech or its thinking is on the screen: it goes on a
        # line of its own, never glued to the words before it.
        self._fold()
        if self._midline:
            self.console.file.write("\n")
            self._midline = False
        style = {"warn": "yellow", "error": "bold red"}.get(event.level, "dim")
        self.console.print(f"[{style}]{safe(event.message)}[/]", highlight=False)


@dataclass(frozen=True)
class SeatShown:
    """One line of a debate's header: what the debate calls the seat, its model's short
    label, its temperature (None: a person's seat)."""

    label: str
    model: str
    temperature: float | None


def show_seats(
    console: Console, said: Words, subject: str, motion: str, seats: Sequence[SeatShown]
) -> None:
    """A debate's header, before its first turn: SUBJECT (its word for the motion: "Motion",
    "Topic", "Question") and the motion, then each seat with its model and temperature."""
    colon = said.say("subject_colon")
    console.print(f"[bold]{safe(subject)}{colon}[/]{safe(motion)}", highlight=False)
    table = Table(box=None, header_style="dim", pad_edge=False, padding=(0, 2))
    table.add_column(said.say("view_seat"))
    table.add_column(said.say("view_model"), overflow="fold")
    table.add_column(said.say("view_temperature"), justify="right", no_wrap=True)
    for seat in seats:
        temperature = "–" if seat.temperature is None else f"{seat.temperature:g}"
        table.add_row(safe(seat.label), safe(seat.model), temperature)
    console.print(table)


def totals(turns: Iterable[Turn]) -> tuple[int, int, float]:
    """What a debate's turns cost, the draws not kept included: prompt tokens, completion
    tokens, and the seconds the models spent on them (a person's typing left out)."""
    prompt = completion = 0
    ms = 0
    for turn in turns:
        spent = turn.discarded or {}
        prompt += turn.prompt_tokens + spent.get("prompt_tokens", 0)
        completion += turn.completion_tokens + spent.get("completion_tokens", 0)
        if turn.model != HUMAN:
            ms += turn.duration_ms + spent.get("duration_ms", 0)
    return prompt, completion, ms / 1000


def show_outcome(
    console: Console,
    said: Words,
    outcome: str,
    stop_reason: str | None,
    turns: Sequence[Turn],
    wall_seconds: float,
) -> None:
    """A debate's last lines: its outcome in one line, why its rounds ended, and what it
    cost: the wall time, the tokens, and the models' completion tokens a second."""
    console.print()
    if outcome:
        console.print(f"[bold]{safe(outcome)}[/]", highlight=False)
    if stop_reason:
        console.print(safe(_stopped(said, stop_reason)), highlight=False)
    prompt, completion, seconds = totals(turns)
    line = said.say(
        "totals", seconds=f"{wall_seconds:.1f}", prompt=f"{prompt:,}", completion=f"{completion:,}"
    )
    if seconds > 0:  # a dry run's scripted models take no time to measure
        line += said.say("totals_rate", rate=f"{completion / seconds:.1f}")
    console.print(f"[dim]{line}[/]", highlight=False)


def _stopped(said: Words, reason: str) -> str:
    try:
        return said.say(f"stop_{reason}")
    except KeyError:  # a reason of a newer moot's: as recorded
        return reason


def show_document(console: Console, markdown: str) -> None:
    """A finished debate's document, rendered as markdown: its text is shown, never obeyed
    (no control characters, no hyperlinks)."""
    console.print()
    markdown = printable(markdown)
    if markdown.startswith("---\n"):
        # YAML front matter (the decision document's) is data: show it as written.
        head, sep, body = markdown[4:].partition("\n---\n")
        if sep:
            console.print(f"---\n{head}\n---", markup=False, highlight=False, soft_wrap=True)
            markdown = body
    console.print(Markdown(markdown, hyperlinks=False))


# -- untrusted text ------------------------------------------------------------------------
# Model output, motions, GGUF metadata and saved files may hold terminal escape sequences
# (ESC[2J clears the screen, OSC 0 sets the window title) and rich markup ([link=…]). On the
# terminal they are shown as text; the files on disk keep the exact text. The bidirectional
# controls (embeddings, overrides, isolates and the marks LRM, RLM, ALM) are escaped too: raw,
# they reorder what the user reads around them.

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """TEXT with every C0/C1 control character but newline and tab, and every bidirectional
    control, shown escaped (`\\x1b`, `\\u202e`)."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe(text: object) -> str:
    """Untrusted text for a rich markup string: printable, with its markup escaped."""
    return escape(printable(str(text)))
