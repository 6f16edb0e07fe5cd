"""What the speakers' KV snapshots of the seeded Oxford debate would take on a 7B-shaped model.

moot keeps one KV snapshot per speaker (its role), the latest, so that speaker's next turn
evaluates only what is new. The tokens those snapshots hold are read off the debate
bench_peer runs; the bytes a token takes come from a 7B model's GGUF header, written with
the tests' own GGUF writer and read by moot's memory plan (`moot.models.memory`), beside
the session cache budget a loaded model keeps them in and what the plan reserves for them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from bench_peer import MIN_SCORE, MODELS, ROUNDS, moot_debate, resolved_model  # noqa: E402
from gguf_samples import shape, write_gguf  # noqa: E402

MiB = 1 << 20
KiB = 1 << 10
# Each model's config.json on the Hugging Face hub: num_hidden_layers, num_attention_heads,
# num_key_value_heads, hidden_size, max_position_embeddings, vocab_size. Both are "llama" in
# GGUF. Mistral-7B-v0.1's attention (8 KV heads of 128) is also Llama-3-8B's.
SHAPES: dict[str, dict[str, int]] = {
    "llama-2-7b": {  # meta-llama/Llama-2-7b-hf
        "layers": 32,
        "heads": 32,
        "kv_heads": 32,
        "embedding": 4096,
        "context": 4096,
        "vocab": 32000,
    },
    "mistral-7b-v0.1": {  # mistralai/Mistral-7B-v0.1
        "layers": 32,
        "heads": 32,
        "kv_heads": 8,
        "embedding": 4096,
        "context": 32768,
        "vocab": 32000,
    },
}


def write_header(folder: Path, name: str) -> Path:
    """SHAPES[NAME] as a GGUF file with no tensors: the metadata llama.cpp sizes a cache by."""
    dims = SHAPES[name]
    return write_gguf(
        folder / f"{name}.gguf",
        arch="llama",
        name=name,
        context_length=dims["context"],
        tokens=tuple(f"t{i}" for i in range(dims["vocab"])),
        extra=shape(
            "llama",
            layers=dims["layers"],
            heads=dims["heads"],
            kv_heads=dims["kv_heads"],
            embedding=dims["embedding"],
        ),
    )


def kv_bytes_per_token(path: Path) -> int:
    """Bytes of K and V one position takes across all layers, as moot's plan reads the header
    (an f16 cache, llama.cpp's default)."""
    from moot.models import gguf_check, memory

    found = memory.shape_of(gguf_check.check(path))
    if not found.kv_known:
        raise ValueError(f"{path.name}: the header gives no KV shape ({'; '.join(found.notes)})")
    return found.kv_per_token


def peak_snapshot_tokens(turns: Iterable[Any]) -> int:
    """The most tokens the speakers' snapshots hold together at any point of the debate.

    After a turn its speaker's snapshot holds that turn's prompt and completion, replacing the
    speaker's earlier one; the peak is the largest sum of the latest snapshots after a turn."""
    held: dict[str, int] = {}
    peak = 0
    for turn in turns:
        held[turn.role] = turn.prompt_tokens + turn.completion_tokens
        peak = max(peak, sum(held.values()))
    return peak


def rulebook_n_ctx(trained: int | None) -> int:
    """The context moot gives the bench's debate when --n-ctx is not set: the Oxford rulebook's
    need at ROUNDS rounds, bounded by the model's TRAINED context (as moot's runner does)."""
    from moot.formats import get_format
    from moot.formats.base import RunOptions, context_need
    from moot.models import memory

    fmt = get_format("oxford")
    params = fmt.params(RunOptions(min_score=MIN_SCORE, max_rounds=ROUNDS))
    return memory.default_n_ctx(context_need(fmt, params, "en"), trained)


def session_cache_mb() -> int:
    """The snapshot budget a model moot loads keeps, in MiB (LlamaCppModel's default)."""
    from moot.config import SESSION_CACHE_MB

    return SESSION_CACHE_MB


def shape_figures(
    path: Path, *, peak_tokens: int, speakers: int, n_ctx: int, budget_mb: int
) -> dict[str, Any]:
    """One 7B shape's figures for one debate.

    `snapshots_peak_mb`: the peak tokens held times the KV bytes a token takes (the cache
    only); `within_budget`: whether that fits the session cache budget, else the cache drops
    the least recently used snapshots; `memory_plan_snapshot_mb`: what moot's memory plan
    reserves for SPEAKERS snapshots, each a full N_CTX context and its last logits, and in
    all no more than the budget (as the runner plans a debate on one model)."""
    from moot.models import memory

    per_token = kv_bytes_per_token(path)
    peak = peak_tokens * per_token
    planned = memory.plan(
        [(path.stem, path)], n_ctx, snapshots=speakers, snapshot_budget=budget_mb * MiB
    )
    return {
        "kv_kib_per_token": per_token / KiB,
        "snapshots_peak_mb": round(peak / MiB, 1),
        "session_cache_mb": budget_mb,
        "within_budget": peak <= budget_mb * MiB,
        "memory_plan_snapshot_mb": round(planned.snapshot_total / MiB, 1),
    }


def run(results: dict[str, Any]) -> None:
    """Per model of bench_peer: the debate's snapshot tokens, and each 7B shape's figures."""
    table: dict[str, Any] = results.setdefault("memory", {})
    budget = session_cache_mb()
    with tempfile.TemporaryDirectory() as tmp:
        headers = {name: write_header(Path(tmp), name) for name in SHAPES}
        for model_id in MODELS:
            turns = moot_debate(model_id).turns
            peak = peak_snapshot_tokens(turns)
            speakers = len({t.role for t in turns})
            n_ctx = rulebook_n_ctx(resolved_model(model_id).context_length)
            figures: dict[str, Any] = {
                "n_ctx": n_ctx,
                "speakers": speakers,
                "peak_snapshot_tokens": peak,
            }
            for name, path in headers.items():
                figures[name] = shape_figures(
                    path, peak_tokens=peak, speakers=speakers, n_ctx=n_ctx, budget_mb=budget
                )
            table[model_id] = figures


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
