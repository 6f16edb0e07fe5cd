"""OpenAICompatModel: a model behind any OpenAI-compatible server (llama.cpp, vLLM, Ollama)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from moot.errors import CallTimeoutError, RemoteError
from moot.inference.protocol import (
    ChatRequest,
    Completion,
    FinishReason,
    OnText,
    check_not_degenerate,
)

if TYPE_CHECKING:
    import httpx  # imported where used: local debates never load the HTTP stack

Dialect = Literal["json_schema", "json_object"]
# OpenAI and vLLM take json_schema; llama-cpp-python's server rejects it and takes json_object.
DIALECTS: tuple[Dialect, ...] = ("json_schema", "json_object")
_START_HINT = (
    "is the server running? start it with e.g. "
    "`python -m llama_cpp.server --model MODEL.gguf --host 127.0.0.1 --port 8000`"
)
_learned: dict[str, Dialect] = {}  # base URL → the structured-output dialect it accepted
_learned_lock = threading.Lock()


def split_ref(ref: str) -> tuple[str, str | None]:
    """Split `http://HOST:PORT/v1#MODEL` into the base URL and the model name (or None)."""
    url, _, name = ref.partition("#")
    return url.rstrip("/"), name or None


def is_remote_ref(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def request_body(
    request: ChatRequest, *, model: str, dialect: Dialect | None, stream: bool = True
) -> dict[str, Any]:
    """The JSON body of a /chat/completions call for `request`."""
    s = request.sampling
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": s.temperature,
        "top_p": s.top_p,
        "max_tokens": s.max_tokens,
        "stream": stream,
    }
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
    spec = schema.model_json_schema()
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
            raise RemoteError(f"{self.base_url} serves no models", hint=_START_HINT)
        raise RemoteError(
            f"{self.base_url} serves several models: {', '.join(names)}",
            hint=f"name one: {self.base_url}#{names[0]}",
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

        body = request_body(request, model=self.model_name, dialect=dialect)
        parts: list[str] = []
        usage: dict[str, Any] = {}
        finish: FinishReason = "stop"
        ttft = 0.0
        with contextlib.closing(self._open_stream(body, probing=probing)) as resp:
            try:
                stopped = False
                for event in sse_events(resp.iter_lines()):
                    if request.timeout_s and time.perf_counter() - start > request.timeout_s:
                        raise CallTimeoutError(seconds=request.timeout_s, model=self.model_id)
                    usage = event.get("usage") or usage
                    for choice in event.get("choices") or ():
                        piece = (choice.get("delta") or {}).get("content") or ""
                        if piece:
                            ttft = ttft or time.perf_counter() - start
                            parts.append(piece)
                            if on_text and on_text(piece):
                                stopped = True
                                break
                        if choice.get("finish_reason") == "length":
                            finish = "length"
                    if stopped:
                        break  # asked to stop: the reply ends here, the stream is closed
            except httpx.HTTPError as exc:
                raise _transport_error(self.base_url, exc) from exc
            except ValueError as exc:
                raise RemoteError(
                    f"{self.base_url} sent a malformed event stream: {exc}",
                    hint="check that the URL points at an OpenAI-compatible /v1 endpoint",
                ) from exc
        return Completion(
            text="".join(parts),
            # Servers that ignore include_usage: one streamed chunk is one token on llama.cpp.
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or len(parts)),
            cached_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
            duration_ms=round((time.perf_counter() - start) * 1000),
            ttft_ms=round(ttft * 1000),
            finish_reason=finish,
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


class _Rejected(Exception):
    """The server refused a structured-output dialect; `error` says how."""

    def __init__(self, error: RemoteError) -> None:
        super().__init__(error.message)
        self.error = error


def _transport_error(url: str, exc: httpx.HTTPError) -> RemoteError:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return RemoteError(f"{url} did not answer in time ({exc})", hint="raise the timeout")
    return RemoteError(f"cannot reach {url}: {exc}", hint=_START_HINT)


def _status_error(url: str, resp: httpx.Response) -> RemoteError:
    return RemoteError(
        f"{url} answered HTTP {resp.status_code}: {_server_message(resp)}",
        hint="check the model name and the request limits the server allows",
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
