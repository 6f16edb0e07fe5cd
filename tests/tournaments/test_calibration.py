"""Control debates: a judge whose verdicts follow the seat, and one that reads the speeches,
are told apart by the controls' known answers."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from conftest import Cli
from moot.errors import UsageError
from moot.inference.scripted import ScriptedModel
from moot.records.transcript import ModelInfo, Transcript, Turn
from moot.tournaments.calibration import (
    KINDS,
    SILENT,
    ballot_judge,
    build_controls,
    calibrate_judge,
    wilson,
)
from moot.tournaments.judge import speeches
from test_usage_errors import refused

MOTIONS = {
    "cars": "This House Believes That cities should ban cars",
    "homework": "This House Believes That schools should abolish homework",
    "tax": "This House Believes That governments should tax sugar",
}
SPEECHES = {
    "cars": (
        ["Cities should ban cars: cars choke city streets.", "Ban cars and cities breathe."],
        ["Cities need cars; a ban on cars strands the old.", "Cars carry cities' trade."],
    ),
    "homework": (
        ["Schools should abolish homework: homework steals rest.", "Abolish homework now."],
        ["Homework lets schools go further.", "Schools that abolish homework fall behind."],
    ),
    "tax": (
        ["Governments should tax sugar, as sugar harms.", "A sugar tax funds clinics."],
        ["A sugar tax hits the poor; governments should not.", "Tax sugar and shops close."],
    ),
}


def debate(key: str, n: int, language: str = "en") -> Transcript:
    prop, opp = SPEECHES[key]
    turns = []
    for i in range(2):
        for role, said in (("proposition", prop), ("opposition", opp)):
            turns.append(
                Turn(
                    index=len(turns),
                    round=i + 1,
                    role=role,
                    step="speech",
                    model="m",
                    temperature=0.7,
                    text=said[i],
                )
            )
    return Transcript(
        format="oxford",
        motion=MOTIONS[key],
        language=language,
        seed=n,
        models={"proposition": ModelInfo(id="m"), "opposition": ModelInfo(id="m")},
        turns=turns,
    )


def debates() -> dict[str, Transcript]:
    keys = ["cars", "homework", "tax", "cars", "homework", "tax"]
    return {f"d{i}": debate(k, i) for i, k in enumerate(keys)}


def clock() -> float:
    return 0.0


def first_seat(shown: Transcript, seed: int) -> str:
    return "proposition"


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def motion_words(shown: Transcript, seed: int) -> str:
    """Picks the side whose speeches use more of the motion's words."""
    wanted = words(shown.motion) - {"this", "house", "believes", "that", "should"}
    said = speeches(shown)
    counts = {side: len(wanted & words(" ".join(said[side]))) for side in said}
    if counts["proposition"] == counts["opposition"]:
        return "draw"
    return max(counts, key=counts.__getitem__)


def test_a_judge_that_follows_the_seat_is_found_out() -> None:
    controls = build_controls(debates(), 8, seed=1)
    figures = calibrate_judge("first", controls, first_seat, clock=clock)
    assert figures.position_bias.share == 1.0
    assert figures.accuracy["off_motion"].share == 0.5
    assert figures.accuracy["off_motion"].chance
    assert figures.accuracy["swap"].share == 0.0
    # It agrees with itself perfectly: consistency alone says nothing of accuracy.
    assert figures.consistency.share == 1.0
    assert not figures.beats_chance


def test_a_judge_that_reads_the_motion_scores_on_the_controls() -> None:
    controls = build_controls(debates(), 8, seed=1)
    figures = calibrate_judge("reader", controls, motion_words, clock=clock)
    assert figures.accuracy["off_motion"].share == 1.0
    assert figures.accuracy["silent"].share == 1.0
    assert not figures.accuracy["off_motion"].chance
    assert figures.position_bias.share == 0.0
    assert figures.beats_chance


def longer(shown: Transcript, seed: int) -> str:
    said = speeches(shown)
    return max(said, key=lambda side: sum(map(len, said[side])))


def test_a_judge_that_prefers_the_longer_side_shows_its_verbosity_bias() -> None:
    controls = build_controls(debates(), 8, seed=1)
    figures = calibrate_judge("longer", controls, longer, clock=clock)
    assert figures.verbosity_bias.share == 1.0
    assert figures.accuracy["padded"].share == 0.0
    assert figures.accuracy["silent"].share == 1.0


def test_controls_balance_the_winning_seat_and_keep_their_sources_apart() -> None:
    source = debates()
    controls = build_controls(source, 8, seed=3)
    assert len(controls) == 5 * 8
    expected = [c.expected for c in controls if c.kind == "off_motion"]
    assert expected.count("proposition") == expected.count("opposition") == 4
    changed = {
        s for c in controls if c.kind in ("off_motion", "silent", "padded") for s in c.sources
    }
    whole = {s for c in controls if c.kind in ("swap", "twice") for s in c.sources}
    assert changed and whole and not changed & whole
    for c in controls:
        if c.kind == "off_motion":
            on, off = c.sources
            assert source[on].motion != source[off].motion
            assert c.shown[0].motion == source[on].motion
        if c.kind == "silent":
            side = "opposition" if c.expected == "proposition" else "proposition"
            assert speeches(c.shown[0])[side] == [SILENT["en"]]
        if c.kind == "padded":
            said = speeches(c.shown[0])
            loser = "opposition" if c.expected == "proposition" else "proposition"
            off_motion = next(o for o in controls if o.id == c.id.replace("padded", "off_motion"))
            before = sum(map(len, speeches(off_motion.shown[0])[loser]))
            assert sum(map(len, said[loser])) >= 2 * before
        if c.kind == "twice":
            assert c.seeds[0] != c.seeds[1]


def test_a_single_motion_cannot_make_controls() -> None:
    one = {f"d{i}": debate("cars", i) for i in range(4)}
    with pytest.raises(UsageError, match="two motions"):
        build_controls(one, 8, seed=1)


def test_chinese_controls_are_made_in_chinese() -> None:
    source = {f"d{i}": debate(k, i, "zh") for i, k in enumerate(["cars", "tax"])}
    controls = build_controls(source, 2, seed=1)
    silent = [c for c in controls if c.kind == "silent"]
    assert any(SILENT["zh"] in " ".join(sum(speeches(c.shown[0]).values(), [])) for c in silent)
    padded = next(c for c in controls if c.kind == "padded")
    assert "本院辩论的辩题" in json.dumps(padded.shown[0].model_dump(), ensure_ascii=False)


def test_wilson_interval() -> None:
    sure = wilson(8, 8)
    assert sure.share == 1.0 and 0.67 < sure.low < 0.68 and sure.high == 1.0
    assert not sure.chance
    coin = wilson(4, 8)
    assert coin.chance and coin.low < 0.5 < coin.high
    assert wilson(0, 0).share is None and wilson(0, 0).chance


def test_a_judge_model_answers_the_tournament_ballot_on_each_control() -> None:
    # A judge model whose probabilities favour whichever side is shown first: read in both
    # orders it names different sides, so it abstains rather than following the seat.
    model = ScriptedModel(model_id="judge", chooser=lambda request: {"A": 0.8, "B": 0.2})
    controls = build_controls(debates(), 2, seed=5)
    figures = calibrate_judge(
        "judge", controls, ballot_judge("judge", lambda ref: model), clock=clock
    )
    assert figures.position_bias.share == 0.0
    assert figures.accuracy["off_motion"].share == 0.0
    # Every transcript of every control was put to the model in both orders, seats unnamed.
    assert len(model.choices) == 2 * sum(len(c.shown) for c in controls)
    prompt = model.choices[0].messages[-1].content
    assert "control" not in prompt


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--judge", "a", "--controls", "-1"], "--controls -1"),
        (["--judge", "a", "--controls", "0"], "--controls 0"),
        (["--judge", "a", "--controls", "10000"], "--controls 10000"),
        ([], "no judge"),
        (["--judge", "a", "--motions-file-with-one"], "two motions"),
        (["--judge", "a", "--format", "decision"], "two-sided"),
    ],
)
def test_calibrate_refuses_what_it_cannot_measure(
    tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text("\n".join(list(MOTIONS.values())[:2]) + "\n", encoding="utf-8")
    if "--motions-file-with-one" in args:
        motions.write_text(MOTIONS["cars"] + "\n", encoding="utf-8")
        args = [a for a in args if a != "--motions-file-with-one"]
    out = tmp_path / "out"
    proc = cli("calibrate", *args, "--motions", str(motions), "--dry-run", "--out", str(out))
    refused(proc, needle)
    assert not out.exists()


def test_calibrate_on_a_dry_run_saves_each_judges_figures(tmp_path: Path, cli: Cli) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text("\n".join(list(MOTIONS.values())[:2]) + "\n", encoding="utf-8")
    out, home = tmp_path / "cal", tmp_path / "home"
    args = ["--judge", "j1", "--judge", "j2", "--motions", str(motions), "--controls", "2"]
    run = ("--dry-run", "--seed", "4", "--out", str(out), "--quiet")
    proc = cli("calibrate", *args, *run, home=home)
    assert proc.returncode == 0, proc.stderr
    assert "no better than chance" in proc.stdout
    saved = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    assert saved["schema"] == 1 and saved["controls"] == 2
    assert [j["judge"] for j in saved["judges"]] == ["j1", "j2"]
    # A dry run's judge names the side shown first every time: read in both orders it
    # abstains, so it never follows the seat, and is right on no control with a winner.
    assert saved["judges"][0]["position_bias"]["share"] == 0.0
    assert saved["judges"][0]["accuracy"]["off_motion"]["share"] == 0.0
    assert len(saved["judges"][0]["judged"]) == 5 * 2
    assert len(list((out / "debates").iterdir())) == 4
    # Two judges make a jury, measured on the same controls and saved beside them; the
    # judges' probabilities are kept with their verdicts for it to pool.
    assert saved["jury"]["judge"] == "jury"
    assert len(saved["jury"]["judged"]) == 5 * 2
    assert all(len(row["chances"]) == len(row["verdicts"]) for row in saved["judges"][0]["judged"])
    assert "the jury (its judges' probabilities pooled)" in proc.stdout
    # The calibration's debates are its own: the history does not list them.
    assert not (home / "saved-elsewhere").exists()
    shown = cli("calibrate", *args, *run[:-3], "--json", home=home)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["jury"]["coverage"]["n"] == 5 * 2 + 2 * 2


CONTROL_WORDS = {
    "en": ("off the motion", "silent side", "order swap", "padded loser", "twice"),
    "zh": ("偏离辩题", "一方沉默", "交换顺序", "输方注水", "同一场判两次"),
}
CHINESE = ("本院认为城市应该禁止汽车", "本院认为学校应该取消家庭作业")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_calibrate_names_each_control_in_words_of_the_motions_language(
    tmp_path: Path, cli: Cli, lang: str
) -> None:
    motions = tmp_path / "motions.txt"
    given = list(MOTIONS.values())[:2] if lang == "en" else CHINESE
    motions.write_text("\n".join(given) + "\n", encoding="utf-8")
    args = ["--judge", "j1", "--motions", str(motions), "--controls", "1", "--quiet"]
    proc = cli("calibrate", *args, "--dry-run", "--out", str(tmp_path / "cal"))
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("│")[1].strip() for line in proc.stdout.splitlines() if "%" in line
            and line.startswith("│")]  # fmt: skip
    assert rows == list(CONTROL_WORDS[lang]), proc.stdout
    assert not set(KINDS) & set(rows[:-1]), rows  # "twice" is its own word
    if lang == "zh":
        assert "不比随机好" in proc.stdout and "对照" in proc.stdout
        assert "no better" not in proc.stdout and "control" not in proc.stdout


def test_two_models_take_a_side_each_swapped_every_other_debate(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text("\n".join(list(MOTIONS.values())[:2]) + "\n", encoding="utf-8")
    a, b = dry_models
    out = tmp_path / "cal"
    args = ["--judge", "j1", "--motions", str(motions), "--controls", "1", "--quiet"]
    proc = cli("calibrate", *args, "--model", a, "--model", b, "--dry-run", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    seats = []
    for i in range(1, 5):
        saved = json.loads((out / "debates" / f"d{i}" / "transcript.json").read_text())
        spoke = {t["role"]: t["model"] for t in saved["turns"] if t["step"] == "speech"}
        seats.append((spoke["proposition"], spoke["opposition"]))
    assert seats[0] == seats[2] == tuple(f"echo:{m}" for m in (a, b))
    assert seats[1] == seats[3] == tuple(f"echo:{m}" for m in (b, a))
    three = cli("calibrate", *args, "--model", a, "--model", b, "--model", a, "--dry-run")
    refused(three, "one or two models")


@pytest.mark.real
def test_a_real_judge_model_is_measured_on_the_controls() -> None:
    from moot.api import ModelPool

    controls = build_controls(debates(), 1, seed=2)
    with ModelPool(n_ctx=2048) as pool:
        figures = calibrate_judge(
            "smollm2-135m", controls, ballot_judge("smollm2-135m", pool.get), clock=time.monotonic
        )
    assert {k: a.n for k, a in figures.accuracy.items()} == dict.fromkeys(KINDS, 1)
    assert all(
        len(j.verdicts) == len(c.shown) for j, c in zip(figures.judged, controls, strict=True)
    )
    assert all(
        v in ("proposition", "opposition", "draw") for j in figures.judged for v in j.verdicts
    )
    assert figures.seconds > 0
