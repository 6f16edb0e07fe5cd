"""OpenAICompatModel against a real llama.cpp server on 127.0.0.1, and a scripted one."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel, Field
from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

from moot.errors import ModelNotFoundError, RemoteError
from moot.inference import remote
from moot.inference.protocol import ChatRequest, Sampling, chat_structured, messages
from moot.inference.remote import (
    OpenAICompatModel,
    request_body,
    response_format,
    split_ref,
    sse_events,
)
from moot.models import store


class Verdict(BaseModel):
    winner: str = Field(max_length=20)
    margin: int = Field(ge=1, le=5)


class Winner(BaseModel):
    # What llama-cpp-python's server can enforce: it ignores number ranges (measured: a
    # margin of 301 out of 5), so those are left to pydantic and the re-ask.
    winner: Literal["proposition", "opposition"]
    reason: str = Field(max_length=60)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `python -m llama_cpp.server` serving SmolLM2; yields its base URL."""
    try:
        path = store.resolve("smollm2-135m").path
    except ModelNotFoundError as exc:
        pytest.fail(f"smollm2-135m is not installed ({exc.message}): run `make install`")
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(path)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]
    # A file, not a pipe: the server logs a lot, and a full pipe would block it.
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(proc, url, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_until_up(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = log.read_text(errors="replace")[-2000:]
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{err}")
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama_cpp.server did not answer on {url} within 120 s")


def ask(text: str, **sampling: object) -> ChatRequest:
    return ChatRequest(
        messages=messages(("system", "You are a debater."), ("user", text)),
        sampling=Sampling(seed=4, max_tokens=sampling.pop("max_tokens", 32), **sampling),  # type: ignore[arg-type]
    )


@pytest.mark.real
def test_the_only_model_is_discovered(server: str) -> None:
    model = OpenAICompatModel(server)
    assert model.model_name.endswith(".gguf")
    assert model.model_id == f"{server}#{model.model_name}"


@pytest.mark.real
def test_plain_reply(server: str) -> None:
    completion = OpenAICompatModel(server).chat(ask("Why should we debate?"))
    assert completion.text.strip()
    assert completion.completion_tokens > 0
    assert completion.finish_reason in ("stop", "length")


@pytest.mark.real
def test_streamed_reply(server: str) -> None:
    pieces: list[str] = []
    completion = OpenAICompatModel(server).chat(ask("Defend the motion."), on_text=pieces.append)
    assert len(pieces) > 3
    assert "".join(pieces) == completion.text
    assert 0 < completion.ttft_ms <= completion.duration_ms


@pytest.mark.real
def test_constrained_json_reply(server: str) -> None:
    model = OpenAICompatModel(server)
    request = ask("Who won, proposition or opposition? Say why.", max_tokens=64)
    verdict, _ = chat_structured(model, request, Winner)
    assert verdict.winner in ("proposition", "opposition")
    # llama-cpp-python's server refuses OpenAI's json_schema; the model learnt its dialect.
    assert remote._learned[server] == "json_object"


@pytest.mark.real
def test_a_server_that_is_down_is_named_with_a_hint() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(RemoteError) as caught:
        OpenAICompatModel(url)
    assert url in caught.value.message
    assert "is the server running?" in caught.value.hint
    assert "llama_cpp.server" in caught.value.hint
    with pytest.raises(RemoteError, match="cannot reach"):
        OpenAICompatModel(url, "named").chat(ask("Hello"))


def test_several_models_must_be_named(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/models").respond_with_json(
        {"data": [{"id": "qwen-7b"}, {"id": "llama-8b"}]}
    )
    url = httpserver.url_for("/v1")
    with pytest.raises(RemoteError, match="qwen-7b, llama-8b") as caught:
        OpenAICompatModel(url)
    assert f"{url}#qwen-7b" in caught.value.hint


def test_an_http_error_carries_status_and_message(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": "model is overloaded"}}, status=503
    )
    model = OpenAICompatModel(httpserver.url_for("/v1"), "m")
    with pytest.raises(RemoteError, match="HTTP 503: model is overloaded"):
        model.chat(ask("Hello"))


def sse(*events: dict[str, object]) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def test_an_openai_style_server_gets_json_schema_and_usage(httpserver: HTTPServer) -> None:
    seen: list[dict[str, object]] = []

    def handler(req: Request) -> Response:
        seen.append(json.loads(req.get_data()))
        body = sse(
            {"choices": [{"delta": {"content": '{"winner": "prop", '}}]},
            {"choices": [{"delta": {"content": '"margin": 3}'}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9}},
        )
        return Response(body, content_type="text/event-stream")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    model = OpenAICompatModel(httpserver.url_for("/v1"), "gpt")
    verdict, completion = chat_structured(model, ask("Verdict?"), Verdict)
    assert verdict == Verdict(winner="prop", margin=3)
    assert (completion.prompt_tokens, completion.completion_tokens) == (50, 9)
    assert seen[0]["response_format"]["type"] == "json_schema"  # type: ignore[index]
    assert remote._learned[httpserver.url_for("/v1").rstrip("/")] == "json_schema"


def test_request_body_maps_the_sampling() -> None:
    request = ask("Hi", temperature=0.2, top_p=0.8, max_tokens=99, stop=("\n\n",))
    body = request_body(request, model="m", dialect=None)
    assert body["model"] == "m"
    assert body["messages"][0] == {"role": "system", "content": "You are a debater."}
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.8, 99)
    assert (body["seed"], body["stop"], body["stream"]) == (4, ["\n\n"], True)
    assert body["stream_options"] == {"include_usage": True}
    assert "response_format" not in body
    unseeded = ChatRequest(messages=messages(("user", "x")), sampling=Sampling())
    assert "seed" not in request_body(unseeded, model="m", dialect=None)


def test_response_format_dialects() -> None:
    openai = response_format(Verdict, "json_schema")
    assert openai["json_schema"]["name"] == "Verdict"
    assert openai["json_schema"]["schema"]["properties"]["margin"]["maximum"] == 5
    llama = response_format(Verdict, "json_object")
    assert llama == {"type": "json_object", "schema": Verdict.model_json_schema()}


def test_sse_events_and_ref_splitting() -> None:
    lines = ["", ": comment", 'data: {"a": 1}', "", "data:[DONE]", 'data: {"b": 2}']
    assert list(sse_events(iter(lines))) == [{"a": 1}]
    assert split_ref("http://h:8000/v1/#qwen") == ("http://h:8000/v1", "qwen")
    assert split_ref("http://h:8000/v1") == ("http://h:8000/v1", None)


# -- reasoning ------------------------------------------------------------------------------


def test_request_body_gives_the_think_budget_room_and_asks_thinking_off() -> None:
    thinking = ask("Speak.", max_tokens=100).model_copy(update={"think_budget": 300})
    body = request_body(thinking, model="m", dialect=None)
    assert body["max_tokens"] == 400 and "chat_template_kwargs" not in body
    off = ask("Speak.", max_tokens=100).model_copy(update={"think_budget": 0})
    body = request_body(off, model="m", dialect=None)
    assert body["max_tokens"] == 100
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["messages"][-1]["content"] == "Speak."
    switched = request_body(off, model="m", dialect=None, soft_switch=True)
    assert switched["messages"][-1]["content"] == "Speak.\n/no_think"
    assert switched["messages"][0]["content"] == "You are a debater."
    assert request_body(ask("Speak."), model="m", dialect=None)["max_tokens"] == 32


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_in_a_field_of_its_own_is_kept_apart_from_the_answer(
    httpserver: HTTPServer, field: str
) -> None:
    body = sse(
        {"choices": [{"delta": {field: "I plan "}}]},
        {"choices": [{"delta": {field: "quietly."}}]},
        {"choices": [{"delta": {"content": "Cars "}}]},
        {"choices": [{"delta": {"content": "pollute."}, "finish_reason": "stop"}]},
    )
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        body, content_type="text/event-stream"
    )
    pieces: list[str] = []
    completion = OpenAICompatModel(httpserver.url_for("/v1"), "m").chat(
        ask("Speak."), on_text=pieces.append
    )
    assert (completion.text, completion.reasoning) == ("Cars pollute.", "I plan quietly.")
    assert "".join(pieces) == "<think>I plan quietly.</think>Cars pollute."


def test_a_think_block_in_the_content_and_an_unstreamed_reply_are_split_too(
    httpserver: HTTPServer,
) -> None:
    whole = {
        "choices": [{"message": {"content": "<think>Plan.</think>\n\nCars pollute."}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7},
    }
    httpserver.expect_request("/v1/chat/completions").respond_with_json(whole)
    completion = OpenAICompatModel(httpserver.url_for("/v1"), "m").chat(ask("Speak."))
    assert (completion.text, completion.reasoning) == ("Cars pollute.", "Plan.")
    assert completion.completion_tokens == 7
