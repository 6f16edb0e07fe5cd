"""Prompt packs: jinja2 templates per language, format and step; the only importer of jinja2."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from jinja2 import BaseLoader, FileSystemLoader, StrictUndefined, TemplateError, nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
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
                hint=f"check it against the variables listed in {builtin_root() / 'README.md'}",
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


# -- chat templates embedded in model files ------------------------------------------------
# A GGUF's chat template is code from the internet. llama-cpp-python compiles every template
# a file carries when it loads it, and renders the chosen one in a jinja2 sandbox for every
# call; moot checks them first, in an environment built like that one, so that a hostile
# template is refused by name before llama.cpp sees the file.

SAMPLE_CONVERSATIONS = (  # the shapes of conversation moot sends: a user turn, with a persona
    [{"role": "user", "content": "Say hello."}],
    [
        {"role": "system", "content": "You are a debater."},
        {"role": "user", "content": "Say hello."},
    ],
)
MAX_REPEAT = 1 << 20  # a string or list repeated past this many items is a bomb, not a prompt


@dataclass(frozen=True)
class TemplateProblem:
    """Why a chat template must not be used: `kind` is "broken", "unsafe" or "fails"."""

    kind: str
    detail: str


class _GenerationTag(Extension):
    """Hugging Face's `{% generation %}` marker: its body is kept, the tag ignored."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> list[nodes.Node]:
        parser.stream.skip(1)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


class _ChatTemplateSandbox(ImmutableSandboxedEnvironment):
    """The sandbox llama-cpp-python renders chat templates in, plus a bound on `*` and `**`."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError(f"an exponent of {right}")
        if operator == "*":
            seq, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(seq, str | list | tuple) and isinstance(count, int):
                if len(seq) * count > MAX_REPEAT:
                    raise SecurityError(f"a sequence of {len(seq)} repeated {count} times")
        return super().call_binop(context, operator, left, right)


def _chat_environment() -> ImmutableSandboxedEnvironment:
    env = _ChatTemplateSandbox(
        loader=BaseLoader(),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationTag, loopcontrols],
    )
    env.filters["tojson"] = lambda x, indent=None, **_: json.dumps(
        x, ensure_ascii=False, indent=indent
    )
    return env


class _TemplateRefusal(Exception):
    """The template called raise_exception(): it refuses a conversation, on purpose."""


def _refuse(message: str) -> None:
    raise _TemplateRefusal(message)


def chat_template_problem(template: str, *, rendered: bool = True) -> TemplateProblem | None:
    """Why a model's chat template must not be used, or None when it is safe to hand on.

    "broken": it does not parse. "unsafe": it names a private or dunder attribute anywhere
    (reached or not), or the sandbox stopped it. "fails": it cannot format the conversations
    moot sends (only when `rendered`; a template's own raise_exception() is not a failure).
    """
    env = _chat_environment()
    try:
        tree = env.parse(template)
    except TemplateError as exc:
        line = getattr(exc, "lineno", None)
        return TemplateProblem("broken", f"{exc}" + (f" (line {line})" if line else ""))
    private = next(_private_names(tree), None)
    if private is not None:
        return TemplateProblem("unsafe", f"it reaches for {private}")
    try:
        compiled = env.from_string(tree)
    except TemplateError as exc:
        return TemplateProblem("broken", str(exc))
    for messages in SAMPLE_CONVERSATIONS:
        try:
            compiled.render(
                messages=messages,
                bos_token="<s>",
                eos_token="</s>",
                add_generation_prompt=True,
                raise_exception=_refuse,
                strftime_now=lambda f: datetime(2025, 1, 1).strftime(str(f)),
                functions=None,
                function_call=None,
                tools=None,
                tool_choice=None,
            )
        except SecurityError as exc:
            return TemplateProblem("unsafe", f"the sandbox stopped it: {exc}")
        except _TemplateRefusal:
            continue
        except Exception as exc:  # anything a template can raise: TypeError, UndefinedError …
            if rendered:
                return TemplateProblem("fails", f"{type(exc).__name__}: {exc}")
    return None


def _private_names(tree: nodes.Node) -> Iterator[str]:
    """What the template reaches for that the sandbox would refuse: attributes whose names
    start with "_" (`x.__class__`, `x['__class__']`, `x|attr('__class__')`), and `attr` with a
    computed name, which hides what it reaches for. A chat needs none of them."""
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
        name: Any = None
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            name = node.arg.value
        elif isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
            if not isinstance(node.args[0], nodes.Const):
                yield "an attribute whose name it computes"
                continue
            name = node.args[0].value
        if isinstance(name, str) and name.startswith("_"):
            yield f"the private attribute {name!r}"
