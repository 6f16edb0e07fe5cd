"""A judge that gives no answer within the call time limit: the terminal says so with the
option that gives it longer, the saved debate records it, and the history says the debate
finished without its judge's answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from moot.errors import CallTimeoutError
from moot.inference import scripted

MOTIONS = {"en": "Cities should ban cars", "zh": "城市应该禁止私家车进入市中心吗？"}
SAID = {
    "en": "Judge: no reply within 240 s; hint: raise --call-timeout to give each model call longer",
    "zh": "裁判：240秒内没有作答；提示：调高 --call-timeout，给每次模型调用更长时间",
}


@pytest.fixture(name="slow_judge")
def _slow_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dry run whose challenge judge never gives its verdict in time; every other seat
    answers as the dry run's scripted models do."""
    minimal = scripted._minimal

    def reply(schema: Any) -> Any:
        if schema.__name__ == "ChallengeVerdict":
            raise CallTimeoutError(seconds=240, model="echo:judge")
        return minimal(schema)

    monkeypatch.setattr(scripted, "_minimal", reply)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_verdict_that_times_out_is_said_with_its_hint_and_recorded(
    lang: str, cli: Cli, tmp_path: Path, slow_judge: None
) -> None:
    import json

    out, home = tmp_path / "out", tmp_path / "home"
    args = ["--format", "challenge", "--rounds", "1", "--dry-run", "--yes", "--out", str(out)]
    done = cli("run", MOTIONS[lang], "--lang", lang, *args, home=home)
    assert done.returncode == 0, done.stderr
    printed = " ".join(done.stdout.split())  # a narrow terminal wraps it
    assert SAID[lang] in printed and printed.count("--call-timeout") == 1
    transcript = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    [failure] = transcript["result"]["failures"]
    assert failure["role"] == "judge" and failure["error"].startswith("timeout:")
    assert transcript["result"]["verdict"] is None
    listed = cli("history", "list", home=home)
    assert "finished, the judge did not answer, dry run" in " ".join(listed.stdout.split())
