"""Citations in a speech, and whether each holds: the cited passage exists, and a quotation
attributed to it is in its text.

A citation is a passage's id in square brackets, `[report.pdf p.12 ¶3]` (or 【…】; several
ids in one bracket are separated by `;`). A quotation is attributed to the citation right
after it (`"…" [id]`, `“…”【id】`, `「…」[id]`) or right before it (`[id]: "…"`), with at most
punctuation and spaces between. A quotation is found when, both normalised (Unicode NFKC,
quotation marks and dashes of one kind, case folded, spaces collapsed and dropped beside
CJK characters, a line-end hyphen joined), it is in the passage; an ellipsis (`...`, `…`)
in the quotation stands for words left out, and its parts must appear in order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from moot.evidence.passages import CJK, Passage


class Check(StrEnum):
    """What checking one citation found."""

    OK = "ok"
    UNKNOWN_ID = "unknown_id"  # no passage has the id cited
    QUOTE_NOT_FOUND = "quote_not_found"  # the passage exists; the quotation is not in it


@dataclass(frozen=True)
class Citation:
    """One id cited in a speech: as written, where (character offsets of its bracket), and
    the quotation attributed to it, if any."""

    written: str
    start: int
    end: int
    quote: str | None = None


@dataclass(frozen=True)
class CitationResult:
    """A citation and what checking it found; `passage` is the passage it names, if any."""

    citation: Citation
    check: Check
    passage: Passage | None

    @property
    def ok(self) -> bool:
        return self.check is Check.OK


_BRACKET = re.compile(
    r"\[([^\[\]\n]{1,300}?¶[^\[\]\n]{0,40}?)\]|【([^【】\n]{1,300}?¶[^【】\n]{0,40}?)】"
)
# A quotation: straight or curly double quotes, corner brackets. Single quotes are left
# alone: they are apostrophes as often as quotation marks.
_QUOTE = re.compile(
    r'"([^"\n]{1,2000})"|“([^“”\n]{1,2000})”|「([^「」\n]{1,2000})」|『([^『』\n]{1,2000})』'
)
_GAP = re.compile(r"[\s,.;:，。；：、—–-]{0,4}")
_GAP_BEFORE_QUOTE = re.compile(r"[\s,:;，：]{0,4}")


def parse(speech: str) -> list[Citation]:
    """Every id cited in SPEECH, in order, each with the quotation attributed to it."""
    quotes = [(m.start(), m.end(), next(g for g in m.groups() if g is not None))
              for m in _QUOTE.finditer(speech)]  # fmt: skip
    used: set[int] = set()
    out: list[Citation] = []
    for m in _BRACKET.finditer(speech):
        quote = _quote_for(speech, m.start(), m.end(), quotes, used)
        inside = m.group(1) if m.group(1) is not None else m.group(2)
        for part in re.split(r"[;；]", inside):
            if "¶" in part and part.strip():
                out.append(Citation(part.strip(), m.start(), m.end(), quote))
    return out


def _quote_for(
    speech: str, start: int, end: int, quotes: list[tuple[int, int, str]], used: set[int]
) -> str | None:
    """The quotation just before the bracket at START, else just after its END."""
    for i, (_, q_end, text) in enumerate(quotes):
        if i not in used and q_end <= start and _GAP.fullmatch(speech[q_end:start]):
            used.add(i)
            return text
    for i, (q_start, _, text) in enumerate(quotes):
        if i not in used and q_start >= end and _GAP_BEFORE_QUOTE.fullmatch(speech[end:q_start]):
            used.add(i)
            return text
    return None


# Characters that take no room: a model's tokenizer or a copy from a PDF leaves them inside
# a word, where they are not seen and an id read with them would match nothing.
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))


def normal_id(written: str) -> str:
    """A cited id as ids are written: `report.pdf, p. 12, ¶ 3` → `report.pdf p.12 ¶3`; every
    kind of space (a full-width one, a no-break one) is one space, and a run of them one."""
    text = unicodedata.normalize("NFKC", written).translate(_INVISIBLE).replace("，", ",")
    text = re.sub(r"\s*,\s*", " ", text)
    text = re.sub(r"(?i)\b(?:p\.?|page|pp\.?)\s*(\d+)", r"p.\1", text)
    text = re.sub(r"([¶§])\s*(\d+)", r"\1\2", text)
    return " ".join(text.split())


def squeezed_id(written: str) -> str:
    """A cited id with no space left in it at all (`board-pack. pdf p. 3 ¶ 1` →
    `board-pack.pdfp.3¶1`): what an id written with stray spaces inside its file's name is
    matched by, where only one passage's id squeezes so."""
    return "".join(normal_id(written).split())


_MARKS = str.maketrans({
    "“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "「": '"', "」": '"', "『": '"',
    "』": '"', "‘": "'", "’": "'", "‚": "'", "`": "'", "–": "-", "—": "-", "‐": "-",
    "‑": "-", "\u00ad": "",
})  # fmt: skip


def normal_text(text: str) -> str:
    """TEXT as quotations are compared: NFKC, one kind of quotation mark and dash, case
    folded, a line-end hyphen joined, spaces collapsed and dropped beside CJK characters."""
    text = unicodedata.normalize("NFKC", text).translate(_MARKS).casefold()
    text = re.sub(r"(?<=\w)-\s+(?=\w)", "", text)  # "man- agement": a PDF line's hyphen
    text = " ".join(text.split())
    return re.sub(f"(?<=[{CJK}\\W]) | (?=[{CJK}\\W])", "", text)


_ELLIPSIS = re.compile(r"\.{3,}|…+|\[\s*(?:\.\.\.|…)\s*\]")


def quoted(quote: str, passage: str) -> bool:
    """Whether QUOTE is in PASSAGE, each part between ellipses in order."""
    haystack = normal_text(passage)
    pos = 0
    parts = [normal_text(p) for p in _ELLIPSIS.split(quote)]
    parts = [p.strip(" .,;:!?，。；：！？") for p in parts]
    if not any(parts):
        return False
    for part in parts:
        if not part:
            continue
        found = haystack.find(part, pos)
        if found < 0:
            return False
        pos = found + len(part)
    return True


def check(speech: str, find: Callable[[str], Passage | None]) -> list[CitationResult]:
    """Each citation in SPEECH and what checking it found; FIND gives the passage an id
    names (`Library.get`). A quotation cited with several ids is found if it is in any."""
    citations = parse(speech)
    results: list[CitationResult] = []
    for citation in citations:
        passage = find(citation.written)
        if passage is None:
            results.append(CitationResult(citation, Check.UNKNOWN_ID, None))
            continue
        if citation.quote is None:
            results.append(CitationResult(citation, Check.OK, passage))
            continue
        group = [find(c.written) for c in citations if c.start == citation.start]
        found = any(p is not None and quoted(citation.quote, p.text) for p in group)
        results.append(
            CitationResult(citation, Check.OK if found else Check.QUOTE_NOT_FOUND, passage)
        )
    return results
