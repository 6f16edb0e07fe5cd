"""Models of real shapes without their weights: GGUF files llama.cpp runs at a real model's cost.

llama.cpp's speed and memory follow a model's shape (layers, widths, heads, vocabulary), not
its weights. `write` makes a GGUF with the shape of a real model (Qwen2.5-1.5B, Llama-3.2-3B,
Llama-3.1-8B; grouped-query attention as in the originals), every matrix Q4_0 blocks of random
nibbles under one fixed scale, norms of ones, and a real tokenizer and chat template copied
from an installed model (SmolLM2-135M's, its vocabulary padded with made-up words to the
shape's size). Its words are random tokens, so moot's rules redraw and cut them: price the
work done, never the words. `cached` keeps each file between runs, keyed by its shape.

Left out: Llama 3.1's long-context RoPE scaling (its `rope_freqs` factors), which changes no
cost at the contexts a debate reaches; real Q4_0 files often keep the output matrix in Q6_K.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

KiB = 1 << 10
TOKENIZER_MODEL = "smollm2-135m"  # whose tokenizer and chat template the files carry
SCALE = 0.004  # every Q4_0 block's f16 scale: weights in [-0.032, 0.028]
SEED = 0
WRITER_VERSION = 1  # part of the cache key: a change to what `write` puts in a file
Q4_0_BLOCK, Q4_0_BYTES = 32, 18  # elements per block, bytes per block (f16 scale + 16 bytes)
F16 = 2


@dataclass(frozen=True)
class Shape:
    """What llama.cpp's costs depend on; figures from each model's config.json."""

    name: str
    arch: str  # the GGUF architecture: "llama" or "qwen2" (biases on Q, K and V)
    layers: int
    embedding: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    context: int  # trained context
    rope_base: float
    norm_eps: float
    tied: bool  # the output matrix is the token embedding's

    @property
    def head_dim(self) -> int:
        return self.embedding // self.heads

    @property
    def kv_per_token(self) -> int:
        """Bytes of K and V one position takes in an f16 cache, all layers."""
        return self.layers * self.kv_heads * self.head_dim * 2 * F16

    def key(self, tokenizer: Path) -> str:
        """What names this file in the cache: the shape, the tokenizer's file, the writer."""
        stat = tokenizer.stat()
        text = json.dumps(
            [asdict(self), tokenizer.name, stat.st_size, SEED, SCALE, WRITER_VERSION],
            sort_keys=True,
        )
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def matrices(self) -> Iterator[tuple[str, tuple[int, int]]]:
        """Every Q4_0 matrix, named as llama.cpp loads it, with its (rows, columns): a row is
        one output's weights over the inputs (numpy's order; GGUF lists the reverse)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        yield "token_embd.weight", (self.vocab, self.embedding)
        if not self.tied:
            yield "output.weight", (self.vocab, self.embedding)
        for i in range(self.layers):
            yield f"blk.{i}.attn_q.weight", (q, self.embedding)
            yield f"blk.{i}.attn_k.weight", (kv, self.embedding)
            yield f"blk.{i}.attn_v.weight", (kv, self.embedding)
            yield f"blk.{i}.attn_output.weight", (self.embedding, q)
            yield f"blk.{i}.ffn_gate.weight", (self.ffn, self.embedding)
            yield f"blk.{i}.ffn_up.weight", (self.ffn, self.embedding)
            yield f"blk.{i}.ffn_down.weight", (self.embedding, self.ffn)

    def vectors(self) -> Iterator[tuple[str, int, float]]:
        """Every F32 vector: (name, length, the value it holds throughout)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        yield "output_norm.weight", self.embedding, 1.0
        for i in range(self.layers):
            yield f"blk.{i}.attn_norm.weight", self.embedding, 1.0
            yield f"blk.{i}.ffn_norm.weight", self.embedding, 1.0
            if self.arch == "qwen2":
                yield f"blk.{i}.attn_q.bias", q, 0.0
                yield f"blk.{i}.attn_k.bias", kv, 0.0
                yield f"blk.{i}.attn_v.bias", kv, 0.0

    @property
    def weight_bytes(self) -> int:
        """The tensors' bytes: about the file's size (its header and tokenizer aside)."""
        quant = sum(r * c // Q4_0_BLOCK * Q4_0_BYTES for _, (r, c) in self.matrices())
        return quant + sum(4 * n for _, n, _ in self.vectors())


SHAPES: dict[str, Shape] = {
    # Qwen/Qwen2.5-1.5B-Instruct: 12 heads sharing 2 KV heads of 128, tied embeddings.
    "qwen2.5-1.5b": Shape(
        name="qwen2.5-1.5b",
        arch="qwen2",
        layers=28,
        embedding=1536,
        heads=12,
        kv_heads=2,
        ffn=8960,
        vocab=151936,
        context=32768,
        rope_base=1_000_000.0,
        norm_eps=1e-6,
        tied=True,
    ),
    # meta-llama/Llama-3.2-3B-Instruct: 24 heads sharing 8 KV heads of 128, tied embeddings.
    "llama-3.2-3b": Shape(
        name="llama-3.2-3b",
        arch="llama",
        layers=28,
        embedding=3072,
        heads=24,
        kv_heads=8,
        ffn=8192,
        vocab=128256,
        context=131072,
        rope_base=500_000.0,
        norm_eps=1e-5,
        tied=True,
    ),
    # meta-llama/Llama-3.1-8B-Instruct: 32 heads sharing 8 KV heads of 128, its own output.
    "llama-3.1-8b": Shape(
        name="llama-3.1-8b",
        arch="llama",
        layers=32,
        embedding=4096,
        heads=32,
        kv_heads=8,
        ffn=14336,
        vocab=128256,
        context=131072,
        rope_base=500_000.0,
        norm_eps=1e-5,
        tied=False,
    ),
}

# HuggingFaceTB/SmolLM2-135M-Instruct, the tiny model moot's other figures come from: 9 heads
# sharing 3 KV heads of 64. Not written (it is installed); here to compare with.
SMOLLM2_135M = Shape(
    name="smollm2-135m",
    arch="llama",
    layers=30,
    embedding=576,
    heads=9,
    kv_heads=3,
    ffn=1536,
    vocab=49152,
    context=8192,
    rope_base=100_000.0,
    norm_eps=1e-5,
    tied=True,
)


def small(shape: Shape, *, vocab: int) -> Shape:
    """SHAPE's architecture and head grouping (query heads per KV head) at a size a test
    writes and runs in seconds: two layers, two KV heads of 32, a vocabulary of VOCAB (the
    tokenizer's own)."""
    group = shape.heads // shape.kv_heads
    kv_heads = 2
    return replace(
        shape,
        name=f"{shape.name}-small",
        layers=2,
        heads=kv_heads * group,
        kv_heads=kv_heads,
        embedding=kv_heads * group * 32,
        ffn=512,
        vocab=vocab,
        context=8192,
    )


# -- the file ----------------------------------------------------------------------------


def tokenizer_file() -> Path:
    """The installed model whose tokenizer the files carry (`make install` puts it there)."""
    from moot.models import resolve

    return resolve(TOKENIZER_MODEL).path


def cache_dir() -> Path:
    """Where written files are kept between runs: $MOOT_SHAPES_CACHE, else the user's cache."""
    where = os.environ.get("MOOT_SHAPES_CACHE")
    if where:
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "moot" / "shapes"


def cached(shape: Shape, *, folder: Path | None = None, tokenizer: Path | None = None) -> Path:
    """SHAPE's file in the cache, written first when it is not there."""
    source = tokenizer or tokenizer_file()
    folder = folder or cache_dir()
    path = folder / f"{shape.name}-q4_0-{shape.key(source)}.gguf"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        print(
            f"shapes: writing {shape.name} ({shape.weight_bytes / 2**30:.2f} GiB)", file=sys.stderr
        )
        fd, partial = tempfile.mkstemp(suffix=".partial", dir=folder)
        os.close(fd)
        try:
            write(shape, Path(partial), tokenizer=source)
            os.chmod(partial, 0o644)  # mkstemp's file is the owner's alone
            os.replace(partial, path)  # a run cut short leaves no half file under the name
        finally:
            Path(partial).unlink(missing_ok=True)
    return path


def write(shape: Shape, path: Path, *, tokenizer: Path) -> Path:
    """SHAPE as a GGUF at PATH: random Q4_0 weights, TOKENIZER's vocabulary and template."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFWriter

    tokens, types, rest = _tokenizer(tokenizer)
    if shape.vocab < len(tokens):
        raise ValueError(
            f"{shape.name}: a vocabulary of {shape.vocab} is smaller than the "
            f"tokenizer's {len(tokens)}"
        )
    padding = _padding(shape.vocab - len(tokens), set(tokens))
    writer = GGUFWriter(path, shape.arch)
    writer.add_name(f"{shape.name} shape, random weights")
    writer.add_file_type(2)  # mostly Q4_0
    writer.add_quantization_version(2)
    writer.add_context_length(shape.context)
    writer.add_embedding_length(shape.embedding)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(shape.ffn)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_rope_freq_base(shape.rope_base)
    writer.add_rope_dimension_count(shape.head_dim)
    writer.add_layer_norm_rms_eps(shape.norm_eps)
    writer.add_vocab_size(shape.vocab)
    writer.add_token_list([*tokens, *padding])
    writer.add_token_types([*types, *[1] * len(padding)])  # 1: a normal token
    for key, (value, vtype, sub) in rest.items():
        writer.add_key_value(key, value, vtype, sub_type=sub)

    for name, (rows, cols) in shape.matrices():
        writer.add_tensor_info(
            name,
            (rows, cols // Q4_0_BLOCK * Q4_0_BYTES),
            np.dtype(np.uint8),
            rows * cols // Q4_0_BLOCK * Q4_0_BYTES,
            raw_dtype=GGMLQuantizationType.Q4_0,
        )
    for name, n, _ in shape.vectors():
        writer.add_tensor_info(name, (n,), np.dtype(np.float32), 4 * n)
    writer.write_header_to_file(path)
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    rng = np.random.default_rng(SEED)
    scale = np.frombuffer(np.float16(SCALE).tobytes(), dtype=np.uint8)
    for _, (rows, cols) in shape.matrices():
        blocks = rows * cols // Q4_0_BLOCK
        data = np.frombuffer(rng.bytes(blocks * Q4_0_BYTES), dtype=np.uint8).reshape(blocks, -1)
        data = data.copy()
        data[:, :2] = scale  # the nibbles stay random
        writer.write_tensor_data(data)
    for _, n, value in shape.vectors():
        writer.write_tensor_data(np.full(n, value, dtype=np.float32))
    writer.close()
    return path


def _tokenizer(source: Path) -> tuple[list[str], list[int], dict[str, tuple[Any, Any, Any]]]:
    """SOURCE's tokens, their types, and every other `tokenizer.*` key (chat template and
    merges included) as (value, type, element type)."""
    from gguf import GGUFReader, GGUFValueType

    reader = GGUFReader(source)
    tokens = list(reader.fields["tokenizer.ggml.tokens"].contents())
    types = [int(t) for t in reader.fields["tokenizer.ggml.token_type"].contents()]
    rest = {}
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer.") or key in (
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.token_type",
        ):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        rest[key] = (field.contents(), vtype, sub)
    return tokens, types, rest


def _padding(count: int, taken: set[str]) -> list[str]:
    """COUNT made-up words, each a token of its own after a space (`Ġ` in a byte-level
    vocabulary): what a padded vocabulary's extra rows decode to."""
    letters = "bcdfghjklmnpqrstvwxz"
    words: list[str] = []
    n = 0
    while len(words) < count:
        word, k = "", n
        while True:
            word = letters[k % len(letters)] + word
            k //= len(letters)
            if not k:
                break
        n += 1
        token = f"Ġ{word}a"
        if token not in taken:
            words.append(token)
    return words


if __name__ == "__main__":
    names = sys.argv[1:] or list(SHAPES)
    for name in names:
        print(cached(SHAPES[name]))
