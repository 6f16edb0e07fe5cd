"""A person in a seat, at this terminal or from a script piped to standard input.

Each turn first shows what the seat may see (the messages a model there would be sent) and
the step with its limit. At a terminal a speech is typed line by line, each line's prompt
counting the words (字) so far; `:e` on a line of its own opens $EDITOR; a speech over the
limit is kept, edited or typed again, as the person chooses. From a pipe each turn is read
up to a line holding only `.` (or the end of the input), a decision is one line, `accept` or
`decline`, and a structured reply is a JSON object. With a time limit a speech is submitted
as it stands when the time runs out. A speech half typed at a terminal when Ctrl-C stops the
debate is kept aside in the debate's folder (`draft.json`), and `moot resume` offers it again
at that turn, to type on after it.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import select
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from rich.padding import Padding
from rich.text import Text

from moot.cli.root import Console
from moot.engine.rules import length_units
from moot.errors import MootError
from moot.inference.human import Ask, FormField, Said, SeatLeft, decision_of, form_fields
from moot.records.files import TEXT_LIMIT, read_json, write_atomic
from moot.render import printable, safe
from moot.words import words

_PARAGRAPH = re.compile(r"\n\s*\n")
END = "."  # a line holding only this ends a turn
EDIT = ":e"  # a line holding only this opens $EDITOR
RESUME = "the turns finished so far are journaled: `moot resume` asks again for this one"
DRAFT = "draft.json"  # in the debate's folder: a speech half typed when Ctrl-C stopped it


class Reader:
    """Standard input a line at a time, each line waited for until a deadline where the
    input allows it (a terminal or a pipe: select on its descriptor; anything else is read
    as it comes). What arrived past the last whole line is kept, for when time runs out."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._buffer = ""

    def readline(self, deadline: float | None = None) -> str | None:
        """The next line with its newline; "" at the end of the input (a last line without
        one comes first); None once DEADLINE (time.monotonic) has passed."""
        if self._fd is None:
            return self._stream.readline()
        while "\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._fd], [], [], wait)
            if not ready:
                return None
            chunk = os.read(self._fd, 65536)
            if not chunk:  # the end of the input (at a terminal: Ctrl-D)
                line, self._buffer = self._buffer + self._decoder.decode(b"", final=True), ""
                return line
            self._buffer += self._decoder.decode(chunk)
        line, _, self._buffer = self._buffer.partition("\n")
        return line + "\n"

    def pending(self) -> str:
        """What arrived past the last whole line; it is taken."""
        text, self._buffer = self._buffer, ""
        return text


class TerminalSeat:
    """The console of a human seat in `moot run` and `moot resume` (see the module)."""

    def __init__(
        self,
        out: Console,
        reader: Reader,
        *,
        interactive: bool,
        time_limit: float | None = None,
        folder: Callable[[], Path | None] = lambda: None,
    ) -> None:
        self.out = out
        self.reader = reader
        self.interactive = interactive
        self.time_limit = time_limit
        self.folder = folder  # the debate's, once claimed: where a half-typed speech is kept
        self._seen: set[str] = set()  # the paragraphs this person has been shown

    # -- what the seat sees ---------------------------------------------------------------

    def _say(self, text: str, style: str = "dim") -> None:
        self.out.print(f"[{style}]{safe(text)}[/]", highlight=False)
        self.out.file.flush()

    def _show(self, ask: Ask) -> None:
        """What a model in the seat would be sent, less what this person was shown at an
        earlier turn (the motion, a persona, speeches already read: paragraph by paragraph,
        but for the task, the last), with no message's role; then the step and its limit.
        A reply the request quotes (the speech a step goes on from) is indented; the text
        after it says whose it is."""
        said = words(ask.language)
        self.out.rule(f"[dim]{safe(said.say('seat_sees', label=ask.label))}[/]")
        seen = 0
        for n, message in enumerate(ask.messages, 1):
            paragraphs = [p.strip() for p in _PARAGRAPH.split(message.content) if p.strip()]
            task = paragraphs[-1:] if n == len(ask.messages) else []  # shown every time
            fresh = [p for p in paragraphs if p not in self._seen or p in task]
            seen += len(paragraphs) - len(fresh)
            self._seen.update(fresh)
            if not fresh:
                continue
            text = Text(printable("\n\n".join(fresh)))
            quoted = message.role == "assistant"
            self.out.print(Padding(text, (0, 0, 0, 2)) if quoted else text, highlight=False)
        if seen:
            self._say(said.say("seat_seen", n=seen))
        self.out.rule()
        self._say(ask.instruction(), "bold")

    # -- a speech ---------------------------------------------------------------------------

    def speech(self, ask: Ask) -> Said:
        self._show(ask)
        deadline = time.monotonic() + self.time_limit if self.time_limit else None
        kept = self._kept(ask) if self.interactive else ""
        if self.interactive:
            self._say(words(ask.language).say("seat_end", end=repr(END), edit=repr(EDIT)))
        if kept:
            n = length_units(kept)
            self._say(words(ask.language).say("seat_draft", n=n, units=ask.units), "yellow")
            self.out.print(printable(kept), markup=False, highlight=False)
        text, timed_out = self._type(ask, deadline, kept)
        while not timed_out and self.interactive and self._over(ask, text):
            choice = self._line(words(ask.language).say("seat_over_choice"))
            if choice is None or choice.strip().lower()[:1] in ("", "k"):
                break
            if choice.strip().lower().startswith("e"):
                text, timed_out = self._edit(ask, text, deadline)
            elif choice.strip().lower().startswith("r"):
                text, timed_out = self._type(ask, deadline)
        if timed_out:
            self._say(words(ask.language).shown("time ran out: submitted as it stood"), "yellow")
        self._forget()
        return Said(text, timed_out=timed_out)

    def _draft(self) -> Path | None:
        folder = self.folder()
        return folder / DRAFT if folder is not None else None

    def _kept(self, ask: Ask) -> str:
        """The speech half typed for ASK's turn when Ctrl-C stopped the debate; "" if none."""
        path = self._draft()
        if path is None or not path.is_file():
            return ""
        try:
            draft = read_json(path, what="a half-typed turn", limit=TEXT_LIMIT)
        except (MootError, OSError):
            return ""
        if not isinstance(draft, dict) or draft.get("turn") != ask.turn:
            return ""
        return str(draft.get("text", ""))

    def _keep(self, ask: Ask, text: str) -> None:
        """Put TEXT aside for `moot resume`, where the debate has a folder."""
        path = self._draft()
        if path is None or not text.strip() or not path.parent.is_dir():
            return
        draft = {"turn": ask.turn, "label": ask.label, "text": text.rstrip("\n")}
        with contextlib.suppress(OSError):
            write_atomic(path, json.dumps(draft, ensure_ascii=False))
            self.out.print()
            self._say(words(ask.language).say("seat_draft_kept"), "yellow")

    def _forget(self) -> None:
        path = self._draft()
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    def _type(self, ask: Ask, deadline: float | None, start: str = "") -> tuple[str, bool]:
        """Lines up to the end mark or the end of the input, after START; True once the time
        ran out. Ctrl-C keeps what was typed aside (`_keep`) before it stops the debate."""
        lines: list[str] = [start + "\n"] if start else []
        try:
            return self._lines(ask, deadline, lines)
        except KeyboardInterrupt:
            self._keep(ask, "".join(lines))
            raise

    def _lines(self, ask: Ask, deadline: float | None, lines: list[str]) -> tuple[str, bool]:
        while True:
            if self.interactive:
                self._count(ask, "".join(lines), deadline)
            line = self.reader.readline(deadline)
            if line is None:
                return "".join(lines) + self.reader.pending(), True
            if line == "":
                if not lines and not self.interactive:
                    raise SeatLeft(f"the input ended before {ask.instruction()}", hint=RESUME)
                return "".join(lines), False
            body = line.rstrip("\r\n")
            if body == END:
                return "".join(lines), False
            if self.interactive and body == EDIT:
                text, timed_out = self._edit(ask, "".join(lines), deadline)
                if timed_out:
                    return text, True
                lines = [text + "\n"] if text else []
                continue
            lines.append(line)

    def _count(self, ask: Ask, text: str, deadline: float | None) -> None:
        """The next line's prompt: the words (字) so far against the limit, the time left."""
        count = f"{length_units(text)}"
        if ask.limit is not None:
            count += f"/{ask.limit}"
        parts = [f"{count} {ask.units}"]
        if deadline is not None:
            left = max(0, round(deadline - time.monotonic()))
            parts.append(words(ask.language).say("seat_left", n=left))
        over = ask.limit is not None and length_units(text) > ask.limit
        style = "yellow" if over else "dim"
        self.out.print(f"[{style}]{' · '.join(parts)} ›[/] ", end="", highlight=False)
        self.out.file.flush()

    def _over(self, ask: Ask, text: str) -> bool:
        n = length_units(text)
        if ask.limit is None or n <= ask.limit:
            return False
        said = words(ask.language).say("seat_over", n=n, limit=ask.limit, units=ask.units)
        self._say(said, "yellow")
        return True

    def _line(self, prompt: str) -> str | None:
        self.out.print(f"[bold]{safe(prompt)}[/]", end="", highlight=False)
        self.out.file.flush()
        line = self.reader.readline()
        return None if line == "" else line

    def _edit(self, ask: Ask, text: str, deadline: float | None) -> tuple[str, bool]:
        """TEXT edited in $VISUAL or $EDITOR; True when the time ran out meanwhile."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self._say(words(ask.language).say("seat_no_editor"), "yellow")
            return text, False
        fd, name = tempfile.mkstemp(prefix="moot-turn-", suffix=".txt")
        path = Path(name)
        timed_out = False
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            wait = None if deadline is None else max(0.1, deadline - time.monotonic())
            try:
                subprocess.run([*shlex.split(editor), str(path)], check=False, timeout=wait)
            except subprocess.TimeoutExpired:
                timed_out = True  # run() has stopped the editor: the file as it was saved
            except OSError as exc:
                why = exc.strerror or exc
                said = words(ask.language).say("seat_no_start", editor=editor, why=why)
                self._say(said, "yellow")
                return text, False
            edited = path.read_text(encoding="utf-8", errors="replace")
        finally:
            with contextlib.suppress(OSError):
                path.unlink()
        edited = edited.rstrip("\n")
        n = length_units(edited)
        self._say(words(ask.language).say("seat_edited", n=n, units=ask.units, end=repr(END)))
        return edited, timed_out

    # -- a point of information -------------------------------------------------------------

    def decision(self, ask: Ask) -> bool:
        self._say(ask.instruction(), "bold")
        self.out.print(printable(ask.question or ""), markup=False, highlight=False)
        while True:
            if self.interactive:
                self.out.print(
                    f"[bold]{safe(words(ask.language).say('seat_accept'))}[/] ",
                    end="",
                    highlight=False,
                )
                self.out.file.flush()
            line = self.reader.readline()
            if not line:
                raise SeatLeft(f"the input ended before {ask.instruction()}", hint=RESUME)
            decided = decision_of(line)
            if decided is not None:
                return decided
            said = words(ask.language).say("seat_answer", line=repr(line.strip()[:40]))
            self._say(said, "yellow")

    # -- a structured reply -----------------------------------------------------------------

    def form(self, ask: Ask) -> str | Mapping[str, Any]:
        assert ask.schema is not None
        fields = form_fields(ask.schema)
        say = words(ask.language).say
        if ask.problem is None:
            self._show(ask)
        else:
            self._say(say("seat_not_taken", problem=ask.problem), "yellow")
        if self.interactive:
            return self._fields(ask, fields)
        if ask.problem is None:
            listed = say("seat_list").join(
                say("seat_field", name=f.name, kind=_kind(f, ask.language)) for f in fields
            )
            self._say(say("seat_json", fields=listed, end=repr(END)))
        text, _ = self._type(ask, None)
        return text

    def _fields(self, ask: Ask, fields: list[FormField]) -> dict[str, Any]:
        """One prompt per field; Enter keeps the value given last time."""
        values: dict[str, Any] = dict(ask.draft or {})
        for f in fields:
            kept = values.get(f.name)
            shown = f" [{json.dumps(kept, ensure_ascii=False)[:40]}]" if f.name in values else ""
            field = words(ask.language).say("seat_field", name=f.name, kind=_kind(f, ask.language))
            line = self._line(f"{field}{shown}: ")
            if line is None:
                raise SeatLeft(f"the input ended before {ask.instruction()}", hint=RESUME)
            raw = line.rstrip("\r\n")
            if raw or f.name not in values:
                values[f.name] = _typed(f, raw)
        return values


def _kind(f: FormField, language: str = "en") -> str:
    """What field F takes, in LANGUAGE: "yes or no", "text, at most 200 characters"."""
    say = words(language).say
    if f.kind == "boolean":
        return say("kind_boolean")
    if f.kind == "choice":
        return " | ".join(str(c) for c in f.choices)
    if f.kind == "string" and f.max_length:
        return say("kind_text_at_most", n=f.max_length)
    if f.kind in ("integer", "number"):
        bounds = [str(b) for b in (f.minimum, f.maximum) if b is not None]
        return say("kind_number", bounds=say("kind_to").join(bounds)).rstrip()
    return say("kind_text") if f.kind == "string" else say("kind_json")


def _typed(f: FormField, raw: str) -> Any:
    """A typed value as its field takes it; what does not read as one is left as typed, for
    the schema to say why."""
    if f.kind == "boolean":
        decided = decision_of(raw)
        return raw if decided is None else decided
    if f.kind in ("integer", "number", "json") or (f.kind == "choice" and not _all_text(f)):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _all_text(f: FormField) -> bool:
    return all(isinstance(c, str) for c in f.choices)
