"""llama.cpp's own cache, read in place: the flat `<owner>_<repo>_<file>.gguf` files its older
builds downloaded with `-hf` (newer builds use the Hugging Face cache, read as `hf:`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from moot.errors import ModelNotFoundError, UsageError
from moot.models.stores.base import (
    Found,
    Listed,
    StoreRef,
    Unreadable,
    entries,
    is_gguf,
    kind_of,
    offered,
    refuse,
    with_shards,
)

KIND, PREFIX, TITLE = "llamacpp", "llamacpp:", "llama.cpp's cache"


def root() -> Path:
    """$LLAMA_CACHE, else llama.cpp's folder in the user's cache (~/.cache/llama.cpp)."""
    explicit = os.environ.get("LLAMA_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "llama.cpp"


def parse(body: str, ref: str) -> StoreRef:
    """A file's name in the cache: no folder part, so never a way out of it."""
    if not is_gguf(body) or "/" in body or "\\" in body or "\0" in body:
        raise UsageError(key="models.stores.llamacpp.bad_llama_cpp_cache_reference", ref=ref)
    return StoreRef(KIND, PREFIX + body, (body,), body)


def get_hint(ref: StoreRef) -> str:
    return (
        "llama.cpp downloads into its cache with `llama-cli -hf OWNER/REPO`; "
        "`moot models list` shows the models moot found"
    )


def mismatch_hint(ref: StoreRef) -> str:
    return "the file changed since moot checked it; `moot models verify` hashes it again"


def remove_hint(ref: StoreRef) -> str:
    return f"delete it yourself: {root() / ref.parts[0]}"


def find(ref: StoreRef) -> Found:
    """The cached file (every part of a split one); ModelNotFoundError when it is not there."""
    hint = get_hint(ref)
    path = root() / ref.parts[0]
    kind = kind_of(path)
    if kind == "missing":
        raise ModelNotFoundError(
            key="models.stores.llamacpp.not_llama_cpp_s_cache", ref=ref.ref, value=root(), fix=hint
        )
    if kind != "file":
        raise refuse(path, kind, hint=hint)
    files = with_shards(path, what=ref.ref, hint=hint)
    return Found(files, (None,) * len(files))


def scan() -> Iterator[Listed]:
    """Every model file in the cache; a file or a cache that cannot be read is a row saying so."""
    folder = root()
    if kind_of(folder) == "missing":
        return
    try:
        models = offered(entries(folder))
    except Unreadable as exc:
        yield Listed(PREFIX + "*", str(folder), KIND, problem=exc.reason)
        return
    for name, path, kind in models:
        ref = PREFIX + name
        if kind != "file":
            yield Listed(ref, name, KIND, problem=refuse(path, kind, hint="").message)
            continue
        try:
            files = with_shards(path, what=ref, hint="")
        except (ModelNotFoundError, UsageError) as exc:
            yield Listed(ref, name, KIND, problem=exc.message)
            continue
        yield Listed(ref, name, KIND, files, (None,) * len(files))
