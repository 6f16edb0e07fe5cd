"""Small, valid GGUF files written byte by byte, for tests that must not need a real model."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

STRING, ARRAY, UINT32, INT32, FLOAT32 = 8, 9, 4, 5, 6
F32 = 0  # ggml tensor type


def gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def kv(key: str, vtype: int, payload: bytes) -> bytes:
    return gguf_string(key) + struct.pack("<I", vtype) + payload


def u32(key: str, value: int) -> bytes:
    return kv(key, UINT32, struct.pack("<I", value))


def i32_array(key: str, values: Sequence[int]) -> bytes:
    return kv(
        key,
        ARRAY,
        struct.pack("<IQ", INT32, len(values)) + struct.pack(f"<{len(values)}i", *values),
    )


def shape(
    arch: str = "llama",
    *,
    layers: int | None = None,
    heads: int | Sequence[int] | None = None,
    kv_heads: int | Sequence[int] | None = None,
    embedding: int | None = None,
    key_length: int | None = None,
    value_length: int | None = None,
    sliding_window: int | None = None,
) -> tuple[bytes, ...]:
    """The metadata llama.cpp sizes a KV cache by; a sequence of heads is one count per layer."""
    keys = {
        "block_count": layers,
        "attention.head_count": heads,
        "attention.head_count_kv": kv_heads,
        "embedding_length": embedding,
        "attention.key_length": key_length,
        "attention.value_length": value_length,
        "attention.sliding_window": sliding_window,
    }
    return tuple(
        u32(f"{arch}.{key}", value) if isinstance(value, int) else i32_array(f"{arch}.{key}", value)
        for key, value in keys.items()
        if value is not None
    )


# A 7B Llama-like model's shape: 32 layers of 32 heads sharing 8 KV heads, head size 128.
LLAMA_7B = {"layers": 32, "heads": 32, "kv_heads": 8, "embedding": 4096}


def make_gguf(
    *,
    arch: str = "llama",
    name: str = "tiny test model",
    context_length: int = 2048,
    file_type: int = 15,
    chat_template: str | None = None,
    tokens: tuple[str, ...] = ("<s>", "</s>", "hello", "world"),
    tensor_floats: int = 0,
    version: int = 3,
    extra: Sequence[bytes] = (),
) -> bytes:
    """A GGUF with a few metadata keys (arrays included), EXTRA entries (`kv(…)`, `shape(…)`)
    and, optionally, one F32 tensor."""
    scores = [0.0] * len(tokens)
    kvs = [
        kv("general.architecture", STRING, gguf_string(arch)),
        kv("general.name", STRING, gguf_string(name)),
        kv(f"{arch}.context_length", UINT32, struct.pack("<I", context_length)),
        kv("general.file_type", UINT32, struct.pack("<I", file_type)),
        kv(
            "tokenizer.ggml.tokens",
            ARRAY,
            struct.pack("<IQ", STRING, len(tokens)) + b"".join(gguf_string(t) for t in tokens),
        ),
        kv(
            "tokenizer.ggml.scores",
            ARRAY,
            struct.pack("<IQ", FLOAT32, len(tokens)) + struct.pack(f"<{len(tokens)}f", *scores),
        ),
    ]
    if chat_template is not None:
        kvs.append(kv("tokenizer.chat_template", STRING, gguf_string(chat_template)))
    kvs.extend(extra)
    n_tensors = 1 if tensor_floats else 0
    out = b"GGUF" + struct.pack("<IQQ", version, n_tensors, len(kvs)) + b"".join(kvs)
    if tensor_floats:
        out += gguf_string("weight") + struct.pack("<IQIQ", 1, tensor_floats, F32, 0)
        out += b"\0" * (-len(out) % 32)  # tensor data starts at the default 32-byte alignment
        out += struct.pack(f"<{tensor_floats}f", *range(tensor_floats))
    return out


def write_gguf(path: Path, **kwargs: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(make_gguf(**kwargs))  # type: ignore[arg-type]
    return path
