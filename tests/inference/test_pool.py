"""ModelPool with the real tiny models: lazy loading, sharing, two models at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from moot.errors import ModelNotFoundError
from moot.inference.llama import LlamaCppModel
from moot.inference.pool import ModelPool
from moot.inference.protocol import ChatRequest, Sampling, messages
from moot.inference.remote import OpenAICompatModel
from moot.models import store

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def pool() -> Iterator[ModelPool]:
    for model_id in ("smollm2-135m", "gemma3-270m"):
        try:
            store.resolve(model_id)
        except ModelNotFoundError as exc:
            pytest.fail(f"model {model_id} is not installed ({exc.message}): run `make install`")
    with ModelPool(resolve=store.resolve, n_ctx=1024) as models:
        yield models


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=messages(("user", text)), sampling=Sampling(max_tokens=24, seed=2))


def test_nothing_loads_until_asked_for() -> None:
    with ModelPool(resolve=store.resolve, n_ctx=256) as pool:
        assert pool.loaded == {}
        model = pool.get("smollm2-135m")
        assert isinstance(model, LlamaCppModel)
        assert list(pool.loaded.values()) == [model]
        assert pool.get("smollm2-135m") is model


def test_roles_naming_the_same_model_share_one_instance(pool: ModelPool) -> None:
    path = str(store.resolve("smollm2-135m").path)
    roles = pool.bind({"Proposition": "smollm2-135m", "Opposition": "smollm2-135m", "Chair": path})
    assert roles["Proposition"] is roles["Opposition"] is roles["Chair"]
    assert roles["Proposition"] is pool.get("smollm2-135m")


def test_two_models_serve_their_own_roles(pool: ModelPool) -> None:
    roles = pool.bind({"Proposition": "smollm2-135m", "Opposition": "gemma3-270m"})
    assert roles["Proposition"] is not roles["Opposition"]
    assert roles["Proposition"].model_id == "smollm2-135m"
    assert roles["Opposition"].model_id == "gemma3-270m"
    assert len(pool.loaded) == 2
    for role in ("Proposition", "Opposition", "Proposition"):
        assert roles[role].chat(ask("Say why debate matters.")).completion_tokens > 0


def test_a_url_becomes_a_remote_model_without_loading_anything_local() -> None:
    with ModelPool(resolve=store.resolve) as pool:
        model = pool.get("http://127.0.0.1:9/v1#some-model")  # a named model needs no request
        assert isinstance(model, OpenAICompatModel)
        assert model.model_id == "http://127.0.0.1:9/v1#some-model"
        assert pool.get("http://127.0.0.1:9/v1/#some-model") is model


def test_close_frees_every_model() -> None:
    pool = ModelPool(resolve=store.resolve, n_ctx=256)
    pool.get("smollm2-135m")
    pool.close()
    assert pool.loaded == {}
