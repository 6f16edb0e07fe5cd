"""Small, valid GGUF files written byte by byte, for tests that must not need a real model."""

from __future__ import annotations

import struct
from pathlib import Path

STRING, ARRAY, UINT32, FLOAT32 = 8, 9, 4, 6
F32 = 0  # ggml tensor type


def gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def kv(key: str, vtype: int, payload: bytes) -> bytes:
    return gguf_string(key) + struct.pack("<I", vtype) + payload


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
) -> bytes:
    """A GGUF with a few metadata keys (arrays included) and, optionally, one F32 tensor."""
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
