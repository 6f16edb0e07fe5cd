"""Bad evidence: one keyed line naming the fix, or a warning for the file and the rest
used — never a traceback, never a hang, nothing written outside the cache folder."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from evidence_documents import PDF_PAGES, write_pdf
from moot.errors import Phrase, UsageError
from moot.evidence import MAX_FILES, Library, open_library
from moot.words import words


def _reasons(library: Library) -> dict[str, str]:
    return {s.file: s.reason.key for s in library.skipped}


def _usage(paths: list[Path], **kwargs: object) -> UsageError:
    with pytest.raises(UsageError) as caught:
        open_library(paths, **kwargs)  # type: ignore[arg-type]
    error = caught.value
    assert error.exit_code == 2
    assert "\n" not in error.message and error.hint
    shown = words("zh").error(error)  # the same line in Chinese, by its key
    assert shown["message"] != error.message and shown["hint"] != error.hint
    return error


def test_a_path_that_does_not_exist_is_one_line_naming_it(tmp_path: Path):
    error = _usage([tmp_path / "missing.pdf"])
    assert error.key == "evidence.no_such_path"
    assert str(tmp_path / "missing.pdf") in str(error)
    assert "不存在" in words("zh").error(error)["message"]


def test_an_empty_folder_or_nothing_given_says_what_moot_reads(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    assert _usage([tmp_path / "empty"]).key == "evidence.nothing_to_read"
    (tmp_path / "hidden").mkdir()  # holding only what is not walked: as empty
    (tmp_path / "hidden" / ".notes.md").write_text("A hidden note.")
    assert _usage([tmp_path / "hidden"]).key == "evidence.nothing_to_read"
    assert ".docx" in _usage([tmp_path / "empty"]).hint
    assert _usage([]).key == "evidence.nothing_given"


def test_a_folder_of_too_many_files_is_refused_without_reading_them(tmp_path: Path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(60):
        (folder / f"{i}.txt").write_text(f"note {i}")
    error = _usage([folder], max_files=50)
    assert error.key == "evidence.too_many_files"
    assert "50" in str(error)
    assert len(open_library([folder], max_files=60)) == 60


def test_encrypted_damaged_and_binary_files_are_left_out_and_the_rest_used(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    write_pdf(folder / "locked.pdf", PDF_PAGES, password="secret")
    good = write_pdf(folder / "good.pdf", PDF_PAGES)
    (folder / "truncated.pdf").write_bytes(good.read_bytes()[:600])
    (folder / "garbage.pdf").write_bytes(os.urandom(4096))
    (folder / "fake.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (folder / "binary.txt").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    (folder / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (folder / "scan.pdf").write_bytes(_blank_pdf())
    library = open_library([folder])
    assert library.files == ["good.pdf"]
    assert _reasons(library) == {
        "binary.txt": "evidence.skipped.binary",
        "fake.docx": "evidence.skipped.damaged",
        "garbage.pdf": "evidence.skipped.damaged",
        "latin1.md": "evidence.skipped.binary",
        "locked.pdf": "evidence.skipped.encrypted",
        "scan.pdf": "evidence.skipped.no_text",
        "truncated.pdf": "evidence.skipped.damaged",
    }
    for skipped in library.skipped:  # each a line, in both languages
        assert "\n" not in str(skipped) and skipped.file in str(skipped)
        assert skipped.file in words("zh").error(skipped.reason)["message"]


def _blank_pdf() -> bytes:
    import io

    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out)
    page.rect(50, 50, 200, 200, fill=1)  # a picture, no text: what a scan is
    page.showPage()
    page.save()
    return out.getvalue()


def test_a_link_out_of_the_folder_is_left_out_and_one_inside_is_read(tmp_path: Path):
    outside = tmp_path / "private.txt"
    outside.write_text("the password is hunter2")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("Inside the folder.")
    (folder / "leak.txt").symlink_to(outside)
    (folder / "again.txt").symlink_to(folder / "notes.txt")
    (folder / "up").symlink_to(tmp_path, target_is_directory=True)
    library = open_library([folder])
    assert library.files == ["notes.txt"]  # a link inside: the file is read where it is
    assert _reasons(library) == {
        "leak.txt": "evidence.skipped.outside",
        "up": "evidence.skipped.outside",
    }
    assert not any("hunter2" in p.text for p in library.passages)


def test_a_huge_file_is_told_by_its_size_not_read(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    huge = folder / "huge.txt"
    with open(huge, "wb") as f:  # 2 GB, sparse: nothing to read it would take seconds
        f.truncate(2 * 1024**3)
    (folder / "small.md").write_text("A small note.")
    started = time.perf_counter()
    library = open_library([folder])
    assert time.perf_counter() - started < 5
    assert library.files == ["small.md"]
    assert _reasons(library) == {"huge.txt": "evidence.skipped.too_big"}
    assert "2,147,483,648" in str(library.skipped[0])
    # named on its own: nothing to read, and the one line says why
    error = _usage([huge])
    assert error.key == "evidence.nothing_readable"
    assert "huge.txt is left out: it is 2,147,483,648 bytes" in error.message


def test_a_fifo_is_left_out_without_blocking(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    os.mkfifo(folder / "pipe.txt")
    (folder / "note.txt").write_text("A note.")
    library = open_library([folder])
    assert library.files == ["note.txt"]
    assert _reasons(library) == {"pipe.txt": "evidence.skipped.not_a_file"}


def test_files_of_other_kinds_are_counted_in_one_warning(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("A note.")
    for name in ("a.png", "b.png", "c.xlsx", "Makefile"):
        (folder / name).write_bytes(b"\x00")
    library = open_library([folder, tmp_path / "docs" / "c.xlsx"])
    warned = [s.reason for s in library.skipped]
    assert [r.key for r in warned] == ["evidence.skipped.kind", "evidence.skipped.kinds"]
    assert str(warned[1]) == (
        "4 files of kinds moot does not read are left out ((none), .png, .xlsx)"
    )


def test_two_documents_of_one_name_keep_the_first(tmp_path: Path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "report.md").write_text(f"Report from {folder}.")
    library = open_library([tmp_path / "a" / "report.md", tmp_path / "b" / "report.md"])
    assert [p.text for p in library.passages] == ["Report from a."]
    assert _reasons(library) == {"report.md": "evidence.skipped.same_name"}


def test_a_cache_folder_that_cannot_be_written_is_one_line(tmp_path: Path):
    (tmp_path / "note.txt").write_text("A note.")
    blocked = tmp_path / "file-in-the-way"
    blocked.write_text("")
    error = _usage([tmp_path / "note.txt"], cache=blocked / "cache")
    assert error.key == "evidence.cannot_write_cache"


def test_every_warning_key_has_words():
    phrase = Phrase("evidence.skipped.too_big", file="x.pdf", size=3, limit=2)
    assert str(phrase) == "x.pdf is left out: it is 3 bytes, over the limit of 2"
    assert words("zh").error(phrase)["message"] == "已略过 x.pdf：它有 3 字节，超过上限 2"


def test_a_docx_that_would_unpack_past_the_limit_is_left_out_unpacked(
    documents: Path, monkeypatch: pytest.MonkeyPatch
):
    from moot.evidence import read

    monkeypatch.setattr(read, "DOCX_UNPACKED_LIMIT", 10_000)  # a real DOCX unpacks to more
    library = open_library([documents])
    assert "review.docx" not in library.files
    assert _reasons(library) == {"review.docx": "evidence.skipped.too_big"}


def test_a_pdf_of_too_many_pages_is_left_out_after_counting_them(
    documents: Path, monkeypatch: pytest.MonkeyPatch
):
    from moot.evidence import read

    monkeypatch.setattr(read, "PDF_PAGE_LIMIT", 3)  # the board pack has 4
    library = open_library([documents])
    assert "board-pack.pdf" not in library.files
    assert _reasons(library) == {"board-pack.pdf": "evidence.skipped.too_many_pages"}
    assert "4 pages, over the limit of 3" in str(library.skipped[0])


def test_hidden_files_and_folders_are_not_walked_or_counted(tmp_path: Path):
    folder = tmp_path / "docs"
    (folder / ".git" / "objects").mkdir(parents=True)
    for i in range(30):
        (folder / ".git" / "objects" / f"{i:02x}").write_bytes(b"\x78\x9c")
    (folder / ".notes.md.swp").write_bytes(b"\x00")
    (folder / ".draft.md").write_text("A hidden draft.")
    (folder / "memo.md").write_text("The memo.")
    library = open_library([folder], max_files=5)
    assert library.files == ["memo.md"]
    assert library.skipped == ()


def test_a_folder_of_100000_files_is_refused_in_one_line_and_leaves_nothing(
    cli: Any, tmp_path: Path
):
    folder = tmp_path / "many"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text("A note.")
    for i in range(100_000):  # links to two files: cheaper to make than 100,000 files
        os.link(folder / ("a.txt" if i % 2 else "b.txt"), folder / f"{i:06}.md")
    out = tmp_path / "out"
    started = time.perf_counter()
    try:
        done = cli(
            "run", "Northwind should hedge its diesel", "--dry-run", "--yes", "--quiet",
            "--evidence", str(folder), "--out", str(out), home=tmp_path / "home",
        )  # fmt: skip
        took = time.perf_counter() - started
    finally:
        shutil.rmtree(folder)  # not left for the next test run's temporary folders to remove
    assert took < 20  # the walk stops at the limit: no hang
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"error: evidence folder {folder} holds more than {MAX_FILES:,} files",
        "hint: name a smaller folder, or the documents themselves",
    ]
    assert not out.exists() and not (tmp_path / "home" / "debates").exists()


def test_one_unreadable_document_named_alone_says_why_in_the_one_line(tmp_path: Path):
    locked = write_pdf(tmp_path / "locked.pdf", PDF_PAGES, password="secret")
    error = _usage([locked])
    assert error.key == "evidence.nothing_readable"
    assert error.message == (
        f"no text to read in the evidence given ({locked}): locked.pdf is left out: it is encrypted"
    )
    assert "加密" in words("zh").error(error)["message"]  # its reason in Chinese too
    (tmp_path / "table.xlsx").write_bytes(b"PK\x03\x04")
    assert "moot reads only .md" in _usage([tmp_path / "table.xlsx"]).message


def test_a_dangling_link_named_alone_is_one_line(tmp_path: Path):
    (tmp_path / "gone.md").symlink_to(tmp_path / "deleted.md")
    error = _usage([tmp_path / "gone.md"])
    assert error.key == "evidence.nothing_readable" and "cannot be read" in error.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_file_or_folder_is_left_out_with_a_warning_and_the_rest_used(
    tmp_path: Path,
):
    folder = tmp_path / "docs"
    (folder / "shut").mkdir(parents=True)
    (folder / "shut" / "inside.md").write_text("Never read.")
    (folder / "secret.md").write_text("Not for reading.")
    (folder / "memo.md").write_text("The memo.")
    (folder / "secret.md").chmod(0)
    (folder / "shut").chmod(0)
    try:
        library = open_library([folder])
        assert library.files == ["memo.md"]
        assert _reasons(library) == {
            "secret.md": "records.files.cannot_read",
            "shut": "records.files.cannot_read",
        }
        said = {s.file: str(s) for s in library.skipped}
        assert said["shut"].startswith(f"evidence folder {folder / 'shut'} cannot be read")
        assert said["secret.md"].startswith(f"evidence file {folder / 'secret.md'} cannot be")
        assert "证据文件夹" in words("zh").error(library.skipped[0].reason)["message"]
    finally:
        (folder / "shut").chmod(0o755)
        (folder / "secret.md").chmod(0o644)
