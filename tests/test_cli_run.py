"""`moot run` through the real CLI: bad input is one line, a hint, exit 2; a dry run works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", ""], "motion is empty"),
        (["run", "x", "--min-score", "11"], "--min-score"),
        (["run", "x", "--min-score", "4"], "--min-score"),
        (["run", "x", "--max-rounds", "2"], "--max-rounds"),
        (["run", "x", "--max-rounds", "9"], "--max-rounds"),
        (["run", "x", "--role", "king=smollm2-135m"], "unknown role"),
        (["run", "x", "--temperature", "judge=hot"], "temperature"),
        (["run", "x", "--model", "no-such-model"], "no-such-model"),
        (["run", "x", "--format", "parliament"], "unknown format"),
    ],
)
def test_bad_input_is_one_line_with_a_hint_and_exit_2(
    tmp_path: Path, args: list[str], needle: str, cli: Cli
) -> None:
    proc = cli(*args, home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and needle in lines[0]
    assert lines[1].startswith("hint:")


def test_dry_run_writes_transcript_and_brief(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    proc = cli(
        "run",
        "cats are better than dogs",
        "--dry-run",
        "--seed",
        "1",
        "--max-rounds",
        "3",
        "--out",
        str(out),
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "transcript.json").read_text())
    assert data["motion"] == "This House Believes That cats are better than dogs"
    assert data["stop_reason"] in ("converged", "hard_cap")
    assert "🔵 Proposition" in proc.stdout and "📋 Debate Brief" in proc.stdout


def test_an_unwritable_out_folder_is_reported_before_the_debate(tmp_path: Path, cli: Cli) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    proc = cli(
        "run",
        "cats are better than dogs",
        "--dry-run",
        "--max-rounds",
        "3",
        "--out",
        str(blocked / "sub"),
        home=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: cannot write to") and "Traceback" not in proc.stderr
    assert "🔵" not in proc.stdout  # no turn was spoken


def test_template_syntax_in_a_motion_is_only_text(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    motion = "{{ 7*7 }} {% for x in range(3) %}x{% endfor %} \u202eright-to-left\x07 🎉"
    proc = cli("run", motion, "--dry-run", "--max-rounds", "3", "--out", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "transcript.json").read_text())
    assert "{{ 7*7 }}" in data["motion"]
    assert data["turns"] and all("49" not in t["text"] for t in data["turns"])
