"""Decision debates through the real CLI on the tiny real models (short turns, quick/standard)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REAL_HOME, Cli

pytestmark = pytest.mark.real

REAL = {"MOOT_HOME": str(REAL_HOME)}  # where the real models are installed

TOPIC = "Postgres vs MySQL vs SQLite for a small analytics app"
SHORT = ["--format", "decision", "--yes", "--max-tokens", "48", "--seed", "3"]
KEYS = [
    "topic",
    "date",
    "positions",
    "out_of_scope",
    "recommendation",
    "tied_on_axis",
    "confidence",
    "rounds",
    "preset",
    "degraded",  # the flagged or failed turns the document stands on ([] when none)
]
HEADINGS = {
    "en": [
        "## Decision",
        "## Confidence",
        "## Key reasoning",
        "## Irreducible trade-offs",
        "## What would change this decision",
        "## Dissenting position",
    ],
    "zh": [
        "## 决定",
        "## 置信度",
        "## 关键理由",
        "## 无法消解的权衡",
        "## 什么会改变这一决定",
        "## 异议立场",
    ],
}


def run_ok(cli: Cli, *args: str, cwd: Path | None = None) -> str:
    """`moot run ARGS` on the real models, in a process of its own as a user would run it."""
    proc = cli.subprocess("run", *args, env=REAL, cwd=cwd, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def front_matter(text: str) -> dict[str, Any]:
    """The YAML between the document's --- lines (in a file or in the terminal output)."""
    start = text.index("---\ntopic:")
    head = text[start + 4 : text.index("\n---", start + 4)]
    data = yaml.safe_load(head)
    assert isinstance(data, dict) and list(data) == KEYS
    return data


def check_saved(out_dir: Path, language: str) -> dict[str, Any]:
    data = json.loads((out_dir / "transcript.json").read_text(encoding="utf-8"))
    assert data["format"] == "decision" and data["language"] == language
    assert data["stop_reason"] == "completed"
    assert {"frontmatter", "decision", "confidence", "key_reasoning"} <= set(data["result"])
    assert {"trade_offs", "what_would_change", "dissent"} <= set(data["result"])
    openings = [t for t in data["turns"] if t["step"] == "opening"]
    assert len(openings) == 3 and all(t["completion_tokens"] > 0 for t in openings)
    md = (out_dir / "decision.md").read_text(encoding="utf-8")
    fm = front_matter(md)
    assert fm["recommendation"] in [*fm["positions"], "none"]
    assert fm["confidence"] in ("low", "medium", "high")
    body = md[md.index("\n---\n", 4) :]
    found = [body.index(h) for h in HEADINGS[language]]
    assert found == sorted(found)
    return data


def test_the_example_quick_on_smollm2_is_printed_and_nothing_is_saved(
    tmp_path: Path, cli: Cli
) -> None:
    debates = REAL_HOME / "debates"
    before = sorted(debates.rglob("*")) if debates.is_dir() else []
    out = run_ok(cli, TOPIC, "--preset", "quick", *SHORT, cwd=tmp_path)
    fm = front_matter(out)
    assert fm["positions"] == ["Postgres", "MySQL", "SQLite"]
    assert (fm["preset"], fm["rounds"]) == ("quick", 0)
    assert "Opening · 🔵 Debater A · Postgres" in out and "Key reasoning" in out
    assert "saved:" not in out
    assert (sorted(debates.rglob("*")) if debates.is_dir() else []) == before
    assert list(tmp_path.iterdir()) == []


def test_standard_on_smollm2_saved_with_out(tmp_path: Path, cli: Cli) -> None:
    run_ok(cli, TOPIC, *SHORT, "--preset", "standard", "--out", str(tmp_path))
    data = check_saved(tmp_path, "en")
    steps = [t["step"] for t in data["turns"]]
    assert steps == ["opening"] * 3 + ["rebut"] * 3 + ["steelman"] * 3 + [
        "judge_decision",
        "judge_document",
    ]
    assert {m["id"] for m in data["models"].values()} == {"smollm2-135m"}
    assert data["result"]["frontmatter"]["preset"] == "standard"
    # Each debater goes on its own conversation: its rebuttal's prompt holds its opening's
    # prompt and reply, which the model computed once already and reuses.
    for slot in "abc":
        opening, rebut = [t for t in data["turns"] if t["role"] == f"debater_{slot}"][:2]
        assert rebut["prompt_tokens"] > opening["prompt_tokens"] + opening["completion_tokens"]
        assert rebut["cached_tokens"] >= opening["prompt_tokens"], slot


def test_two_models_as_opponents(tmp_path: Path, cli: Cli) -> None:
    run_ok(
        cli,
        TOPIC,
        *SHORT,
        "--preset",
        "quick",
        "--role",
        "debater_b=gemma3-270m",
        "--out",
        str(tmp_path),
    )
    data = check_saved(tmp_path, "en")
    assert data["models"]["debater_b"]["id"] == "gemma3-270m"
    assert data["models"]["debater_a"]["id"] == data["models"]["judge"]["id"] == "smollm2-135m"
    models = {t["role"]: t["model"] for t in data["turns"] if t["step"] == "opening"}
    assert models["debater_b"] != models["debater_a"]


def test_chinese_on_gemma(tmp_path: Path, cli: Cli) -> None:
    topic = "PostgreSQL 还是 MySQL 适合小型分析应用？"
    run_ok(
        cli, topic, *SHORT, "--preset", "quick", "--model", "gemma3-270m", "--out", str(tmp_path)
    )
    data = check_saved(tmp_path, "zh")
    fm = data["result"]["frontmatter"]
    assert fm["topic"] == topic and fm["positions"] == ["PostgreSQL", "MySQL"]
    assert {m["id"] for m in data["models"].values()} == {"gemma3-270m"}
