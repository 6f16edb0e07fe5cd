"""A speaker's KV snapshot spilled to disk on SmolLM2-135M: read back byte for byte, and the
turn after it evaluates no more of its prompt than with the snapshot kept in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.inference.llama import LlamaCppModel
from moot.inference.protocol import ChatRequest, Completion, Sampling, messages
from moot.models import store

pytestmark = pytest.mark.real

MOTION = "Argue, in two sentences, that cities should ban private cars."


def turns(model: LlamaCppModel) -> Completion:
    """The proposition speaks, the opposition speaks (another prompt: the live context is no
    longer the proposition's), then the proposition again on its own conversation."""
    sampling = Sampling(seed=3, max_tokens=24, temperature=0.0)
    first = ChatRequest(messages=messages(("user", MOTION)), sampling=sampling, session="prop")
    said = model.chat(first)
    other = ChatRequest(
        messages=messages(("user", "Name three colours, one word each.")),
        sampling=sampling,
        session="opp",
    )
    model.chat(other)
    reply = messages(("assistant", said.text))[0].model_copy(update={"generated": said.generated})
    again = ChatRequest(
        messages=(*first.messages, reply, *messages(("user", "Now answer the other side.")))[:3],
        sampling=sampling,
        session="prop",
    )
    return model.chat(again)


def test_a_spilled_snapshot_is_read_back_byte_for_byte_and_spares_as_much(
    tmp_path: Path,
) -> None:
    resolved = store.resolve("smollm2-135m")
    kept = LlamaCppModel(resolved, n_ctx=1024, snapshot_budget=1 << 30)
    try:
        in_memory = turns(kept)
        assert kept._sessions.spilled == 0
    finally:
        kept.close()
    folder = tmp_path / "kv"
    # No memory for snapshots at all: every one goes to disk as it is taken.
    spilling = LlamaCppModel(resolved, n_ctx=1024, snapshot_budget=0, spill_to=lambda: folder)
    try:
        on_disk = turns(spilling)
        cache = spilling._sessions
        assert cache.spilled >= 2 and cache.nbytes == 0 and cache.dropped == 0
        assert on_disk.cached_tokens > 0 and on_disk.text == in_memory.text
        # The turn after reading back evaluated no more than with the snapshot in memory.
        assert (
            on_disk.prompt_tokens - on_disk.cached_tokens
            <= in_memory.prompt_tokens - in_memory.cached_tokens
        )
        assert cache.costs.read_rate and cache.costs.eval_rate
        # Byte for byte: the state written, restored and taken again is the file's.
        snap, _ = cache.best(list(spilling.runtime.tokens))
        assert snap is not None and snap.path is not None
        written = snap.path.read_bytes()
        assert spilling.runtime.restore(snap)
        again = spilling.runtime.snapshot()
        assert bytes(again.state)[: again.nbytes] == written and len(written) == snap.nbytes
    finally:
        spilling.close()
    assert list(folder.iterdir()) == []  # closing removes its files
