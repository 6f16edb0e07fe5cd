"""--one-model-at-a-time: each model is loaded for its seat's turns and unloaded after, so a
debate of models that do not fit in memory together still runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.inference import pool as pools
from moot.inference.protocol import ChatRequest, Completion, ResolvedModel, messages


class Loaded:
    """A stand-in for a loaded llama.cpp model: counts loads and closes."""

    events: list[str] = []

    def __init__(self, resolved: ResolvedModel, **options: Any) -> None:
        self.resolved = resolved
        Loaded.events.append(f"load {resolved.id}")

    @property
    def model_id(self) -> str:
        return self.resolved.id

    def text_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, request: ChatRequest, *, on_text: Any = None) -> Completion:
        Loaded.events.append(f"chat {self.resolved.id}")
        return Completion(text="ok")

    def close(self) -> None:
        Loaded.events.append(f"close {self.resolved.id}")


def resolver(tmp_path: Path) -> Any:
    def resolve(ref: str) -> ResolvedModel:
        path = tmp_path / f"{ref}.gguf"
        path.touch()
        return ResolvedModel(id=ref, path=path, sha256=None, chat_format="chatml", context_length=8)

    return resolve


def test_each_model_is_loaded_for_its_turns_and_the_other_unloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pools, "LlamaCppModel", Loaded)
    Loaded.events = []
    pool = pools.ModelPool(resolve=resolver(tmp_path), one_at_a_time=True)
    a, b = pool.get("a"), pool.get("b")
    assert Loaded.events == [] and a.model_id == "a"  # nothing loads until a seat speaks
    ask = ChatRequest(messages=messages(("user", "x")))
    a.chat(ask)
    b.chat(ask)
    a.chat(ask)
    assert Loaded.events == [
        "load a", "chat a", "close a", "load b", "chat b", "close b", "load a", "chat a",
    ]  # fmt: skip
    assert list(pool.loaded) == [str((tmp_path / "a.gguf").resolve())]
    assert b.text_tokens("one two") == 2 and Loaded.events[-2:] == ["close a", "load b"]
    pool.close()
    assert Loaded.events[-1] == "close b" and pool.loaded == {}


def test_without_it_every_model_stays_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pools, "LlamaCppModel", Loaded)
    Loaded.events = []
    pool = pools.ModelPool(resolve=resolver(tmp_path))
    ask = ChatRequest(messages=messages(("user", "x")))
    pool.get("a").chat(ask)
    pool.get("b").chat(ask)
    assert "close a" not in Loaded.events and len(pool.loaded) == 2


def test_the_option_reaches_the_run_and_a_resumed_debate_keeps_it(tmp_path: Path, cli: Any) -> None:
    import json

    from moot.runner import setup_from_record

    out = tmp_path / "d"
    done = cli("run", "tea beats coffee", "--dry-run", "--one-model-at-a-time", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "transcript.json").read_text())
    assert data["params"]["one_model_at_a_time"] is True
    assert setup_from_record(data, out_dir=None).run.one_model_at_a_time is True
