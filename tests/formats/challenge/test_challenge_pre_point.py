"""Challenge debates saved before a verdict's disagreements named their point
(tests/fixtures/challenge-pre-point, written by `moot` at commit 9fa1151; see its README) are
re-judged, checked, replayed, resumed and shown as they were saved, and never rewritten."""

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
def test_an_old_challenge_debate_is_judged_again(
    cli: Cli, tmp_path: Path, name: str, dry_models: tuple[str, str]
) -> None:
    folder = _copy(tmp_path, name)
    proc = cli("judge", str(folder / "transcript.json"), "--judge", dry_models[0], "--dry-run",
               "--json", home=tmp_path / "home")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [result] = json.loads(proc.stdout)
    saved = _saved(OLD / name / "transcript.json")
    verdict = saved["turns"][-1]["data"]
    [judged] = result["turns"]
    assert result["format"] == "challenge" and judged["step"] == "verdict"
    assert judged["index"] == len(saved["turns"]) - 1
    # The saved reply read as it was: each disagreement's sides, its point empty.
    original = judged["original"]
    assert original["disagreements"] == [{"point": "", **d} for d in verdict["disagreements"]]
    assert {k: original[k] for k in verdict if k != "disagreements"} == {
        k: v for k, v in verdict.items() if k != "disagreements"
    }
    assert judged["agreement"]["verdict"][0] == verdict["winner"]
    assert judged["new"] is not None and judged["error"] is None
    # Its result beside the debate; the debate's own files as they were.
    written = _files(folder)
    assert written.pop("judged/echo_a.json")
    assert written == _files(OLD / name)


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
    from moot.records.journal import load

    transcript, _ = load(OLD / name / "transcript.json")
    document = render(transcript)
    assert f"- {DISAGREEMENT[name][1]}\n" in document
    assert "echo:smollm2-135m (scripted)" in document


def test_an_old_debate_stopped_after_its_verdict_resumes_into_it(cli: Cli, tmp_path: Path) -> None:
    """The journal holds every turn of `judged`, its verdict among them: resumed, the debate
    ends as it did, the saved verdict kept as it was said and worded as today's document
    and state file word a disagreement without a point."""
    folder = _copy(tmp_path, "interrupted")
    home = tmp_path / "home"
    proc = cli("resume", str(folder), "--quiet", home=home)
    assert proc.returncode == 0, proc.stderr
    resumed, finished = (
        _saved(folder / "transcript.json"),
        _saved(OLD / "judged" / "transcript.json"),
    )
    assert resumed["turns"] == finished["turns"]
    assert resumed["result"]["verdict"] == finished["result"]["verdict"]
    said, line = DISAGREEMENT["judged"]
    document = (folder / "debate.md").read_text(encoding="utf-8")
    assert f"- {line}\n" in document
    state = _saved(Path(resumed["result"]["state_file"]))
    assert state["verdict"]["disagreements"] == [line]
    assert state["moot"]["verdict"]["disagreements"] == [said]


def test_only_a_saved_reply_may_lack_a_point() -> None:
    """A judge asked now must name each disagreement's point (the grammar, then validation),
    and a saved disagreement is held to today's bounds in everything else."""
    from pydantic import ValidationError

    from moot.formats.challenge.schemas import verdict_schema
    from moot.records.transcript import Turn, saved_reply

    schema = verdict_schema("en")
    assert "point" in schema.model_json_schema()["$defs"]["Disagreement"]["required"]
    verdict = _saved(OLD / "judged" / "transcript.json")["turns"][-1]["data"]
    with pytest.raises(ValidationError, match=r"disagreements\.0\.point"):
        schema.model_validate_json(json.dumps(verdict))
    turn = Turn(index=5, round=None, role="judge", step="verdict", model="m", temperature=0.2,
                text="", data=verdict)  # fmt: skip
    assert saved_reply(turn, schema).model_dump()["disagreements"][0]["point"] == ""
    empty = {**verdict, "disagreements": [{"proposer": "", "challenger": "x"}]}
    with pytest.raises(ValidationError, match=r"disagreements\.0\.proposer"):
        saved_reply(turn.model_copy(update={"data": empty}), schema)


@pytest.mark.parametrize("name", SAVED)
def test_an_old_state_file_reads_in_its_debates_language(name: str) -> None:
    """The state file that moot wrote of each debate reads in the rulebook's shape, its
    disagreements as lines without a point, in the language of the debate's topic."""
    from moot.formats.challenge.state import read_state

    result = _saved(OLD / name / "transcript.json")["result"]
    read = read_state(OLD / "state" / f"{result['id']}.json")
    assert read.id == result["id"] and read.status == "completed"
    assert read.verdict is not None and read.verdict.winner == "echo:smollm2-135m"
    assert read.moot.language == ("zh" if name == "judged-zh" else "en")
    lines = [DISAGREEMENT[name][1]] if name in DISAGREEMENT else []
    assert read.verdict.disagreements == lines
    # The verdict as that moot's state file kept it: five of the judge's keys, as it said them.
    keys = ("winner", "reasoning", "agreements", "disagreements", "recommendation")
    assert read.moot.verdict == {k: result["verdict"][k] for k in keys}
    if name == "judged-zh":
        assert read.verdict.agreements == ["汽车使市中心拥堵（证据：双方都引用了拥堵数据）"]
