"""Ollama's store, read in place: `manifests/<registry>/<namespace>/<model>/<tag>` name a
model's layers, and the weights are the layer `blobs/sha256-<hex>`, a plain GGUF."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from moot.errors import ModelNotFoundError, Phrase, UsageError
from moot.models.stores.base import (
    Found,
    Listed,
    StoreRef,
    Unreadable,
    either,
    entries,
    kind_of,
    refuse,
    unique,
)
from moot.records import files

KIND, PREFIX, TITLE = "ollama", "ollama:", "Ollama"
MODEL_LAYER = "application/vnd.ollama.image.model"
REGISTRY, NAMESPACE, TAG = "registry.ollama.ai", "library", "latest"
SYSTEM_ROOT = Path("/usr/share/ollama/.ollama/models")  # the Linux service's own home
MANIFEST_LIMIT = files.MIB  # a manifest is a few hundred bytes
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")


def roots() -> list[Path]:
    """Where Ollama keeps its models: $OLLAMA_MODELS alone when set, as Ollama itself reads
    it; else ~/.ollama/models and the Linux service's folder."""
    explicit = os.environ.get("OLLAMA_MODELS")
    if explicit:
        return [Path(explicit).expanduser()]
    return unique([Path.home() / ".ollama" / "models", SYSTEM_ROOT])


def parse(body: str, ref: str) -> StoreRef:
    """`[HOST/][NAMESPACE/]MODEL[:TAG]`, with Ollama's defaults (its registry, `library`,
    `latest`)."""
    name, tag = body, TAG
    head, _, last = body.rpartition("/")
    if ":" in last:
        model, tag = last.rsplit(":", 1)
        name = f"{head}/{model}" if head else model
    segments = name.split("/")
    if len(segments) == 1:
        segments = [REGISTRY, NAMESPACE, *segments]
    elif len(segments) == 2:
        segments = [REGISTRY, *segments]
    if (
        len(segments) != 3
        or not _HOST.fullmatch(segments[0])
        or not all(_PART.fullmatch(s) for s in segments[1:])
        or not _TAG.fullmatch(tag)
    ):
        raise UsageError(key="models.stores.ollama.bad_ollama_reference", ref=ref)
    parts = (*segments, tag)
    return StoreRef(KIND, PREFIX + short_name(parts), parts, short_name(parts))


def short_name(parts: tuple[str, ...]) -> str:
    """The name Ollama's own CLI shows: `qwen3:8b`, `me/mine:latest`, `hf.co/o/r:Q4_K_M`."""
    registry, namespace, model, tag = parts
    if registry != REGISTRY:
        return f"{registry}/{namespace}/{model}:{tag}"
    return f"{model}:{tag}" if namespace == NAMESPACE else f"{namespace}/{model}:{tag}"


def get_hint(ref: StoreRef) -> str:
    return (
        f"`ollama pull {ref.name}` fetches it (moot never runs it for you); "
        "`moot models list` shows the models moot found"
    )


def mismatch_hint(ref: StoreRef) -> str:
    return (
        "Ollama names each blob by its sha256, and this one no longer matches its name: "
        f"it is damaged; `ollama pull {ref.name}` fetches it again"
    )


def remove_hint(ref: StoreRef) -> str:
    return f"`ollama rm {ref.name}` removes it"


def find(ref: StoreRef) -> Found:
    """The model's blob and the sha256 its name gives; ModelNotFoundError (naming
    `ollama pull`) when no store holds it, UsageError when its manifest or blob is unusable."""
    hint = get_hint(ref)
    looked = roots()
    for root in looked:
        manifest = root.joinpath("manifests", *ref.parts)
        kind = kind_of(manifest)
        if kind == "missing":
            continue
        if kind != "file":
            raise refuse(manifest, kind, hint=hint)
        try:
            return _blob(root, *_model_layer(manifest, ref), ref)
        except Unreadable as exc:
            raise UsageError(key="models.stores.base.refused", reason=exc.said, fix=hint) from None
    where = either(looked)
    raise ModelNotFoundError(
        key="models.stores.ollama.not_ollama_s_store", ref=ref.ref, where_value=where, fix=hint
    )


def _blob(root: Path, digest: str, size: int | None, ref: StoreRef) -> Found:
    blob = blob_path(root, digest)
    kind = kind_of(blob)
    if kind == "missing":
        raise ModelNotFoundError(
            key="models.stores.ollama.ollama_s_manifest_names_blob",
            name=ref.name,
            digest=digest,
            value=root / "blobs",
            fix=get_hint(ref),
        )
    if kind != "file":
        raise refuse(blob, kind, hint=get_hint(ref))
    try:
        actual = blob.stat().st_size
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise Unreadable(
            Phrase("models.stores.ollama.blob_unreadable", path=blob, why=why)
        ) from None
    if size is not None and actual != size:
        raise Unreadable(
            Phrase("models.stores.ollama.blob_wrong_size", path=blob, actual=actual, size=size)
        )
    return Found((blob,), (digest,))


def blob_path(root: Path, digest: str) -> Path:
    """Where the blob of sha256 DIGEST lies (`sha256-<hex>`; older stores wrote `sha256:`)."""
    blob = root / "blobs" / f"sha256-{digest}"
    older = root / "blobs" / f"sha256:{digest}"
    return older if kind_of(blob) == "missing" and kind_of(older) != "missing" else blob


def _model_layer(manifest: Path, ref: StoreRef) -> tuple[str, int | None]:
    """The digest (hex) and size of the one model layer MANIFEST names; Unreadable when it
    cannot be read or names no single GGUF."""
    try:
        data = files.read_json(manifest, what="Ollama's manifest", limit=MANIFEST_LIMIT)
    except UsageError as exc:
        raise Unreadable(Phrase("models.stores.ollama.manifest_unreadable", error=exc)) from None
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, list) or not all(isinstance(layer, dict) for layer in layers):
        raise Unreadable(Phrase("models.stores.ollama.manifest_no_layers", path=manifest))
    models = [layer for layer in layers if layer.get("mediaType") == MODEL_LAYER]
    if len(models) != 1:
        tensors = [layer for layer in layers if "tensor" in str(layer.get("mediaType", ""))]
        if tensors or models:
            count = len(tensors) or len(models)
            raise Unreadable(
                Phrase("models.stores.ollama.per_tensor_layers", name=ref.name, count=count)
            )
        raise Unreadable(
            Phrase("models.stores.ollama.no_model_layer", name=ref.name, layer=MODEL_LAYER)
        )
    layer = models[0]
    match = _DIGEST.fullmatch(str(layer.get("digest", "")))
    if match is None:
        raise Unreadable(Phrase("models.stores.ollama.digest_not_sha256", path=manifest))
    size = layer.get("size")
    return match[1], size if isinstance(size, int) and not isinstance(size, bool) else None


def scan() -> Iterator[Listed]:
    """Every model Ollama's stores hold, one row each; a part that cannot be read is a row
    saying so."""
    seen: set[str] = set()
    for root in roots():
        for parts, manifest, problem in _manifests(root / "manifests"):
            name = _display(parts)
            ref = PREFIX + name
            if ref in seen:
                continue  # an earlier store holds it: that one is used
            if len(parts) == 4:
                seen.add(ref)
            if problem:
                yield Listed(ref, name, KIND, problem=problem)
                continue
            yield _row(root, manifest, parts, ref, name)


def _row(root: Path, manifest: Path, parts: tuple[str, ...], ref: str, name: str) -> Listed:
    store_ref = StoreRef(KIND, ref, parts, name)
    try:
        digest, size = _model_layer(manifest, store_ref)
    except Unreadable as exc:
        return Listed(ref, name, KIND, problem=exc.reason)
    try:
        found = _blob(root, digest, size, store_ref)
    except Unreadable as exc:
        return Listed(ref, name, KIND, problem=exc.reason, size=size)
    except (ModelNotFoundError, UsageError) as exc:
        return Listed(ref, name, KIND, problem=exc.message, size=size)
    return Listed(ref, name, KIND, found.files, found.expected)


def _display(parts: tuple[str, ...]) -> str:
    """The name of a model, or of the models under a folder of the store (`qwen3:*`)."""
    if len(parts) == 4:
        return short_name(parts)
    shown = list(parts)
    if shown[:1] == [REGISTRY]:
        shown = shown[1:]
        if shown[:1] == [NAMESPACE]:
            shown = shown[1:]
    if len(parts) == 3:
        return "/".join(shown) + ":*"
    return "/".join([*shown, "*"])


def _manifests(folder: Path) -> Iterator[tuple[tuple[str, ...], Path, str]]:
    """(registry, namespace, model, tag), its manifest and "" for each tag file under FOLDER;
    for a folder or file that cannot be read, the parts that lead there and why."""
    kind = kind_of(folder)
    if kind == "missing":
        return
    yield from _walk(folder, (), kind)


def _walk(
    folder: Path, parts: tuple[str, ...], kind: str
) -> Iterator[tuple[tuple[str, ...], Path, str]]:
    if kind not in ("dir", "file"):
        yield parts, folder, refuse(folder, kind, hint="").message
        return
    if len(parts) == 4:
        if kind == "file":
            yield parts, folder, ""
        return
    if kind != "dir":
        return
    try:
        listed = entries(folder)
    except Unreadable as exc:
        yield parts, folder, exc.reason
        return
    for name, path, sub in listed:
        if not name.startswith("."):
            yield from _walk(path, (*parts, name), sub)
