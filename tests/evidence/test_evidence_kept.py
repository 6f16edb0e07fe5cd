"""What a debate's folder keeps of its documents: by default the passages its turns were
shown or cited, in the transcript, and nothing else of any document; with keep_sources
(`--keep-sources`) each document's whole extracted text too, in its evidence cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import moot
from moot.evidence import open_library

MOTION = "Northwind Logistics should hedge its diesel purchases"


def _everything_written(folder: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file()
    )


def _not_used(documents: Path, folder: Path) -> list[str]:
    """The passages of DOCUMENTS that no turn of the debate in FOLDER was shown or cited."""
    used = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))["evidence"]
    assert used["passages"]  # the turns did use some
    return [p.text for p in open_library([documents]).passages if p.id not in used["passages"]]


def _debate(folder: Path, documents: Path, fmt: str = "oxford", **params: Any) -> Any:
    rounds = {"oxford": {"max_rounds": 3}, "decision": {"rounds": 0, "positions": ["a", "b"]}}
    return moot.debate(
        MOTION, format=fmt, seed=3, out=folder, run={"dry_run": True},
        evidence=[str(documents)], **rounds[fmt], **params,
    )  # fmt: skip


@pytest.mark.parametrize("fmt", ["oxford", "decision"])
def test_by_default_the_folder_keeps_only_the_passages_used(
    tmp_path: Path, documents: Path, fmt: str
) -> None:
    folder = tmp_path / "debate"
    _debate(folder, documents, fmt)
    assert not (folder / "evidence").exists()
    written = _everything_written(folder)
    unused = _not_used(documents, folder)
    assert len(unused) > 10  # most of the documents were never shown
    assert [text for text in unused if text in written] == []
    saved = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    assert "keep_sources" not in saved["evidence"]


def test_keep_sources_keeps_every_documents_whole_text(tmp_path: Path, documents: Path) -> None:
    folder = tmp_path / "debate"
    _debate(folder, documents, keep_sources=True)
    paragraphs = list((folder / "evidence" / "paragraphs").iterdir())
    assert len(paragraphs) == len(open_library([documents]).files)  # one for each document
    # The cache keeps each paragraph as read (its line breaks), passages are tidied.
    kept = " ".join(
        " ".join(str(part) for part in paragraph)
        for p in paragraphs
        for paragraph in json.loads(p.read_text(encoding="utf-8"))["paragraphs"]
    )
    kept = " ".join(kept.split())
    assert [text for text in _not_used(documents, folder) if text[:60] not in kept] == []
    saved = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    assert saved["evidence"]["keep_sources"] is True
    header = json.loads((folder / "journal.jsonl").read_text().splitlines()[0])
    assert header["evidence"]["keep_sources"] is True  # what a resumed debate reads


@pytest.mark.parametrize("fmt", ["oxford", "decision", "challenge", "adversarial"])
def test_moot_run_takes_keep_sources_in_every_format(
    cli: Any, tmp_path: Path, documents: Path, fmt: str, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    models = ["--model", a, "--model", b] if fmt == "adversarial" else []
    rounds = {"oxford": ["--max-rounds", "3"], "decision": ["--rounds", "0", "--positions", "a",
              "--positions", "b"]}.get(fmt, ["--rounds", "1"])  # fmt: skip
    for keep, out in ((["--keep-sources"], tmp_path / "kept"), ([], tmp_path / "plain")):
        done = cli(
            "run", MOTION, "--format", fmt, "--dry-run", "--yes", "--quiet", "--seed", "3",
            "--evidence", str(documents), "--out", str(out), *models, *rounds, *keep,
            home=tmp_path / "home",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (out / "evidence" / "paragraphs").is_dir() == bool(keep)


def test_keep_sources_without_documents_is_refused_in_one_line(cli: Any, tmp_path: Path) -> None:
    done = cli(
        "run", MOTION, "--dry-run", "--yes", "--keep-sources", "--out", str(tmp_path / "d"),
        home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 2
    assert "--keep-sources keeps the documents given with --evidence" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "d").exists()
