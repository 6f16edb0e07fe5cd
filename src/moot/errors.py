"""The errors moot raises: each carries a message and a hint that names the fix."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@functools.cache
def _english() -> Mapping[str, Any]:
    # The English pack's `[errors]` table. moot.config.resource_path, repeated here: errors
    # sit below every other module and import none of them.
    here = Path(__file__).parent
    packaged = here / "_data" / "prompts"
    root = packaged if packaged.is_dir() else here.resolve().parents[1] / "prompts"
    with open(root / "en" / "engine" / "words.toml", "rb") as f:
        table: Mapping[str, Any] = tomllib.load(f).get("errors", {})
    return table


def entry(table: Mapping[str, Any], key: str) -> Mapping[str, str] | None:
    """The `{message, hint}` of KEY (dotted: `store.not_installed`) in an `[errors]` table."""
    node: Any = table
    for part in key.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) and isinstance(node.get("message"), str) else None


def english(key: str, values: Mapping[str, object]) -> tuple[str, str]:
    """The message and hint of error KEY in English, filled with VALUES."""
    found = entry(_english(), key)
    if found is None:
        raise KeyError(f"no error {key!r} in the English words")
    # An error given as a value is said by its message, as another language says it
    # (`moot.words.Words`): its hint is the outer error's business, not a part of its words.
    filled = {k: v.message if isinstance(v, MootError) else v for k, v in values.items()}
    return found["message"].format(**filled), found.get("hint", "").format(**filled)


class Phrase:
    """A part of an error's message or hint that is said in words of its own (KEY in the
    `[errors]` tables, with VALUES), passed as a value of the error; `str` is its English."""

    def __init__(self, key: str, /, **values: Any) -> None:
        self.key = key
        self.values = values

    def __str__(self) -> str:
        return english(self.key, self.values)[0]


def _figure(value: Any) -> Any:
    """A bound as pydantic's own message writes it: 2, not 2.0."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _literal(ctx: Mapping[str, Any]) -> Phrase:
    choices, _, last = str(ctx["expected"]).rpartition(" or ")
    if not choices:
        return Phrase("validation.literal_one", expected=last)
    return Phrase("validation.literal_error", choices=choices, last=last)


def _too_short(ctx: Mapping[str, Any]) -> Phrase:
    if ctx["min_length"] == 1:
        return Phrase("validation.string_empty")
    return Phrase("validation.string_too_short", min_length=ctx["min_length"])


# Pydantic's errors by their type, each in words of its own (its English is pydantic's
# message, its first letter lowered).
_INVALID: dict[str, Callable[[Mapping[str, Any]], Phrase]] = {
    "greater_than": lambda c: Phrase("validation.greater_than", gt=c["gt"]),
    "greater_than_equal": lambda c: Phrase("validation.greater_than_equal", ge=c["ge"]),
    "less_than": lambda c: Phrase("validation.less_than", lt=c["lt"]),
    "less_than_equal": lambda c: Phrase("validation.less_than_equal", le=c["le"]),
    "literal_error": _literal,
    "enum": _literal,
    "int_parsing": lambda c: Phrase("validation.int_parsing"),
    "int_type": lambda c: Phrase("validation.int_type"),
    "int_from_float": lambda c: Phrase("validation.int_from_float"),
    "float_parsing": lambda c: Phrase("validation.float_parsing"),
    "float_type": lambda c: Phrase("validation.float_type"),
    "bool_parsing": lambda c: Phrase("validation.bool_parsing"),
    "bool_type": lambda c: Phrase("validation.bool_type"),
    "string_type": lambda c: Phrase("validation.string_type"),
    "dict_type": lambda c: Phrase("validation.dict_type"),
    "list_type": lambda c: Phrase("validation.list_type"),
    "string_too_short": _too_short,
    "string_too_long": lambda c: Phrase("validation.string_too_long", max_length=c["max_length"]),
    "missing": lambda c: Phrase("validation.missing"),
    "extra_forbidden": lambda c: Phrase("validation.extra_forbidden"),
}


def invalid(error: Mapping[str, Any], said: str) -> Phrase:
    """What a pydantic validation ERROR (one of `exc.errors()`) says, by its type, so a front
    end shows it in its language. SAID is its message as the caller shows it in English
    (pydantic's, lowercased): a type moot has no words for, or whose words would say other
    than SAID, is SAID itself."""
    ctx = {k: _figure(v) for k, v in (error.get("ctx") or {}).items()}
    make = _INVALID.get(str(error.get("type", "")))
    try:
        phrase = make(ctx) if make else None
    except KeyError:
        phrase = None
    if phrase is None or str(phrase) != said:
        return Phrase("validation.other", why=said)
    return phrase


class MootError(Exception):
    """Base of every error moot reports to a user; `hint` says how to fix it.

    Raised by `key` (its entry in the packs' `engine/words.toml`, `[errors.<key>]`: a
    message and a hint with `{fields}`) and the VALUES of its fields:
    `raise UsageError(key="settings.no_save_and_out", option="--out")`. The message and hint
    are the English ones; `str(error)` is both, the hint on a line of its own, as `moot`
    prints them. A front end shows them in a debate's language with
    `moot.words.words(language).error(error)` (`moot.debate` words its errors so: `worded`).
    """

    exit_code = 1
    hint_label = "hint:"  # what `str` puts before the hint; `worded` sets another language's

    def __init__(
        self,
        message: str = "",
        *,
        hint: str = "",
        field: str | None = None,
        key: str = "",
        **values: Any,
    ) -> None:
        if key:
            message, hint = english(key, values)
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.key = key
        self.values = values
        # The setting it concerns, where it concerns one: its path among `moot.debate`'s
        # keywords ("motion", "models.0", "temperatures.judge", "params.rounds",
        # "run.max_tokens"), so a front end places the error beside that field.
        self.field = field
        # The name the user most likely meant, where they mistyped one: every front end
        # leads the hint with it ("did you mean smollm2-135m?"), in its language.
        self.near: str | None = None
        # Another hint than its key's, said in words of its own: a Phrase, or another
        # error whose hint this one gives (see `hinted`).
        self.hint_of: Phrase | MootError | None = None

    def __str__(self) -> str:
        """Its message and, on a line of its own, its hint (led by the name the user most
        likely meant): what `moot` prints, as a Python caller sees it."""
        hint = self.hint
        if self.near and self.near not in hint:
            hint = f"did you mean {self.near}? {hint}".strip()
        return f"{self.message}\n{self.hint_label} {hint}" if hint else self.message

    def worded(self, message: str, hint: str, *, label: str) -> MootError:
        """This error as another language says it (`moot.words.Words.error`): its message,
        its hint, and LABEL before the hint in `str`; its key and values stay as raised."""
        self.message, self.hint, self.hint_label = message, hint, label
        self.args = (message,)
        return self

    def hinted(self, by: Phrase | MootError) -> MootError:
        """This error with BY's hint instead of its own: a Phrase's words, or the hint of
        another error (the one a caller can fix first); returned, to be raised."""
        self.hint_of = by
        self.hint = str(by) if isinstance(by, Phrase) else by.hint
        return self


class UsageError(MootError, ValueError):
    """Bad input from the user: an out-of-range parameter, an unknown role, an empty motion."""

    exit_code = 2


class ModelNotFoundError(MootError, FileNotFoundError):
    """A model reference that resolves to nothing on this machine."""

    exit_code = 2


class ModelIntegrityError(MootError):
    """A model file that fails its header check or its checksum."""


class DownloadError(MootError):
    """A pull that failed: hub unreachable, 404, server error, interrupted transfer."""


class ContextOverflowError(MootError):
    """A prompt that does not fit the model's context window; never truncated silently."""

    def __init__(self, *, prompt_tokens: int, n_ctx: int, max_tokens: int = 0) -> None:
        super().__init__(
            key="model.context_overflow",
            prompt_tokens=prompt_tokens,
            max_tokens=max_tokens,
            n_ctx=n_ctx,
        )
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens


class StructuredReplyError(MootError):
    """A reply that stayed invalid against its schema after the re-ask; keeps the raw text
    and the request that was asked (a `ChatRequest`), so a failed seat records its prompt."""

    def __init__(
        self,
        message: str = "",
        *,
        raw: str,
        request: object = None,
        key: str = "",
        **values: Any,
    ) -> None:
        super().__init__(message, key=key, **values)
        self.raw = raw
        self.request = request


class DegenerateReplyError(MootError):
    """A reply that is empty or one phrase repeated over and over."""

    def __init__(
        self,
        message: str = "",
        *,
        raw: str,
        completion: object = None,
        key: str = "",
        **values: Any,
    ) -> None:
        super().__init__(message, key=key, **values)
        self.raw = raw
        self.completion = completion  # the llm.Completion, with what the reply cost


class ReasoningOnlyError(DegenerateReplyError):
    """A reply that is all reasoning and no answer: the model thought aloud and never answered
    (its think block unclosed, or closed with nothing after it)."""

    def __init__(self, *, reasoning: str, completion: object = None) -> None:
        super().__init__(raw="", completion=completion, key="model.reasoning_only")
        self.reasoning = reasoning


class CallTimeoutError(MootError, TimeoutError):
    """A model call that ran past its time limit."""

    def __init__(self, *, seconds: float, model: str = "") -> None:
        super().__init__(
            key="model.call_timeout", model=model or Phrase("model.the_model"), seconds=seconds
        )
        self.seconds = seconds


class RemoteError(MootError):
    """An OpenAI-compatible server that is down or answered with an error."""


class PromptPackError(MootError):
    """A prompt pack with a missing step, a template error, or an unsafe template."""

    exit_code = 2


class NotEnoughMemoryError(MootError):
    """A debate whose models need more memory than is free; said before any model loads."""

    exit_code = 2

    def __init__(
        self,
        message: str = "",
        *,
        hint: str = "",
        needed: int,
        free: int,
        gpu: bool = False,
        key: str = "",
        **values: Any,
    ) -> None:
        super().__init__(message, hint=hint, key=key, **values)
        self.needed = needed  # bytes
        self.free = free
        self.gpu = gpu  # GPU memory, not system memory


class RecordError(UsageError):
    """A saved debate's file (a journal, a transcript) that does not read as moot's records:
    `path` is the file, `where` the line of a journal or the JSON path in a transcript."""

    def __init__(
        self,
        message: str = "",
        *,
        path: str,
        where: str = "",
        hint: str = "",
        key: str = "",
        **values: Any,
    ) -> None:
        super().__init__(message, hint=hint, key=key, path=path, **values)
        self.path = path
        self.where = where


@contextmanager
def concerning(field: str) -> Iterator[None]:
    """A MootError raised inside that names no setting is about FIELD (see MootError.field)."""
    try:
        yield
    except MootError as exc:
        if exc.field is None:
            exc.field = field
        raise
