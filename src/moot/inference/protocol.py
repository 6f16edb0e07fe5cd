"""The seam between debates and models: requests in, streamed text and a completion out."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.errors import DegenerateReplyError, ReasoningOnlyError, StructuredReplyError

T = TypeVar("T", bound=BaseModel)
# Called with each new piece of a reply; returning True asks the backend to stop there.
OnText = Callable[[str], bool | None]


@dataclass(frozen=True)
class ResolvedModel:
    """A model ready to load: a verified local GGUF and how to talk to it."""

    id: str  # catalog id, registered name, "hf:OWNER/REPO/FILE.gguf" or the path
    path: Path  # the file llama.cpp opens (the first part of a split model)
    sha256: str | None
    chat_format: str  # llama-cpp-python chat format name, or "template" (use the file's own)
    context_length: int  # the model's trained context length
    languages: tuple[str, ...] = ("en",)
    files: tuple[Path, ...] = ()  # every file of the model (all shards), first = path
    chat_template: str | None = None  # the GGUF's own template, when chat_format == "template"
    architecture: str | None = None
    quantisation: str | None = None
    head_dim: int | None = None  # how wide one attention head's keys are (the GGUF header)


class Sampling(BaseModel):
    """How one call samples; unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    top_p: float = Field(default=0.95, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1)
    seed: int | None = None
    stop: tuple[str, ...] = ()
    # Free text only: discourage repeating tokens (repeat_penalty) and copying sequences
    # from the context verbatim (dry, llama.cpp's DRY sampler). Off by default.
    repeat_penalty: float = Field(default=1.0, ge=1.0, le=2.0)
    dry: float = Field(default=0.0, ge=0.0, le=5.0)


class Generated(BaseModel):
    """The tokens a model in this process generated for a reply, as its KV cache holds them:
    a later prompt that quotes the reply as an assistant message after the same prompt can
    take these tokens, already evaluated, instead of evaluating the text again.

    Kept beside the turn (journaled), so that a resumed debate evaluates the same tokens in
    the same way and says what the uninterrupted one did."""

    model_config = ConfigDict(frozen=True)

    model: str  # the file's fingerprint: token ids mean nothing to another vocabulary
    prompt: str  # sha256 of the formatted prompt the tokens followed
    # The reply's tokens the model evaluated, one at a time, as it generated them (not the
    # last one drawn where generation stopped at it: that was never evaluated).
    tokens: tuple[int, ...]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str
    # An assistant message that is a reply a local model generated: its tokens (see
    # Generated). Backends that cannot use them ignore them.
    generated: Generated | None = None


class ChatRequest(BaseModel):
    """One chat call. `reply_schema` asks for a reply that validates against a pydantic model.

    `session` names the speaker (e.g. the debate role) so a backend can keep one KV
    cache per speaker and only evaluate what is new since that speaker's last call.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    messages: tuple[Message, ...]
    sampling: Sampling = Sampling()
    reply_schema: type[BaseModel] | None = None
    # GBNF a free-text reply must match where the backend can hold it to one (llama.cpp in
    # process); others ignore it and the engine fits the reply as it comes.
    grammar: str | None = None
    # The text the grammar ends on (a question's mark), taken where the model's draw would
    # open a new word or sentence that the grammar refuses: a question at its word limit
    # ends there instead of gluing its next words into the last one.
    closer: str | None = None
    session: str | None = None
    timeout_s: float | None = None  # backends raise CallTimeoutError past it
    # The most characters each prose field of a structured reply may hold, below its
    # schema's own bound: a reply held to a shorter budget (`--max-tokens`) still closes.
    # None: the schema's bounds. Validation keeps the schema's own.
    prose: int | None = Field(default=None, ge=1)
    # Tokens the model may think before it answers, beside `sampling.max_tokens`, which is
    # the answer's own. 0: thinking off where the model allows it, and the reply's own budget
    # where it thinks anyway; None: reasoning and answer share max_tokens.
    think_budget: int | None = Field(default=None, ge=0)


FinishReason = Literal["stop", "length"]


class Completion(BaseModel):
    """What a finished call returns: the answer, the reasoning before it, and what it cost.

    `text` is the answer only. Streamed pieces (`on_text`) are the reply as written, its
    reasoning marked as `moot.inference.reasoning` reads it.
    """

    text: str
    reasoning: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    duration_ms: int = 0
    ttft_ms: int = 0
    finish_reason: FinishReason = "stop"
    generated: Generated | None = None  # a local model's tokens for the reply (free text)


@runtime_checkable
class ChatModel(Protocol):
    """Every backend (llama.cpp in process, remote server, scripted) implements this."""

    @property
    def model_id(self) -> str: ...

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        """Run one request, calling `on_text` with each new piece of text as it is produced;
        when `on_text` returns True the reply ends there (finish_reason "stop")."""
        ...


def messages(*pairs: tuple[str, str]) -> tuple[Message, ...]:
    """Build messages from (role, content) pairs, dropping empty system prompts."""
    return tuple(
        Message(role=role, content=content)  # type: ignore[arg-type]
        for role, content in pairs
        if not (role == "system" and not content)
    )


_WORD = re.compile(r"\w+", re.UNICODE)


def degeneracy(text: str) -> str | None:
    """Say why a reply is degenerate (empty, or one phrase repeated), or None if it is fine."""
    stripped = text.strip()
    if not stripped:
        return "the reply is empty"
    words = _WORD.findall(stripped.lower())
    if len(words) < 12:
        # CJK text has few \w-separated words; look at characters instead.
        words = [c for c in stripped if not c.isspace()]
    if len(words) < 12:
        return None
    for size in range(1, 9):
        tail = words[-size * 4 :]
        if len(tail) < size * 4:
            break
        unit = tail[:size]
        if all(tail[i : i + size] == unit for i in range(0, len(tail), size)):
            share = _repeated_share(words, unit)
            if share >= 0.5:
                return f"the reply repeats {' '.join(unit)!r} over and over"
    return None


def _repeated_share(words: list[str], unit: list[str]) -> float:
    size = len(unit)
    i = len(words)
    while i - size >= 0 and words[i - size : i] == unit:
        i -= size
    return (len(words) - i) / len(words)


def check_not_degenerate(completion: Completion) -> None:
    if not completion.text.strip() and completion.reasoning.strip():
        raise ReasoningOnlyError(reasoning=completion.reasoning, completion=completion)
    reason = degeneracy(completion.text)
    if reason:
        raise DegenerateReplyError(
            key="inference.protocol.degenerate",
            raw=completion.text,
            completion=completion,
            reason=reason,
        )


def parse_structured(text: str, schema: type[T]) -> T:
    """Validate a JSON reply against `schema`; raises ValidationError or ValueError (also for
    JSON nested too deeply to parse)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("the reply is nested too deeply") from None
    return schema.model_validate(data)


PROSE_CHARS = 40  # a string field allowed more than this is prose, not a name or a label
PROSE_MIN_CHARS = 16  # the least a reply's prose may hold: no room for "yes"


def is_prose(node: dict[str, Any]) -> bool:
    """Whether a JSON-schema NODE is a prose string: free text longer than a name or a label."""
    most = node.get("maxLength")
    return node.get("type") == "string" and isinstance(most, int) and most > PROSE_CHARS


def reply_json_schema(schema: type[BaseModel], prose: int | None = None) -> dict[str, Any]:
    """SCHEMA's JSON schema as a backend is asked to hold a reply to: its prose (a reason, a
    summary) at least PROSE_MIN_CHARS long, so that "yes" is not a reason, and with PROSE
    at most that many characters. Validation keeps the schema's own bounds, so saved replies
    of any length still load."""
    return _held(schema.model_json_schema(), prose)


def _held(node: Any, prose: int | None) -> Any:
    if isinstance(node, list):
        return [_held(item, prose) for item in node]
    if not isinstance(node, dict):
        return node
    held = {key: _held(value, prose) for key, value in node.items()}
    if is_prose(held):
        least = held.get("minLength", 0)
        held["minLength"] = max(least if isinstance(least, int) else 0, PROSE_MIN_CHARS)
        if prose is not None:
            held["maxLength"] = max(min(held["maxLength"], prose), held["minLength"])
    return held


@lru_cache(maxsize=256)
def reply_token_bound(schema: type[BaseModel], prose: int | None = None) -> int | None:
    """The most tokens a reply to SCHEMA's grammar can take, when every string in it has a
    `maxLength` (None when one does not): each character may be a token of its own (digits
    and punctuation are), and every key, value and separator is given a few. A budget under
    this can cut a reply that keeps to the grammar into invalid JSON. With PROSE (each prose
    field held to that many characters, `ChatRequest.prose`), lists of a bounded length
    count too, so that every judge's reply can be held to a budget."""
    tree = reply_json_schema(schema, prose)
    return _bound(tree, tree.get("$defs", {}), lists=prose is not None)


def room(schema: type[BaseModel], asked: int) -> int:
    """The budget of a structured reply whose step asks ASKED tokens: room for the longest
    reply SCHEMA's grammar allows (a reply cut short is invalid JSON), up to twice the
    step's budget, so the prompt still fits its context."""
    return max(asked, min(reply_token_bound(schema) or asked, 2 * asked))


def held_budget(schema: type[BaseModel], asked: int, cap: int) -> tuple[int, int | None]:
    """The budget of a structured reply whose step asks ASKED tokens, under a cap of CAP
    (`--max-tokens`), and the characters each of its prose fields is held to (None: its
    schema's). Where the reply's room is over the cap its prose is held shorter
    (`held_prose`) and the budget is the longest held reply's, between CAP and that room;
    a schema with no bound to hold keeps its room."""
    full = room(schema, asked)
    if cap >= full:
        return full, None
    prose = held_prose(schema, cap)
    if prose is None:
        bound = reply_token_bound(schema)
        return (max(cap, bound) if bound is not None else full), None
    return min(full, max(cap, reply_token_bound(schema, prose) or full)), prose


HELD_PROSE = 60  # characters: the least a prose field is held to, a sentence of reason


@lru_cache(maxsize=256)
def held_prose(schema: type[BaseModel], tokens: int) -> int | None:
    """The most characters each prose field of a reply to SCHEMA may hold for its longest
    reply to fit TOKENS (`reply_token_bound`), never under HELD_PROSE: a reply held to a
    budget shorter than its schema's says less, and still closes. None when the schema's
    own bounds fit, or it has no bound to hold."""
    longest = _longest_prose(schema.model_json_schema())
    if not longest or reply_token_bound(schema, longest) is None:
        return None
    if (reply_token_bound(schema, longest) or 0) <= tokens:
        return None
    low, high = HELD_PROSE, longest  # the bound grows with the prose it allows
    while low < high:
        mid = (low + high + 1) // 2
        if (reply_token_bound(schema, mid) or 0) <= tokens:
            low = mid
        else:
            high = mid - 1
    return low


def _longest_prose(node: Any) -> int:
    if isinstance(node, list):
        return max((_longest_prose(item) for item in node), default=0)
    if not isinstance(node, dict):
        return 0
    own = int(node["maxLength"]) if is_prose(node) else 0
    return max([own, *(_longest_prose(value) for value in node.values())])


def _bound(node: dict[str, object], defs: dict[str, object], *, lists: bool = False) -> int | None:
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        return _bound(target, defs, lists=lists) if isinstance(target, dict) else None
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties")
        if not isinstance(props, dict):
            return None
        total = 2
        for key, sub in props.items():
            inner = _bound(sub, defs, lists=lists) if isinstance(sub, dict) else None
            if inner is None:
                return None
            total += len(key) // 2 + 4 + inner  # the quoted key (a token per two letters at
            # most: the grammar spells it out), colon, comma, space
        return total
    if kind == "array" and lists:
        items, most = node.get("items"), node.get("maxItems")
        inner = _bound(items, defs, lists=lists) if isinstance(items, dict) else None
        return None if inner is None or not isinstance(most, int) else 2 + most * (inner + 2)
    choices = node.get("enum")
    if isinstance(choices, list) and choices and (kind == "string" or lists):
        return max(len(str(v)) for v in choices) + 2
    if kind == "string":
        most = node.get("maxLength")
        return most + 2 if isinstance(most, int) else None
    if kind in ("boolean", "null"):
        return 3
    if kind in ("integer", "number"):
        return 12
    return None


# -- what a failed reply leaves on record: metadata only, never the reply -------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
META_LIMIT = 200


def sanitize(text: str) -> str:
    """Metadata safe to store and print: no control characters, at most 200 characters."""
    return _CONTROL.sub("", text)[:META_LIMIT]


def parse_error(exc: Exception, raw: str, schema: type[BaseModel]) -> str:
    """`PARSE_ERROR:<type>:<code>`: what failed, never the reply itself (it may be anything)."""
    try:
        schema.model_validate(json.loads(raw))
        code = "unknown"
    except ValueError as err:  # ValidationError is a ValueError too: test it first
        if isinstance(err, ValidationError):
            code = str(err.errors()[0]["type"])
        else:
            code = "json"
    except RecursionError:  # brackets nested past what the parser takes
        code = "json"
    return sanitize(f"PARSE_ERROR:{type(exc).__name__}:{code}")


def chat_structured(
    model: ChatModel,
    request: ChatRequest,
    schema: type[T],
    *,
    on_text: OnText | None = None,
    check: Callable[[T], str | None] | None = None,
) -> tuple[T, Completion]:
    """Ask for a reply satisfying `schema`; re-ask once on an invalid reply, then fail. A
    valid reply that `check` finds wanting is re-asked once too; the second is kept, or the
    first if the second is not valid at all.

    Every backend constrains the reply as best it can (a grammar locally, the server's
    JSON-schema mode remotely); the reply is validated here either way.
    """
    req = request.model_copy(update={"reply_schema": schema})
    asked = req.sampling.max_tokens
    bound = asked if request.prose is not None else room(schema, asked)  # held: chosen
    if bound > asked:
        sampling = req.sampling.model_copy(update={"max_tokens": bound})
        req = req.model_copy(update={"sampling": sampling})
    attempts: list[str] = []
    wanting: tuple[T, Completion] | None = None
    for attempt in range(2):
        if attempt:
            seed = req.sampling.seed
            req = req.model_copy(
                update={
                    "sampling": req.sampling.model_copy(
                        update={"seed": None if seed is None else seed + 7919}
                    )
                }
            )
        completion = model.chat(req, on_text=on_text)
        attempts.append(completion.text)
        try:
            parsed = parse_structured(completion.text, schema)
        except (ValidationError, ValueError):
            continue
        if attempt == 0 and check is not None and check(parsed):
            wanting = parsed, completion
            continue
        return parsed, completion
    if wanting is not None:
        return wanting
    raise StructuredReplyError(
        key="inference.protocol.gave_no_valid_2_attempts",
        raw=attempts[-1],
        request=request,
        model_id=model.model_id,
        name=schema.__name__,
    )
