"""The errors moot raises: each carries a message and a hint that names the fix."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class MootError(Exception):
    """Base of every error moot reports to a user; `hint` says how to fix it."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str = "", field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        # The setting it concerns, where it concerns one: its path among `moot.debate`'s
        # keywords ("motion", "models.0", "temperatures.judge", "params.rounds",
        # "run.max_tokens"), so a front end places the error beside that field.
        self.field = field


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
            f"prompt of {prompt_tokens} tokens (+{max_tokens} to generate) does not fit "
            f"the context of {n_ctx} tokens",
            hint="shorten the motion, lower max_tokens, or load the model with a larger --n-ctx",
        )
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens


class StructuredReplyError(MootError):
    """A reply that stayed invalid against its schema after the re-ask; keeps the raw text
    and the request that was asked (a `ChatRequest`), so a failed seat records its prompt."""

    def __init__(self, message: str, *, raw: str, hint: str = "", request: object = None) -> None:
        super().__init__(message, hint=hint or "try another seed or a larger model")
        self.raw = raw
        self.request = request


class DegenerateReplyError(MootError):
    """A reply that is empty or one phrase repeated over and over."""

    def __init__(self, message: str, *, raw: str, completion: object = None) -> None:
        super().__init__(message, hint="try another seed, a lower temperature or a larger model")
        self.raw = raw
        self.completion = completion  # the llm.Completion, with what the reply cost


class ReasoningOnlyError(DegenerateReplyError):
    """A reply that is all reasoning and no answer: the model thought aloud and never answered
    (its think block unclosed, or closed with nothing after it)."""

    def __init__(self, *, reasoning: str, completion: object = None) -> None:
        super().__init__("the reply is all reasoning and no answer", raw="", completion=completion)
        self.hint = "turn thinking off with --think-budget 0, or give it more with --think-budget"
        self.reasoning = reasoning


class CallTimeoutError(MootError, TimeoutError):
    """A model call that ran past its time limit."""

    def __init__(self, *, seconds: float, model: str = "") -> None:
        super().__init__(
            f"{model or 'the model'} did not finish within {seconds:g} s",
            hint="raise --call-timeout, shorten turns with --max-tokens, or use a smaller model",
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
        self, message: str, *, hint: str, needed: int, free: int, gpu: bool = False
    ) -> None:
        super().__init__(message, hint=hint)
        self.needed = needed  # bytes
        self.free = free
        self.gpu = gpu  # GPU memory, not system memory


class RecordError(UsageError):
    """A saved debate's file (a journal, a transcript) that does not read as moot's records:
    `path` is the file, `where` the line of a journal or the JSON path in a transcript."""

    def __init__(self, message: str, *, path: str, where: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
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
