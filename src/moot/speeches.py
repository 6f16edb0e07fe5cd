"""Every speech of a debate as a reader reads it: the Markdown section a saved document ends
with, and one self-contained HTML page (no outside CSS, script or font; every text escaped)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from moot.records.transcript import Turn
from moot.words import words

# Written before the speeches in a debate's document, so the brief above it can be shown
# alone (`moot history show`) and the rest read again from the transcript (`--full`).
MARK = "<!-- moot: every speech -->"


def _name(identifier: str, *, fmt: str, language: str) -> str:
    """A role or step as LANGUAGE names it; one it has no name for reads as words
    (`poi_question`: "Poi question")."""
    shown = words(language).name(identifier, fmt)
    if shown == identifier:
        return identifier.replace("_", " ").capitalize()
    return shown


def _heading(
    turn: Turn, *, fmt: str, language: str, models: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """A turn's speaker line and its detail line (model, step, round), in LANGUAGE; the
    model as MODELS shows it, where it is there."""
    said = words(language)
    speaker = _name(turn.role, fmt=fmt, language=language)
    where = said.say("speech_step", step=_name(turn.step, fmt=fmt, language=language))
    if turn.round is not None:
        where += said.say("speech_round", round=turn.round)
    model = (models or {}).get(turn.model, turn.model)
    return speaker, said.say("speech_detail", model=model, where=where)


def _body(turn: Turn, language: str) -> str:
    """What the turn said: a speech as its text, a structured reply as a list of its fields
    named in LANGUAGE (yes and no in words, a list's items one a line)."""
    if turn.data is None:
        return turn.text
    said = words(language)

    def shown(value: object) -> str:
        if isinstance(value, bool):
            return said.say("tour_yes" if value else "tour_no")
        if isinstance(value, dict):
            return "; ".join(f"{said.field(str(k))}: {shown(v)}" for k, v in value.items())
        if isinstance(value, list):
            return "; ".join(shown(v) for v in value)
        if isinstance(value, str) and value.isascii() and value.isidentifier():
            return said.shown(value)  # a value of a few (low, proposer): its word
        return str(value)

    lines = []
    for key, value in turn.data.items():
        if isinstance(value, list) and value:
            lines.append(f"- {said.field(key)}:")
            lines += [f"  - {shown(item)}" for item in value]
        else:
            lines.append(f"- {said.field(key)}: {shown(value)}")
    return "\n".join(lines)


def markdown(
    turns: Sequence[Turn], *, fmt: str, language: str, models: Mapping[str, str] | None = None
) -> str:
    """TURNS, in order, as a Markdown section headed in LANGUAGE, after MARK; each turn's
    model as MODELS shows it (a screen's short labels), else as recorded."""
    said = words(language)
    parts = [MARK, "", f"## {said.say('every_speech')}", ""]
    for number, turn in enumerate(turns, 1):
        speaker, detail = _heading(turn, fmt=fmt, language=language, models=models)
        body = _body(turn, language).strip() or "—"
        parts += [f"### {number}. {speaker}", "", f"*{detail}*", "", body, ""]
    if not turns:
        parts += [said.say("no_speeches"), ""]
    return "\n".join(parts)


def brief(document: str) -> str:
    """A saved document without its speeches: what its format wrote."""
    head, _, _ = document.partition(MARK)
    return head.rstrip() + "\n"


_STYLE = """
body{font:16px/1.55 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f;background:#fff}
h1{font-size:1.5rem}h2{margin-top:2.5rem;border-bottom:1px solid #ddd}
.brief,.speech p{white-space:pre-wrap;overflow-wrap:anywhere}
.brief{background:#f6f6f4;padding:1rem;border-radius:6px}
.speech{margin:1.5rem 0}.speech h3{margin:0;font-size:1.05rem}
.detail{color:#666;font-size:.9rem;margin:.1rem 0 .4rem}
@media (prefers-color-scheme:dark){body{color:#e6e6e6;background:#161616}
.brief{background:#232323}.detail{color:#9a9a9a}h2{border-color:#444}}
"""


def html_page(title: str, document: str, turns: Sequence[Turn], *, fmt: str, language: str) -> str:
    """One HTML page, whole in itself: TITLE, the brief (DOCUMENT's text, shown as written)
    and every turn. Every piece of text is escaped, so a speech holding markup shows it."""
    said = words(language)
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{e(language)}">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Nothing from outside: no script runs, nothing is fetched, a form goes nowhere.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">",
        f"<title>{e(title)}</title>",
        f"<style>{_STYLE}</style></head>",
        "<body>",
        f"<h1>{e(title)}</h1>",
    ]
    shown = brief(document).strip()
    if shown:
        parts.append(f'<div class="brief">{e(shown)}</div>')
    parts.append(f"<h2>{e(said.say('every_speech'))}</h2>")
    for number, turn in enumerate(turns, 1):
        speaker, detail = _heading(turn, fmt=fmt, language=language)
        parts += [
            f'<section class="speech" id="turn-{number}">',
            f"<h3>{number}. {e(speaker)}</h3>",
            f'<div class="detail">{e(detail)}</div>',
            f"<p>{e(_body(turn, language).strip() or '—')}</p>",
            "</section>",
        ]
    if not turns:
        parts.append(f"<p>{e(said.say('no_speeches'))}</p>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)
