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

    from moot.debates.runner import setup_from_record

    out = tmp_path / "d"
    done = cli("run", "tea beats coffee", "--dry-run", "--one-model-at-a-time", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "transcript.json").read_text())
    assert data["params"]["one_model_at_a_time"] is True
    assert setup_from_record(data, out_dir=None).run.one_model_at_a_time is True


def _two_turns_apart(
    pool: pools.ModelPool,
) -> tuple[Completion, Completion, dict[Path, int]]:
    """SmolLM2's speaker, Gemma between, then SmolLM2's speaker again on a longer record;
    with the snapshot files spilled while Gemma spoke, and their sizes."""
    from moot.inference.protocol import Sampling

    record = " ".join(f"The proposition's point {i} is that tea is kinder." for i in range(40))

    def turn(text: str) -> ChatRequest:
        return ChatRequest(
            messages=messages(("system", "You debate."), ("user", text)),
            sampling=Sampling(temperature=0, seed=1, max_tokens=8),
            session="proposition",
        )

    smol, gemma = pool.get("smollm2-135m"), pool.get("gemma3-270m")
    first = smol.chat(turn(record))
    gemma.chat(turn("Coffee."))
    folder = pool._spill_dir.path if pool._spill_dir else None
    spilled = {p: p.stat().st_size for p in folder.glob("*.kv")} if folder else {}
    again = smol.chat(turn(record + " The opposition says coffee. Reply."))
    return first, again, spilled


@pytest.mark.real
def test_a_model_loaded_again_takes_back_its_speakers_snapshots_from_disk() -> None:
    """Unloading a model for another's turn keeps its speakers' KV snapshots on disk, so
    the speaker's next turn evaluates only what is new, and says what it would have said
    with both models kept loaded."""
    from moot.models import store

    apart = pools.ModelPool(resolve=store.resolve, n_ctx=2048, one_at_a_time=True)
    first, again, spilled = _two_turns_apart(apart)
    folder = apart._spill_dir.path if apart._spill_dir else None
    [(smol_file, size)] = spilled.items()
    assert size > 1_000_000  # SmolLM2's KV cache over its record
    assert not smol_file.exists()  # taken back and replaced by the new turn's, in memory
    assert folder is not None and len(list(folder.glob("*.kv"))) == 1  # Gemma's, now
    apart.close()
    assert not folder.exists()  # the folder goes with the pool
    assert first.cached_tokens == 0
    assert again.cached_tokens > 300, "the speaker started cold after its model was reloaded"

    with pools.ModelPool(resolve=store.resolve, n_ctx=2048) as together:
        _, kept_loaded, _ = _two_turns_apart(together)
    assert again.text == kept_loaded.text
    assert again.cached_tokens == kept_loaded.cached_tokens
