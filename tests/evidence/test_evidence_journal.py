"""A debate given documents that did not finish: its journal keeps, on each turn's line, the
text of the passages the turn cited, so `moot history show` (and the page) show a cited
passage before any transcript is written; a journal from before they were kept still reads,
resumes and shows its turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot import history
from moot.debates.runner import DebateRun, resume_setup
from moot.debates.settings import prepare, settings
from moot.events import Event, TurnFinished
from moot.evidence import open_library
from test_evidence_debates import Citing

MOTION = "Northwind Logistics should hedge its diesel purchases"


def interrupted_debate(folder: Path, documents: Path) -> Citing:
    """A dry-run Oxford debate on DOCUMENTS in FOLDER, stopped (Ctrl-C) once two turns have
    cited: a journal, no transcript. Its model, with what it planted."""
    chosen = settings(
        motion=MOTION, seed=5, params={"max_rounds": 3, "evidence": [str(documents)]},
        run={"dry_run": True},
    )  # fmt: skip
    setup = prepare(chosen, out_dir=folder, check_models=False)
    model = Citing()
    citing: list[Event] = []

    def stop(event: Event) -> None:
        ledger = event.turn.evidence if isinstance(event, TurnFinished) else None
        if ledger and ledger.citations:
            citing.append(event)
            if len(citing) == 2:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        DebateRun(setup, model_factory=lambda ref: model, listeners=[stop]).run()
    assert not (folder / "transcript.json").exists()
    return model


def _lines(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]


def _cited(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return list(turn.get("evidence", {}).get("citations", []))


def test_each_journaled_turn_keeps_the_passages_it_cited_and_nothing_else(
    tmp_path: Path, documents: Path
) -> None:
    folder = tmp_path / "debate"
    interrupted_debate(folder, documents)
    text = {p.id: p.text for p in open_library([documents]).passages}
    turns = [r for r in _lines(folder) if r["type"] == "turn"]
    citing = [t for t in turns if _cited(t)]
    assert len(citing) == 2
    checks = {c["check"] for t in citing for c in _cited(t)}
    assert checks == {"ok", "quote_not_found", "unknown_id"}  # as the model planted them
    for turn in citing:
        ids = {c["id"] for c in _cited(turn) if c["id"]}
        assert ids and turn["passages"] == {i: text[i] for i in ids}  # cited and found
    # A turn that cited nothing has no `passages`; of what a turn was shown, only what it
    # cited is kept.
    assert all("passages" not in t for t in turns if t not in citing)
    shown = {i for t in citing for i in t["evidence"]["shown"]}
    kept = {i for t in citing for i in t["passages"]}
    assert kept < shown
    saved = history.find(str(folder))
    assert saved.status == "interrupted"
    assert history.passages(saved) == {i: text[i] for i in kept}


def test_moot_history_show_gives_an_unfinished_debates_cited_passages(
    cli: Any, tmp_path: Path, documents: Path
) -> None:
    folder = tmp_path / "debate"
    interrupted_debate(folder, documents)
    text = {p.id: p.text for p in open_library([documents]).passages}
    cited = [c for r in _lines(folder) if r["type"] == "turn" for c in _cited(r)]
    found = {c["id"] for c in cited if c["check"] == "ok"}
    shown = cli("history", "show", str(folder), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    out = " ".join(shown.stdout.split())  # as wrapped to the terminal's width
    for i in found:
        assert f"✓ supported: [{i}]" in out
        assert " ".join(text[i].split()) in out
    for check, said in (("unknown_id", "✗ no such passage: ["), ("quote_not_found",
                        "✗ invented quote: [")):  # fmt: skip
        assert out.count(said) == sum(c["check"] == check for c in cited) > 0
    assert "Citations of the documents, checked" in out
    ok = sum(c["check"] == "ok" for c in cited)
    assert f"{len(cited)} cited, {ok} supported, {len(cited) - ok} unsupported" in out

    # A journal written before turns kept their passages: the same, the text said missing.
    lines = _lines(folder)
    for line in lines:
        line.pop("passages", None)
    (folder / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert history.passages(history.find(str(folder))) == {}
    old = cli("history", "show", str(folder), home=tmp_path / "home")
    assert old.returncode == 0, old.stderr
    said = " ".join(old.stdout.split())
    named = sum(c["id"] is not None for c in cited)  # each citation of an id that names one
    assert said.count("its text is not kept here") == named > 0
    assert all(" ".join(text[i].split()) not in said for i in found)


@pytest.mark.parametrize("kept", [True, False])
def test_a_journal_with_or_without_passages_resumes_to_the_whole_ledger(
    tmp_path: Path, documents: Path, kept: bool
) -> None:
    folder = tmp_path / "debate"
    interrupted_debate(folder, documents)
    if not kept:
        lines = _lines(folder)
        for line in lines:
            line.pop("passages", None)
        (folder / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    setup, replay = resume_setup(folder)
    model = Citing()
    DebateRun(setup, model_factory=lambda ref: model, replay=replay).run()
    saved = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    assert all("passages" not in t for t in saved["turns"])  # the transcript's turns as ever
    cited = {c["id"] for t in saved["turns"] for c in t.get("evidence", {}).get("citations", [])}
    assert {i for i in cited if i} <= set(saved["evidence"]["passages"])
