"""Deterministic models for unit tests and `--dry-run`: they run the real engine code."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from moot.inference.choice import Choice, ChoiceRequest, Likelihood, LikelihoodRequest, normalised
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.reasoning import Splitter

Reply = str | Callable[[ChatRequest], str]
# A scripted judge's distribution over a choice's options: weights by str(option).
Chooser = Callable[[ChoiceRequest], dict[str, float]]
# A scripted model's log-probability of a reply: a function of the request.
Scorer = Callable[[LikelihoodRequest], float]

# The form of the echo's replies. 1: moot's first, where a point of information was answered
# as any speech (and so flagged "not a question"); 2: a question wherever the engine asks
# for one, so a dry run keeps every rule. A saved dry run records its form (params.echo), so
# a replay or a resume of an older one speaks as it did.
ECHO_FORM = 2

_HAN = re.compile(r"[\u4e00-\u9fff]")
# A passage as the engine shows one (engine/evidence.j2): its id in brackets at a line's start.
_PASSAGE = re.compile(r"^\[([^\]\n]*¶[^\]\n]*)\] ", re.MULTILINE)

# What the echo asks where the engine asks for a question: within any point's limit, opening
# as a question does, and sharing no words with another seat's speech.
_QUESTIONS = {
    "?": "Does the other side have an answer to this?",
    "？": "请问对方如何回应这一点？",
}


class ScriptedModel:
    """Replies from a queue (or a function of the request) and records every request.

    A structured request with nothing queued gets a minimal valid instance of its
    schema, so orchestration tests need only script what they assert on.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        model_id: str = "scripted",
        form: int = ECHO_FORM,
        chooser: Chooser | None = None,
        scorer: Scorer | None = None,
    ) -> None:
        self._replies: list[Reply] = list(replies)
        self._id = model_id
        self.form = form
        self.chooser = chooser
        self.scorer = scorer
        self.requests: list[ChatRequest] = []
        self.choices: list[ChoiceRequest] = []
        self.scored: list[LikelihoodRequest] = []

    @property
    def model_id(self) -> str:
        return self._id

    def queue(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        self.requests.append(request)
        if self._replies:
            reply = self._replies.pop(0)
            text = reply(request) if callable(reply) else reply
        elif request.reply_schema is not None:
            text = json.dumps(_minimal(request.reply_schema))
        else:
            text = _echo(request) if self.form >= 2 else _first_echo(request)
        said, splitter = _say(text, request.think_budget, on_text)
        prompt_tokens = sum(len(m.content.split()) for m in request.messages)
        return Completion(
            text=splitter.answer,
            reasoning=splitter.reasoning,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(said.split()),
            finish_reason="stop",
        )

    def choose(self, request: ChoiceRequest) -> Choice | None:
        """The chooser's distribution; without one, None: `choice.choose` then samples the
        scripted replies as it would a server's."""
        if self.chooser is None:
            return None
        self.choices.append(request)
        weights = self.chooser(request)
        scores = {str(o): max(0.0, float(weights.get(str(o), 0.0))) for o in request.options}
        return Choice(probabilities=normalised(scores), method="scripted")

    def likelihood(self, request: LikelihoodRequest) -> Likelihood | None:
        """The scorer's log-probability of the reply; without one, None (as a server)."""
        if self.scorer is None:
            return None
        self.scored.append(request)
        return Likelihood(logprob=self.scorer(request), tokens=len(request.reply.split()))


def overlap(request: LikelihoodRequest) -> float:
    """A reply's scripted log-probability: each of its words costs one nat, and each found
    in the request's own words earns two back, so a reply on what was asked is likelier."""
    asked = {w.lower() for m in request.messages for w in re.findall(r"\w+", m.content)}
    said = [w.lower() for w in re.findall(r"\w+", request.reply)]
    return float(sum(1 if w in asked else -1 for w in said))


class EchoModel(ScriptedModel):
    """Answers every free-text request with a short deterministic speech; used by --dry-run."""

    def __init__(self, *, model_id: str = "echo", form: int = ECHO_FORM) -> None:
        super().__init__((), model_id=model_id, form=form, scorer=overlap)


def _echo(request: ChatRequest) -> str:
    """A short deterministic reply that keeps the rules: a question where the engine asks
    for one, else the speaker and a few words of its prompt, enough to see the step."""
    if request.closer in _QUESTIONS:
        return _QUESTIONS[request.closer]
    quoted = _quoted(request)
    # Chinese has no spaces between its words: twelve characters of it, as six words are
    # too few to read as copying another seat's speech (twenty characters in a row are).
    if _HAN.search(quoted):
        quoted = quoted[:12]
    # Shown passages of the debate's documents: the first, cited as the prompt asks, in a
    # sentence of its own (within the quoted words' sentence it would make ten words in
    # a row that another seat's echo says too: copying).
    cited = _PASSAGE.search(request.messages[-1].content if request.messages else "")
    source = (" 见" if _HAN.search(quoted) else " See") + f" [{cited.group(1)}]." if cited else ""
    return f"[{request.session or 'speaker'}] responding to: {quoted}.{source}"


def _first_echo(request: ChatRequest) -> str:
    """The echo's first form (a dry run saved before `ECHO_FORM` 2, replayed or resumed)."""
    return f"[{request.session or 'speaker'}] responding to: {_quoted(request)}."


def _quoted(request: ChatRequest) -> str:
    """Six words of the first line of the prompt: too few to read as copying another seat's
    speech (a dry run keeps the voice rules like any other)."""
    last = request.messages[-1].content if request.messages else ""
    first_line = next((line for line in last.splitlines() if line.strip()), "")
    return " ".join(first_line[:60].split()[:6])


def _say(text: str, think_budget: int | None, on_text: OnText | None) -> tuple[str, Splitter]:
    """TEXT streamed a word at a time, as written (reasoning marked): what was said before
    the listener asked to stop, or the reasoning ran past a positive THINK_BUDGET (in words),
    and the reply told apart."""
    splitter = Splitter()
    said: list[str] = []
    thought = 0
    for piece in _pieces(text):
        said.append(piece)
        splitter.feed(piece)
        thought += splitter.thinking
        if on_text and on_text(piece):
            break  # asked to stop: the reply ends here
        if think_budget and thought > think_budget and splitter.thinking:
            break  # the budget is spent: a server would be stopped here too
    splitter.finish()
    return "".join(said), splitter


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


def _minimal(schema: type[BaseModel]) -> dict[str, Any]:
    """A minimal valid instance of `schema`, built from its JSON schema."""
    js = schema.model_json_schema()
    return _value(js, js.get("$defs", {}))


def _value(node: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in node:
        return _value(defs[node["$ref"].split("/")[-1]], defs)
    if "enum" in node:
        return node["enum"][0]
    if "const" in node:
        return node["const"]
    if "anyOf" in node:
        return _value(node["anyOf"][0], defs)
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        return {k: _value(v, defs) for k, v in props.items()}
    if kind == "array":
        return [_value(node["items"], defs)] * node.get("minItems", 0)
    if kind == "string":
        if node.get("maxLength", 0) > 40:  # prose: a reply that says something
            return "a scripted reply with a reason"[: node["maxLength"]]
        return "x" * node.get("minLength", 1)
    if kind in ("number", "integer"):
        return node.get("minimum", 0)
    if kind == "boolean":
        return False
    return None
