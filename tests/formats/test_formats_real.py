"""The challenge and adversarial formats end to end: the real CLI on the tiny real models."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_HOME, Cli

pytestmark = pytest.mark.real

REAL = {"MOOT_HOME": str(REAL_HOME)}  # where the real models are installed

SHORT = ["--max-tokens", "48", "--seed", "3"]
STATE = REAL_HOME / "state" / "debate"
# Gemma's 262k-token vocabulary makes its grammar-constrained JSON the slowest step by far
# (FACTS.md); the Chinese runs let SmolLM2 write the judge's JSON and Gemma do the speaking.
FAST_JUDGE = ["--role", "judge=smollm2-135m"]


def run_ok(cli: Cli, *args: str, tokens: int = 48) -> str:
    """`moot run ARGS` on the real models, in a process of its own as a user would run it,
    each step held to TOKENS (a structured reply to twice that at most)."""
    short = ["--max-tokens", str(tokens), *SHORT[2:]]
    proc = cli.subprocess("run", *args, *short, env=REAL, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture
def state_dir() -> Iterator[Path]:
    """The real moot home's state folder, left as the test found it: a user's own
    last-debate.json is restored and the state files the test wrote are removed."""
    existed = STATE.is_dir()
    before = set(STATE.iterdir()) if existed else set()
    last = STATE / "last-debate.json"
    saved = last.read_bytes() if last.is_file() else None
    yield STATE
    if not existed:
        shutil.rmtree(STATE, ignore_errors=True)
        return
    for path in set(STATE.iterdir()) - before:
        path.unlink()
    if saved is not None:
        last.write_bytes(saved)


def transcript(out: Path, fmt: str, language: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    assert data["format"] == fmt and data["language"] == language
    for key in ("motion", "seed", "models", "turns", "scores", "stop_reason", "result"):
        assert key in data
    assert all(t["text"] for t in data["turns"] if t["step"] != "verdict")
    return data


def check_challenge(out: Path, state_dir: Path, language: str, rounds: int) -> dict[str, Any]:
    data = transcript(out, "challenge", language)
    result = data["result"]
    assert result["status"] == "completed" and result["rounds_completed"] == rounds
    assert result["verdict"]["winner"] in ("proposer", "challenger")
    assert {"reasoning", "agreements", "disagreements", "recommendation"} <= set(result["verdict"])
    state = json.loads(Path(result["state_file"]).read_text(encoding="utf-8"))
    assert Path(result["state_file"]).parent == state_dir
    assert state == json.loads((state_dir / "last-debate.json").read_text(encoding="utf-8"))
    assert state["status"] == "completed" and len(state["exchanges"]) == 2 * rounds
    assert all(x["response"] and x["duration_ms"] > 0 for x in state["exchanges"])
    assert state["moot"]["backends"]["proposer"] == "llama.cpp"
    assert state["proposer"]["model"].endswith(".gguf")
    winner = result["verdict"]["winner"]
    assert state["verdict"]["winner"] == state[winner]["tool"]
    return data


def test_challenge_in_english_on_smollm2(tmp_path: Path, state_dir: Path, cli: Cli) -> None:
    topic = "Should we rewrite the billing service in Rust?"
    out = run_ok(cli, topic, "--format", "challenge", "--rounds", "2", "--out", str(tmp_path))
    data = check_challenge(tmp_path, state_dir, "en", 2)
    assert data["motion"] == topic
    assert {m["id"] for m in data["models"].values()} == {"smollm2-135m"}
    steps = [(t["round"], t["step"]) for t in data["turns"]]
    assert steps == [
        (1, "opening"),
        (1, "response"),
        (2, "defence"),
        (2, "follow_up"),
        (None, "summary"),  # after the rounds: no round number
        (None, "verdict"),
    ]
    assert "Proposer (smollm2-135m)" in out and "Debate Summary" in out
    # Each prompt extends the record the step before saw: the model evaluates only what
    # was said since (the opening, then the response) and serves the rest from its cache.
    opening, response, defence, follow_up = data["turns"][:4]
    assert defence["cached_tokens"] > opening["completion_tokens"] + 5
    extended = defence["cached_tokens"] + response["completion_tokens"] // 2
    assert follow_up["cached_tokens"] > extended
    md = (tmp_path / "debate.md").read_text(encoding="utf-8")
    assert "no deterministic verification" in md and "Round 2 - Challenger (smollm2-135m):" in md


def test_challenge_in_chinese_on_gemma(tmp_path: Path, state_dir: Path, cli: Cli) -> None:
    out = run_ok(
        cli,
        "我们应该用 Rust 重写计费服务吗？",
        "--format",
        "challenge",
        "--rounds",
        "1",
        "--model",
        "gemma3-270m",
        *FAST_JUDGE,
        "--out",
        str(tmp_path),
    )
    data = check_challenge(tmp_path, state_dir, "zh", 1)
    models = {role: m["id"] for role, m in data["models"].items()}
    assert models == {
        "proposer": "gemma3-270m",
        "challenger": "gemma3-270m",
        "summariser": "gemma3-270m",
        "judge": "smollm2-135m",
    }
    assert "提议方 (gemma3-270m)" in out
    # moot's own figures under each turn and the files it saved, in the debate's language
    assert "个词元 · " in out and "已保存：" in out and " tokens · " not in out
    assert "# 辩论总结" in (tmp_path / "debate.md").read_text(encoding="utf-8")


def check_adversarial(out: Path, language: str, names: set[str]) -> dict[str, Any]:
    data = transcript(out, "adversarial", language)
    result = data["result"]
    assert set(result["participants"].values()) == names
    assert result["stop_reason"] in ("resolved", "cap") and data["stop_reason"] in (
        "resolved",
        "cap",
    )
    assert result["winner"] in names and result["final_answer"]
    assert all(r["verdict"]["winner"] in names for r in result["rounds"])
    assert data["turns"][-1]["step"] == "synthesis"
    return data


def test_adversarial_with_two_models(tmp_path: Path, cli: Cli) -> None:
    question = "Is nuclear power safer per TWh than wind?"
    run_ok(
        cli,
        question,
        "--format",
        "adversarial",
        "--model",
        "smollm2-135m",
        "--model",
        "gemma3-270m",
        "--rounds",
        "2",
        "--out",
        str(tmp_path),
    )
    data = check_adversarial(tmp_path, "en", {"smollm2-135m", "gemma3-270m"})
    by_role = {t["role"]: t["model"] for t in data["turns"]}
    assert by_role["participant_1"] == "smollm2-135m"
    assert by_role["participant_2"] == "gemma3-270m"
    assert data["models"]["participant_2"]["sha256"].startswith("a5fd3b62")
    held = data["result"]["rounds_held"]
    assert held in (1, 2)
    revisions = [t for t in data["turns"] if t["step"] == "revise"]
    assert len(revisions) == 2 * (held - 1)
    # The synthesis opens on the record the last judge read (on the same model): the
    # question and the last round's answers come from the cache, not evaluated again.
    last = [t for t in data["turns"] if t["step"] in ("answer", "revise") and t["round"] == held]
    synthesis = data["turns"][-1]
    assert synthesis["cached_tokens"] > sum(t["completion_tokens"] for t in last)


def test_adversarial_in_chinese_on_gemma(tmp_path: Path, cli: Cli) -> None:
    run_ok(
        cli,
        "每太瓦时核电比风电更安全吗？",
        "--format",
        "adversarial",
        "--model",
        "gemma3-270m",
        "--model",
        "gemma3-270m",
        "--rounds",
        "1",
        *FAST_JUDGE,
        "--out",
        str(tmp_path),
        # A conflict the judge names costs a token a 字: 96 tokens cut its JSON short.
        tokens=120,
    )
    data = check_adversarial(tmp_path, "zh", {"gemma3-270m", "gemma3-270m #2"})
    assert data["models"]["judge"]["id"] == "smollm2-135m"
    assert data["models"]["synthesizer"]["id"] == "gemma3-270m"
    assert "# 对抗式评审" in (tmp_path / "debate.md").read_text(encoding="utf-8")
