"""A debate's evidence: the documents given, read into passages and indexed, searched
within a token budget, and the judge of the citations a speech makes."""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable
from pathlib import Path

import numpy as np

from moot.errors import Phrase, UsageError
from moot.evidence import citations
from moot.evidence.index import (
    Index,
    cached_paragraphs,
    forget_others,
    index,
    keep_paragraphs,
)
from moot.evidence.passages import Passage, TokenCounter, approx_tokens, number
from moot.evidence.read import Unreadable, paragraphs
from moot.evidence.sources import MAX_BYTES, MAX_FILES, Skipped, find, load
from moot.records.files import make_private_dir

# A passage's size cap, in (approximate) tokens: a paragraph, or a long one's part.
PASSAGE_TOKENS = 160


class Library:
    """The passages of a debate's documents and their index.

    `search(query, budget=…)` gives the passages that best match a query, best first, within
    a token budget; `get(id)` the passage an id names; `check(speech)` each citation a speech
    makes and whether it holds. `skipped` lists the files left out, each with its reason.
    """

    def __init__(self, passages: list[Passage], bm25: Index, skipped: list[Skipped]) -> None:
        self.passages = tuple(passages)
        self.skipped = tuple(skipped)
        self._index = bm25
        self._by_id = {p.id: p for p in passages}
        # A document cited by its file name alone where its folder's path is left out.
        names: dict[str, set[str]] = {}
        for p in passages:
            names.setdefault(posixpath.basename(p.file), set()).add(p.file)
        self._by_base = {
            base: next(iter(files)) for base, files in names.items() if len(files) == 1
        }
        # An id cited with stray spaces inside it (`board-pack. pdf p.3 ¶1`), by the id or
        # its unique file name with every space gone; one two passages share names neither.
        squeezed: dict[str, set[str]] = {}
        for p in passages:
            rest = p.id[len(p.file) :]
            for name in {p.file, posixpath.basename(p.file)}:
                if name == p.file or self._by_base.get(name) == p.file:
                    squeezed.setdefault(citations.squeezed_id(name + rest), set()).add(p.id)
        self._by_squeezed = {key: next(iter(ids)) for key, ids in squeezed.items() if len(ids) == 1}

    def __len__(self) -> int:
        return len(self.passages)

    @property
    def files(self) -> list[str]:
        """The documents read, by the names their passages cite, in order."""
        return list(dict.fromkeys(p.file for p in self.passages))

    def get(self, cited: str) -> Passage | None:
        """The passage CITED names: its id as written, or as a speaker may write it
        (`report.pdf, p. 12, ¶ 3`, or with stray spaces anywhere inside it: `board-pack. pdf
        p.3 ¶1`, a full-width space), or with the file's folders left out where its name is
        unique; None if none."""
        found = self._by_id.get(cited)
        if found is not None:
            return found
        wanted = citations.normal_id(cited)
        found = self._by_id.get(wanted)
        if found is not None:
            return found
        name, sep, rest = wanted.partition(" ")
        full = self._by_base.get(name)
        found = self._by_id.get(f"{full} {rest}") if full and sep else None
        if found is not None:
            return found
        squeezed = self._by_squeezed.get(citations.squeezed_id(wanted))
        return self._by_id.get(squeezed) if squeezed else None

    def search(
        self,
        query: str,
        *,
        budget: int,
        count: TokenCounter = approx_tokens,
        exclude: Collection[str] = (),
        most: int = 20,
    ) -> list[Passage]:
        """The passages that best match QUERY (BM25), best first, that fit in BUDGET tokens
        together as `shown` writes them (COUNT counts a text's tokens; by default about),
        none of the ids in EXCLUDE, at most MOST; none that shares no term with the query."""
        if budget <= 0 or not self.passages:
            return []
        scores = self._index.scores(query)
        # The best few hundred are enough to fill any budget with MOST passages; sorting
        # only them keeps a query on thousands of passages in milliseconds.
        few = min(len(scores), max(200, 10 * most))
        top = np.argpartition(-scores, few - 1)[:few] if few < len(scores) else np.arange(few)
        order = top[np.lexsort((top, -scores[top]))]  # best first, ties in reading order
        chosen: list[Passage] = []
        left = budget
        for i in order:
            if scores[i] <= 0 or len(chosen) >= most:
                break
            passage = self.passages[int(i)]
            if passage.id in exclude:
                continue
            cost = count(shown([passage]))
            if cost <= left:
                chosen.append(passage)
                left -= cost
        return chosen

    def check(self, speech: str) -> list[citations.CitationResult]:
        """Each citation SPEECH makes and what checking it found (see `citations`)."""
        return citations.check(speech, self.get)


def shown(passages: Iterable[Passage]) -> str:
    """PASSAGES as a prompt may show them: each on a line of its own after its id in
    brackets, as a speech cites it."""
    return "".join(f"[{p.id}] {p.text}\n" for p in passages)


def open_library(
    paths: Iterable[str | Path] | str | Path,
    *,
    cache: Path | None = None,
    passage_tokens: int = PASSAGE_TOKENS,
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
) -> Library:
    """The documents at PATHS (files, and folders read recursively) as a `Library`.

    With CACHE (a folder, made if missing; nothing is written elsewhere) each document's
    paragraphs are kept there by the sha256 of its bytes and the index by its passages, so
    a library opened again reads only the files that changed. A path that does not exist,
    a folder of more than MAX_FILES files, or nothing readable at all is a UsageError; a
    file that cannot be read is left out, with its reason in `Library.skipped`.
    """
    given = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not given:
        raise UsageError(key="evidence.nothing_given")
    sources, skipped = find(given, max_files=max_files, max_bytes=max_bytes)
    if cache is not None:
        _claim(cache)
    passages: list[Passage] = []
    hashes: set[str] = set()
    for source in sources:
        loaded = load(source, max_bytes=max_bytes)
        if isinstance(loaded, Skipped):
            skipped.append(loaded)
            continue
        hashes.add(loaded.sha256)
        found = cached_paragraphs(cache, loaded.sha256)
        if found is None:
            try:
                found = paragraphs(loaded.data, kind=source.kind, name=source.name)
            except Unreadable as why:
                skipped.append(Skipped(source.name, why.reason))
                continue
            if cache is not None:
                keep_paragraphs(cache, loaded.sha256, found)
        these = number(source.name, found, cap=passage_tokens)
        if not these:
            skipped.append(
                Skipped(source.name, Phrase("evidence.skipped.no_text", file=source.name))
            )
        passages += these
    if cache is not None:
        forget_others(cache, hashes)
    if not passages:
        named = ", ".join(map(str, given))
        if skipped:  # why, in the one line: the first file left out and its reason
            raise UsageError(key="evidence.nothing_readable", paths=named, why=skipped[0].reason)
        raise UsageError(key="evidence.nothing_to_read", paths=named)
    return Library(passages, index(passages, cache), skipped)


def _claim(cache: Path) -> None:
    try:
        make_private_dir(cache)
    except OSError as exc:
        raise UsageError(
            key="evidence.cannot_write_cache", path=str(cache), value=exc.strerror or str(exc)
        ) from None
