"""Reading a decision's probabilities from a model instead of sampling it.

A judge's decision is one value of a few (`proposition`/`opposition`/`draw`, `yes`/`no`, a
score's digits). Sampling it throws away what the model thinks of the others; a backend
that can read its distribution at the decision point returns the probability of each value
instead. The decision is asked as a JSON object of one key, `{"FIELD": VALUE}`: a backend
that reads probabilities scores each value's whole continuation after `{"FIELD": ` (so
values that begin with the same token are still told apart), and one that cannot draws
`samples` replies held to the values by a schema and counts them, and says so (`method`).

Every backend may offer `choose(request) -> Choice`; `choose(model, request)` uses it where
it is there, and falls back to drawing samples through `chat` where it is not.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.inference.protocol import ChatModel, ChatRequest, Message, Sampling, parse_structured

Value = str | int
# How a Choice's probabilities were obtained: read from the model's logits in process, from
# a server's logprobs, counted over sampled replies, or given by a scripted model.
Method = Literal["logits", "logprobs", "samples", "scripted"]
SAMPLES = 8  # replies drawn where a backend cannot read its probabilities
SAMPLE_TEMPERATURE = 1.0  # the model's own distribution, neither sharpened nor flattened


class ChoiceRequest(BaseModel):
    """Which of OPTIONS the model answers, as `{"FIELD": VALUE}`, after MESSAGES."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    field: str = Field(min_length=1)
    options: tuple[Value, ...] = Field(min_length=2)
    session: str | None = None
    seed: int | None = None  # for the draws of a backend that samples
    samples: int = Field(default=SAMPLES, ge=1)
    timeout_s: float | None = None

    def prefix(self) -> str:
        """The reply up to the decision point: what every value continues."""
        return '{"' + self.field + '": '

    def spelled(self, value: Value) -> str:
        """VALUE as the reply spells it after the prefix, closing the object."""
        return json.dumps(value, ensure_ascii=False) + "}"


class Choice(BaseModel):
    """The probability of each option (they sum to 1), and how it was obtained."""

    model_config = ConfigDict(frozen=True)

    probabilities: dict[str, float]  # keyed by str(option), in the request's order
    method: Method
    samples: int = 0  # replies drawn, where method is "samples"
    prompt_tokens: int = 0
    duration_ms: int = 0

    def p(self, value: Value) -> float:
        return self.probabilities.get(str(value), 0.0)

    def best(self) -> str:
        """The most probable option (the first of the request's order on a tie)."""
        return max(self.probabilities, key=lambda k: self.probabilities[k])

    def expected(self) -> float:
        """The mean of numeric options under the distribution (a score's expected value)."""
        return sum(float(k) * p for k, p in self.probabilities.items())


class LikelihoodRequest(BaseModel):
    """How likely the model finds REPLY as its answer to MESSAGES."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    reply: str
    timeout_s: float | None = None


class Likelihood(BaseModel):
    """The log-probability of a reply's tokens (natural log, summed), and how many there were."""

    model_config = ConfigDict(frozen=True)

    logprob: float
    tokens: int
    duration_ms: int = 0


def likelihood(model: ChatModel, request: LikelihoodRequest) -> Likelihood | None:
    """The model's log-probability of the request's reply, where it can read one (a model
    in process); None where it cannot (a server: its API scores what it writes, not a
    reply it is given)."""
    own = getattr(model, "likelihood", None)
    if callable(own):
        result = own(request)
        if isinstance(result, Likelihood):
            return result
    return None


def normalised(scores: dict[str, float]) -> dict[str, float]:
    """SCORES (non-negative weights) as probabilities; all zero gives the uniform."""
    total = sum(scores.values())
    if total <= 0:
        return {k: 1 / len(scores) for k in scores}
    return {k: v / total for k, v in scores.items()}


def schema_for(request: ChoiceRequest) -> type[BaseModel]:
    """The one-key reply the values allow, as a pydantic model a backend holds a reply to."""
    allowed: Any = Literal[request.options]
    fields: dict[str, Any] = {request.field: (allowed, ...)}
    return create_model("Choice", __config__=ConfigDict(extra="forbid"), **fields)


def by_sampling(model: ChatModel, request: ChoiceRequest) -> Choice:
    """Draw `request.samples` replies held to the options and count them."""
    start = time.perf_counter()
    schema = schema_for(request)
    counts: Counter[str] = Counter()
    prompt_tokens = 0
    for i in range(request.samples):
        seed = None if request.seed is None else request.seed + i
        chat = ChatRequest(
            messages=request.messages,
            sampling=Sampling(temperature=SAMPLE_TEMPERATURE, top_p=1.0, max_tokens=24, seed=seed),
            reply_schema=schema,
            session=request.session,
            timeout_s=request.timeout_s,
        )
        completion = model.chat(chat)
        prompt_tokens = prompt_tokens or completion.prompt_tokens
        try:
            value = getattr(parse_structured(completion.text, schema), request.field)
        except ValueError:
            continue  # a reply off the schema counts for no option
        counts[str(value)] += 1
    return Choice(
        probabilities=normalised({str(o): float(counts[str(o)]) for o in request.options}),
        method="samples",
        samples=request.samples,
        prompt_tokens=prompt_tokens,
        duration_ms=round((time.perf_counter() - start) * 1000),
    )


def choose(model: ChatModel, request: ChoiceRequest) -> Choice:
    """The model's probability for each option: its own reading where it offers one."""
    own = getattr(model, "choose", None)
    if callable(own):
        result = own(request)
        if isinstance(result, Choice):
            return result
    return by_sampling(model, request)
