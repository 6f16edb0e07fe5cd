"""Challenge debates saved before a verdict's disagreements named their point
(tests/fixtures/challenge-pre-point, written by `moot` at commit 9fa1151; see its README) are
checked, replayed and shown as they were saved."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Cli

OLD = REPO / "tests" / "fixtures" / "challenge-pre-point"
SAVED = ("dry", "judged", "judged-zh")
# What the judge of `judged` and `judged-zh` said of their one disagreement, and how the
# document now words it: without a point, both sides.
DISAGREEMENT = {
    "judged": (
        {
            "proposer": "A ban frees streets for people.",
            "challenger": "A ban strands those who cannot walk far.",
        },
        "Proposer argues A ban frees streets for people, Challenger argues A ban strands "
        "those who cannot walk far",
    ),
    "judged-zh": (
        {"proposer": "禁车让街道回归行人。", "challenger": "禁车使行动不便者出行困难。"},
        "提议方主张禁车让街道回归行人，挑战方主张禁车使行动不便者出行困难",
    ),
}


def _saved(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _flat(text: str) -> str:
    return "".join(text.split())


def _copy(tmp_path: Path, name: str) -> Path:
    """A writable copy of a fixture's folder (a re-judging, a resume writes in it)."""
    folder = tmp_path / name
    shutil.copytree(OLD / name, folder)
    return folder


def test_the_fixtures_are_of_the_old_form() -> None:
    """What makes them old: disagreements without a point, sides as backend and model."""
    for name, (said, _) in DISAGREEMENT.items():
        saved = _saved(OLD / name / "transcript.json")
        assert "schema" not in saved and saved["turns"][-1]["step"] == "verdict"
        assert saved["turns"][-1]["data"]["disagreements"] == [said]
        assert saved["result"]["proposer"] == {"backend": "scripted", "model": "echo:smollm2-135m"}


@pytest.mark.parametrize("name", SAVED)
def test_an_old_challenge_debate_is_checked(cli: Cli, tmp_path: Path, name: str) -> None:
    transcript = OLD / name / "transcript.json"
    proc = cli("check", str(transcript), "--json", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["turns"]) == len(_saved(transcript)["turns"])
    assert report["summary"]["over_limit"] == 0 and report["summary"]["undeclared"] == 0


def test_an_old_dry_run_replays_turn_for_turn(cli: Cli, tmp_path: Path) -> None:
    proc = cli("replay", str(OLD / "dry" / "transcript.json"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "all 3 turns match" in proc.stdout


@pytest.mark.parametrize("name", ["judged", "judged-zh"])
def test_an_old_judged_debate_replays_up_to_its_verdict(
    cli: Cli, tmp_path: Path, name: str
) -> None:
    """Every speech replays as saved; the verdict differs: a dry run's judge names nothing,
    the saved one named a disagreement (README)."""
    last = len(_saved(OLD / name / "transcript.json")["turns"]) - 1
    proc = cli("replay", str(OLD / name / "transcript.json"), home=tmp_path)
    assert proc.returncode == 1, proc.stderr
    differs = {"judged": f"turn {last} differs", "judged-zh": f"{last}号发言不一致"}[name]
    assert proc.stdout.startswith(differs)


@pytest.mark.parametrize("name", SAVED)
def test_an_old_challenge_debate_is_shown_as_saved(cli: Cli, tmp_path: Path, name: str) -> None:
    from moot import history
    from moot.web import wire

    proc = cli("history", "show", str(OLD / name), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = (OLD / name / "debate.md").read_text(encoding="utf-8")
    said = DISAGREEMENT.get(name, ({"challenger": "—"},))[0]["challenger"]
    assert said in document and _flat(said) in _flat(proc.stdout)  # as the terminal wraps it
    debate = history.find(str(OLD / name))
    assert debate.format == "challenge" and debate.finished
    shown = wire.saved_debate(debate)
    assert len(shown["list"]) == debate.turns > 0
    assert shown["document"] is not None and said in shown["document"]


@pytest.mark.parametrize("name", ["judged", "judged-zh"])
def test_an_old_verdict_renders_without_a_point(name: str) -> None:
    """Today's document of the saved result: the disagreement as both sides' line, the
    sides and the winner by the model they ran (they had no tool then)."""
    from moot.formats.challenge.text import render
    from moot.transcript import load

    transcript, _ = load(OLD / name / "transcript.json")
    document = render(transcript)
    assert f"- {DISAGREEMENT[name][1]}\n" in document
    assert "echo:smollm2-135m (scripted)" in document
