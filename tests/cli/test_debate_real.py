"""Real debates through the real CLI on the tiny real models (short turns, fewest rounds)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_HOME, Cli

pytestmark = pytest.mark.real

SHORT = ["--max-rounds", "3", "--max-tokens", "48", "--seed", "7"]
REAL = {"MOOT_HOME": str(REAL_HOME)}  # where the real models are installed


def run_ok(cli: Cli, *args: str) -> str:
    """A real debate, in a process of its own as a user would run it; its output."""
    proc = cli.subprocess(*args, env=REAL, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def check_outputs(out_dir: Path, language: str, cli: Cli) -> dict[str, Any]:
    data = json.loads((out_dir / "transcript.json").read_text(encoding="utf-8"))
    # The rulebook's guarantees, as `moot check` reads them back: no limit broken, and every
    # problem the text shows declared by the turn's own flags.
    checked = cli("check", str(out_dir / "transcript.json"), "--json")
    assert checked.returncode == 0, checked.stdout[-3000:]
    summary = json.loads(checked.stdout)["summary"]
    assert summary["over_limit"] == 0 and summary["undeclared"] == 0
    if language == "zh":
        assert summary["language"] == 0
    assert data["format"] == "oxford" and data["language"] == language
    assert data["stop_reason"] in ("converged", "hard_cap")
    assert set(data["result"]) == {"pro", "con", "rebuttals", "attacks", "balance"}
    assert all(v.strip() for v in data["result"].values())
    steps = [t["step"] for t in data["turns"]]
    assert steps[:2] == ["speech", "poi_question"] and steps[-4:] == [
        "rebuttal",
        "rebuttal",
        "verdict",
        "brief",
    ]
    speeches = [t for t in data["turns"] if t["step"] == "speech"]
    assert all(t["completion_tokens"] > 0 and t["text"] for t in speeches)
    assert all(0 < t["ttft_ms"] <= t["duration_ms"] for t in speeches)
    assert data["scores"] and all(0 <= s["score"] <= 10 for s in data["scores"].values())
    md = (out_dir / "debate.md").read_text(encoding="utf-8")
    assert data["motion"] in md
    journal = (out_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum(json.loads(line)["type"] == "turn" for line in journal) == len(data["turns"])
    return data


def test_an_english_debate_with_the_opposition_on_another_model(tmp_path: Path, cli: Cli) -> None:
    """Each model loaded for its seat's turns only; the speakers' KV snapshots wait on disk."""
    out = run_ok(
        cli,
        "run",
        "remote work is better than office work",
        "--role",
        "opposition=gemma3-270m",
        "--one-model-at-a-time",
        "--min-score",  # every round played: no early stop on the judge's expected score
        "10",
        "--out",
        str(tmp_path),
        *SHORT,
    )
    data = check_outputs(tmp_path, "en", cli)
    assert data["motion"] == "This House Believes That remote work is better than office work"
    by_role = {t["role"]: t["model"] for t in data["turns"]}
    assert by_role["opposition"] == "gemma3-270m"
    assert by_role["proposition"] == by_role["judge"] == "smollm2-135m"
    assert data["models"]["judge"]["sha256"].startswith("b179c952")
    assert data["models"]["opposition"]["sha256"].startswith("a5fd3b62")
    assert data["params"]["one_model_at_a_time"] is True
    # Gemma is unloaded for every SmolLM2 turn between the opposition's; its later turns
    # still start from the record it held, read back from disk.
    opposition = [t for t in data["turns"] if t["role"] == "opposition"]
    assert len(opposition) >= 3 and all(t["cached_tokens"] > 0 for t in opposition[1:])
    speeches = [t for t in opposition if t["step"] == "speech"]
    assert len(speeches) == 3 and all(t["cached_tokens"] > 100 for t in speeches)
    # No --n-ctx: the context is what three Oxford rounds need, within SmolLM2's 8,192.
    from moot.formats.base import context_need
    from moot.formats.oxford.flow import FORMAT
    from moot.formats.oxford.schemas import OxfordParams
    from moot.models.memory import default_n_ctx

    need = context_need(FORMAT, OxfordParams(max_rounds=3), "en")
    assert data["params"]["n_ctx"] == default_n_ctx(need, 8192) == 5888
    md = (tmp_path / "debate.md").read_text()
    headings = [
        "📋 Debate Brief",
        "🔵 Proposition Case",
        "🔴 Opposition Case",
        "💜 Key Rebuttal Lines",
        "🟡 Likely Floor Attacks",
        "⚖️ Balanced Assessment",
    ]
    assert [md.index(h) for h in headings] == sorted(md.index(h) for h in headings)
    assert "🔵 Proposition" in out and "🟡 Devil's Advocate" in out and "/ 10" in out


def test_ctrl_c_mid_debate_keeps_every_finished_turn(tmp_path: Path, cli: Cli) -> None:
    proc = cli.popen("run", "cities should ban cars", "--out", str(tmp_path), *SHORT, env=REAL)
    journal = tmp_path / "journal.jsonl"
    deadline = time.monotonic() + 300
    turns: list[dict[str, Any]] = []
    while time.monotonic() < deadline and len(turns) < 3:
        time.sleep(0.2)
        if journal.exists():
            lines = journal.read_text().splitlines()
            turns = [r for r in map(json.loads, lines) if r["type"] == "turn"]
    assert len(turns) >= 3, "the debate did not get going"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "journal.jsonl" in err or "journal.jsonl" in _
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    kept = [r for r in records if r["type"] == "turn"]
    assert len(kept) >= len(turns)
    assert [r["index"] for r in kept] == list(range(len(kept)))
    assert all(r["text"] for r in kept)
    assert not (tmp_path / "transcript.json").exists()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_real_judge_scores_a_substantive_round_above_an_off_topic_one(seed: int) -> None:
    from moot.engine.turns import Engine, Role
    from moot.formats.oxford import flow as oxford
    from moot.formats.oxford.schemas import OxfordParams
    from moot.inference.pool import ModelPool
    from moot.models import store
    from moot.prompts import load_pack
    from moot.records.transcript import Transcript

    motion = "This House Believes That remote work is better than office work"
    rounds = {
        "substantive": {
            "proposition": "Remote work is better than office work. It removes the daily commute, "
            "which costs the average worker nearly an hour, and studies of call-centre staff "
            "found remote workers 13 percent more productive. It widens hiring beyond one city.",
            "opposition": "Office work is better than remote work. Teams that share a room learn "
            "faster: junior staff get feedback in minutes, not days. Remote work blurs home and "
            "office, and surveys show remote workers report more loneliness and longer hours.",
        },
        "off_topic": {"proposition": "I like pizza.", "opposition": ""},
    }
    pool = ModelPool(resolve=store.resolve, n_ctx=2048)
    model = pool.get("smollm2-135m")
    scores = {}
    for name, speeches in rounds.items():
        t = Transcript(format="oxford", motion=motion, language="en", seed=seed, models={})
        engine = Engine(
            pack=load_pack("en", "oxford"), transcript=t, roles={"judge": Role("judge", model, 0.2)}
        )
        common = {"motion": motion, "language": "en", "limits": oxford.LIMITS}
        scores[name] = oxford._judge(engine, 2, speeches, common, OxfordParams().min_score)
    assert scores["substantive"] > scores["off_topic"], scores
    assert scores["off_topic"] <= 3.5


def test_a_motion_too_long_for_the_context_is_refused_with_the_numbers(
    tmp_path: Path, cli: Cli
) -> None:
    # Within the motion's own limit (4,000 characters), far past a 512-token context.
    motion = "remote work is better than office work because " + "evidence " * 430
    assert 3_500 < len(motion) <= 4_000
    args = ["run", motion, "--out", str(tmp_path), "--n-ctx", "512", *SHORT]
    proc = cli.subprocess(*args, env=REAL, timeout=300)
    err = proc.stderr
    assert proc.returncode != 0
    first = err.strip().splitlines()[0]
    assert first.startswith("error: prompt of") and "does not fit the context of 512" in first
    assert "Traceback" not in err
    turns = [
        line
        for line in (tmp_path / "journal.jsonl").read_text().splitlines()
        if '"type": "turn"' in line
    ]
    assert turns == []
