"""Saved debates written before moot's records had a schema version (tests/fixtures/records-v0,
written by `moot run --dry-run` at commit 164ddd4; see its README) still resume, replay, check,
re-judge and show."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from conftest import REPO, Cli

OLD = REPO / "tests" / "fixtures" / "records-v0"
FORMATS = ("oxford", "decision", "challenge", "adversarial")


def _copy(tmp_path: Path, fmt: str, state: str) -> Path:
    """A writable copy of a fixture's folder (a resume, a re-judging write beside it)."""
    folder = tmp_path / f"{fmt}-{state}"
    shutil.copytree(OLD / fmt / state, folder)
    return folder


def _saved(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_old_transcript_replays_turn_for_turn(cli: Cli, tmp_path: Path, fmt: str) -> None:
    proc = cli("replay", str(OLD / fmt / "finished" / "transcript.json"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    turns = len(_saved(OLD / fmt / "finished" / "transcript.json")["turns"])  # type: ignore[arg-type]
    assert f"all {turns} turns match" in proc.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_old_transcript_is_checked(cli: Cli, tmp_path: Path, fmt: str) -> None:
    proc = cli("check", str(OLD / fmt / "finished" / "transcript.json"), "--json", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    turns = _saved(OLD / fmt / "finished" / "transcript.json")["turns"]
    assert len(report["turns"]) == len(turns)  # type: ignore[arg-type]
    assert report["summary"]["over_limit"] == 0 and report["summary"]["undeclared"] == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_old_transcript_is_judged_again(
    cli: Cli, tmp_path: Path, fmt: str, dry_models: tuple[str, str]
) -> None:
    transcript = _copy(tmp_path, fmt, "finished") / "transcript.json"
    proc = cli("judge", str(transcript), "--judge", dry_models[0], "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    [result] = json.loads(proc.stdout)
    assert result["format"] == fmt and result["turns"]
    assert (transcript.parent / "judged" / "echo_a.json").is_file()


@pytest.mark.parametrize("fmt", ["oxford", "decision"])
def test_an_old_interrupted_journal_resumes_into_the_saved_debate(
    cli: Cli, tmp_path: Path, fmt: str
) -> None:
    """The interrupted journal holds the first lines of the finished debate's: resumed, the
    same seeded, scripted debate ends as it did. Its header, older than the day a debate
    began, does not say when it began: the resumed debate is dated the day it is resumed."""
    folder = _copy(tmp_path, fmt, "interrupted")
    first = date.today().isoformat()
    proc = cli("resume", str(folder), "--quiet", home=tmp_path / "home")
    days = {first, date.today().isoformat()}  # the run may cross midnight
    assert proc.returncode == 0, proc.stderr
    resumed, finished = (
        _saved(folder / "transcript.json"),
        _saved(OLD / fmt / "finished" / "transcript.json"),
    )
    assert resumed["began"] in days and "began" not in finished
    if fmt == "decision":
        assert _dated(resumed) in days and _dated(finished) == "2026-12-03"
    # A parameter newer than the record takes its default: no documents given (evidence []),
    # nothing of them kept (keep_sources false).
    assert resumed["params"].pop("evidence", []) == []
    assert resumed["params"].pop("keep_sources", False) is False
    for key in ("turns", "scores", "stop_reason", "result", "params", "models", "seed"):
        assert resumed[key] == finished[key], key
    # The lines it goes on with are of today's form: a score written now carries the
    # threshold the debate's params hold (an old line, without it, reads as None).
    lines = _records(folder / "journal.jsonl")
    for line in lines:
        if line["type"] == "score" and "threshold" in line:
            assert line.pop("threshold") == resumed["params"]["min_score"]  # type: ignore[index]
    assert lines == _records(OLD / fmt / "finished" / "journal.jsonl")


def test_a_resumed_decision_is_dated_the_day_it_began(cli: Cli, tmp_path: Path) -> None:
    """A header that says the day the debate began (every one moot writes now): resumed on
    any later day, the decision document is dated that day, and is the finished one."""
    folder = _copy(tmp_path, "decision", "interrupted")
    journal = folder / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    lines[0] = json.dumps({**header, "began": "2026-12-03"})
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = cli("resume", str(folder), "--quiet", home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    resumed = _saved(folder / "transcript.json")
    finished = _saved(OLD / "decision" / "finished" / "transcript.json")
    assert resumed["began"] == "2026-12-03"
    assert resumed["result"] == finished["result"]  # its front matter's date included
    document = (folder / "decision.md").read_text(encoding="utf-8")
    assert "date: 2026-12-03" in document
    # The finished one's document, then every speech (which a document now ends with).
    old = (OLD / "decision" / "finished" / "decision.md").read_text(encoding="utf-8")
    assert document.startswith(f"{old.rstrip()}\n\n<!-- moot: every speech -->\n")


def _dated(transcript: dict[str, object]) -> object:
    """A decision transcript's front-matter date, taken out of it (the rest compares)."""
    return transcript["result"]["frontmatter"].pop("date")  # type: ignore[index]


def _records(journal: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


SAVED = [
    *((f, "finished") for f in FORMATS),
    ("oxford", "interrupted"),
    ("decision", "interrupted"),
]


@pytest.mark.parametrize(("fmt", "state"), SAVED)
def test_an_old_saved_debate_shows_on_the_page(tmp_path: Path, fmt: str, state: str) -> None:
    from moot import history
    from moot.web import wire

    debate = history.find(str(OLD / fmt / state))
    assert debate.format == fmt and debate.finished == (state == "finished")
    shown = wire.saved_debate(debate)
    assert len(shown["list"]) == debate.turns > 0
    assert all(t["label"] for t in shown["list"])
    if fmt == "oxford" and state == "finished":
        assert [s["round"] for s in shown["scores"]] == [2, 3]
        assert shown["stop_reason"] == "hard_cap"
