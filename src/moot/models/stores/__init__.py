"""Other tools' model stores, read in place and never written: Ollama (`ollama:NAME[:TAG]`),
LM Studio (`lmstudio:PUBLISHER/MODEL[/FILE]`) and llama.cpp's cache (`llamacpp:FILE`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from moot.models.stores import llamacpp, lmstudio, ollama
from moot.models.stores.base import Found, Listed, StoreRef

__all__ = [
    "Found",
    "Listed",
    "StoreRef",
    "find",
    "is_store_ref",
    "listed",
    "parse",
    "title",
]  # and the hints

_STORES: dict[str, ModuleType] = {s.KIND: s for s in (ollama, lmstudio, llamacpp)}
REF_FORMS = "ollama:NAME[:TAG], lmstudio:PUBLISHER/MODEL[/FILE] or llamacpp:FILE"


def is_store_ref(ref: str) -> bool:
    """Does REF start with a store's prefix (`ollama:`, `lmstudio:`, `llamacpp:`)?"""
    return any(ref.startswith(store.PREFIX) for store in _STORES.values())


def parse(ref: str) -> StoreRef | None:
    """What REF names in a store, or None when it starts with no store's prefix; a malformed
    name after the prefix is a UsageError."""
    for store in _STORES.values():
        if ref.startswith(store.PREFIX):
            parsed: StoreRef = store.parse(ref[len(store.PREFIX) :], ref)
            return parsed
    return None


def find(ref: StoreRef) -> tuple[tuple[Path, ...], tuple[str | None, ...]]:
    """REF's files and the sha256 each should have (None: nothing to compare with)."""
    found: Found = _STORES[ref.kind].find(ref)
    return found.files, found.expected


def listed() -> Iterator[Listed]:
    """Every model the stores on this machine hold, store by store."""
    return itertools.chain.from_iterable(store.scan() for store in _STORES.values())


def title(kind: str) -> str:
    """The store's name as its users know it: "Ollama", "LM Studio", "llama.cpp's cache"."""
    return str(_STORES[kind].TITLE)


def get_hint(ref: StoreRef) -> str:
    """How to get REF into its store (moot never does it)."""
    return str(_STORES[ref.kind].get_hint(ref))


def mismatch_hint(ref: StoreRef) -> str:
    """What to do about a file of REF that fails its checksum."""
    return str(_STORES[ref.kind].mismatch_hint(ref))


def remove_hint(ref: StoreRef) -> str:
    """How to remove REF with its own tool (moot leaves other tools' files alone)."""
    return str(_STORES[ref.kind].remove_hint(ref))
