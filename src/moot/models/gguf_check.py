"""Bounded GGUF header check and metadata, read before llama.cpp ever sees a file."""

from __future__ import annotations

import mmap
import os
import stat
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from moot.errors import ModelIntegrityError

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_TENSORS = 1_000_000
MAX_KV = 100_000
MAX_DIMS = 8
MAX_ARRAY_DEPTH = 4
MAX_DECODED_STRING = 1 << 20  # longer strings are skipped, not decoded: chat templates are ~10 KB
# Integer arrays this long or shorter are kept (a per-layer count: one per block); longer ones
# (a vocabulary's token types) are skipped like every other array.
MAX_LAYER_VALUES = 4096
DEFAULT_ALIGNMENT = 32
# `tokenizer.chat_template` and its named variants (`tokenizer.chat_template.tool_use`, …):
# llama-cpp-python compiles every one of them when it loads the file.
TEMPLATE_KEY = "tokenizer.chat_template"

# GGUF metadata value types: code -> (struct format, byte size); 8 = string, 9 = array.
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("<B", 1),
    1: ("<b", 1),
    2: ("<H", 2),
    3: ("<h", 2),
    4: ("<I", 4),
    5: ("<i", 4),
    6: ("<f", 4),
    7: ("<?", 1),
    10: ("<Q", 8),
    11: ("<q", 8),
    12: ("<d", 8),
}
_STRING, _ARRAY = 8, 9
_INTEGERS = frozenset({0, 1, 2, 3, 4, 5, 7, 10, 11})  # the _SCALARS that count (bool included)

# llama.cpp's `llama_ftype` (general.file_type) -> the quantisation's usual name.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
    10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
    16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
    22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
    28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
    37: "TQ2_0", 38: "MXFP4_MOE",
}  # fmt: skip

# ggml tensor types -> (elements per block, bytes per block), to find where tensor data ends.
TENSOR_TYPES = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
    14: (256, 210), 15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98),
    19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1),
    25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17),
}  # fmt: skip


@dataclass(frozen=True)
class GGUFInfo:
    """What the header says about a model file."""

    path: Path
    version: int
    tensor_count: int
    kv_count: int
    file_size: int
    architecture: str | None
    name: str | None
    context_length: int | None
    file_type: int | None
    quantisation: str | None
    chat_template: str | None
    vocab_size: int | None
    split_count: int | None = None  # shards of a split model (`split.count`), else None
    data_end: int | None = None  # bytes the tensor data needs; None when a tensor type is unknown
    # Every embedded chat template by key; None: present, but not text moot can read and check
    # (another type, an array, invalid UTF-8, or longer than MAX_DECODED_STRING).
    chat_templates: dict[str, str | None] = field(default_factory=dict, repr=False)
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)
    # The shape llama.cpp sizes its KV cache by (`<arch>.…`); None where the header lacks it.
    block_count: int | None = None
    embedding_length: int | None = None
    head_count: int | tuple[int, ...] | None = None  # a tuple: one count per layer
    head_count_kv: int | tuple[int, ...] | None = None
    key_length: int | None = None  # per head; absent: embedding_length / head_count
    value_length: int | None = None
    sliding_window: int | None = None  # tokens a sliding-window layer attends to

    @property
    def head_dim(self) -> int | None:
        """How wide one attention head's keys are: `key_length`, else llama.cpp's default, the
        embedding split evenly among the first layer's heads; None where the header says
        neither."""
        if self.key_length:
            return self.key_length
        first = first_count(self.head_count)
        return self.embedding_length // first if first and self.embedding_length else None

    @property
    def has_chat_template(self) -> bool:
        """Whether the file carries its own chat template (`tokenizer.chat_template`)."""
        return bool(self.chat_template)


def first_count(value: int | tuple[int, ...] | None) -> int:
    """A per-layer count's first non-zero value (a header may list one per layer); 0: none."""
    if isinstance(value, tuple):
        return next((v for v in value if v), 0)
    return value or 0


class _Truncated(Exception):
    """A read past the end of the file; reported as a truncated model."""


class _Reader:
    """Bounds-checked little-endian reads over a read-only buffer."""

    def __init__(self, buf: mmap.mmap | bytes, size: int) -> None:
        self.buf = buf
        self.size = size
        self.off = 0
        self._u64 = struct.Struct("<Q").unpack_from

    def take(self, n: int) -> int:
        start = self.off
        if n < 0 or start + n > self.size:
            raise _Truncated(start + n)
        self.off = start + n
        return start

    def scalar(self, fmt: str, n: int) -> Any:
        return struct.unpack_from(fmt, self.buf, self.take(n))[0]

    def u32(self) -> int:
        return int(self.scalar("<I", 4))

    def u64(self) -> int:
        return int(self._u64(self.buf, self.take(8))[0])

    def string(self, *, decode: bool = True, errors: str = "replace") -> str | None:
        length = self.u64()
        start = self.take(length)
        if not decode or length > MAX_DECODED_STRING:
            return None
        return bytes(self.buf[start : start + length]).decode("utf-8", errors=errors)

    def skip_strings(self, count: int) -> None:
        # Token lists hold 50k-260k strings: a tight loop without per-item method calls.
        buf, size, off, u64 = self.buf, self.size, self.off, self._u64
        for _ in range(count):
            if off + 8 > size:
                raise _Truncated(off + 8)
            off += 8 + u64(buf, off)[0]
        if off > size:
            raise _Truncated(off)
        self.off = off


def check(path: Path | str) -> GGUFInfo:
    """Check PATH's GGUF header and return its metadata; raise ModelIntegrityError if it is bad.

    A file unchanged since it was last checked in this process (same size, modification
    time and inode) is not parsed again: a debate resolves its model once per role, and
    reading a 262k-token vocabulary's header takes ~30 ms.
    """
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise ModelIntegrityError(
            key="models.gguf_check.cannot_read", path=path, value=exc.strerror or exc
        ) from exc
    _check_regular(path, st.st_mode)
    return _check_unchanged(path, st.st_size, st.st_mtime_ns, st.st_ino)


def _check_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise ModelIntegrityError(key="models.gguf_check.not_regular_file", path=path, kind=kind)


@lru_cache(maxsize=256)  # `moot models list` reads every model's header, dozens of them
def _check_unchanged(path: Path, size: int, mtime_ns: int, inode: int) -> GGUFInfo:
    try:
        # O_NONBLOCK: a FIFO swapped in since the stat above is refused, not waited on.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            _check_regular(path, os.fstat(fh.fileno()).st_mode)
            if size == 0:
                raise ModelIntegrityError(key="models.gguf_check.empty_0_bytes", path=path)
            if size < 24:
                head = fh.read(4)
                _check_magic(path, head)
                raise ModelIntegrityError(
                    key="models.gguf_check.truncated_bytes_shorter_than_gguf", path=path, size=size
                )
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _parse(path, buf, size)
    except OSError as exc:
        raise ModelIntegrityError(
            key="models.gguf_check.cannot_read_2", path=path, value=exc.strerror or exc
        ) from exc


def _check_magic(path: Path, head: bytes) -> None:
    if head != MAGIC:
        raise ModelIntegrityError(
            key="models.gguf_check.not_gguf_model_file_starts", path=path, head=head[:4]
        )


def _parse(path: Path, buf: mmap.mmap, size: int) -> GGUFInfo:
    _check_magic(path, bytes(buf[:4]))
    r = _Reader(buf, size)
    r.take(4)
    version = r.u32()
    if version not in VERSIONS:
        raise ModelIntegrityError(
            key="models.gguf_check.unsupported_gguf_version_supported_2", path=path, version=version
        )
    n_tensors, n_kv = r.u64(), r.u64()
    _check_counts(path, n_tensors, n_kv, size)
    try:
        meta, arrays = _read_metadata(r, n_kv)
        data_end = _read_tensor_infos(r, n_tensors, meta)
    except _Truncated as exc:
        raise _truncated(path, size, int(exc.args[0])) from None
    except ValueError as exc:  # a nonsensical type code or dimension count
        raise ModelIntegrityError(
            key="models.gguf_check.malformed_gguf_header", path=path, exc=exc
        ) from None
    if data_end is not None and data_end > size:
        raise _truncated(path, size, data_end)
    return _info(path, version, n_tensors, n_kv, size, meta, arrays, data_end)


def _check_counts(path: Path, n_tensors: int, n_kv: int, size: int) -> None:
    # A tensor info takes >= 24 bytes and a key/value >= 13: garbage shows as impossible counts.
    if n_tensors * 24 + n_kv * 13 > size:
        raise ModelIntegrityError(
            key="models.gguf_check.gguf_header_claims_tensors_metadata",
            path=path,
            n_tensors=n_tensors,
            n_kv=n_kv,
            size=size,
        )
    # Possible, and still more than any model has: a file built to make its reader work.
    for count, what, limit in (
        (n_tensors, "tensors", MAX_TENSORS),
        (n_kv, "metadata entries", MAX_KV),
    ):
        if count > limit:
            raise ModelIntegrityError(
                key="models.gguf_check.gguf_header_lists_over_moot",
                path=path,
                count=count,
                what=what,
                limit=limit,
            )


def _truncated(path: Path, size: int, needed: int) -> ModelIntegrityError:
    return ModelIntegrityError(
        key="models.gguf_check.truncated_has_bytes_but_header",
        path=path,
        size=size,
        needed_value=needed,
    )


def _read_metadata(r: _Reader, n_kv: int) -> tuple[dict[str, Any], dict[str, int]]:
    meta: dict[str, Any] = {}
    arrays: dict[str, int] = {}  # array keys -> element count (their contents are skipped)
    for _ in range(n_kv):
        key = r.string() or ""
        vtype = r.u32()
        if vtype == _ARRAY:
            values = None if key.startswith("tokenizer.") else _layer_values(r)
            if values is None:
                arrays[key] = _skip_array(r, depth=0)
            else:
                meta[key] = values
                arrays[key] = len(values)
        elif vtype == _STRING and _is_template_key(key):
            meta[key] = _template_text(r)
        else:
            meta[key] = _read_value(r, vtype)
    return meta, arrays


def _is_template_key(key: str) -> bool:
    return key == TEMPLATE_KEY or key.startswith(TEMPLATE_KEY + ".")


def _template_text(r: _Reader) -> str | None:
    # Decoded strictly: a template checked after replacing bad bytes would not be the one
    # llama.cpp hands to jinja2.
    start = r.off
    try:
        return r.string(errors="strict")
    except UnicodeDecodeError:
        r.off = start
        r.string(decode=False)
        return None


def _read_value(r: _Reader, vtype: int) -> Any:
    if vtype == _STRING:
        return r.string()
    if vtype not in _SCALARS:
        raise ValueError(f"unknown metadata value type {vtype}")
    fmt, n = _SCALARS[vtype]
    return r.scalar(fmt, n)


def _layer_values(r: _Reader) -> tuple[int, ...] | None:
    """A short integer array's values (a count per layer); None, and nothing read, otherwise."""
    start = r.off
    etype, count = r.u32(), r.u64()
    if etype not in _INTEGERS or count > MAX_LAYER_VALUES:
        r.off = start
        return None
    fmt, n = _SCALARS[etype]
    values = struct.unpack_from(f"<{count}{fmt[1:]}", r.buf, r.take(count * n))
    return tuple(values)


def _skip_array(r: _Reader, *, depth: int) -> int:
    if depth > MAX_ARRAY_DEPTH:
        raise ValueError("arrays nested too deeply")
    etype, count = r.u32(), r.u64()
    if count > r.size - r.off:  # every element takes at least one byte
        raise _Truncated(r.off + count)
    if etype == _STRING:
        r.skip_strings(count)
    elif etype == _ARRAY:
        for _ in range(count):
            _skip_array(r, depth=depth + 1)
    elif etype in _SCALARS:
        r.take(count * _SCALARS[etype][1])
    else:
        raise ValueError(f"unknown array element type {etype}")
    return count


def _read_tensor_infos(r: _Reader, n_tensors: int, meta: dict[str, Any]) -> int | None:
    """Walk the tensor infos; return where the last tensor's data ends (None if unknowable)."""
    end = 0
    known = True
    for _ in range(n_tensors):
        r.string(decode=False)
        n_dims = r.u32()
        if n_dims > MAX_DIMS:
            raise ValueError(f"a tensor with {n_dims} dimensions")
        elements = 1
        for _ in range(n_dims):
            elements *= r.u64()
        ttype, offset = r.u32(), r.u64()
        block = TENSOR_TYPES.get(ttype)
        if block is None:
            known = False
            continue
        end = max(end, offset + elements // block[0] * block[1])
    if n_tensors == 0:
        return r.off
    align = meta.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(align, int) or align <= 0:
        align = DEFAULT_ALIGNMENT
    data_start = -(-r.off // align) * align
    return data_start + end if known else None


def _info(
    path: Path,
    version: int,
    n_tensors: int,
    n_kv: int,
    size: int,
    meta: dict[str, Any],
    arrays: dict[str, int],
    data_end: int | None,
) -> GGUFInfo:
    arch = _typed(meta.get("general.architecture"), str)
    file_type = _typed(meta.get("general.file_type"), int)
    return GGUFInfo(
        path=path,
        version=version,
        tensor_count=n_tensors,
        kv_count=n_kv,
        file_size=size,
        architecture=arch,
        name=_typed(meta.get("general.name"), str),
        context_length=_typed(meta.get(f"{arch}.context_length"), int) if arch else None,
        file_type=file_type,
        quantisation=FILE_TYPES.get(file_type) if file_type is not None else None,
        chat_template=_typed(meta.get("tokenizer.chat_template"), str) or None,
        vocab_size=arrays.get("tokenizer.ggml.tokens"),
        split_count=_typed(meta.get("split.count"), int),
        data_end=data_end,
        chat_templates=_templates(meta, arrays),
        metadata=meta,
        block_count=_number(meta, arch, "block_count"),
        embedding_length=_number(meta, arch, "embedding_length"),
        head_count=_counts(meta, arch, "attention.head_count"),
        head_count_kv=_counts(meta, arch, "attention.head_count_kv"),
        key_length=_number(meta, arch, "attention.key_length"),
        value_length=_number(meta, arch, "attention.value_length"),
        sliding_window=_number(meta, arch, "attention.sliding_window"),
    )


def _number(meta: dict[str, Any], arch: str | None, key: str) -> int | None:
    value = _typed(meta.get(f"{arch}.{key}"), int) if arch else None
    return value if value is not None and value >= 0 else None


def _counts(meta: dict[str, Any], arch: str | None, key: str) -> int | tuple[int, ...] | None:
    """`<arch>.KEY`: one count, or a tuple of counts per layer (booleans are not counts)."""
    value = meta.get(f"{arch}.{key}") if arch else None
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        return value
    return _number(meta, arch, key)


def _templates(meta: dict[str, Any], arrays: dict[str, int]) -> dict[str, str | None]:
    found: dict[str, str | None] = {k: None for k in arrays if _is_template_key(k)}
    for key, value in meta.items():
        if _is_template_key(key):
            found[key] = value if isinstance(value, str) else None
    return found


def _typed(value: Any, kind: type) -> Any:
    # bool is an int in Python; a flag is never a count.
    if isinstance(value, kind) and not isinstance(value, bool):
        return value
    return None
