"""`moot run` through the real CLI: bad input is one line, a hint, exit 2; a dry run works."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


DRY_RUNS = [
    ("oxford", "This House Believes That cities should ban cars", ()),
    ("oxford", "本院认为城市应当禁止私家车", ()),
    ("challenge", "This House Believes That cities should ban cars", ()),
    ("challenge", "本院认为城市应当禁止私家车", ()),
    ("decision", "Should we rewrite the service in Rust or harden the Java code?",
     ("--positions", "rewrite in Rust", "--positions", "harden the Java code")),
    ("adversarial", "Should cities ban private cars from their centres?", ("--model", "--model")),
]  # fmt: skip


@pytest.mark.parametrize(("fmt", "motion", "extra"), DRY_RUNS)
def test_a_dry_run_keeps_every_rule(
    tmp_path: Path,
    cli: Cli,
    fmt: str,
    motion: str,
    extra: tuple[str, ...],
    dry_models: tuple[str, str],
) -> None:
    """A dry run is what a run looks like when every model keeps the rules: no turn asked
    again, none flagged, no notice, and a brief built on no degraded turn."""
    if fmt == "adversarial":  # its participants are named: files of no weights
        extra = (extra[0], dry_models[0], extra[1], dry_models[1])
    out = tmp_path / "out"
    args = ("run", motion, "--format", fmt, "--dry-run", "--yes", "--seed", "1", *extra)
    proc = cli(*args, "--out", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    turns = json.loads((out / "transcript.json").read_text(encoding="utf-8"))["turns"]
    kept = [(t["role"], t["step"], t["flags"], t["redraw"]) for t in turns]
    assert all(not flags and redraw is None for _, _, flags, redraw in kept), kept
    said = proc.stdout + proc.stderr
    for words in ("asking again", "degraded turn", "Built on", "重新生成", "降级"):
        assert words not in said
    assert "degraded: []" in said if fmt == "decision" else "degraded:" not in said


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


# -- the rulebook's first step at a terminal ----------------------------------------------


def saved(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "transcript.json").read_text())
    # The format's parameters, beside the run settings the transcript also keeps.
    data["oxford"] = {k: data["params"][k] for k in ("min_score", "max_rounds", "judge_rubric")}
    return data


def test_at_a_terminal_the_motion_is_confirmed_and_the_parameters_offered(
    tmp_path: Path, cli: Cli
) -> None:
    out = tmp_path / "out"
    args = ("Should cities ban cars?", "--dry-run", "--seed", "1", "--out", str(out))
    # Enter keeps the motion and the score; 3 rounds at most; Enter keeps the rubric.
    code, stdout, err = cli.at_a_terminal(tmp_path, "\n\n3\n\n", *args)
    assert code == 0, err
    assert "Motion: This House Believes That cities should ban cars" in stdout
    assert "Completeness score that ends the rounds (5–10) [7.5]" in stdout
    assert "Most rounds (3–8) [5]" in stdout
    assert "How the Completeness Judge answers (checklist, score) [checklist]" in stdout
    data = saved(out)
    assert data["motion"] == "This House Believes That cities should ban cars"
    assert data["oxford"] == {"min_score": 7.5, "max_rounds": 3, "judge_rubric": "checklist"}


def test_at_a_terminal_another_motion_and_values_can_be_typed(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    args = ("Should cities ban cars?", "--dry-run", "--max-rounds", "3", "--out", str(out))
    code, stdout, err = cli.at_a_terminal(tmp_path, "Ban cars from city centres\n9\nscore\n", *args)
    assert code == 0, err
    assert "Most rounds" not in stdout  # given on the command line: not asked again
    data = saved(out)
    assert data["motion"] == "This House Would ban cars from city centres"
    assert data["oxford"] == {"min_score": 9.0, "max_rounds": 3, "judge_rubric": "score"}


def test_a_value_typed_out_of_range_is_refused_naming_its_option(tmp_path: Path, cli: Cli) -> None:
    code, _, err = cli.at_a_terminal(tmp_path, "\n11\n\n\n", "cats are better", "--dry-run")
    assert code == 2 and err.startswith("error: --min-score 11.0 is not allowed")


def test_yes_asks_nothing_at_a_terminal(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    args = ("Should cities ban cars?", "--dry-run", "--yes", "--max-rounds", "3", "--out", str(out))
    code, stdout, err = cli.at_a_terminal(tmp_path, "", *args)
    assert code == 0, err
    assert "Press Enter" not in stdout and "Completeness score" not in stdout
    assert saved(out)["motion"] == "This House Believes That cities should ban cars"


def test_without_a_terminal_nothing_is_asked(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    args = ("Should cities ban cars?", "--dry-run", "--max-rounds", "3", "--out", str(out))
    proc = cli("run", *args, home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert "Press Enter" not in proc.stdout
    assert saved(out)["oxford"] == {"min_score": 7.5, "max_rounds": 3, "judge_rubric": "checklist"}


def test_a_judge_rubric_out_of_its_choices_is_one_line_and_exit_2(tmp_path: Path, cli: Cli) -> None:
    proc = cli("run", "x", "--judge-rubric", "vibes", "--dry-run", home=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --judge-rubric 'vibes'")
    assert proc.stderr.splitlines()[1].startswith("hint:")


@pytest.mark.parametrize(
    ("motion", "heading"),
    [("cats are better than dogs", "💜 Closing Rebuttals"), ("猫比狗好", "💜 总结陈词")],
)
def test_the_closing_is_shown_under_the_rulebooks_label(
    tmp_path: Path, cli: Cli, motion: str, heading: str
) -> None:
    proc = cli("run", motion, "--dry-run", "--max-rounds", "3", "--no-save", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rules = [line for line in proc.stdout.splitlines() if line.startswith("─")]
    assert rules[-1].strip("─ ") == heading  # the rule before the closing carries it


def test_a_chinese_motion_is_confirmed_in_chinese(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    args = ("城市应该禁止汽车吗？", "--dry-run", "--max-rounds", "3", "--out", str(out))
    code, stdout, err = cli.at_a_terminal(tmp_path, "\n\n\n", *args)
    assert code == 0, err
    assert "辩题：本院认为城市应该禁止汽车" in stdout
    assert "按回车保留" in stdout and "结束各轮的完整性分数 (5–10) [7.5]" in stdout
    assert "完整性裁判的作答方式 (checklist, score) [checklist]" in stdout
    assert saved(out)["motion"] == "本院认为城市应该禁止汽车"
