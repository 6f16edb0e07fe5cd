"""The Oxford rulebook's first step at a terminal: the motion shown as it will be debated,
for the user to keep or replace, and the optional parameters offered with their defaults."""

from __future__ import annotations

import typing
from typing import Any

import typer
from rich.console import Console

from moot.formats.base import Format
from moot.render import safe

# What the user is asked, in the debate's language.
WORDS = {
    "en": {
        "motion": "Motion: ",
        "keep": "Press Enter to keep it, or type another motion",
        "min_score": "Completeness score that ends the rounds",
        "max_rounds": "Most rounds",
        "judge_rubric": "How the Completeness Judge answers",
    },
    "zh": {
        "motion": "辩题：",
        "keep": "按回车保留，或输入另一个辩题",
        "min_score": "结束各轮的完整性分数",
        "max_rounds": "最多轮数",
        "judge_rubric": "完整性裁判的作答方式",
    },
}
OFFERED = ("min_score", "max_rounds", "judge_rubric")  # the rulebook's optional parameters


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
    give on the command line asked for, its default kept on Enter. A typed value is left
    as typed: the format validates it and names the option if it is out of range."""
    words = WORDS.get(language, WORDS["en"])
    if from_command_line:
        worded = fmt.motion(text, language)
        console.print(f"[bold]{words['motion']}[/]{safe(worded)}", highlight=False)
        typed = str(typer.prompt(words["keep"], default="", show_default=False)).strip()
        text = typed or text
    chosen = dict(given)
    fields = fmt.params_type.model_fields
    for name in OFFERED:
        if name not in fmt.reads or given.get(name) is not None or name not in fields:
            continue
        default = fields[name].default
        offer = f"{words[name]} ({_allowed(fields[name].annotation, fields[name].metadata)})"
        typed = str(typer.prompt(offer, default=str(default))).strip()
        chosen[name] = None if typed in ("", str(default)) else typed
    return text, chosen


def _allowed(annotation: Any, metadata: list[Any]) -> str:
    """The values a parameter takes, as its prompt shows them: "5–10", "checklist, score"."""
    choices = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Literal else ()
    if choices:
        return ", ".join(str(c) for c in choices)
    lo = next((m.ge for m in metadata if hasattr(m, "ge")), None)
    hi = next((m.le for m in metadata if hasattr(m, "le")), None)
    return f"{lo}–{hi}"
