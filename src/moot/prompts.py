"""Prompt packs: jinja2 templates per language, format and step, rendered in a bounded sandbox
(`BoundedSandbox`, `render_bounded`) that a model's chat template renders in too
(`moot.inference.chat_template`)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from jinja2 import (
    BaseLoader,
    Environment,
    StrictUndefined,
    Template,
    TemplateError,
    TemplateNotFound,
    nodes,
    pass_context,
)
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import _PassArg
from jinja2.visitor import NodeTransformer

from moot.config import resource_path
from moot.errors import MootError, PromptPackError, UsageError
from moot.records import files

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
    raise UsageError(key="prompts.unknown_language", field="lang", choice=choice)


def builtin_root() -> Path:
    return resource_path("prompts")


def limited(text: str, n: int) -> str:
    """Cut a text to n characters on a word boundary, for long inputs shown in prompts."""
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0] if " " in text[:n] else text[:n]
    return cut + " …"


# -- bounded rendering ---------------------------------------------------------------------
# A template is code: a pack's from a folder a user names, a chat template from a model file
# off the internet (moot.inference.chat_template). Both run in a sandbox that bounds what
# they may build and how long they may take: every loop step, call, filter and piece of
# output is charged to a budget, checked against a wall-clock deadline, and the rendered
# text is capped as it is produced.

RENDER_SECONDS = 5.0  # a template that takes longer is looping, not writing a prompt
MAX_RENDERED = 4 << 20  # characters one render may produce: far above any context window
MAX_WORK = 64 << 20  # loop steps, calls and characters built, all renders' pieces together
MAX_REPEAT = 1 << 20  # a string or list repeated past this many items is a bomb, not a prompt
MAX_INT_BITS = 1 << 16  # integers a template may compute: widths, counts, never bignums
# A format field at least a million characters wide (or precise): `%9999999d`, `{:>9999999}`;
# and one whose width comes from an argument: `%*d`, `{:>{width}}`.
_WIDE = re.compile(r"%[-#0 +]*(?:\d{7,}|\d*\.\d{7,})|\{[^{}]*:[^{}]*\d{7,}")
_WIDTH_ARGUMENT = re.compile(r"%[-#0 +]*\d*(?:\.)?\*|\{[^{}]*:[^{}]*\{")


class RenderLimitError(Exception):
    """A template ran past one of the bounds of a render; the message says which."""


@dataclass
class _Budget:
    deadline: float
    seconds: float
    work: int = 0

    def charge(self, units: int) -> None:
        self.work += units
        if self.work > MAX_WORK:
            raise RenderLimitError(f"it did more than moot's limit of {MAX_WORK:,} steps of work")
        if time.monotonic() > self.deadline:
            raise RenderLimitError(f"it ran past moot's limit of {self.seconds:g} s")

    def built(self, value: Any) -> Any:
        """Charge VALUE's size; refuse a single value over the output limit."""
        if isinstance(value, str | bytes | list | tuple | dict | set | frozenset | range):
            size = len(value)
            if size > MAX_RENDERED:
                raise RenderLimitError(
                    f"it built a value of {size:,} items, over moot's limit of {MAX_RENDERED:,}"
                )
            self.charge(size)
        elif isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise RenderLimitError(f"it computed an integer of {value.bit_length():,} bits")
        return value


_budget: ContextVar[_Budget | None] = ContextVar("moot_render_budget", default=None)


def _active() -> _Budget:
    budget = _budget.get()
    if budget is None:  # also what keeps jinja2 from running these while it compiles
        raise RuntimeError("a template ran outside a bounded render")
    return budget


def _check_arguments(args: Iterable[Any], kwargs: Mapping[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_RENDERED:
            raise RenderLimitError(
                f"it passed {value:,} to a function, over moot's limit of {MAX_RENDERED:,}"
            )


def _check_format(fmt: object, args: Iterable[Any], kwargs: Mapping[str, Any]) -> None:
    """A format string and its arguments: numbers are fine, widths past the limit are not."""
    if not isinstance(fmt, str):
        return
    fmt = fmt.replace("%%", "")
    if _WIDE.search(fmt):
        raise RenderLimitError("it formats a field a million or more characters wide")
    if _WIDTH_ARGUMENT.search(fmt):
        _check_arguments(args, kwargs)


def _guard_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    """FUNC, charged to the active budget, refusing integer arguments past the output limit."""
    skip = 2 if _PassArg.from_obj(func) is not None else 1  # the context, and the value itself

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _active()
        budget.charge(1)
        name = getattr(func, "__name__", "")
        if name == "do_format" and len(args) >= skip:
            _check_format(args[skip - 1], args[skip:], kwargs)
        else:
            _check_arguments(args[skip:], kwargs)
        if name == "do_replace" and len(args) >= skip + 2:
            _check_replace(args[skip - 1], args[skip], args[skip + 1])
        return budget.built(func(*args, **kwargs))

    return guarded


def _check_replace(text: object, old: object, new: object) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        grown = (text.count(old) if old else len(text) + 1) * max(0, len(new) - len(old))
        if len(text) + grown > MAX_RENDERED:
            raise RenderLimitError(
                f"a replace() would build {len(text) + grown:,} characters, "
                f"over moot's limit of {MAX_RENDERED:,}"
            )


# pass_context: jinja2 never runs these at compile time to fold a constant.
@pass_context
def _loop(context: Any, iterable: Any) -> Iterator[Any]:
    """A for loop's items, each step charged."""
    budget = _active()

    def steps() -> Iterator[Any]:
        for item in iterable:
            budget.charge(1)
            yield item

    return steps()


@pass_context
def _out(context: Any, value: Any) -> str:
    """One piece of output, anywhere (a macro's body and a {% set %} block's too), charged."""
    text = str(value)
    _active().built(text)
    return text


@pass_context
def _concat(context: Any, items: list[Any]) -> str:
    """`a ~ b`, its size checked before it is built."""
    budget = _active()
    parts = [str(item) for item in items]
    size = sum(len(part) for part in parts)
    if size > MAX_RENDERED:
        raise RenderLimitError(
            f"it joined {size:,} characters, over moot's limit of {MAX_RENDERED:,}"
        )
    budget.charge(size)
    return "".join(parts)


_GUARDS: dict[str, Callable[..., Any]] = {
    "moot.loop": _loop,
    "moot.out": _out,
    "moot.concat": _concat,
}


class _Guard(NodeTransformer):
    """Routes every loop, piece of output and `~` of a parsed template through the guards."""

    @staticmethod
    def _filter(name: str, node: Any, lineno: int) -> nodes.Filter:
        return nodes.Filter(node, name, [], [], None, None, lineno=lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = self._filter("moot.loop", node.iter, node.lineno)
        return node

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        pieces: list[nodes.Expr] = []
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                child = nodes.Const(child.data, lineno=child.lineno)
            pieces.append(self._filter("moot.out", child, child.lineno))
        node.nodes = pieces
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        items = nodes.List(node.nodes, lineno=node.lineno)
        return self._filter("moot.concat", items, node.lineno)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, with every template's work bounded (see the guards above)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *, filters: Mapping[str, Callable[..., Any]] | None = None, **options: Any):
        super().__init__(optimized=False, **options)  # no constant folding outside the bounds
        self.filters.update(filters or {})
        self.filters = {name: _guard_filter(f) for name, f in self.filters.items()}
        self.filters.update(_GUARDS)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        guarded = _Guard().visit(tree)
        guarded.set_environment(self)
        return guarded

    def _load_template(self, name: str, globals: Any) -> Template:  # noqa: A002
        budget = _budget.get()
        if budget is not None:
            budget.charge(1)  # an {% include %} or {% import %}, run once more
        return super()._load_template(name, globals)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        budget = _active()
        budget.charge(1)
        wrapped = getattr(__obj, "__wrapped__", __obj)  # str.format, as the sandbox wraps it
        owner = getattr(wrapped, "__self__", None)
        method = getattr(wrapped, "__name__", "") if isinstance(owner, str) else ""
        if method in ("format", "format_map"):
            _check_format(owner, args if method == "format" else (), kwargs)
        elif not isinstance(__obj, Macro | dict | type):  # the values of a macro or a dict
            _check_arguments(args, kwargs)
        if method == "replace" and len(args) >= 2:
            _check_replace(owner, args[0], args[1])
        return budget.built(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget = _active()
        budget.charge(1)
        if operator == "**" and isinstance(right, int):
            if abs(right) > 64:
                raise SecurityError(f"an exponent of {right}")
            if isinstance(left, int) and left.bit_length() * right > MAX_INT_BITS:
                raise RenderLimitError(f"it raised a {left.bit_length()}-bit number to {right}")
        if operator == "*":
            seq, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(seq, str | list | tuple) and isinstance(count, int):
                if len(seq) * count > MAX_REPEAT:
                    raise SecurityError(f"a sequence of {len(seq)} repeated {count} times")
            elif isinstance(left, int) and isinstance(right, int):
                if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                    raise RenderLimitError("it multiplied numbers too large for a prompt")
        if operator == "+" and isinstance(left, str | list | tuple) and hasattr(right, "__len__"):
            if len(left) + len(right) > MAX_RENDERED:
                raise RenderLimitError(
                    f"it added up {len(left) + len(right):,} items, "
                    f"over moot's limit of {MAX_RENDERED:,}"
                )
        if operator == "%" and isinstance(left, str):
            values = right if isinstance(right, tuple) else (right,)
            _check_format(left, values, right if isinstance(right, dict) else {})
        return budget.built(super().call_binop(context, operator, left, right))


def render_bounded(
    template: Template,
    variables: Mapping[str, Any],
    *,
    limit: int | None = None,
    seconds: float | None = None,
) -> str:
    """TEMPLATE (from a bounded environment) rendered with VARIABLES, within LIMIT characters
    and SECONDS; a RenderLimitError says which bound it ran past. The text is collected piece by
    piece, so a template that would write gigabytes stops at the limit."""
    limit = MAX_RENDERED if limit is None else limit
    seconds = RENDER_SECONDS if seconds is None else seconds
    budget = _Budget(deadline=time.monotonic() + seconds, seconds=seconds)
    token = _budget.set(budget)
    try:
        pieces: list[str] = []
        size = 0
        for piece in template.generate(**variables):
            size += len(piece)
            if size > limit:
                raise RenderLimitError(
                    f"it rendered more than moot's limit of {limit:,} characters"
                )
            pieces.append(piece)
            budget.charge(0)  # the deadline, between pieces
        return "".join(pieces)
    except RecursionError:
        raise RenderLimitError(
            "it recurses without end (a macro that calls itself, a template that includes itself)"
        ) from None
    finally:
        _budget.reset(token)


def _refuse_link(path: Path, what: str) -> None:
    """A prompt pack is read as it lies: a symlink in it could lead anywhere on the machine."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode):
        raise PromptPackError(key="prompts.symlink_moot_does_not_follow", what=what, path=path)


def _read_template(path: Path) -> str:
    try:
        return files.read_text(
            path, what="prompt template", limit=files.TEXT_LIMIT, follow_symlinks=False
        )
    except UsageError as exc:
        raise PromptPackError(key=exc.key, **exc.values) from None


def _template_bytes(path: Path) -> bytes:
    try:
        return files.read_bytes(
            path, what="prompt template", limit=files.TEXT_LIMIT, follow_symlinks=False
        )
    except UsageError as exc:
        raise PromptPackError(key=exc.key, **exc.values) from None


class _PackLoader(BaseLoader):
    """Templates of one pack folder, and of folders below it; never through a symlink."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        parts = template.split("/")
        if "\\" in template or any(part in ("", ".", "..") for part in parts):
            raise TemplateNotFound(template)
        for depth in range(1, len(parts)):
            _refuse_link(self.folder.joinpath(*parts[:depth]), "prompt pack folder")
        path = self.folder.joinpath(*parts)
        if not os.path.lexists(path):
            raise TemplateNotFound(template)
        text = _read_template(path)
        seen = _identity(path)
        return text, str(path), lambda: _identity(path) == seen


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class PromptPack:
    """The templates of one language and format; rendering never evaluates user text."""

    def __init__(self, root: Path, language: Language, fmt: str) -> None:
        self.root = root
        self.language = language
        self.format = fmt
        self.dir = root / language / fmt
        _refuse_link(root / language, "prompt pack folder")
        _refuse_link(self.dir, "prompt pack folder")
        if not self.dir.is_dir():
            raise PromptPackError(
                key="prompts.prompt_pack_has_no_folder", dir=self.dir, language=language, fmt=fmt
            )
        self._env = BoundedSandbox(
            loader=_PackLoader(self.dir),
            undefined=StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
            filters={"limit": limited},
        )

    def validate(self, steps: Iterable[str], sample: Mapping[str, Mapping[str, Any]]) -> None:
        """Check every step is present and renders with sample variables, before a debate."""
        missing = [s for s in steps if not self.has(s)]
        if missing:
            raise PromptPackError(
                key="prompts.prompt_pack_lacks_step_s", dir=self.dir, missing=", ".join(missing)
            )
        for step, variables in sample.items():
            self.render(step, **variables)

    def render(self, step: str, **variables: Any) -> str:
        path = self.dir / f"{step}.j2"
        try:
            template = self._env.get_template(f"{step}.j2")
            return render_bounded(template, variables).strip()
        except MootError:
            raise  # a template that cannot be read, named by the loader
        except RenderLimitError as exc:
            raise PromptPackError(key="prompts.template_was_stopped", path=path, exc=exc) from None
        except TemplateNotFound as exc:
            if exc.name == f"{step}.j2":
                raise PromptPackError(
                    key="prompts.prompt_pack_lacks_step", dir=self.dir, step=step
                ) from None
            raise PromptPackError(
                key="prompts.template_names_which_not_pack", path=path, name=exc.name
            ) from None
        except SecurityError as exc:
            raise PromptPackError(
                key="prompts.template_tried_something_unsafe", path=path, exc=exc
            ) from exc
        except TemplateError as exc:
            raise PromptPackError(
                key="prompts.template_failed",
                path=path,
                exc=exc,
                value=builtin_root() / "README.md",
            ) from exc
        except Exception as exc:  # what the template's own code raised: TypeError, OverflowError …
            raise PromptPackError(
                key="prompts.template_failed_2",
                path=path,
                name=type(exc).__name__,
                exc=exc,
                value=builtin_root() / "README.md",
            ) from exc

    def has(self, step: str) -> bool:
        """Whether the pack holds STEP's template (a symlink counts: reading it is refused)."""
        try:
            return not stat.S_ISDIR(os.lstat(self.dir / f"{step}.j2").st_mode)
        except OSError:
            return False

    @cached_property
    def digest(self) -> str:
        """sha256 over the pack's templates, recorded in transcripts for replay."""
        h = hashlib.sha256()
        for path in sorted(self.dir.glob("*.j2")):
            h.update(path.name.encode())
            h.update(_template_bytes(path))
        return h.hexdigest()


def load_pack(language: Language, fmt: str, *, root: Path | None = None) -> PromptPack:
    return PromptPack(root or builtin_root(), language, fmt)


ENGINE = "engine"  # the pack of the engine's own words, beside the formats'
REDRAW = "redraw"  # its step: what a turn drawn again is told, by why the first was refused
REDRAW_KINDS = ("language", "long", "question", "voice")


def engine_pack(language: Language, *, root: Path | None = None) -> PromptPack:
    """The engine's own templates: ROOT's when that pack has them, else moot's."""
    if root is not None and (root / language / ENGINE).is_dir():
        return PromptPack(root, language, ENGINE)
    return PromptPack(builtin_root(), language, ENGINE)


def check_engine_pack(pack: PromptPack) -> None:
    """Every kind of redraw renders, before a debate."""
    pack.validate((REDRAW,), {})
    for kind in REDRAW_KINDS:
        pack.render(REDRAW, kind=kind, limit=25)
