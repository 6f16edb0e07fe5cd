"""Real tournaments through the real CLI: SmolLM2 against Gemma-3, one motion, one swap
pair (two short debates), on this machine, and one of them again on a local Ray instance,
opening no outside connection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from test_offline import run_audited

pytestmark = pytest.mark.real

MODELS = ("smollm2-135m", "gemma3-270m")
# One swap pair (each model on each side once), the fewest Oxford rounds, short speeches.
DEBATES = 2
SHORT = ["--swaps", "1", "--max-rounds", "3", "--max-tokens", "16", "--seed", "7"]


def audited(tmp_path: Path, args: list[str]) -> str:
    # A tournament is many debates: a longer limit than one debate's.
    proc, connections = run_audited(args, tmp_path, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert connections == []  # offline: nothing but loopback
    return proc.stdout


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The two-model tournament run here, one debate after another."""
    tmp_path = tmp_path_factory.mktemp("local")
    motions = tmp_path / "motions.txt"
    motions.write_text("remote work is better than office work\n", encoding="utf-8")
    out = tmp_path / "t"
    args = ["tournament", "--model", MODELS[0], "--model", MODELS[1]]
    args += ["--motions", str(motions), "--out", str(out), *SHORT]
    return audited(tmp_path, args), out


def check(stdout: str, out: Path) -> dict[str, Any]:
    report = json.loads((out / "ratings.json").read_text())
    assert report["debates_decided"] == report["debates_planned"] == DEBATES
    rows = {r["model"]: r for r in report["models"]}
    assert set(rows) == set(MODELS)
    undecided = report["debates_undecided"]
    assert report["coverage"] == (DEBATES - undecided) / DEBATES
    for r in rows.values():  # an undecided debate is skipped by the ratings
        assert r["wins"] + r["losses"] + r["draws"] == r["debates"] == DEBATES - undecided
        assert r["ci_low"] <= r["strength"] <= r["ci_high"]
        kept = r["rule_keeping"]  # beside the rating: its turns in every seat it held
        assert 0 <= kept["within_limit"] <= kept["limited"] <= kept["turns"] and kept["limited"]
    assert sum(r["strength"] for r in rows.values()) == pytest.approx(0, abs=1e-3)
    assert sum(r["wins"] for r in rows.values()) + rows[MODELS[0]]["draws"] == DEBATES - undecided
    # Two models and no other judge: both judge every debate, so each is a panel of two
    # (a debate one side forfeits is decided in code, by no panel).
    assert report["self_judged"] == DEBATES
    assert report["judge_agreement"]["panels"] == DEBATES - report["forfeits"]
    assert report["side_bias"]["swap_pairs"] <= 1 and report["side_bias"]["decided"] <= DEBATES
    csv = (out / "ratings.csv").read_text().splitlines()
    assert csv[0].startswith("rank,model,strength,ci_low,ci_high") and len(csv) == 3
    png = (out / "ratings.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    plan = json.loads((out / "tournament.json").read_text())
    for debate in plan["debates"]:
        folder = out / "debates" / debate["id"]
        data = json.loads((folder / "transcript.json").read_text())
        speakers = {t["role"]: t["model"] for t in data["turns"] if t["step"] == "speech"}
        seats = {"proposition": debate["proposition"], "opposition": debate["opposition"]}
        assert speakers == seats
        assert all(t["text"] for t in data["turns"] if t["step"] == "speech")
        verdict = json.loads((folder / "verdict.json").read_text())
        assert verdict["winner"] in ("proposition", "opposition", "draw", "undecided")
        if verdict["decided_by"] == "forfeit":  # a side off the motion: no judge was asked
            assert verdict["ballots"] == [] and verdict["forfeit"]
            continue
        # Each judge's ballot read as probabilities, in both orders, and how.
        assert verdict["decided_by"] == "judges" and verdict["orders"] == 2
        assert [b["judge"] for b in verdict["ballots"]] == list(MODELS)
        for b in verdict["ballots"]:
            assert len(b["orders"]) == 2 and all(0 <= p <= 1 for p in b["orders"])
            assert b["p_proposition"] == pytest.approx(sum(b["orders"]) / 2, abs=1e-5)
            assert b["method"] in ("logits", "logprobs", "samples")
            if b["flipped"]:  # the two orders named different sides: an abstention
                assert b["outcome"] == "undecided"
    assert f"Tournament (oxford, {DEBATES} debates)" in stdout and "side bias" in stdout
    assert "coverage:" in stdout and "ballots: pairwise, read in 2 order(s)" in stdout
    assert all(m in stdout for m in MODELS) and "judge agreement" in stdout
    return report


def test_a_two_model_tournament_on_this_machine(local: tuple[str, Path]) -> None:
    check(*local)


def test_a_debate_removed_is_played_again_as_a_ray_task(
    local: tuple[str, Path], tmp_path: Path
) -> None:
    """The tournament resumed on a local Ray instance, one debate removed: Ray plays that
    debate again, on every core as the only one left, to the same words, and the ratings
    come out whole."""
    out = tmp_path / "t"
    shutil.copytree(local[1], out)
    plan = json.loads((out / "tournament.json").read_text())
    again = plan["debates"][-1]["id"]
    shutil.rmtree(out / "debates" / again)
    stdout = audited(tmp_path, ["tournament", "--resume", str(out), "--executor", "ray"])
    check(stdout, out)

    def spoken(root: Path) -> list[tuple[str, str, str]]:
        data = json.loads((root / "debates" / again / "transcript.json").read_text())
        return [(t["role"], t["step"], t["text"]) for t in data["turns"]]

    # The same seed, the same threads (the lone task takes every core, as the local run
    # does), nothing cached before it: the same words.
    assert spoken(out) == spoken(local[1]) and len(spoken(out)) > 10
    kept = plan["debates"][0]["id"]
    assert (out / "debates" / kept / "verdict.json").read_bytes() == (
        local[1] / "debates" / kept / "verdict.json"
    ).read_bytes()  # the finished debate was kept, not played again
