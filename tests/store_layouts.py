"""Ollama's store, LM Studio's models folder and llama.cpp's cache laid out on disk as those tools
lay them out, around small GGUF files written here or real ones linked in (never copied)."""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

from gguf_samples import STRING, UINT32, gguf_string, kv, make_gguf

MODEL_LAYER = "application/vnd.ollama.image.model"
TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def gguf(extra: dict[str, str | int] | None = None, **kwargs: Any) -> bytes:
    """make_gguf's file (with a chat template unless told otherwise), plus EXTRA metadata:
    strings and 32-bit counts, e.g. {"general.type": "mmproj", "split.no": 1}."""
    kwargs.setdefault("chat_template", TEMPLATE)
    base = make_gguf(**kwargs)
    if not extra:
        return base
    kvs = b"".join(
        kv(k, STRING, gguf_string(v)) if isinstance(v, str) else kv(k, UINT32, struct.pack("<I", v))
        for k, v in extra.items()
    )
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", base, 4)
    head = b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv + len(extra))
    return head + kvs + base[24:]  # the metadata comes before any tensor: no offset moves


def place(dest: Path, *, data: bytes | None = None, source: Path | None = None) -> Path:
    """DEST holding DATA, or linked to SOURCE: a hard link where the disk allows, else a
    symlink; a model is never copied."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source is None:
        dest.write_bytes(data if data is not None else gguf())
        return dest
    try:
        os.link(source, dest)
    except OSError:
        dest.symlink_to(source)
    return dest


def sha256(data: bytes | None = None, source: Path | None = None) -> str:
    if source is not None:
        with source.open("rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    return hashlib.sha256(data if data is not None else gguf()).hexdigest()


def ollama_manifest(
    root: Path,
    name: str,
    tag: str = "latest",
    *,
    layers: list[dict[str, Any]],
    namespace: str = "library",
    registry: str = "registry.ollama.ai",
) -> Path:
    """Ollama's manifest for NAME:TAG under the store ROOT, naming LAYERS."""
    manifest = root / "manifests" / registry / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {
            "mediaType": "application/vnd.docker.container.image.v1+json",
            "digest": "sha256:" + "0" * 64,
            "size": 2,
        },  # fmt: skip
        "layers": layers,
    }
    manifest.write_text(json.dumps(body))
    return manifest


def ollama_model(
    root: Path,
    name: str,
    tag: str = "latest",
    *,
    data: bytes | None = None,
    source: Path | None = None,
    namespace: str = "library",
    registry: str = "registry.ollama.ai",
) -> Path:
    """A model in Ollama's store ROOT: its blob, named by its sha256, and its manifest (with a
    template and a params layer beside the model's, as Ollama writes them); returns the blob."""
    data = data if data is not None or source is not None else gguf()
    digest = sha256(data, source)
    blob = place(root / "blobs" / f"sha256-{digest}", data=data, source=source)
    size = blob.stat().st_size
    layers = [
        {"mediaType": MODEL_LAYER, "digest": f"sha256:{digest}", "size": size},
        {"mediaType": "application/vnd.ollama.image.template",
         "digest": "sha256:" + "1" * 64, "size": 10},
        {"mediaType": "application/vnd.ollama.image.params",
         "digest": "sha256:" + "2" * 64, "size": 10},
    ]  # fmt: skip
    ollama_manifest(root, name, tag, layers=layers, namespace=namespace, registry=registry)
    return blob


def lmstudio_model(
    models: Path,
    publisher: str,
    model: str,
    filename: str,
    *,
    data: bytes | None = None,
    source: Path | None = None,
) -> Path:
    """A file in LM Studio's models folder: MODELS/PUBLISHER/MODEL/FILENAME."""
    return place(models / publisher / model / filename, data=data, source=source)


def llamacpp_file(
    cache: Path, filename: str, *, data: bytes | None = None, source: Path | None = None
) -> Path:
    """A file in llama.cpp's flat cache, named as its older builds named downloads."""
    return place(cache / filename, data=data, source=source)
