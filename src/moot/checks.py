"""Deterministic checks on speeches that sit beside a small model's rubric.

A 135M judge's yes/no answers are noisy; an empty speech, one that shares nothing with
the motion, or one phrase repeated can be told apart for sure in code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from moot.inference.protocol import degeneracy
from moot.transcript import Transcript

_EN_STOP = frozenset(
    """a an the this that these those house believes believe will would should be is are was
    were has have had of to in on for and or not no with by as at it its from than then
    it's be been being do does did can could may might must shall we our us you your they
    their them he she his her i me my more most less much many very""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def content_terms(text: str) -> set[str]:
    """Content words (English, crude stem) and Chinese character bigrams of a text."""
    words = {w.lower().rstrip("s") for w in _WORD.findall(text)}
    terms = {w for w in words if w not in _EN_STOP and len(w) > 2}
    han = "".join(_HAN.findall(text.replace("本院认为", "")))
    terms |= {han[i : i + 2] for i in range(len(han) - 1)}
    return terms


# A unit of length as the rulebooks count it: a word (letters or digits, with inner
# apostrophes or hyphens) or one Chinese character (字).
_UNIT = re.compile(r"[\u4e00-\u9fff]|[^\W_\u4e00-\u9fff]+(?:['’-][^\W_\u4e00-\u9fff]+)*")
# Where a sentence ends: . ! ? … followed by space or the end (closing quotes allowed), or
# a Chinese full stop, exclamation or question mark.
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|[。！？]+[”’」』）]*")
ELLIPSIS = "…"


def length_units(text: str) -> int:
    """Words in English, characters (字) in Chinese, as the rulebooks count them."""
    return len(_UNIT.findall(text))


def ends_sentence(text: str) -> bool:
    """Does TEXT end with a complete sentence?"""
    return any(m.end() == len(text.rstrip()) for m in _SENTENCE_END.finditer(text.rstrip()))


@dataclass(frozen=True)
class Fitted:
    """A turn's text fitted to its limit: what is shown, its length, whether it was cut."""

    text: str
    length: int
    cut: bool = False
    flag: str | None = None  # why the cut is not a clean one


def complete_prefix(text: str, limit: int) -> int:
    """The end of the longest run of complete sentences of TEXT within LIMIT units; 0 if
    the first sentence is already longer."""
    units = list(_UNIT.finditer(text))
    bound = units[limit].start() if len(units) > limit else len(text)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, bound + 1) if m.end() <= bound]
    return ends[-1] if ends else 0


def first_question(text: str, limit: int) -> str | None:
    """The first sentence of TEXT that is a question (ends with ? or ？) and ends within
    LIMIT units, or None."""
    bound = complete_prefix(text, limit)
    start = 0
    for m in _SENTENCE_END.finditer(text, 0, bound):
        sentence = text[start : m.end()].strip()
        if sentence.rstrip("\"'”’)]」』）").endswith(("?", "？")):
            return sentence
        start = m.end()
    return None


def fit_question(text: str, limit: int, *, ended: bool) -> Fitted:
    """A point of information: one question within LIMIT units — the first the speaker
    asked; a reply that asks none is fitted as any turn and flagged."""
    text = text.strip()
    question = first_question(text, limit)
    if question is not None:
        return Fitted(question, length_units(question), cut=question != text)
    fitted = fit(text, limit, ended=ended)
    flag = "; ".join(f for f in (fitted.flag, "not a question") if f)
    return Fitted(fitted.text, fitted.length, fitted.cut, flag)


def fit(text: str, limit: int, *, ended: bool) -> Fitted:
    """TEXT within LIMIT units, ending on a complete sentence. ENDED: the speaker finished
    the reply itself (its last sentence may then lack a full stop); otherwise it was stopped
    (by the limit or the token budget) and a half-said sentence is dropped. A first sentence
    longer than the limit is cut at the limit, marked with an ellipsis, and flagged."""
    text = text.strip()
    units = list(_UNIT.finditer(text))
    if len(units) <= limit and (ended or ends_sentence(text)):
        return Fitted(text, len(units))
    end = complete_prefix(text, limit)
    if end:
        kept = text[:end].rstrip()
        return Fitted(kept, length_units(kept), cut=True)
    if not units:
        return Fitted(text, 0)
    stop = units[min(limit, len(units)) - 1].end()
    kept = text[:stop].rstrip(" ,;:—-") + ELLIPSIS
    reason = (
        f"one sentence longer than the limit of {limit}: cut at the limit"
        if len(units) > limit
        else "stopped in the middle of its first sentence"
    )
    return Fitted(kept, length_units(kept), cut=True, flag=reason)


def speech_checks(text: str, motion: str, *, min_units: int = 25) -> dict[str, bool]:
    """Is a speech substantial, on the motion, and not a repeated phrase?"""
    return {
        "substantial": length_units(text) >= min_units,
        "on_topic": bool(content_terms(text) & content_terms(motion)),
        "not_repetitive": bool(text.strip()) and degeneracy(text) is None,
    }


# -- checking a saved debate -------------------------------------------------------------


@dataclass(frozen=True)
class TurnCheck:
    """One limited turn of a saved debate against its limit."""

    index: int
    role: str
    step: str
    length: int
    limit: int
    status: str  # "ok", "cut" (the engine cut it to fit) or "over" (a broken rule)
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class DebateCheck:
    turns: tuple[TurnCheck, ...]
    unlimited: int  # turns with no limit recorded: structured replies, older transcripts

    @property
    def over(self) -> int:
        return sum(t.status == "over" for t in self.turns)

    @property
    def broken(self) -> bool:
        return self.over > 0

    def summary(self) -> dict[str, int]:
        return {
            "limited_turns": len(self.turns),
            "within_limit": len(self.turns) - self.over,
            "cut_to_fit": sum(t.status == "cut" for t in self.turns),
            "over_limit": self.over,
            "flagged": sum(bool(t.flags) for t in self.turns),
            "no_limit_recorded": self.unlimited,
        }


def check_debate(transcript: Transcript) -> DebateCheck:
    """Every turn that records a limit, measured again from its text (what the file holds
    now, not what the turn says of itself)."""
    checked, unlimited = [], 0
    for turn in transcript.turns:
        if turn.limit is None:
            unlimited += 1
            continue
        length = length_units(turn.text)
        status = "over" if length > turn.limit else "cut" if turn.cut else "ok"
        checked.append(
            TurnCheck(
                turn.index, turn.role, turn.step, length, turn.limit, status, tuple(turn.flags)
            )
        )
    return DebateCheck(tuple(checked), unlimited)


# -- voice: what the rulebooks forbid a speaker to say ----------------------------------

# A speech opening with a chatbot's manners rather than the speaker's case.
_PREAMBLE = re.compile(
    r"^\W*(?:as an? (?:ai|artificial|language model|assistant)|i(?:'m| am) an? (?:ai|language)"
    r"|sure\b|certainly\b|of course\b|absolutely\b|okay\b|ok\b|great question|here(?:'s| is)\b"
    r"|i apologi[sz]e|i'm sorry|sorry\b|作为一?(?:个|名)?(?:人工智能|ai|语言模型|助手)"
    r"|好的|当然|抱歉|对不起|以下是)",
    re.IGNORECASE,
)
# The prompt's own scaffolding echoed at the start: "Proposition's speech this round:".
_LABEL = re.compile(
    r"^\W*(?:the )?(?:proposition|opposition|devil'?s advocate|chair|speaker|participant \d+)"
    r"(?:'s)?[^.:\n]{0,40}?(?:speech|rebuttal|summary|attack|answer|question|response)"
    r"[^.:\n]{0,30}:\s*|^\W*(?:speech|rebuttal|summary|answer|question|response|opening)\s*:\s*",
    re.IGNORECASE,
)
# Template placeholders: "[Your Name]", "[Insert point]", "[Opponent's name]".
_PLACEHOLDER = re.compile(
    r"\[(?:your|my|insert|speaker|opponent|name|date|topic)[^\]\n]{0,40}\]", re.IGNORECASE
)


def opening_problem(text: str) -> str | None:
    """What is wrong with how TEXT opens, once its first sentence is complete."""
    head = text.lstrip()
    if _LABEL.match(head):
        return "it echoed the prompt's labels"
    if _PREAMBLE.match(head):
        return "it opened with a chatbot's preamble"
    end = next((m.end() for m in _SENTENCE_END.finditer(head)), len(head))
    if _PLACEHOLDER.search(head[:end]):
        return "it opened with a template placeholder"
    return None


def first_sentence_end(text: str) -> int:
    """Where the first sentence of TEXT ends; 0 while it is not complete."""
    found = _SENTENCE_END.search(text)
    return found.end() if found else 0


def clean_voice(text: str, *, final: bool = False) -> tuple[str, list[str]]:
    """TEXT with what the rulebooks forbid cut out where a clean cut exists: echoed labels
    and preamble sentences at the start, sentences holding a placeholder anywhere. Returns
    the text and what was cut. Only whole sentences are dropped, so a prefix of a text
    cleans to a prefix; FINAL: the text is all said, its last fragment is judged too."""
    cut: list[str] = []
    text = text.lstrip()
    label = _LABEL.match(text)
    if label:
        text = text[label.end() :]
        cut.append("echoed prompt labels removed")
    while _PREAMBLE.match(text):
        end = next((m.end() for m in _SENTENCE_END.finditer(text)), 0)
        if not end:
            break  # the sentence is not complete yet
        text = text[end:].lstrip()
        if "preamble removed" not in cut:
            cut.append("preamble removed")
    kept, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        sentence = text[start : m.end()]
        if _PLACEHOLDER.search(sentence):
            if "placeholder removed" not in cut:
                cut.append("placeholder removed")
        else:
            kept.append(sentence)
        start = m.end()
    rest = text[start:]  # the sentence still being said: judged once it is complete
    if final and _PLACEHOLDER.search(rest):
        rest = ""
        if "placeholder removed" not in cut:
            cut.append("placeholder removed")
    kept.append(rest)
    return "".join(kept).lstrip(), cut


# -- substance: a structured reply's prose must say something ---------------------------

PROSE_CHARS = 40  # a string field allowed more than this is prose, not a name or a label
MIN_PROSE_UNITS = {"en": 2, "zh": 3}  # words (字): "yes", "ok", "同意" say nothing


def hollow(reply: BaseModel) -> str | None:
    """What of a structured REPLY says nothing: a prose field (a reason, a summary, a point)
    of one word (or two 字), or one phrase repeated. None when every one says
    something."""
    schema = reply.model_json_schema()
    return _hollow(reply.model_dump(), schema, schema.get("$defs", {}), "")


def _hollow(value: Any, node: dict[str, Any], defs: dict[str, Any], where: str) -> str | None:
    if "$ref" in node:
        node = defs.get(node["$ref"].split("/")[-1], {})
    for option in node.get("anyOf", ()):
        if option.get("type") == _json_type(value):
            node = option
    if isinstance(value, dict):
        props = node.get("properties", {})
        for key, item in value.items():
            found = _hollow(item, props.get(key, {}), defs, f"{where}.{key}".lstrip("."))
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _hollow(item, node.get("items", {}), defs, f"{where}.{i}")
            if found:
                return found
    elif isinstance(value, str) and node.get("maxLength", 0) > PROSE_CHARS:
        least = MIN_PROSE_UNITS["zh" if _HAN.search(value) else "en"]
        if length_units(value) < least:
            return f"{where} says nothing: {value!r}"
        if degeneracy(value):
            return f"{where} repeats one phrase"
    return None


def _json_type(value: Any) -> str:
    return {str: "string", list: "array", dict: "object", bool: "boolean"}.get(
        type(value), "number"
    )
