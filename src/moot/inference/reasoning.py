"""A model's reasoning told from its answer: think blocks and Harmony channels, whole or streamed.

Models that think aloud write it in one of a few ways: a `<think>…</think>` block (also
`<thinking>`, `<reasoning>`) before the answer; a reply that starts inside a block the chat
template already opened, so only `</think>` shows; a block never closed (all reasoning, no
answer); or gpt-oss's Harmony channels, `<|channel|>analysis<|message|>…<|end|>` then
`<|channel|>final<|message|>…`. Every backend streams what its model wrote with these markers
(a server's separate `reasoning_content` wrapped in `<think>`…`</think>`), and `Splitter` tells
the two apart however the text arrives in pieces.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Kind = Literal["reasoning", "answer", "retract"]

OPEN_TAGS = ("<think>", "<thinking>", "<reasoning>")
CLOSE_TAGS = ("</think>", "</thinking>", "</reasoning>")
OPEN, CLOSE = OPEN_TAGS[0], CLOSE_TAGS[0]  # how backends mark a reasoning they get apart

# Harmony (gpt-oss): a message is `<|start|>ROLE<|channel|>NAME<|message|>TEXT<|end|>`. llama.cpp
# renders <|end|> as nothing, so a message also ends where the next one starts.
CHANNEL, MESSAGE, START = "<|channel|>", "<|message|>", "<|start|>"
ENDS = ("<|end|>", "<|return|>", "<|call|>")
MARKERS = (CHANNEL, MESSAGE, START, "<|constrain|>", *ENDS)
HARMONY_FINAL = f"<|end|>{START}assistant{CHANNEL}final{MESSAGE}"

_TAGS = (*OPEN_TAGS, *CLOSE_TAGS, *MARKERS)
_LONGEST = max(len(t) for t in _TAGS)

State = Literal["answer", "think", "header", "message"]


class Splitter:
    """Pieces of a reply in, `(kind, text)` out: "reasoning" or "answer" text, in order.

    A tag split across pieces is held back until it is whole. OPENED: the reply starts inside
    a think block (the prompt opened it). A closing tag with no block open means the same,
    found late: what was given as answer so far was reasoning, and a ("retract", that text)
    says so before the rest. `reasoning` and `answer` hold the whole of each so far.
    """

    def __init__(self, *, opened: bool = False) -> None:
        self._state: State = "think" if opened else "answer"
        self._close = CLOSE  # the tag that ends the open think block
        self._channel: str | None = None  # the Harmony channel named so far; None: none yet
        self._final = False  # in a Harmony message on the final channel
        self._pending = ""
        self._seen = opened  # a think block or a Harmony message was met
        self._reasoning: list[str] = []
        self._answer: list[str] = []

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    @property
    def answer(self) -> str:
        return "".join(self._answer)

    @property
    def thinking(self) -> bool:
        """Whether the text now arriving is reasoning (a Harmony header counts as reasoning)."""
        return self._state in ("think", "header") or (self._state == "message" and not self._final)

    def closer(self) -> str:
        """What ends the reasoning under way and starts the answer; "" outside reasoning."""
        if self._state == "think":
            return f"{self._close}\n\n"
        if self.thinking:
            return HARMONY_FINAL if self._state == "message" else f"{CHANNEL}final{MESSAGE}"
        return ""

    def feed(self, piece: str) -> list[tuple[Kind, str]]:
        out: list[tuple[Kind, str]] = []
        buf = self._pending + piece
        while buf:
            found = self._next_tag(buf)
            if found is None:
                keep = _partial_tag(buf)
                self._emit(out, buf[: len(buf) - keep])
                self._pending = buf[len(buf) - keep :]
                return out
            at, tag = found
            if tag in CLOSE_TAGS and self._state == "answer":  # a block the prompt opened
                self._retract(out)
                self._state = "think"
            self._emit(out, buf[:at])
            self._take(tag)
            buf = buf[at + len(tag) :]
        self._pending = ""
        return out

    def finish(self) -> list[tuple[Kind, str]]:
        """The text held back as a possible tag, which the reply ended before completing."""
        out: list[tuple[Kind, str]] = []
        self._emit(out, self._pending)
        self._pending = ""
        return out

    def _next_tag(self, buf: str) -> tuple[int, str] | None:
        """The first tag in BUF that means something in the present state."""
        if self._state == "think":
            tags: Iterable[str] = CLOSE_TAGS
        elif self._state == "header":
            tags = (MESSAGE, CHANNEL, *ENDS)
        elif self._state == "message":
            tags = (START, CHANNEL, *ENDS)
        else:
            tags = (*OPEN_TAGS, CHANNEL, START, *ENDS, *([] if self._seen else CLOSE_TAGS))
        hits = [(i, t) for t in tags if (i := buf.find(t)) >= 0]
        return min(hits, key=lambda hit: (hit[0], -len(hit[1]))) if hits else None

    def _retract(self, out: list[tuple[Kind, str]]) -> None:
        """What was taken for the answer was reasoning: say so, and keep it as such."""
        if self._answer:
            moved = self.answer
            self._reasoning.append(moved)
            self._answer.clear()
            out.append(("retract", moved))

    def _take(self, tag: str) -> None:
        """Move to the state TAG leads to."""
        self._seen = True
        if tag in OPEN_TAGS:
            self._state, self._close = "think", CLOSE_TAGS[OPEN_TAGS.index(tag)]
        elif tag in CLOSE_TAGS:
            self._state = "answer"
        elif tag == START:  # a role's name follows, then its channel
            self._state, self._channel = "header", None
        elif tag == CHANNEL:
            self._state, self._channel = "header", ""
        elif tag == MESSAGE:
            # The final channel's name may be followed by a recipient or "<|constrain|>json";
            # a message on no channel at all is an answer too.
            words = (self._channel or "").split()
            self._state, self._final = "message", self._channel is None or words[:1] == ["final"]
        else:  # the end of a message
            self._state, self._final = "answer", False

    def _emit(self, out: list[tuple[Kind, str]], text: str) -> None:
        if not text:
            return
        if self._state == "header":
            if self._channel is not None:  # a role's name before the channel is left out
                self._channel += text
            return
        kind: Kind = "reasoning" if self.thinking else "answer"
        parts = self._reasoning if kind == "reasoning" else self._answer
        if not parts:
            text = text.lstrip()  # the blank line after a tag
            if not text:
                return
        parts.append(text)
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))


def _partial_tag(text: str) -> int:
    """Length of the longest end of TEXT that begins some tag."""
    for n in range(min(len(text), _LONGEST - 1), 0, -1):
        tail = text[-n:]
        if any(t.startswith(tail) for t in _TAGS):
            return n
    return 0


def split(text: str, *, opened: bool = False) -> tuple[str, str]:
    """A whole reply's reasoning and answer, each stripped."""
    splitter = Splitter(opened=opened)
    splitter.feed(text)
    splitter.finish()
    return splitter.reasoning.strip(), splitter.answer.strip()


def opens_thinking(prompt: str) -> str | None:
    """The think tag a rendered prompt ends with (the chat template opened the block), if any."""
    tail = prompt.rstrip()
    return next((tag for tag in OPEN_TAGS if tail.endswith(tag)), None)


def close_in_prompt(prompt: str) -> str:
    """PROMPT with the think block it opens closed at once: the model answers without thinking,
    as a template's own `enable_thinking=false` would have it."""
    tag = opens_thinking(prompt)
    if tag is None:
        return prompt
    return f"{prompt}{CLOSE_TAGS[OPEN_TAGS.index(tag)]}\n\n"


SOFT_SWITCH = "/no_think"  # Qwen3's own switch, written at the end of the user's message


def with_soft_switch(content: str) -> str:
    return content if content.rstrip().endswith(SOFT_SWITCH) else f"{content}\n{SOFT_SWITCH}"
