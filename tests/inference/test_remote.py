"""OpenAICompatModel against a real llama.cpp server on 127.0.0.1, and a scripted one."""

from __future__ import annotations

import json
import math
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
from moot.inference.choice import ChoiceRequest, choose
from moot.inference.protocol import ChatRequest, Sampling, chat_structured, messages
from moot.inference.remote import (
    OpenAICompatModel,
    read_logprobs,
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


# -- reading a decision's probabilities from the server's logprobs ------------------------


def choice_of(text: str, field: str, options: tuple[str | int, ...]) -> ChoiceRequest:
    return ChoiceRequest(
        messages=messages(("user", text)), field=field, options=options, samples=3, seed=2
    )


@pytest.mark.real
def test_a_servers_logprobs_give_the_decision(server: str) -> None:
    model = OpenAICompatModel(server)
    said = choose(model, choice_of('Reply yes. Answer with {"answer": "yes"}.', "answer", YES_NO))
    assert said.method == "logprobs" and said.samples == 0
    assert sum(said.probabilities.values()) == pytest.approx(1.0)
    assert said.p("yes") > 0.5 and 0 < said.p("no") < 0.5
    assert said.prompt_tokens > 0
    digits = choose(model, choice_of("Give the number seven.", "score", tuple(range(10))))
    assert digits.method == "logprobs" and digits.best() == "7"


@pytest.mark.real
def test_values_a_first_token_cannot_tell_apart_are_sampled(server: str) -> None:
    # "1" and "10" begin with the same token: the first value token cannot tell them apart.
    said = choose(OpenAICompatModel(server), choice_of("A number?", "score", tuple(range(11))))
    assert said.method == "samples" and said.samples == 3
    assert sum(said.probabilities.values()) == pytest.approx(1.0)


YES_NO = ("yes", "no")


def logprobs_reply(*tokens: tuple[str, float, dict[str, float]]) -> dict[str, object]:
    content = "".join(t for t, _, _ in tokens)
    return {
        "choices": [
            {
                "message": {"role": "assistant", "content": content},
                "logprobs": {
                    "content": [
                        {
                            "token": t,
                            "logprob": lp,
                            "top_logprobs": [{"token": k, "logprob": v} for k, v in top.items()],
                        }
                        for t, lp, top in tokens
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 31, "completion_tokens": len(tokens)},
    }


def test_the_token_where_the_options_part_is_read(httpserver: HTTPServer) -> None:
    seen: list[dict[str, object]] = []

    def handler(req: Request) -> Response:
        seen.append(json.loads(req.get_data()))
        reply = logprobs_reply(
            ('{"', -0.1, {}),
            ("answer", -0.1, {}),
            ('":', -0.1, {}),
            (' "', -0.1, {}),  # the opening quote, merged with the space: shared by both
            ("yes", math.log(0.6), {"yes": math.log(0.6), "no": math.log(0.2), "Yes": -2.0}),
            ('"}', -0.1, {}),
        )
        return Response(json.dumps(reply), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    said = choose(
        OpenAICompatModel(httpserver.url_for("/v1"), "m"), choice_of("?", "answer", YES_NO)
    )
    assert said.method == "logprobs"
    assert said.probabilities == pytest.approx({"yes": 0.75, "no": 0.25})
    assert said.prompt_tokens == 31
    body = seen[0]
    assert (body["logprobs"], body["top_logprobs"], body["stream"]) == (True, 20, False)
    assert body["temperature"] == 0.0 and "response_format" in body


def test_a_server_without_logprobs_is_sampled_and_says_so(httpserver: HTTPServer) -> None:
    asked: list[dict[str, object]] = []

    def handler(req: Request) -> Response:
        body = json.loads(req.get_data())
        asked.append(body)
        if not body["stream"]:  # the logprobs request: answered without any, as Ollama's was
            reply = {"choices": [{"message": {"content": '{"answer": "no"}'}}]}
            return Response(json.dumps(reply), content_type="application/json")
        said = '{"answer": "yes"}' if len(asked) % 2 else '{"answer": "no"}'
        return Response(
            sse({"choices": [{"delta": {"content": said}, "finish_reason": "stop"}]}),
            content_type="text/event-stream",
        )

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    said = choose(
        OpenAICompatModel(httpserver.url_for("/v1"), "m"), choice_of("?", "answer", YES_NO)
    )
    assert said.method == "samples" and said.samples == 3
    assert said.probabilities == pytest.approx({"yes": 1 / 3, "no": 2 / 3})
    assert len(asked) == 4 and asked[0]["logprobs"] is True


def test_a_server_that_refuses_logprobs_is_sampled(httpserver: HTTPServer) -> None:
    def handler(req: Request) -> Response:
        if json.loads(req.get_data()).get("logprobs"):
            return Response(json.dumps({"error": {"message": "no logprobs"}}), status=400)
        return Response(
            sse({"choices": [{"delta": {"content": '{"answer": "yes"}'}}]}),
            content_type="text/event-stream",
        )

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    said = choose(
        OpenAICompatModel(httpserver.url_for("/v1"), "m"), choice_of("?", "answer", YES_NO)
    )
    assert said.method == "samples" and said.p("yes") == 1.0


def reading(options: tuple[str | int, ...], *tokens: tuple[str, float, dict[str, float]]) -> object:
    return read_logprobs(logprobs_reply(*tokens), choice_of("?", "v", options))


def test_what_a_top_list_cannot_tell_apart_is_not_read() -> None:
    head: list[tuple[str, float, dict[str, float]]] = [('{"v"', -0.1, {}), (": ", -0.1, {})]
    # 1 and 10 begin with the token "1".
    assert reading((1, 10), *head, ("1", -0.5, {"1": -0.5, "2": -1.0}), ("}", -0.1, {})) is None
    # An option the top list leaves out.
    assert reading((1, 2, 3), *head, ("1", -0.5, {"1": -0.5, "2": -1.0}), ("}", -0.1, {})) is None
    # Read where each option has a token of its own; a token that fits none is left out.
    got = reading((1, 2), *head, ("1}", -0.5, {"1}": -0.5, "2": -0.5, "x": -0.1}))
    assert got == pytest.approx({"1": math.exp(-0.5), "2": math.exp(-0.5)})
    # A piece of a character is unreadable: it may begin a Chinese option.
    top = {"是": -0.5, "": -1.0, "否": -2.0}
    assert reading(("是", "否"), ('{"v": "', -0.1, {}), ("是", -0.5, top)) is None
    assert reading(("yes", "no"), ('{"v": "', -0.1, {}), ("yes", -0.5, {"": -1.0, "no": -2.0}))
    # No logprobs at all, or a reply without the key.
    assert (
        read_logprobs({"choices": [{"message": {"content": "{}"}}]}, choice_of("?", "v", (1, 2)))
        is None
    )
    assert reading((1, 2), ("hello", -0.1, {})) is None
