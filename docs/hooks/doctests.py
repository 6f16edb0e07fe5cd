"""A griffe extension for the Python API pages: a docstring's interactive example (lines
that open with `>>>` and their `...` continuations) is shown as a Python console block,
not read as Markdown, where `>>>` would be a quotation three levels deep."""

from __future__ import annotations

from typing import Any

import griffe

_PROMPTS = (">>>", "...")


def fence_examples(text: str) -> str:
    """TEXT with each run of console lines (and the output lines right after it) fenced."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        console = line.lstrip().startswith(_PROMPTS)
        if console and not inside:
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_examples(obj.docstring.value)
