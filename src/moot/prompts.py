"""Prompt packs: jinja2 templates per language, format and step; the only importer of jinja2."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from jinja2 import FileSystemLoader, StrictUndefined, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from moot.config import resource_path
from moot.errors import PromptPackError, UsageError

Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_LATIN = re.compile(r"[A-Za-z]")


def detect_language(text: str) -> Language:
    """Pick the pack by the motion's script: Chinese when CJK characters outnumber Latin letters."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    # A Chinese character carries about as much as an English word of ~4 letters.
    return "zh" if cjk * 4 >= latin and cjk > 0 else "en"


def resolve_language(choice: str, motion: str) -> Language:
    if choice == "auto":
        return detect_language(motion)
    if choice in LANGUAGES:
        return choice
    raise UsageError(f"unknown language {choice!r}", hint="use --lang auto, en or zh")


def builtin_root() -> Path:
    return resource_path("prompts")


def _limit(text: str, n: int) -> str:
    """Cut a text to n characters on a word boundary, for long inputs shown in prompts."""
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0] if " " in text[:n] else text[:n]
    return cut + " …"


class PromptPack:
    """The templates of one language and format; rendering never evaluates user text."""

    def __init__(self, root: Path, language: Language, fmt: str) -> None:
        self.root = root
        self.language = language
        self.format = fmt
        self.dir = root / language / fmt
        if not self.dir.is_dir():
            raise PromptPackError(
                f"prompt pack has no folder {self.dir}",
                hint=f"a pack holds <lang>/<format>/<step>.j2; expected {language}/{fmt}/",
            )
        self._env = ImmutableSandboxedEnvironment(
            loader=FileSystemLoader(str(self.dir)),
            undefined=StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters["limit"] = _limit

    def validate(self, steps: Iterable[str], sample: Mapping[str, Mapping[str, Any]]) -> None:
        """Check every step is present and renders with sample variables, before a debate."""
        missing = [s for s in steps if not (self.dir / f"{s}.j2").is_file()]
        if missing:
            raise PromptPackError(
                f"prompt pack {self.dir} lacks step(s): {', '.join(missing)}",
                hint="copy the missing templates from moot's own pack (prompts/) and adapt them",
            )
        for step, variables in sample.items():
            self.render(step, **variables)

    def render(self, step: str, **variables: Any) -> str:
        try:
            template = self._env.get_template(f"{step}.j2")
            return template.render(**variables).strip()
        except SecurityError as exc:
            raise PromptPackError(
                f"template {self.dir / step}.j2 tried something unsafe: {exc}",
                hint="templates may use variables, conditions, loops and filters only",
            ) from exc
        except TemplateError as exc:
            raise PromptPackError(
                f"template {self.dir / step}.j2 failed: {exc}",
                hint="check the template against the variables listed in prompts/README.md",
            ) from exc

    def has(self, step: str) -> bool:
        return (self.dir / f"{step}.j2").is_file()

    @cached_property
    def digest(self) -> str:
        """sha256 over the pack's templates, recorded in transcripts for replay."""
        h = hashlib.sha256()
        for path in sorted(self.dir.glob("*.j2")):
            h.update(path.name.encode())
            h.update(path.read_bytes())
        return h.hexdigest()


def load_pack(language: Language, fmt: str, *, root: Path | None = None) -> PromptPack:
    return PromptPack(root or builtin_root(), language, fmt)
