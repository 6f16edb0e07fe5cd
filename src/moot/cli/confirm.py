"""An Oxford debate's start at a terminal: the motion shown as it will be debated, for the
user to keep or replace, and the optional parameters offered with their defaults."""

from __future__ import annotations

from typing import Any

import typer

from moot.cli.root import Console
from moot.formats.base import Format, Parameter, bare
from moot.render import safe

# What the user is asked, in the debate's language.
WORDS = {
    "en": {
        "motion": "Motion: ",
        "keep": "Press Enter to keep it, or type another motion",
    },
    "zh": {
        "motion": "辩题：",
        "keep": "按回车保留，或输入另一个辩题",
    },
}


def confirm(
    console: Console,
    fmt: Format,
    text: str,
    language: str,
    given: dict[str, Any],
    *,
    from_command_line: bool,
) -> tuple[str, dict[str, Any]]:
    """TEXT as the user keeps or replaces it (only a motion from the command line is shown
    again: a picked example was just read), and GIVEN with each parameter the user did not
    give on the command line asked for (each that takes one value of a range or a few
    choices, under its label), its default kept on Enter. A typed value is left as typed:
    the format validates it and names the option if it is out of range."""
    words = WORDS.get(language, WORDS["en"])
    if from_command_line:
        worded = fmt.motion(text, language)
        console.print(f"[bold]{words['motion']}[/]{safe(worded)}", highlight=False)
        typed = str(typer.prompt(words["keep"], default="", show_default=False)).strip()
        text = typed or text
    chosen = dict(given)
    for p in fmt.parameters:
        allowed = _allowed(p)
        if not allowed or p.default is None or given.get(p.name) is not None:
            continue
        offer = f"{p.label(language)} ({allowed})"
        typed = str(typer.prompt(offer, default=str(p.default))).strip()
        chosen[p.name] = None if typed in ("", str(p.default)) else _as_option(p, typed)
    return text, chosen


def _as_option(p: Parameter, typed: str) -> object:
    """A typed value as its option would take it: a number as a number, where it is one."""
    kind = bare(p.annotation)
    if kind in (int, float):
        try:
            return kind(typed)
        except ValueError:
            pass
    return typed


def _allowed(p: Parameter) -> str:
    """The values a parameter takes, as its prompt shows them: "5–10", "checklist, score";
    "" for one that is asked for no other way than its option (a file, several values)."""
    if p.choices:
        return ", ".join(str(c) for c in p.choices)
    lo, hi = p.bounds
    return f"{lo}–{hi}" if lo is not None and hi is not None else ""
