"""A person in a seat: shown the request a model in that seat would be sent, answering through
a console (a terminal, a script on standard input, the page in a browser).

A `HumanSeat` is a `ChatModel` with `is_human = True`; the engine reads that mark and keeps a
person's turn as it was given: never cut, drawn again or cleaned, only flagged. What the
person sees is the request's messages, so the rulebook's visibility applies to people too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from moot.inference.protocol import ChatRequest, Completion, Message, OnText
from moot.words import Words, words

HUMAN = "human"  # the model reference of a seat a person holds
T = TypeVar("T", bound=BaseModel)
Kind = Literal["speech", "decision", "form"]


def is_human_ref(ref: str) -> bool:
    """Does the model reference REF name a person (`--role opposition=human`)?"""
    return ref.strip().lower() == HUMAN


def is_human(model: object) -> bool:
    """A seat a person holds: a HumanSeat, or a saved debate's seat recorded as "human"."""
    return getattr(model, "is_human", False) is True or getattr(model, "model_id", None) == HUMAN


class SeatLeft(BaseException):  # noqa: N818  (a person leaving, not a fault)
    """The person left the seat: their input ended, or the debate was stopped while they were
    asked. Not an Exception, so no format takes it for a failed turn: the debate ends there,
    its finished turns journaled, and `moot resume` asks the person again."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Ask:
    """What a person is asked for: a speech, accept or decline, or a structured reply."""

    kind: Kind
    role: str
    label: str  # the step as the live view heads it ("🔴 Opposition")
    messages: tuple[Message, ...]  # what a model in the seat is sent: all the seat may see
    language: str = "en"
    limit: int | None = None  # a speech's limit in words (字 in Chinese)
    question: str | None = None  # decision: the point of information put to the seat
    schema: type[BaseModel] | None = None  # form: what the reply must validate against
    problem: str | None = None  # form: why the last answer was not taken, in one line
    draft: Mapping[str, Any] | None = None  # form: the fields of the last answer
    turn: int | None = None  # the turn it makes (decision: the question's turn)
    number: int = 0  # the seat's asks, counted: an answer names the one it answers

    @property
    def units(self) -> str:
        return words(self.language).say("units")

    def instruction(self) -> str:
        """The step and its limit in one line, in the debate's language: "🔴 Opposition: at
        most 150 words"."""
        say = words(self.language).say
        if self.kind == "decision":
            return say("seat_decision", label=self.label)
        if self.kind == "form":
            name = self.schema.__name__ if self.schema is not None else "reply"
            return say("seat_form", label=self.label, name=words(self.language).shown(name))
        if self.limit is None:
            return say("seat_turn", label=self.label)
        return say("seat_limit", label=self.label, limit=self.limit, units=self.units)


@dataclass(frozen=True)
class Said:
    """A speech as the person submitted it; `timed_out`: the time limit submitted it."""

    text: str
    timed_out: bool = False
    duration_ms: int = 0


class HumanConsole(Protocol):
    """Where a person answers: shown each Ask, returning what they gave. A console may raise
    SeatLeft (the input ended, the debate stopped) or KeyboardInterrupt."""

    def speech(self, ask: Ask) -> Said: ...

    def decision(self, ask: Ask) -> bool: ...

    def form(self, ask: Ask) -> str | Mapping[str, Any]:
        """A JSON object's text, or the fields as a mapping; the seat validates it."""
        ...


# -- a structured reply, field by field ----------------------------------------------------


@dataclass(frozen=True)
class FormField:
    """One field of a structured reply as a person fills it in."""

    name: str
    kind: str  # boolean, string, integer, number, choice, json (a list or an object)
    required: bool
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    description: str = ""

    def wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "required": self.required,
            "choices": list(self.choices),
            "minimum": self.minimum,
            "maximum": self.maximum,
            "max_length": self.max_length,
            "description": self.description,
        }


def form_fields(schema: type[BaseModel]) -> list[FormField]:
    """The top-level fields of SCHEMA, in order, each with what its JSON schema says of it."""
    js = schema.model_json_schema()
    defs = js.get("$defs", {})
    required = set(js.get("required", ()))
    fields = []
    for name, node in js.get("properties", {}).items():
        node = _deref(node, defs)
        if "anyOf" in node:  # an optional field: the kind it takes when given
            given = [_deref(n, defs) for n in node["anyOf"] if n.get("type") != "null"]
            node = {**node, **(given[0] if len(given) == 1 else {})}
        choices = node.get("enum") or ([node["const"]] if "const" in node else [])
        kind = node.get("type")
        if choices:
            kind = "choice"
        elif kind not in ("boolean", "string", "integer", "number"):
            kind = "json"  # a list or an object: typed as JSON
        fields.append(
            FormField(
                name=name,
                kind=str(kind),
                required=name in required,
                choices=tuple(choices),
                minimum=node.get("minimum"),
                maximum=node.get("maximum"),
                max_length=node.get("maxLength"),
                description=str(node.get("description") or node.get("title") or ""),
            )
        )
    return fields


def _deref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        return dict(defs.get(node["$ref"].split("/")[-1], {}))
    return node


def read_answer(answer: str | Mapping[str, Any], schema: type[T], language: str = "en") -> T:
    """A person's structured reply validated by SCHEMA; ValueError says why not, in one line
    (in LANGUAGE, the debate's)."""
    said = words(language)
    data: Any = answer
    if isinstance(answer, str):
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise ValueError(said.say("form_not_json", msg=exc.msg, line=exc.lineno)) from None
        except RecursionError:
            raise ValueError(said.say("form_too_deep")) from None
    if not isinstance(data, Mapping):
        raise ValueError(said.say("form_not_object"))
    try:
        return schema.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or schema.__name__
        why = first["msg"] if language == "en" else _invalid(said, first)
        raise ValueError(said.say("form_field", where=said.shown(where), why=why)) from None


def _invalid(said: Words, error: Any) -> str:
    """What pydantic's ERROR says, in SAID's language: its kind of error, with its figures."""
    kind = f"invalid_{error['type']}"
    ctx = {k: _figure(v) for k, v in (error.get("ctx") or {}).items()}
    try:
        return said.say(kind, **ctx)
    except (KeyError, IndexError, ValueError):
        return said.say("invalid")


def _figure(value: Any) -> Any:
    """A bound as pydantic's own message writes it: 10, not 10.0."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def decision_of(text: str) -> bool | None:
    """A typed decision: True to accept, False to decline, None when it is neither."""
    word = text.strip().lower()
    if word in ("accept", "a", "yes", "y", "接受", "是"):
        return True
    if word in ("decline", "d", "no", "n", "拒绝", "否"):
        return False
    return None


# -- the seat ------------------------------------------------------------------------------


class HumanSeat:
    """A seat a person holds. The engine calls `speak`, `fill` and `decide`, which know the
    step; `chat` answers as any model is called, for callers that know only the protocol."""

    is_human = True

    def __init__(self, console: HumanConsole, *, model_id: str = HUMAN) -> None:
        self.console = console
        self._id = model_id
        self._asked = 0

    @property
    def model_id(self) -> str:
        return self._id

    def _ask(self, kind: Kind, **fields: Any) -> Ask:
        self._asked += 1
        return Ask(kind=kind, number=self._asked, **fields)

    def speak(
        self,
        request: ChatRequest,
        *,
        role: str,
        label: str,
        limit: int | None = None,
        language: str = "en",
        turn: int | None = None,
    ) -> Said:
        """The person's speech, as they submitted it, and how long they took."""
        start = time.monotonic()
        ask = self._ask(
            "speech",
            role=role,
            label=label,
            messages=request.messages,
            language=language,
            limit=limit,
            turn=turn,
        )
        said = self.console.speech(ask)
        return replace(said, duration_ms=_since(start))

    def decide(
        self,
        question: str,
        *,
        role: str,
        label: str,
        language: str = "en",
        turn: int | None = None,
    ) -> bool:
        """Whether the person accepts the point of information QUESTION."""
        ask = self._ask(
            "decision",
            role=role,
            label=label,
            messages=(),
            language=language,
            question=question,
            turn=turn,
        )
        return bool(self.console.decision(ask))

    def fill(
        self,
        request: ChatRequest,
        schema: type[T],
        *,
        role: str,
        label: str,
        language: str = "en",
        turn: int | None = None,
    ) -> tuple[T, int]:
        """The person's structured reply, validated by SCHEMA (asked again, with the one line
        that says why, until it is), and the milliseconds it took."""
        start = time.monotonic()
        problem: str | None = None
        draft: Mapping[str, Any] | None = None
        while True:
            ask = self._ask(
                "form",
                role=role,
                label=label,
                messages=request.messages,
                language=language,
                schema=schema,
                problem=problem,
                draft=draft,
                turn=turn,
            )
            answer = self.console.form(ask)
            try:
                return read_answer(answer, schema, language), _since(start)
            except ValueError as exc:
                problem = str(exc)
                draft = answer if isinstance(answer, Mapping) else _mapping(answer)

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        """As a model is called, with no step known: a form when the request wants a schema,
        else a speech without a limit."""
        label = request.session or HUMAN
        start = time.monotonic()
        if request.reply_schema is not None:
            parsed, _ = self.fill(request, request.reply_schema, role=label, label=label)
            text = parsed.model_dump_json()
        else:
            text = self.speak(request, role=label, label=label).text
        if on_text is not None:
            on_text(text)
        return Completion(text=text, duration_ms=_since(start))


def _since(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def _mapping(text: str) -> Mapping[str, Any] | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


# -- answers from a list -------------------------------------------------------------------

Answer = str | bool | Said | Mapping[str, Any] | BaseException | Callable[[Ask], Any]


class ScriptedConsole:
    """A person's answers from a list, for tests and replays, recording every Ask: a speech
    is a string (or a Said), a decision a bool or "accept"/"decline", a form a JSON string or
    a mapping. A callable is called with the Ask; an exception is raised (KeyboardInterrupt:
    Ctrl-C while typing). Past the last answer the person has left the seat."""

    def __init__(self, answers: Iterable[Answer] = ()) -> None:
        self._answers = list(answers)
        self.asks: list[Ask] = []

    def queue(self, *answers: Answer) -> None:
        self._answers.extend(answers)

    def _next(self, ask: Ask) -> Any:
        self.asks.append(ask)
        if not self._answers:
            raise SeatLeft(
                f"no answer left for {ask.instruction()}",
                hint="give the scripted console one answer per turn the seat is asked for",
            )
        answer = self._answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer(ask) if callable(answer) else answer

    def speech(self, ask: Ask) -> Said:
        answer = self._next(ask)
        return answer if isinstance(answer, Said) else Said(str(answer))

    def decision(self, ask: Ask) -> bool:
        answer = self._next(ask)
        if isinstance(answer, bool):
            return answer
        decided = decision_of(str(answer))
        if decided is None:
            raise ValueError(f"a scripted decision is accept or decline, not {answer!r}")
        return decided

    def form(self, ask: Ask) -> str | Mapping[str, Any]:
        answer = self._next(ask)
        return answer if isinstance(answer, Mapping) else str(answer)
