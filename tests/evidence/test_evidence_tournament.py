"""A tournament given documents: every debate of it reads them, cites and is checked, and
its folder keeps the documents' whole text (`--keep-sources`, `keep_sources=True`) only
where the tournament was asked to, as a single debate's does (test_evidence_kept)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import moot

MOTION = "Northwind Logistics should hedge its diesel purchases"


def _debates(out: Path) -> list[Path]:
    plan = json.loads((out / "tournament.json").read_text(encoding="utf-8"))
    folders = [out / "debates" / d["id"] for d in plan["debates"]]
    assert len(folders) == 2  # the two models, sides swapped
    return folders


def _check(folder: Path, documents: Path, *, kept: bool) -> None:
    """FOLDER's debate read DOCUMENTS and used some of their passages; its folder keeps
    their whole text only where KEPT."""
    saved = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    evidence = saved["evidence"]
    assert evidence["paths"] == [str(documents)] and evidence["passages"]
    assert any("evidence" in t for t in saved["turns"])  # its turns were shown passages
    assert (folder / "evidence" / "paragraphs").is_dir() == kept
    assert evidence.get("keep_sources", False) is kept
    header = json.loads((folder / "journal.jsonl").read_text().splitlines()[0])
    assert header["evidence"].get("keep_sources", False) is kept  # what a resume reads


@pytest.mark.parametrize("keep", [True, False])
def test_moot_tournament_keeps_the_documents_in_each_debate_only_with_keep_sources(
    cli: Any, tmp_path: Path, documents: Path, dry_models: tuple[str, str], keep: bool
) -> None:
    a, b = dry_models
    (tmp_path / "m.txt").write_text(MOTION + "\n", encoding="utf-8")
    out = tmp_path / "t"
    done = cli(
        "tournament", "--model", a, "--model", b, "--motions", str(tmp_path / "m.txt"),
        "--dry-run", "--quiet", "--seed", "4", "--max-rounds", "3", "--controls", "0",
        "--bootstrap", "0", "--evidence", str(documents), "--out", str(out),
        *(["--keep-sources"] if keep else []), home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads((out / "tournament.json").read_text(encoding="utf-8"))
    assert plan["params"]["evidence"] == [str(documents)]
    assert plan["params"]["keep_sources"] is keep
    for folder in _debates(out):
        _check(folder, documents, kept=keep)


def test_the_python_tournament_takes_keep_sources_for_each_debate(
    tmp_path: Path, documents: Path, dry_models: tuple[str, str]
) -> None:
    out = tmp_path / "t"
    moot.tournament(
        list(dry_models), [MOTION], seed=4, out=out, run={"dry_run": True}, controls=0,
        bootstrap=0, max_rounds=3, evidence=[str(documents)], keep_sources=True,
    )  # fmt: skip
    for folder in _debates(out):
        _check(folder, documents, kept=True)


def test_a_tournament_refuses_keep_sources_without_documents_in_one_line(
    cli: Any, tmp_path: Path, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    (tmp_path / "m.txt").write_text(MOTION + "\n", encoding="utf-8")
    done = cli(
        "tournament", "--model", a, "--model", b, "--motions", str(tmp_path / "m.txt"),
        "--dry-run", "--keep-sources", "--out", str(tmp_path / "t"), home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 2
    assert "--keep-sources keeps the documents given with --evidence" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "t").exists()
