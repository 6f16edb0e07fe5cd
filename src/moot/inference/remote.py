"""OpenAICompatModel: a model behind any OpenAI-compatible server (llama.cpp, vLLM, Ollama)."""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import math
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from moot.errors import CallTimeoutError, Phrase, RemoteError
from moot.inference.choice import Choice, ChoiceRequest, normalised, schema_for
from moot.inference.protocol import (
    ChatRequest,
    Completion,
    FinishReason,
    OnText,
    Sampling,
    check_not_degenerate,
    reply_json_schema,
)
from moot.inference.reasoning import CLOSE, OPEN, Splitter, with_soft_switch

if TYPE_CHECKING:
    import httpx  # imported where used: local debates never load the HTTP stack

Dialect = Literal["json_schema", "json_object"]
# OpenAI and vLLM take json_schema; llama-cpp-python's server rejects it and takes json_object.
DIALECTS: tuple[Dialect, ...] = ("json_schema", "json_object")
# The most likely tokens asked for at each position of a choice's reply: OpenAI, vLLM (by
# default) and Ollama allow at most 20.
TOP_LOGPROBS = 20
_learned: dict[str, Dialect] = {}  # base URL → the structured-output dialect it accepted
_learned_lock = threading.Lock()


def split_ref(ref: str) -> tuple[str, str | None]:
    """Split `http://HOST:PORT/v1#MODEL` into the base URL and the model name (or None)."""
    url, _, name = ref.partition("#")
    return url.rstrip("/"), name or None


def is_remote_ref(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def request_body(
    request: ChatRequest,
    *,
    model: str,
    dialect: Dialect | None,
    stream: bool = True,
    soft_switch: bool = False,
) -> dict[str, Any]:
    """The JSON body of a /chat/completions call for `request`. The server's max_tokens covers
    the think budget and the answer's own; thinking off is asked of the chat template
    (`enable_thinking`, which llama.cpp's server and vLLM pass on) and, with SOFT_SWITCH, of
    a Qwen3-style model in its own words (`/no_think`)."""
    s = request.sampling
    msgs = [{"role": m.role, "content": m.content} for m in request.messages]
    off = request.think_budget == 0
    if off and soft_switch:
        last = max((i for i, m in enumerate(msgs) if m["role"] == "user"), default=None)
        if last is not None:
            msgs[last]["content"] = with_soft_switch(msgs[last]["content"])
    body: dict[str, Any] = {
        "model": model,
        "messages": msgs,
        "temperature": s.temperature,
        "top_p": s.top_p,
        "max_tokens": s.max_tokens + (request.think_budget or 0),
        "stream": stream,
    }
    if off:
        body["chat_template_kwargs"] = {"enable_thinking": False}
    if stream:
        body["stream_options"] = {"include_usage": True}
    if s.seed is not None:
        body["seed"] = s.seed
    if s.stop:
        body["stop"] = list(s.stop)
    if request.reply_schema is not None:
        body["response_format"] = response_format(
            request.reply_schema, dialect or DIALECTS[0], prose=request.prose
        )
    return body


def response_format(
    schema: type[BaseModel], dialect: Dialect, *, prose: int | None = None
) -> dict[str, Any]:
    """Ask for JSON valid against `schema` in the server's dialect (each prose field at most
    PROSE characters, where given)."""
    spec = reply_json_schema(schema, prose)
    if dialect == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": spec}}
    return {"type": "json_object", "schema": spec}


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream, up to `data: [DONE]`."""
    for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments, event names
        data = line[5:].strip()
        if data == "[DONE]":
            return
        if data:
            yield json.loads(data)


class OpenAICompatModel:
    """A model served over HTTP; implements ChatModel with one persistent connection pool.

    Like the local backend, a free-text reply that is empty or one phrase repeated
    raises DegenerateReplyError.
    """

    def __init__(self, base_url: str, model_name: str | None = None, *, timeout: float = 240):
        import httpx

        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0))
        self.model_name = model_name or self._only_model()
        self._thinks = False  # a reply of this model came with reasoning

    backend = "openai-compatible"

    @property
    def model_id(self) -> str:
        return f"{self.base_url}#{self.model_name}"

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        start = time.perf_counter()
        if request.reply_schema is None:
            completion = self._stream(request, None, on_text, start, probing=False)
            check_not_degenerate(completion)
            return completion
        known = _learned.get(self.base_url)
        if known:
            return self._stream(request, known, on_text, start, probing=False)
        error: RemoteError | None = None
        for dialect in DIALECTS:
            try:
                completion = self._stream(request, dialect, on_text, start, probing=True)
            except _Rejected as rejected:
                error = rejected.error
                continue
            with _learned_lock:
                _learned[self.base_url] = dialect
            return completion
        assert error is not None
        raise error.hinted(Phrase("inference.remote.no_response_format"))

    def choose(self, request: ChoiceRequest) -> Choice | None:
        """The probability of each option, read from the server's logprobs where it returns
        them (`read_logprobs`); None where it returns none, or they cannot tell the options
        apart: `choice.choose` then counts replies held to the options (method "samples"),
        and a debate's judging step takes its reply as it is."""
        start = time.perf_counter()
        longest = max(len(request.prefix() + request.spelled(o)) for o in request.options)
        chat = ChatRequest(
            messages=request.messages,
            # Greedy: the reply goes the likeliest way to the decision point; what is read
            # there is the model's distribution, whatever the temperature.
            sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=longest + 16),
            reply_schema=schema_for(request),
            think_budget=0,
            timeout_s=request.timeout_s,
        )
        data = self._with_logprobs(chat)
        read = read_logprobs(data, request) if data is not None else None
        if read is None:
            return None
        usage = data.get("usage") if isinstance(data, dict) else None
        return Choice(
            probabilities=normalised(read),
            method="logprobs",
            prompt_tokens=int((usage or {}).get("prompt_tokens") or 0),
            duration_ms=round((time.perf_counter() - start) * 1000),
        )

    def _with_logprobs(self, request: ChatRequest) -> dict[str, Any] | None:
        """The server's whole reply to REQUEST with the top logprobs of every token; None
        where it refused the request (a server that does not give logprobs may answer an
        error). A server out of reach raises, as any call does."""
        import httpx

        known = _learned.get(self.base_url)
        for dialect in (known,) if known else DIALECTS:
            body = request_body(request, model=self.model_name, dialect=dialect, stream=False)
            body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
            try:
                resp = self._client.post(
                    self.base_url + "/chat/completions", json=body, timeout=request.timeout_s
                )
            except httpx.HTTPError as exc:
                raise _transport_error(self.base_url, exc) from exc
            if resp.status_code >= 400:
                continue
            try:
                data = resp.json()
            except ValueError:
                return None
            if not known:
                with _learned_lock:
                    _learned[self.base_url] = dialect
            return data if isinstance(data, dict) else None
        return None

    def close(self) -> None:
        self._client.close()

    def _only_model(self) -> str:
        data = self._call("GET", "/models").json().get("data") or []
        names = [str(m.get("id")) for m in data if m.get("id")]
        if len(names) == 1:
            return names[0]
        if not names:
            raise RemoteError(key="inference.remote.serves_no_models", base_url=self.base_url)
        raise RemoteError(
            key="inference.remote.serves_several_models",
            base_url=self.base_url,
            names=", ".join(names),
            names2=names[0],
        )

    def _stream(
        self,
        request: ChatRequest,
        dialect: Dialect | None,
        on_text: OnText | None,
        start: float,
        *,
        probing: bool,
    ) -> Completion:
        import httpx

        off = request.think_budget == 0 and (self._thinks or _qwen_like(self.model_name))
        body = request_body(request, model=self.model_name, dialect=dialect, soft_switch=off)
        reply = _Reply(request, on_text, start)
        usage: dict[str, Any] = {}
        with contextlib.closing(self._open_stream(body, probing=probing)) as resp:
            try:
                if "json" in resp.headers.get("content-type", ""):
                    events: Iterator[dict[str, Any]] = iter([_as_event(json.loads(resp.read()))])
                else:
                    events = sse_events(resp.iter_lines())
                for event in events:
                    if request.timeout_s and time.perf_counter() - start > request.timeout_s:
                        raise CallTimeoutError(seconds=request.timeout_s, model=self.model_id)
                    usage = event.get("usage") or usage
                    if reply.take(event.get("choices") or ()):
                        break  # the reply ends here: the stream is closed
            except httpx.HTTPError as exc:
                raise _transport_error(self.base_url, exc) from exc
            except (ValueError, AttributeError) as exc:
                raise RemoteError(
                    key="inference.remote.sent_malformed_event_stream",
                    base_url=self.base_url,
                    exc=exc,
                ) from exc
        splitter = reply.done()
        self._thinks = self._thinks or bool(splitter.reasoning)
        return Completion(
            text=splitter.answer,
            reasoning=splitter.reasoning,
            # Servers that ignore include_usage: one streamed chunk is one token on llama.cpp.
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or reply.pieces),
            cached_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
            duration_ms=round((time.perf_counter() - start) * 1000),
            ttft_ms=round(reply.ttft * 1000),
            finish_reason=reply.finish,
        )

    def _open_stream(self, body: dict[str, Any], *, probing: bool) -> httpx.Response:
        """The streamed response, once its status is fine; _Rejected when probing a dialect."""
        import httpx

        url = self.base_url + "/chat/completions"
        try:
            resp = self._client.send(
                self._client.build_request("POST", url, json=body), stream=True
            )
        except httpx.HTTPError as exc:
            raise _transport_error(self.base_url, exc) from exc
        if resp.status_code >= 400:
            resp.read()
            resp.close()
            error = _status_error(self.base_url, resp)
            # llama-cpp-python's server answers an unknown response_format with a 500.
            if probing and (resp.status_code < 500 or "response_format" in error.message):
                raise _Rejected(error)
            raise error
        return resp

    def _call(self, method: str, path: str) -> httpx.Response:
        import httpx

        try:
            resp = self._client.request(method, self.base_url + path)
        except httpx.HTTPError as exc:
            raise _transport_error(self.base_url, exc) from exc
        if resp.status_code >= 400:
            raise _status_error(self.base_url, resp)
        return resp


def read_logprobs(data: dict[str, Any], request: ChoiceRequest) -> dict[str, float] | None:
    """Each option's probability mass at the token where the options part, read from a chat
    completion's `logprobs` (OpenAI's shape: `choices[0].logprobs.content[]`, each with
    `token`, `logprob` and `top_logprobs`); None where they cannot tell the options apart.

    The reply's tokens are laid end to end; the value of `{"FIELD": VALUE}` starts where the
    last such key ends, and the options part where their spellings first differ (after the
    opening quote of string values). At the token that covers that point, each token of the
    top list (and the one taken) is matched to the options by its text: a token that fits
    one option only adds its probability to that option. A token that fits several (values
    that begin alike, like 1 and 10), one whose text is unreadable (a piece of a character)
    where an option goes on with other than ASCII, or an option that no token fits (not in
    the top list), and the reading is given up."""
    try:
        content = data["choices"][0]["logprobs"]["content"]
        pieces = [str(item["token"]) for item in content]
    except (KeyError, IndexError, TypeError):
        return None
    if not pieces:
        return None
    text = "".join(pieces)
    key = re.compile(
        r"\{\s*" + re.escape(json.dumps(request.field, ensure_ascii=False)) + r"\s*:\s*"
    )
    found = list(key.finditer(text))
    if not found:
        return None
    spelled = [json.dumps(o, ensure_ascii=False) for o in request.options]
    shared = len(_common_start(spelled))
    point = found[-1].end() + shared
    if text[found[-1].end() : point] != spelled[0][:shared]:
        return None
    ends = list(itertools.accumulate(len(piece) for piece in pieces))
    i = bisect.bisect_right(ends, point)  # the token whose text covers the point
    if i >= len(pieces):
        return None
    at = ends[i] - len(pieces[i])
    before = text[at:point]  # what the token at the point spells before it
    rests = [s[shared:] for s in spelled]
    ascii_only = all(rest.isascii() for rest in rests)
    item = content[i]
    alternatives = {str(item["token"]): float(item["logprob"])}
    for alt in item.get("top_logprobs") or ():
        alternatives.setdefault(str(alt["token"]), float(alt["logprob"]))
    mass = dict.fromkeys((str(o) for o in request.options), 0.0)
    for token, logprob in alternatives.items():
        if not token or "\ufffd" in token:
            if ascii_only:
                continue  # a piece of a character begins no option here
            return None
        if not token.startswith(before):
            continue
        after = token[len(before) :]
        fits = [
            str(o)
            for o, rest in zip(request.options, rests, strict=True)
            if (rest + "}").startswith(after) or after.startswith(rest)
        ]
        if len(fits) > 1:
            return None
        if fits and math.isfinite(logprob):
            mass[fits[0]] += math.exp(logprob)
    if any(m <= 0 for m in mass.values()):
        return None
    return mass


def _common_start(texts: list[str]) -> str:
    return os.path.commonprefix(texts)


class _Reply:
    """A reply as its chunks arrive: streamed as written, a separate reasoning field marked as
    a think block; told apart, and kept within its budgets. One chunk is one token (llama.cpp
    streams so; elsewhere a chunk may hold more)."""

    def __init__(self, request: ChatRequest, on_text: OnText | None, start: float) -> None:
        self.splitter = Splitter()
        self.on_text = on_text
        self.think_budget = request.think_budget
        self.max_tokens = request.sampling.max_tokens
        self.start = start
        self.finish: FinishReason = "stop"
        self.pieces = self.thought = self.answered = 0
        self.ttft = 0.0
        self._field = False  # inside reasoning that came in its own field

    def take(self, choices: Iterable[dict[str, Any]]) -> bool:
        """Take one event's choices; True once the reply is to end here."""
        for choice in choices:
            delta = choice.get("delta") or choice.get("message") or {}
            if choice.get("finish_reason") == "length":
                self.finish = "length"
            thought = delta.get("reasoning_content") or delta.get("reasoning") or ""
            said = delta.get("content") or ""
            if thought and self._piece(("" if self._field else OPEN) + thought, field=True):
                return True
            if said and self._piece((CLOSE if self._field else "") + said, field=False):
                return True
        return False

    def _piece(self, piece: str, *, field: bool) -> bool:
        self._field = field
        self.pieces += 1
        self.ttft = self.ttft or time.perf_counter() - self.start
        kinds = {kind for kind, _ in self.splitter.feed(piece)}
        self.thought += "reasoning" in kinds
        self.answered += "answer" in kinds
        if self.on_text and self.on_text(piece):
            return True
        if self.think_budget and self.thought > self.think_budget and self.splitter.thinking:
            self.finish = "length"  # the reasoning spent its budget: no answer is coming
            return True
        if self.think_budget is not None and self.answered >= self.max_tokens:
            self.finish = "length"  # the answer's own budget: the server's covers both
            return True
        return False

    def done(self) -> Splitter:
        self.splitter.finish()
        return self.splitter


def _as_event(data: Any) -> dict[str, Any]:
    """A whole (unstreamed) chat completion, read as the one event of a stream."""
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    return data


def _qwen_like(name: str) -> bool:
    """Qwen3 and QwQ take `/no_think` in the user's message as their own switch."""
    return any(family in name.lower() for family in ("qwen3", "qwq"))


class _Rejected(Exception):
    """The server refused a structured-output dialect; `error` says how."""

    def __init__(self, error: RemoteError) -> None:
        super().__init__(error.message)
        self.error = error


def _transport_error(url: str, exc: httpx.HTTPError) -> RemoteError:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return RemoteError(key="inference.remote.did_not_answer_time", url=url, exc=exc)
    return RemoteError(key="inference.remote.cannot_reach", url=url, exc=exc)


def _status_error(url: str, resp: httpx.Response) -> RemoteError:
    return RemoteError(
        key="inference.remote.answered_http",
        url=url,
        status_code=resp.status_code,
        resp=_server_message(resp),
    )


def _server_message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:500]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if error or data.get("detail"):
            return json.dumps(error or data.get("detail"))[:500]
    return json.dumps(data)[:500]
