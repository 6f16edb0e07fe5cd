"""Judges measured on debates whose winner is known: the shipped labelled set, a judge that
always names the first side and one right on everything told apart, the jury, the refusals
of a bad file, and the report in both languages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import moot
from conftest import Cli, real_model_path
from moot.api.calibration import LabelledResult
from moot.errors import UsageError
from moot.records.transcript import Transcript
from moot.tournaments.judge import speeches
from moot.tournaments.jury import Judgement
from moot.tournaments.labelled import (
    FILE_LIMIT,
    LabelledDebate,
    measure,
    position_bias,
    read_labelled,
)
from test_usage_errors import refused

SET = Path(__file__).parents[2] / "examples" / "labelled" / "debates.jsonl"
GOOD = {
    "id": "a",
    "motion": "This House would ban cars",
    "proposition": ["Cars poison the air."],
    "opposition": ["Cars carry trade."],
    "winner": "proposition",
}


def shipped() -> list[LabelledDebate]:
    return read_labelled(SET)


def first_side(shown: Transcript, seed: int) -> Judgement:
    return Judgement(outcome="proposition")


def oracle(debates: list[LabelledDebate]):  # type: ignore[no-untyped-def]
    """A judge right on everything: it knows each debate by its speeches."""
    answers = {d.proposition[0]: d.winner for d in debates}

    def judge(shown: Transcript, seed: int) -> Judgement:
        return Judgement(outcome=answers[speeches(shown)["proposition"][0]])  # type: ignore[arg-type]

    return judge


def test_the_shipped_set_holds_every_kind_in_both_languages() -> None:
    debates = shipped()
    assert len(debates) == 24
    kinds = {(d.kind, d.lang) for d in debates}
    for kind in ("silent", "off_motion", "wrong_side", "two_sided"):
        assert {(kind, "en"), (kind, "zh")} <= kinds
    winners = [d.winner for d in debates]
    assert winners.count("proposition") > 4 and winners.count("opposition") > 4
    # Each becomes a transcript the tournament judge reads: the Proposition first.
    shown = debates[0].transcript(7)
    assert shown.seed == 7 and shown.turns[0].role == "proposition"
    assert speeches(shown) == {
        "proposition": debates[0].proposition,
        "opposition": debates[0].opposition,
    }


def test_a_missing_language_is_read_from_the_motions_script(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    zh = {**GOOD, "id": "b", "motion": "本院认为应当禁止汽车", "format": "challenge"}
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps(zh, ensure_ascii=False) + "\n")
    en, chinese = read_labelled(path)
    assert (en.lang, chinese.lang) == ("en", "zh")
    assert chinese.transcript(1).turns[0].role == "proposer"


def test_a_judge_that_names_the_first_side_is_found_out() -> None:
    debates = shipped()
    report = measure(debates, {"first": first_side}, seed=1)
    (figures,) = report.judges
    first_wins = sum(d.winner == "proposition" for d in debates)
    assert figures.accuracy["all"].share == round(first_wins / 24, 4)
    assert figures.accuracy["all"].n == 24 and figures.coverage.share == 1.0
    assert figures.position_bias.share == 1.0
    assert figures.accuracy["en"].n == 12 and figures.accuracy["silent"].n == 6
    assert report.jury is None


def test_a_judge_right_on_everything_scores_full_marks_and_no_lean() -> None:
    debates = shipped()
    report = measure(debates, {"oracle": oracle(debates)}, seed=1)
    (figures,) = report.judges
    assert {k: f.share for k, f in figures.accuracy.items()} == dict.fromkeys(
        ["all", "off_motion", "silent", "two_sided", "wrong_side", "en", "zh"], 1.0
    )
    assert figures.position_bias.share == 0.0
    assert figures.position_bias.low < 0 < figures.position_bias.high


def test_the_jury_follows_the_judge_measured_right_and_abstains_where_they_split() -> None:
    debates = shipped()
    report = measure(debates, {"first": first_side, "oracle": oracle(debates)}, seed=1)
    assert report.jury is not None
    draws = sum(d.winner == "draw" for d in debates)
    # Where the first-side judge names a side the oracle calls a draw, the pooled
    # probability sits near even: undecided. Everywhere else the oracle outweighs it.
    assert report.jury.coverage.n == 24
    assert report.jury.accuracy["all"].n == 24 - draws
    assert report.jury.accuracy["all"].share == 1.0
    assert report.jury.coverage.share == round((24 - draws) / 24, 4)


def test_an_undecided_verdict_counts_against_coverage_not_accuracy() -> None:
    debates = shipped()[:4]

    def undecided_on_first(shown: Transcript, seed: int) -> Judgement:
        said = speeches(shown)["proposition"][0]
        if said == debates[0].proposition[0]:
            return Judgement(outcome="undecided", p_proposition=0.5)
        return oracle(debates)(shown, seed)

    (figures,) = measure(debates, {"j": undecided_on_first}, seed=0).judges
    assert figures.coverage.share == 0.75 and figures.accuracy["all"].n == 3
    assert figures.accuracy["all"].share == 1.0


def test_position_bias_is_scaled_by_what_the_labels_leave() -> None:
    labels = ["proposition", "opposition"] * 2
    assert position_bias(["proposition"] * 4, labels).share == 1.0
    assert position_bias(["opposition"] * 4, labels).share == -1.0
    assert position_bias(labels, labels).share == 0.0
    assert position_bias(["draw"] * 4, labels).n == 0


def _write(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "set.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


BAD = [
    ([{k: v for k, v in GOOD.items() if k != "winner"}], "line 1: winner is missing"),
    ([GOOD, {**GOOD, "id": "b", "opposition": []}], "line 2: opposition"),
    ([{**GOOD, "proposition": [], "opposition": []}], "line 1: proposition"),
    ([{**GOOD, "proposition": ["  "]}], "line 1: proposition"),
    ([{**GOOD, "winner": "both"}], "line 1: winner"),
    ([{**GOOD, "format": "decision"}], "line 1: format"),
    ([{**GOOD, "language": "fr"}], "line 1: language"),
    ([{**GOOD, "kind": "en"}], "line 1: kind"),
    ([{**GOOD, "colour": "red"}], "line 1: colour"),
    ([GOOD, "{not json"], "line 2: not JSON"),
    (["[1, 2]"], "line 1: not a JSON object"),
    ([GOOD, GOOD], "line 2: id 'a' is given twice"),
    (["", "  "], "holds no debate"),
]


@pytest.mark.parametrize(("records", "needle"), BAD)
def test_a_bad_labelled_file_is_refused_by_the_cli_and_the_api(
    tmp_path: Path, cli: Cli, records: list[object], needle: str
) -> None:
    path = _write(tmp_path, *records)
    out = tmp_path / "out"
    proc = cli("calibrate", "--labelled", str(path), "--judge", "j", "--dry-run", "--out", str(out))
    refused(proc, needle)
    assert not out.exists()
    with pytest.raises(UsageError, match="line|no debate") as caught:
        moot.calibrate(["j"], labelled=path, run={"dry_run": True}, out=out)
    assert needle in str(caught.value) and caught.value.field == "labelled"


def test_a_missing_or_huge_file_is_refused_before_it_is_read(tmp_path: Path, cli: Cli) -> None:
    refused(
        cli("calibrate", "--labelled", str(tmp_path / "none.jsonl"), "--judge", "j", "--dry-run"),
        "does not exist",
    )
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as f:
        f.truncate(FILE_LIMIT + 1)  # sparse: nothing is written, nothing read
    refused(
        cli("calibrate", "--labelled", str(huge), "--judge", "j", "--dry-run"), "over moot's limit"
    )
    with pytest.raises(UsageError, match="over moot's limit"):
        moot.calibrate(["j"], labelled=huge, run={"dry_run": True})
    refused(
        cli(
            "calibrate", "--labelled", str(SET), "--motions", str(SET), "--judge", "j", "--dry-run"
        ),
        "--labelled and --motions",
    )
    refused(
        cli("calibrate", "--labelled", str(SET), "--model", "m", "--judge", "j", "--dry-run"),
        "--labelled and --model",
    )


def test_calibrate_labelled_prints_json_of_each_judge_and_the_jury(
    tmp_path: Path, cli: Cli
) -> None:
    out = tmp_path / "cal"
    args = ("--labelled", str(SET), "--judge", "j1", "--judge", "j2", "--json")
    proc = cli(
        "calibrate",
        *args,
        "--dry-run",
        "--quiet",
        "--out",
        str(out),
        "--seed",
        "3",
        home=tmp_path / "home",
    )
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert [j["judge"] for j in shown["judges"]] == ["j1", "j2"]
    first = shown["judges"][0]
    assert set(first) == {"judge", "accuracy", "position_bias", "coverage"}
    assert set(first["accuracy"]) == {
        "all",
        "off_motion",
        "silent",
        "two_sided",
        "wrong_side",
        "en",
        "zh",
    }
    assert set(first["accuracy"]["all"]) == {"share", "low", "high", "n"}
    # A dry run's judge reads the same odds whichever side is shown first: it abstains on
    # every debate, so it has no accuracy and no position bias to show, and no coverage.
    assert first["coverage"]["share"] == 0.0 and first["coverage"]["n"] == 24
    assert first["accuracy"]["all"]["n"] == 0 and first["position_bias"]["share"] is None
    assert shown["jury"]["judge"] == "jury"
    saved = json.loads((out / "labelled.json").read_text(encoding="utf-8"))
    assert len(saved["judges"][0]["verdicts"]) == 24 and saved["seed"] == 3


def test_calibrate_labelled_reports_in_a_table_of_80_columns_in_english_and_chinese(
    tmp_path: Path, cli: Cli
) -> None:
    args = ("calibrate", "--labelled", str(SET), "--judge", "j", "--dry-run", "--quiet")
    en = cli(*args, "--out", str(tmp_path / "en"), env={"COLUMNS": "80"})
    assert en.returncode == 0, en.stderr
    assert (
        "Judges on 24 labelled debates" in en.stdout
        and "jury" not in en.stdout.split("accuracy:")[0]
    )
    # Within 80 columns but the saved path, which runs past the edge whole: it is copied.
    assert max(len(ln) for ln in en.stdout.splitlines() if not ln.startswith("saved: ")) <= 80
    assert f"saved: {tmp_path / 'en' / 'labelled.json'}" in en.stdout.splitlines()
    zh = cli(*args, "--lang", "zh", "--out", str(tmp_path / "zh"), env={"COLUMNS": "80"})
    assert zh.returncode == 0, zh.stderr
    assert "裁判在24场已标注辩论上的表现" in zh.stdout and "位置偏向" in zh.stdout
    assert "中文" in zh.stdout and "Judges on" not in zh.stdout
    # A set all in Chinese is reported in Chinese without being asked.
    chinese = [line for line in SET.read_text(encoding="utf-8").splitlines() if '"zh"' in line]
    (tmp_path / "zh.jsonl").write_text("\n".join(chinese) + "\n", encoding="utf-8")
    auto = cli(
        "calibrate",
        "--labelled",
        str(tmp_path / "zh.jsonl"),
        "--judge",
        "j",
        "--dry-run",
        "--quiet",
        "--out",
        str(tmp_path / "auto"),
    )
    assert "裁判在12场已标注辩论上的表现" in auto.stdout


KIND_WORDS = {
    "en": ("off the motion", "silent side", "wrong side", "both argue"),
    "zh": ("偏离辩题", "一方沉默", "立场站错", "双方都有论证"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_labelled_report_names_each_kind_in_words_and_a_users_own_as_given(
    tmp_path: Path, cli: Cli, lang: str
) -> None:
    mine = [{**json.loads(line), "kind": "round-2"} for line in SET.read_text().splitlines()[:3]]
    mine = [{**d, "id": f"mine-{i}"} for i, d in enumerate(mine)]
    given = tmp_path / "set.jsonl"
    given.write_text(SET.read_text() + "".join(json.dumps(d) + "\n" for d in mine))
    proc = cli("calibrate", "--labelled", str(given), "--judge", "j", "--dry-run", "--quiet",
               "--lang", lang, "--out", str(tmp_path / "out"), env={"COLUMNS": "80"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("  ")[1] for line in proc.stdout.splitlines() if line.startswith("  ")]
    for words in KIND_WORDS[lang]:
        assert words in rows, (words, proc.stdout)
    assert "round-2" in rows  # a kind of the user's own, as the file gives it
    assert not {"off_motion", "two_sided", "wrong_side", "silent"} & set(rows), rows


@pytest.mark.real
def test_a_real_judge_decides_a_few_labelled_debates(tmp_path: Path, cli: Cli) -> None:
    model = real_model_path("smollm2-135m")
    few = SET.read_text(encoding="utf-8").splitlines()[:3]
    (tmp_path / "few.jsonl").write_text("\n".join(few) + "\n", encoding="utf-8")
    proc = cli(
        "calibrate",
        "--labelled",
        str(tmp_path / "few.jsonl"),
        "--judge",
        str(model),
        "--json",
        "--quiet",
        "--seed",
        "1",
        "--out",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)["judges"][0]
    assert figures["coverage"]["n"] == 3 and figures["accuracy"]["en"]["n"] <= 3
    saved = json.loads((tmp_path / "out" / "labelled.json").read_text(encoding="utf-8"))
    outcomes = {v["outcome"] for v in saved["judges"][0]["verdicts"]}
    assert outcomes <= {"proposition", "opposition", "draw", "undecided"}
    assert all(isinstance(v["p_proposition"], float) for v in saved["judges"][0]["verdicts"])


@pytest.mark.real
def test_a_real_judge_reading_likelihoods_tells_a_silent_side_from_a_speaking_one(
    tmp_path: Path, cli: Cli
) -> None:
    # The first three labelled debates each have a side that says nothing ("We pass.").
    model = real_model_path("smollm2-135m")
    few = SET.read_text(encoding="utf-8").splitlines()[:3]
    assert all(json.loads(line)["kind"] == "silent" for line in few)
    (tmp_path / "few.jsonl").write_text("\n".join(few) + "\n", encoding="utf-8")
    proc = cli(
        "calibrate", "--labelled", str(tmp_path / "few.jsonl"), "--judge", str(model),
        "--ballot", "likelihood", "--json", "--quiet", "--seed", "1",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)["judges"][0]
    # Decided on the speaking side every time it decides, and it decides at least once.
    assert figures["accuracy"]["silent"]["n"] >= 1
    assert figures["accuracy"]["silent"]["share"] == 1.0
    saved = json.loads((tmp_path / "out" / "labelled.json").read_text(encoding="utf-8"))
    assert saved["ballot"]["method"] == "likelihood"


def test_the_api_calibrates_on_a_labelled_file(tmp_path: Path) -> None:
    result = moot.calibrate(
        ["j1", "j2"], labelled=SET, run={"dry_run": True}, seed=2, out=tmp_path / "cal"
    )
    assert isinstance(result, LabelledResult)
    assert [j.judge for j in result.report.judges] == ["j1", "j2"]
    assert result.report.judges[0].coverage.share == 0.0  # a dry run's judge abstains
    assert result.report.debates["zh"] == 12 and result.language == "en"
    assert (tmp_path / "cal" / "labelled.json").is_file()
    with pytest.raises(UsageError, match="both motions and a labelled file"):
        moot.calibrate(["j"], ["a", "b"], labelled=SET, run={"dry_run": True})
    with pytest.raises(UsageError, match="no motions and no labelled file"):
        moot.calibrate(["j"], run={"dry_run": True})


def test_a_bad_labelled_file_is_refused_in_chinese_when_asked(tmp_path: Path, cli: Cli) -> None:
    path = _write(tmp_path, {k: v for k, v in GOOD.items() if k != "winner"})
    proc = cli("calibrate", "--labelled", str(path), "--judge", "j", "--lang", "zh", "--dry-run")
    assert proc.returncode == 2
    error, hint = proc.stderr.strip().splitlines()
    assert error.startswith("错误：") and "第1行：缺少 winner" in error
    assert hint.startswith("提示：") and '"winner"：' in hint
