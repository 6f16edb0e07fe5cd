"""Short labels for model references, as a view that compares models shows them.

A catalog id, a registered name and a store's name (`ollama:…`) are short already and shown
as they are; a path (and an `hf:OWNER/REPO/FILE.gguf` reference) is shown by its file's
stem, with as many of its folders as tell it apart from the other paths of the same view; a
server is shown by its model name and host. A record keeps the full reference: a label is
only what a screen shows of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from moot.inference.human import is_human_ref
from moot.inference.remote import is_remote_ref, split_ref
from moot.models.stores import is_store_ref

HF_PREFIX = "hf:"
_SEPARATORS = re.compile(r"[/\\]+")


def model_labels(refs: Iterable[str], *, person: str = "person") -> dict[str, str]:
    """Each of REFS by its short label (a seat a person holds: PERSON), labels unique among
    them: two paths of the same file name keep as many of their folders as tell them apart."""
    refs = list(dict.fromkeys(refs))
    labels = {ref: _label(ref, person) for ref in refs}
    paths = {ref: _parts(ref) for ref in refs if _is_path(ref)}
    depth = dict.fromkeys(paths, 1)
    while True:
        labels |= {ref: "/".join(parts[-depth[ref] :]) for ref, parts in paths.items()}
        count: dict[str, int] = {}
        for shown in labels.values():
            count[shown] = count.get(shown, 0) + 1
        clashing = [ref for ref in paths if count[labels[ref]] > 1]
        longer = [ref for ref in clashing if depth[ref] < len(paths[ref])]
        if not longer:  # a path no folder tells apart is shown as it was given
            return labels | {ref: ref for ref in clashing}
        for ref in longer:
            depth[ref] += 1


def model_label(ref: str, *, person: str = "person") -> str:
    """REF's short label on its own (see `model_labels`)."""
    return model_labels([ref], person=person)[ref]


def _is_path(ref: str) -> bool:
    if is_human_ref(ref) or is_remote_ref(ref) or is_store_ref(ref):
        return False
    return ref.startswith(HF_PREFIX) or ref.endswith(".gguf") or "/" in ref or os.sep in ref


def _parts(ref: str) -> list[str]:
    """A path's folders and its file's stem: what its label is made of."""
    path = ref[len(HF_PREFIX) :] if ref.startswith(HF_PREFIX) else ref
    parts = [p for p in _SEPARATORS.split(path) if p and p != "."]
    if not parts:
        return [ref]
    stem = parts[-1][: -len(".gguf")] if parts[-1].endswith(".gguf") else parts[-1]
    return [*parts[:-1], stem or parts[-1]]


def _label(ref: str, person: str) -> str:
    if is_human_ref(ref):
        return person
    if is_remote_ref(ref):
        url, name = split_ref(ref)
        host = urlsplit(url).netloc or url
        return f"{name}@{host}" if name else host
    return ref
