"""Retrieval within a token budget, and the cache: kept in the folder given, by each file's
sha256, reused while the files are unchanged, a changed file read again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.evidence import library as library_module
from moot.evidence import open_library, shown
from moot.evidence.index import tokens


def test_the_passage_a_query_is_about_comes_first_in_either_language(documents: Path):
    library = open_library([documents])
    assert library.search("diesel hedging programme", budget=500)[0].id == "board-pack.pdf p.2 ¶2"
    assert library.search("票价收入 运营成本", budget=500)[0].id == "可行性报告.txt ¶3"
    assert library.search("冷链仓库投资", budget=500)[0].id == "board-pack.pdf p.4 ¶1"
    assert library.search("idempotency", budget=500) == []  # no term shared: nothing


def test_the_passages_fit_the_budget_by_the_counter_given(documents: Path):
    library = open_library([documents])
    words = lambda text: len(text.split())  # noqa: E731 - a counter of the caller's
    wide = library.search("revenue percent diesel", budget=10_000, count=words)
    assert len(wide) >= 3
    budget = words(shown(wide[:2]))
    narrow = library.search("revenue percent diesel", budget=budget, count=words)
    assert [p.id for p in narrow] == [p.id for p in wide[:2]]
    assert words(shown(narrow)) <= budget
    assert library.search("revenue", budget=0) == []


def test_passages_already_shown_can_be_left_out(documents: Path):
    library = open_library([documents])
    first = library.search("diesel", budget=500)
    again = library.search("diesel", budget=500, exclude={first[0].id})
    assert first[0].id not in {p.id for p in again}
    assert again[0].id == first[1].id


def test_chinese_is_indexed_by_characters_and_their_pairs():
    assert tokens("客流 the Revenue") == ["客", "流", "客流", "revenue"]


def _files(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def test_an_unchanged_library_is_read_from_its_cache_and_a_changed_file_again(
    documents: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    cache = tmp_path / "debate" / "evidence"
    first = open_library([documents], cache=cache)
    kept = _files(cache)
    assert any("index" in p.parts for p in kept)

    read: list[str] = []
    real = library_module.paragraphs

    def counting(data: bytes, *, kind: str, name: str):  # type: ignore[no-untyped-def]
        read.append(name)
        return real(data, kind=kind, name=name)

    monkeypatch.setattr(library_module, "paragraphs", counting)
    again = open_library([documents], cache=cache)
    assert read == []  # every document's paragraphs came from the cache
    assert again.passages == first.passages
    assert _files(cache) == kept  # the index was loaded, not written again
    assert again.search("diesel", budget=300) == first.search("diesel", budget=300)

    memo = documents / "notes" / "memo.md"
    memo.write_text(memo.read_text() + "\n## Travel\n\nTravel costs fell by a third.\n")
    changed = open_library([documents], cache=cache)
    assert read == ["notes/memo.md"]  # only the changed file was read again
    assert changed.get("notes/memo.md §4 ¶1").text == "Travel costs fell by a third."
    assert changed.search("travel costs", budget=100)[0].id == "notes/memo.md §4 ¶1"
    # the old memo's paragraphs and the old index are gone; one of each kind is left
    assert len(list((cache / "paragraphs").iterdir())) == 5
    assert len(list((cache / "index").iterdir())) == 1


def test_a_damaged_cache_is_read_again_not_trusted(documents: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = open_library([documents], cache=cache)
    for path in (cache / "paragraphs").iterdir():
        path.write_text('{"reader": 1, "paragraphs": [[1, 2]]}')
    for path in (cache / "index").rglob("*.npy"):
        path.write_bytes(b"not numpy")
    again = open_library([documents], cache=cache)
    assert again.passages == first.passages
    assert again.search("diesel", budget=300) == first.search("diesel", budget=300)


def test_nothing_is_written_outside_the_cache_folder(documents: Path, tmp_path: Path):
    before = _files(tmp_path)
    cache = tmp_path / "cache"
    open_library([documents], cache=cache)
    open_library([documents])  # without a cache: nothing written at all
    after = {p for p in _files(tmp_path) if cache not in p.parents}
    assert after == set(before)
    assert oct(cache.stat().st_mode & 0o777) == "0o700"  # a folder moot makes is private
    assert all(not name.startswith(".") for name in os.listdir(cache / "index"))


def test_a_cited_id_is_found_as_speakers_write_it(documents: Path):
    library = open_library([documents])
    exact = library.get("board-pack.pdf p.2 ¶2")
    assert exact is not None
    assert library.get("board-pack.pdf, p. 2, ¶ 2") == exact
    assert library.get("board-pack.pdf page 2 ¶2") == exact
    assert library.get("memo.md §2 ¶1") == library.get("notes/memo.md §2 ¶1")  # folder left out
    assert library.get("board-pack.pdf p.2 ¶9") is None
    assert library.get("other.pdf p.2 ¶2") is None


def test_one_path_may_be_given_alone(documents: Path):
    assert open_library(str(documents / "policy.html")).files == ["policy.html"]
