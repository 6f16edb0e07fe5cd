"""A finished debate's sources: the passages of its documents that its speeches cited and
that were checked as supported, listed by document at the end of its brief or decision."""

from __future__ import annotations

import re
from collections.abc import Sequence

from moot.records.transcript import Turn
from moot.words import words

# A passage's place after its file's name (moot.evidence.passages.passage_id): its page or
# section, if any, and its paragraph.
_PLACE = re.compile(r" (?:p\.\d+ |§\d+ )?¶\d+$")


def supported(turns: Sequence[Turn]) -> dict[str, list[str]]:
    """Each document cited with a citation checked `ok`, in the order first cited, with the
    ids of its passages so cited, each once, in that order."""
    by_file: dict[str, list[str]] = {}
    for turn in turns:
        for c in turn.evidence.citations if turn.evidence else ():
            if c.check != "ok" or c.id is None:
                continue
            ids = by_file.setdefault(_PLACE.sub("", c.id), [])
            if c.id not in ids:
                ids.append(c.id)
    return by_file


def section(turns: Sequence[Turn], language: str) -> str:
    """The Sources section of a debate given documents (Markdown, in LANGUAGE): each
    document and the ids of its passages cited and supported; a line saying none were."""
    said = words(language)
    found = supported(turns)
    parts = [f"## {said.say('sources_heading')}", ""]
    if not found:
        return "\n".join([*parts, said.say("sources_none"), ""])
    parts += [said.say("sources_intro"), ""]
    colon, comma = ("：", "、") if language == "zh" else (": ", ", ")
    for file, ids in found.items():
        parts.append(f"- {_code(file)}{colon}" + comma.join(_code(i) for i in ids))
    return "\n".join([*parts, ""])


def _code(text: str) -> str:
    """TEXT as inline code, whatever backticks it holds (a file's name is the user's)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
