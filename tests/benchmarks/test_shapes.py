"""The arithmetic of benchmarks/shapes.py: the real models' shapes, their KV cache a token as
moot's memory plan reads it from a header, and what a cached file is keyed by."""

from __future__ import annotations

from pathlib import Path

import pytest

import shapes
from gguf_samples import shape, write_gguf
from moot.models import gguf_check, memory

KiB = 1 << 10


def test_a_token_of_kv_cache_at_each_size() -> None:
    # layers × KV heads × head size × 2 (K and V) × 2 bytes (f16)
    assert shapes.SHAPES["llama-3.1-8b"].kv_per_token == 32 * 8 * 128 * 2 * 2 == 128 * KiB
    assert shapes.SHAPES["llama-3.2-3b"].kv_per_token == 112 * KiB
    assert shapes.SHAPES["qwen2.5-1.5b"].kv_per_token == 28 * KiB
    assert shapes.SMOLLM2_135M.kv_per_token == 30 * 3 * 64 * 2 * 2 == 23_040  # 22.5 KiB
    # What makes the sizes differ in kind: a token of the 8B's cache is 5.7 of SmolLM2's.
    assert shapes.SHAPES["llama-3.1-8b"].kv_per_token / shapes.SMOLLM2_135M.kv_per_token == (
        pytest.approx(5.69, abs=0.01)
    )


@pytest.mark.parametrize("name", [*shapes.SHAPES, "smollm2-135m"])
def test_moots_memory_plan_reads_the_same_figure_from_the_shapes_header(
    tmp_path: Path, name: str
) -> None:
    s = shapes.SHAPES.get(name, shapes.SMOLLM2_135M)
    header = write_gguf(
        tmp_path / f"{name}.gguf",
        arch=s.arch,
        extra=shape(
            s.arch, layers=s.layers, heads=s.heads, kv_heads=s.kv_heads, embedding=s.embedding
        ),
    )
    assert memory.kv_per_token(gguf_check.check(header)) == (s.kv_per_token, ())


@pytest.mark.parametrize(
    ("name", "billions"),
    # Each model card's parameter count (embeddings included; tied ones counted once).
    [("qwen2.5-1.5b", 1.54), ("llama-3.2-3b", 3.21), ("llama-3.1-8b", 8.03)],
)
def test_the_shapes_hold_as_many_weights_as_the_real_models(name: str, billions: float) -> None:
    s = shapes.SHAPES[name]
    params = sum(r * c for _, (r, c) in s.matrices()) + sum(n for _, n, _ in s.vectors())
    assert params / 1e9 == pytest.approx(billions, rel=0.01)
    # Q4_0: 18 bytes a block of 32, so 4.5 bits a weight; the norms and biases in f32.
    assert s.weight_bytes == pytest.approx(params * 4.5 / 8, rel=0.01)


def test_a_llama_shape_has_no_biases_and_a_tied_one_no_output_matrix() -> None:
    llama = shapes.SHAPES["llama-3.2-3b"]
    names = {n for n, _ in llama.matrices()} | {n for n, _, _ in llama.vectors()}
    assert "output.weight" not in names and not any(n.endswith(".bias") for n in names)
    assert "output.weight" in {n for n, _ in shapes.SHAPES["llama-3.1-8b"].matrices()}
    qwen = {n for n, _, _ in shapes.SHAPES["qwen2.5-1.5b"].vectors()}
    assert {"blk.27.attn_q.bias", "blk.27.attn_k.bias", "blk.27.attn_v.bias"} <= qwen
    # Every matrix row is whole Q4_0 blocks.
    for s in shapes.SHAPES.values():
        assert all(c % shapes.Q4_0_BLOCK == 0 for _, (_, c) in s.matrices())


def test_a_small_shape_keeps_the_architecture_and_the_head_grouping() -> None:
    for s in shapes.SHAPES.values():
        little = shapes.small(s, vocab=49152)
        assert little.arch == s.arch and little.layers == 2 and little.vocab == 49152
        assert little.heads // little.kv_heads == s.heads // s.kv_heads  # GQA as in the original
        assert little.embedding % shapes.Q4_0_BLOCK == 0 and little.weight_bytes < 16 << 20


def test_the_cache_key_follows_the_shape_and_the_tokenizer(tmp_path: Path) -> None:
    tokenizer = tmp_path / "tok.gguf"
    tokenizer.write_bytes(b"x" * 10)
    s = shapes.SHAPES["llama-3.2-3b"]
    key = s.key(tokenizer)
    assert key == s.key(tokenizer)
    assert key != shapes.SHAPES["llama-3.1-8b"].key(tokenizer)
    assert key != shapes.small(s, vocab=49152).key(tokenizer)
    tokenizer.write_bytes(b"x" * 11)
    assert key != s.key(tokenizer)


def test_the_padding_words_are_new_and_distinct() -> None:
    taken = {"Ġba", "Ġca"}
    words = shapes._padding(500, taken)
    assert len(words) == len(set(words)) == 500
    assert not taken & set(words) and all(w.startswith("Ġ") for w in words)


def test_the_8b_shape_is_refused_by_the_plan_where_it_does_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`moot run` on a file with the 8B shape's header, 1 GiB free: exit 2, with the figures."""
    from conftest import Cli
    from moot.models.free import Free

    s = shapes.SHAPES["llama-3.1-8b"]
    path = write_gguf(
        tmp_path / f"{s.name}.gguf",
        arch=s.arch,
        chat_template="{% for m in messages %}{{ m['content'] }}{% endfor %}",
        extra=shape(
            s.arch, layers=s.layers, heads=s.heads, kv_heads=s.kv_heads, embedding=s.embedding
        ),
    )
    monkeypatch.setattr(memory, "free_memory", lambda gpu=False: Free(ram=1 << 30))
    done = Cli()(
        "run", "Tea is better than coffee", "--model", str(path), "--n-ctx", "8192",
        "--no-save", "--yes", home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    # Its cache alone at 8,192 tokens is 1 GiB (128 KiB a token): more than is free.
    assert done.stderr.startswith("error: the debate's model needs "), done.stderr
    assert "at n_ctx 8192" in done.stderr and "1.0 GiB is free" in done.stderr
    assert "\nhint: " in done.stderr and "Traceback" not in done.stderr
