"""OpenAICompatModel: a model behind any OpenAI-compatible server (llama.cpp, vLLM, Ollama)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from moot.errors import CallTimeoutError, RemoteError
from moot.inference.protocol import (
    ChatRequest,
    Completion,
    FinishReason,
    OnText,
    check_not_degenerate,
    reply_json_schema,
)
from moot.inference.reasoning import CLOSE, OPEN, Splitter, with_soft_switch

if TYPE_CHECKING:
    import httpx  # imported where used: local debates never load the HTTP stack

Dialect = Literal["json_schema", "json_object"]
# OpenAI and vLLM take json_schema; llama-cpp-python's server rejects it and takes json_object.
DIALECTS: tuple[Dialect, ...] = ("json_schema", "json_object")
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
        body["response_format"] = response_format(request.reply_schema, dialect or DIALECTS[0])
    return body


def response_format(schema: type[BaseModel], dialect: Dialect) -> dict[str, Any]:
    """Ask for JSON valid against `schema` in the server's dialect."""
    spec = reply_json_schema(schema)
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
        error.hint = "the server took neither json_schema nor json_object response formats"
        raise error

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
