"""Passages: a document's paragraphs cut to a size cap, each with a stable id that names
its file, its page or section and its place there (`report.pdf p.12 ¶3`)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# Han ideographs, kana and hangul: written without spaces, counted and tokenised a
# character at a time.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
_CJK_CHAR = re.compile(f"[{CJK}]")
_SPACE = re.compile(r"\s+")
# Where a long paragraph may be cut: after a sentence's end (and any closing quotation
# mark or bracket), in either language.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])[\"'”’」』)）]*\s*")
# A paragraph that is a page's number or furniture only: nothing worth citing.
_NO_WORDS = re.compile(r"[\W\d_]*")

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """About how many tokens TEXT is for a language model: a CJK character is about one,
    other text about four characters to one."""
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


@dataclass(frozen=True)
class Passage:
    """One citable piece of a document.

    `id` is what a speech cites: the file's name (relative to the folder it was found in),
    its page (`p.12`, PDF) or section (`§3`, the third heading of Markdown, HTML or DOCX;
    none before the first heading or in plain text), and `¶n`, the passage's place on
    that page or in that section (a paragraph over the size cap continues in the next ¶).
    """

    id: str
    file: str
    where: str
    paragraph: int
    text: str
    heading: str = ""


def passage_id(file: str, where: str, paragraph: int) -> str:
    """The id of paragraph PARAGRAPH of WHERE (a page, a section, or "") in FILE."""
    return f"{file} {where} ¶{paragraph}" if where else f"{file} ¶{paragraph}"


def tidy(text: str) -> str:
    """TEXT on one line: whitespace runs as one space, none between CJK characters (a line
    break inside a Chinese sentence is not a space)."""
    text = _SPACE.sub(" ", text).strip()
    return re.sub(f"(?<=[{CJK}，。、；：！？）」』”]) (?=[{CJK}，。、；：！？（「『“])", "", text)


def worth_citing(text: str) -> bool:
    """Whether TEXT holds a word: a page number or a rule of dashes does not."""
    return not _NO_WORDS.fullmatch(text)


def cut(text: str, *, cap: int, count: TokenCounter = approx_tokens) -> list[str]:
    """TEXT in pieces of at most CAP tokens, cut after sentences where it can be and
    inside one only where a sentence alone is over the cap."""
    if count(text) <= cap:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _sentences(text):
        joined = _join(current, sentence)
        if current and count(joined) > cap:
            pieces.append(current)
            current = sentence
        else:
            current = joined
        while count(current) > cap:
            head, current = _split_sentence(current, cap=cap, count=count)
            pieces.append(head)
    if current:
        pieces.append(current)
    return pieces


def _sentences(text: str) -> list[str]:
    out, pos = [], 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > pos and m.end() < len(text):
            out.append(text[pos : m.end()].strip())
            pos = m.end()
    out.append(text[pos:].strip())
    return [s for s in out if s]


def _join(a: str, b: str) -> str:
    if not a:
        return b
    return a + b if _CJK_CHAR.match(b[:1]) or _CJK_CHAR.match(a[-1:]) else f"{a} {b}"


def _split_sentence(text: str, *, cap: int, count: TokenCounter) -> tuple[str, str]:
    """The longest head of TEXT within CAP tokens, cut at a space where there is one."""
    lo, hi = 1, len(text)
    while lo < hi:  # the longest prefix within the cap, by bisection
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= cap:
            lo = mid
        else:
            hi = mid - 1
    space = text.rfind(" ", 0, lo + 1)
    end = space if space > lo // 2 else lo
    return text[:end].strip(), text[end:].strip()


def number(
    file: str,
    paragraphs: Iterable[tuple[str, str, str]],
    *,
    cap: int,
    count: TokenCounter = approx_tokens,
) -> list[Passage]:
    """FILE's passages from its PARAGRAPHS, each `(where, heading, text)` in reading order:
    text tidied, cut to CAP tokens, and numbered from ¶1 on each page or in each section."""
    passages: list[Passage] = []
    seen: dict[str, int] = {}
    for where, heading, raw in paragraphs:
        text = tidy(unicodedata.normalize("NFC", raw))
        if not worth_citing(text):
            continue
        for piece in cut(text, cap=cap, count=count):
            n = seen[where] = seen.get(where, 0) + 1
            passages.append(Passage(passage_id(file, where, n), file, where, n, piece, heading))
    return passages
