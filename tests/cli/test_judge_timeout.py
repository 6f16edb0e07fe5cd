"""A judge that gives no answer within the call time limit: the terminal says so with the
option that gives it longer, the saved debate records it with every turn it finished, and
the history says the debate finished without its judge's answer. So for a verdict
(challenge's, the decision's) and for the document the judge writes last (Oxford's brief)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from moot.errors import CallTimeoutError
from moot.inference import scripted

MOTIONS = {"en": "Cities should ban cars", "zh": "城市应该禁止私家车进入市中心吗？"}
SAID = {
    "en": "no reply within 240 s; hint: raise --call-timeout to give each model call longer",
    "zh": "240秒内没有作答；提示：调高 --call-timeout，给每次模型调用更长时间",
}
UNJUDGED = "finished, the judge did not answer, dry run"
# What the format's document says of a judge's reply that never came.
MISSING = {
    "en": "> ⚠️ This {document} is missing the judge's reply: {seat} · {step} (",
    "zh": "> ⚠️ 本{document}缺少裁判的回答：{seat} · {step}（",
}


def slow(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A dry run whose judge never gives its reply of the schema NAME in time; every other
    seat answers as the dry run's scripted models do."""
    minimal = scripted._minimal

    def reply(schema: Any) -> Any:
        if schema.__name__ == name:
            raise CallTimeoutError(seconds=240, model="echo:judge")
        return minimal(schema)

    monkeypatch.setattr(scripted, "_minimal", reply)


def run(cli: Cli, tmp_path: Path, lang: str, *args: str) -> tuple[str, dict[str, Any], Path]:
    """A dry run of ARGS in LANG, saved in OUT: what it printed, and its transcript."""
    out, home = tmp_path / "out", tmp_path / "home"
    given = [*args, "--dry-run", "--yes", "--lang", lang, "--out", str(out)]
    done = cli("run", MOTIONS[lang], *given, home=home)
    assert done.returncode == 0, done.stderr  # the debate ends, not on an error
    printed = " ".join(done.stdout.split())  # a narrow terminal wraps it
    assert SAID[lang] in printed and printed.count("--call-timeout") == 1
    return printed, json.loads((out / "transcript.json").read_text(encoding="utf-8")), out


def flat(shown: str) -> str:
    """What the terminal showed on one line: a quote wrapped at 80 columns is one again."""
    return " ".join(shown.replace("▌", " ").split())


def listed(cli: Cli, tmp_path: Path) -> str:
    return " ".join(cli("history", "list", home=tmp_path / "home").stdout.split())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_verdict_that_times_out_is_said_with_its_hint_and_recorded(
    lang: str, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow(monkeypatch, "ChallengeVerdict")
    printed, transcript, _ = run(cli, tmp_path, lang, "--format", "challenge", "--rounds", "1")
    [failure] = transcript["result"]["failures"]
    assert failure["role"] == "judge" and failure["error"].startswith("timeout:")
    assert transcript["result"]["verdict"] is None
    assert UNJUDGED in listed(cli, tmp_path)


def failed_turn(transcript: dict[str, Any], step: str) -> dict[str, Any]:
    [turn] = [t for t in transcript["turns"] if t["step"] == step]
    assert turn["role"] == "judge" and turn["data"] == {}
    assert turn["note"].startswith("failed: timeout: echo:judge did not finish within 240")
    return dict(turn)


POSITIONS = {"en": ("Ban them", "Keep them"), "zh": ("禁止", "保留")}
DECISION = {
    "en": {"document": "decision document", "seat": "Judge", "step": "decision"},
    "zh": {"document": "决策文档", "seat": "评审", "step": "决定"},
}


def decide(cli: Cli, tmp_path: Path, lang: str) -> tuple[str, dict[str, Any], Path]:
    a, b = POSITIONS[lang]
    args = ["--format", "decision", "--rounds", "1", "--positions", a, "--positions", b]
    return run(cli, tmp_path, lang, *args)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_decision_whose_verdict_times_out_ends_unjudged_with_its_turns_kept(
    lang: str, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow(monkeypatch, "Verdict")
    printed, transcript, out = decide(cli, tmp_path, lang)
    turn = failed_turn(transcript, "judge_decision")
    # Every debater's turn before it is kept; no section is written on a verdict never given.
    steps = [t["step"] for t in transcript["turns"]]
    assert steps.count("opening") >= 2 and "steelman" in steps and turn["index"] == len(steps) - 1
    assert "judge_document" not in steps
    front = transcript["result"]["frontmatter"]
    assert front["recommendation"] is None and front["confidence"] is None
    assert "decision" not in transcript["result"]
    document = (out / "decision.md").read_text(encoding="utf-8")
    assert MISSING[lang].format(**DECISION[lang]) in document
    assert "recommendation: null" in document
    assert UNJUDGED in listed(cli, tmp_path)
    shown = cli("history", "show", str(out), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    assert MISSING[lang].format(**DECISION[lang])[2:] in flat(shown.stdout)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_decision_whose_sections_time_out_keeps_its_verdict_and_ends_unjudged(
    lang: str, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow(monkeypatch, "DecisionSections")
    printed, transcript, out = decide(cli, tmp_path, lang)
    failed_turn(transcript, "judge_document")
    result = transcript["result"]
    assert result["frontmatter"]["recommendation"] is not None and "decision" in result
    assert "dissent" not in result
    document = (out / "decision.md").read_text(encoding="utf-8")
    said = {**DECISION[lang], "step": DECISION[lang]["document"]}
    assert MISSING[lang].format(**said) in document
    assert UNJUDGED in listed(cli, tmp_path)


BRIEF = {
    "en": {"document": "brief", "seat": "Judge", "step": "brief"},
    "zh": {"document": "辩论简报", "seat": "完整性裁判", "step": "辩论简报"},
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_oxford_brief_that_times_out_ends_unjudged_with_its_turns_kept(
    lang: str, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow(monkeypatch, "Brief")
    printed, transcript, out = run(cli, tmp_path, lang, "--max-rounds", "3")
    turn = failed_turn(transcript, "brief")
    steps = [t["step"] for t in transcript["turns"]]
    assert "verdict" in steps and turn["index"] == len(steps) - 1  # the closing is kept
    assert transcript["result"] == {}
    document = (out / "debate.md").read_text(encoding="utf-8")
    assert MISSING[lang].format(**BRIEF[lang]) in document
    assert UNJUDGED in listed(cli, tmp_path)
    shown = cli("history", "show", str(out), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    assert MISSING[lang].format(**BRIEF[lang])[2:] in flat(shown.stdout)


def test_the_page_is_told_an_unsaved_decision_ended_unjudged(
    monkeypatch: pytest.MonkeyPatch, moot_home: Path
) -> None:
    """A decision is saved only when asked: the page's end of a debate (its `done` event)
    reads whether its judge answered from the debate itself, not from a folder."""
    import moot
    from moot.web import runs

    slow(monkeypatch, "Verdict")
    result = moot.debate(
        "Cities should ban cars",
        format="decision",
        positions=list(POSITIONS["en"]),
        rounds=1,
        run={"dry_run": True},
    )
    assert result.folder is None
    assert runs.done(result)["unjudged"] is True
