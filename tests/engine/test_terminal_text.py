"""Untrusted text reaches the terminal as text: escape sequences and rich markup in a motion,
in model output or in a saved file are shown, never obeyed; the files keep the exact text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b1m[link=file:///etc/passwd]x[/link][blink]b[/blink]"
FORMATS = {
    "oxford": ["--max-rounds", "3"],
    "decision": ["--positions", "tea", "--positions", "coffee", "--yes", "--rounds", "1"],
    "challenge": ["--rounds", "1"],
    "adversarial": ["--rounds", "1"],
}


def assert_inert(output: str) -> None:
    for char in ("\x1b", "\x07", "\x9b"):
        assert char not in output, f"{char!r} reached the terminal"
    assert "\\x1b" in output  # shown, escaped
    assert "[blink]b[/blink]" in "".join(output.split())  # markup shown, not obeyed


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_live_view_shows_a_hostile_motion_as_text(
    tmp_path: Path, cli: Cli, fmt: str, dry_models: tuple[str, str]
) -> None:
    motion = f"tea {HOSTILE} is good"
    models = ["--model", dry_models[0], "--model", dry_models[1]] if fmt == "adversarial" else []
    out = tmp_path / "out"
    proc = cli(
        "run", motion, "--format", fmt, "--dry-run", "--out", str(out), *FORMATS[fmt], *models,
        home=tmp_path / "home",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout + proc.stderr)
    saved = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    assert HOSTILE in saved["motion"]  # the file keeps the exact text


def test_the_live_view_names_no_round_after_the_last() -> None:
    import io

    from rich.console import Console

    from moot.events import TurnStarted
    from moot.render import LiveView

    out = io.StringIO()
    view = LiveView(Console(file=out, width=60, color_system=None), round_label="Round {n}")
    started = [
        (1, "proposer", "opening"),
        (1, "challenger", "response"),
        (None, "summariser", "summary"),  # after the rounds, whatever the step
        (None, "judge", "verdict"),
        (4, "proposition", "rebuttal"),  # an oxford closing step numbered as before
    ]
    for index, (rnd, role, step) in enumerate(started):
        view(TurnStarted(index, rnd, role, step, f"{role} {step}", streams=False))
    shown = out.getvalue()
    assert shown.count("Round 1") == 1
    assert "None" not in shown and "Round 4" not in shown
    rules = [line for line in shown.splitlines() if line and set(line) == {"─"}]
    assert len(rules) == 1  # one plain rule where the rounds end
    assert shown.index("Round 1") < shown.index(rules[0]) < shown.index("summariser summary")


def test_the_live_view_puts_each_notice_on_its_own_line() -> None:
    import io

    from rich.console import Console

    from moot.events import Notice, Token, TurnFinished, TurnStarted
    from moot.records.transcript import Turn
    from moot.render import LiveView

    out = io.StringIO()
    view = LiveView(Console(file=out, width=200, color_system=None))
    speech = "You're ready to take to the stage."
    turn = Turn.model_validate(
        {"index": 0, "round": 1, "role": "proposition", "step": "speech", "model": "m",
         "temperature": 0.7, "text": speech}
    )  # fmt: skip
    events = [
        TurnStarted(
            index=0, round=1, role="proposition", step="speech", label="Proposition", streams=True
        ),
        Token(role="proposition", text="You're ready to take "),
        Token(role="proposition", text="to the stage."),
        Notice(level="info", message="🔵 Proposition: narration removed"),
        Notice(level="warn", message="🔵 Proposition: over the limit"),
        TurnFinished(turn=turn, label="Proposition"),
    ]
    for event in events:
        view(event)
    lines = out.getvalue().splitlines()
    assert speech in lines  # the speech ends its line
    at = lines.index(speech)
    assert lines[at + 1 : at + 3] == [
        "🔵 Proposition: narration removed",
        "🔵 Proposition: over the limit",
    ]
    assert lines[at + 3].startswith("m · 0 tokens")  # no blank line before the turn's figures
