"""The local BM25 index of a debate's passages (bm25s), and the cache that keeps it and
each document's paragraphs in a folder of the caller's, keyed by the files' sha256."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from moot.errors import UsageError
from moot.evidence.passages import CJK, Passage
from moot.evidence.read import READER_VERSION, Paragraph
from moot.records.files import RECORD_LIMIT, make_private_dir, read_json, write_atomic

# Bumped whenever tokens change, so a cached index is built again.
TOKENIZER_VERSION = 1
_PIECE = re.compile(f"[{CJK}]+|[^\\W_{CJK}]+")
_HEX = re.compile(r"[0-9a-f]{64}")
# Words too common in English to tell passages apart.
STOPWORDS = frozenset(
    """a an and are as at be but by for from has have in is it its of on or that the this
    to was were will with not no than then there these those which who what when where how
    do does did can could should would may might must shall we you they he she i our your
    their his her them us me my""".split()
)


def tokens(text: str) -> list[str]:
    """TEXT's index terms: words of alphabetic scripts case-folded, less English stopwords;
    a run of CJK characters as each character and each pair of neighbours (Chinese has no
    spaces: single characters find words, pairs rank the passages that hold them whole)."""
    out: list[str] = []
    for m in _PIECE.finditer(unicodedata.normalize("NFKC", text).casefold()):
        run = m.group()
        if re.match(f"[{CJK}]", run):
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run not in STOPWORDS:
            out.append(run)
    return out


class Index:
    """BM25 over passages: `scores(query)`, one per passage, in the passages' order."""

    def __init__(self, retriever: Any, size: int) -> None:
        self._retriever = retriever
        self.size = size

    def scores(self, query: str) -> np.ndarray:
        ids = self._retriever.get_tokens_ids(tokens(query))
        if not ids or not self.size:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores_from_ids(ids), dtype=np.float32)


def _build(passages: list[Passage]) -> Any:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([tokens(f"{p.heading} {p.text}") or [""] for p in passages],
                    show_progress=False)  # fmt: skip
    return retriever


def index_key(passages: list[Passage]) -> str:
    """What an index is built from: its passages' ids and texts and how they are tokenised."""
    digest = hashlib.sha256(f"bm25s-{TOKENIZER_VERSION}".encode())
    for p in passages:
        digest.update(f"\0{p.id}\0{p.heading}\0{p.text}".encode())
    return digest.hexdigest()


def index(passages: list[Passage], cache: Path | None) -> Index:
    """The BM25 index of PASSAGES: loaded from CACHE where it holds one built from the same
    passages, else built (and kept there, replacing any other)."""
    if cache is None:
        return Index(_build(passages), len(passages))
    key = index_key(passages)
    folder = cache / "index"
    kept = folder / key
    loaded = _load(kept, len(passages))
    if loaded is not None:
        return loaded
    retriever = _build(passages)
    _save(retriever, folder, key)
    return Index(retriever, len(passages))


def _load(kept: Path, size: int) -> Index | None:
    if not (kept / "params.index.json").is_file():
        return None
    import bm25s

    try:
        retriever = bm25s.BM25.load(str(kept), mmap=False, allow_pickle=False,
                                    show_progress=False)  # fmt: skip
    except Exception:  # a damaged cache is built again, never trusted
        return None
    if int(retriever.scores.get("num_docs", -1)) != size:
        return None
    return Index(retriever, size)


def _save(retriever: Any, folder: Path, key: str) -> None:
    try:
        make_private_dir(folder)
        temp = Path(tempfile.mkdtemp(prefix=".index-", dir=folder))
        try:
            retriever.save(str(temp), show_progress=False)
            os.replace(temp, folder / key)
        except OSError:
            if not (folder / key).is_dir():
                raise
        finally:
            shutil.rmtree(temp, ignore_errors=True)
        for other in folder.iterdir():  # an index of other passages is of no more use
            if other.name != key and (
                _HEX.fullmatch(other.name) or other.name.startswith(".index-")
            ):
                shutil.rmtree(other, ignore_errors=True)
    except OSError as exc:
        raise UsageError(
            key="evidence.cannot_write_cache", path=str(folder), value=exc.strerror or str(exc)
        ) from None


# -- each document's paragraphs, by the sha256 of its bytes ---------------------------------


def cached_paragraphs(cache: Path | None, sha256: str) -> list[Paragraph] | None:
    """The paragraphs kept in CACHE for a file of this SHA256, if the same readers made them."""
    if cache is None:
        return None
    path = cache / "paragraphs" / f"{sha256}.json"
    if not path.is_file():
        return None
    try:
        kept = read_json(path, what="evidence cache", limit=RECORD_LIMIT, follow_symlinks=False)
    except UsageError:
        return None
    if not isinstance(kept, dict) or kept.get("reader") != READER_VERSION:
        return None
    rows = kept.get("paragraphs")
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == 3 and all(isinstance(x, str) for x in r) for r in rows
    ):
        return None
    return [(r[0], r[1], r[2]) for r in rows]


def keep_paragraphs(cache: Path, sha256: str, paragraphs: list[Paragraph]) -> None:
    """PARAGRAPHS kept in CACHE for the file of this SHA256."""
    folder = cache / "paragraphs"
    data = json.dumps({"reader": READER_VERSION, "paragraphs": paragraphs}, ensure_ascii=False)
    try:
        make_private_dir(folder)
        write_atomic(folder / f"{sha256}.json", data)
    except OSError as exc:
        raise UsageError(
            key="evidence.cannot_write_cache", path=str(folder), value=exc.strerror or str(exc)
        ) from None


def forget_others(cache: Path, kept: set[str]) -> None:
    """Drop the cached paragraphs of files no longer given (only files this cache wrote)."""
    folder = cache / "paragraphs"
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if path.suffix == ".json" and _HEX.fullmatch(path.stem) and path.stem not in kept:
            path.unlink(missing_ok=True)
