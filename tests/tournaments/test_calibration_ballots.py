"""`moot calibrate` reads each judge's ballot as `moot tournament` does, with the same
settings from the same declarations: the method, the orders and the margin change what a
judge is measured as, the report and --json say which were used, and a setting out of
range is one line before anything runs."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

import moot
from conftest import Cli
from moot.api.calibration import CalibrationResult, LabelledResult
from moot.errors import UsageError
from moot.inference.choice import ChoiceRequest
from moot.inference.protocol import ChatModel
from moot.inference.scripted import EchoModel, ScriptedModel
from moot.tournaments.settings import BallotSettings, keyword_of, option_of
from test_usage_errors import refused

SET = Path(__file__).parents[2] / "examples" / "labelled" / "debates.jsonl"
MOTIONS = (
    "This House Believes That cities should ban cars",
    "This House Believes That schools should abolish homework",
)


def leaning(request: ChoiceRequest) -> dict[str, float]:
    """A judge that, asked which side won, favours the side shown first whatever it said
    (read in both orders it flips, and abstains); asked of one side alone, says yes where
    that side said something (more than a short line) and no to a side that said next
    to nothing, or to the content-free speech a question is calibrated on."""
    if "A" in request.options:
        return {"A": 0.8, "B": 0.2}
    # The side's own speeches follow the question's last "It said:" (其发言：), each quoted.
    own = re.split("It said:|其发言：", request.messages[-1].content)[-1].split('"""')[1::2]
    said = sum(len(speech.strip()) for speech in own)
    return {"yes": 0.8, "no": 0.2} if said > 24 else {"yes": 0.2, "no": 0.8}


class Pool:
    """A judge (`judge…`) as a scripted model with `leaning`'s probabilities; every other
    model (the debaters of the controls' debates) an echo, as a dry run's."""

    def get(self, ref: str) -> ChatModel:
        if ref.startswith("judge"):
            return ScriptedModel(model_id=ref, chooser=leaning)
        return EchoModel(model_id=f"echo:{ref}")


def labelled(tmp_path: Path, name: str, **ballot: object) -> LabelledResult:
    result = moot.calibrate(
        ["judge"],
        labelled=SET,
        run={"dry_run": True},
        seed=1,
        out=tmp_path / name,
        pool=Pool(),
        **ballot,  # type: ignore[arg-type]
    )
    assert isinstance(result, LabelledResult)
    return result


def test_the_method_changes_what_a_judge_is_measured_as_on_labelled_debates(
    tmp_path: Path,
) -> None:
    pairwise = labelled(tmp_path, "pairwise")
    pointwise = labelled(tmp_path, "pointwise", ballot="pointwise")
    assert pairwise.ballot == BallotSettings()
    assert pointwise.ballot.method == "pointwise"
    [pair], [point] = pairwise.report.judges, pointwise.report.judges
    # Pairwise it follows the order shown, so read both ways round it never decides.
    assert pair.coverage.share == 0.0 and pair.accuracy["all"].n == 0
    # Pointwise it scores each side alone: a side that said nothing loses where the other
    # argued, and the debates where both argued are within the margin of even.
    assert point.accuracy["silent"].n >= 4 and point.accuracy["silent"].share == 1.0
    assert 0 < point.coverage.share < 1  # type: ignore[operator]
    saved = json.loads((tmp_path / "pointwise" / "labelled.json").read_text(encoding="utf-8"))
    assert saved["ballot"] == {"method": "pointwise", "orders": 1, "margin": 0.1}
    # One order: the side shown first every time, right where the Proposition won.
    once = labelled(tmp_path, "once", orders=1).report.judges[0]
    assert once.coverage.share == 1.0 and once.position_bias.share == 1.0


def test_the_method_changes_what_a_judge_is_measured_as_on_the_controls(tmp_path: Path) -> None:
    found = {}
    for method in ("pairwise", "pointwise"):
        result = moot.calibrate(
            ["judge"],
            list(MOTIONS),
            controls=2,
            run={"dry_run": True},
            seed=3,
            out=tmp_path / method,
            pool=Pool(),
            ballot=method,
        )
        assert isinstance(result, CalibrationResult) and result.ballot.method == method
        found[method] = result.judges[0]
        saved = json.loads((tmp_path / method / "calibration.json").read_text(encoding="utf-8"))
        assert saved["ballot"]["method"] == method
    pair, point = found["pairwise"], found["pointwise"]
    # Pairwise: it abstains on every control; pointwise: the silent side loses each time.
    assert pair.accuracy["silent"].share == 0.0 and pair.coverage.share == 0.0  # type: ignore[union-attr]
    assert point.accuracy["silent"].share == 1.0
    assert point.coverage.share and point.coverage.share > 0  # type: ignore[union-attr]


def test_the_margin_is_the_jurys_too(tmp_path: Path) -> None:
    """Two judges read in one order give the side shown first 0.8: decided within the
    default margin, undecided within 0.35 of even, and so is their jury."""

    def run(margin: float) -> LabelledResult:
        result = moot.calibrate(
            ["judge1", "judge2"],
            labelled=SET,
            run={"dry_run": True},
            out=tmp_path / str(margin),
            pool=Pool(),
            orders=1,
            margin=margin,
        )
        assert isinstance(result, LabelledResult)
        return result

    narrow, wide = run(0.1), run(0.35)
    assert narrow.report.jury is not None and wide.report.jury is not None
    assert narrow.report.judges[0].coverage.share == narrow.report.jury.coverage.share == 1.0
    assert wide.report.judges[0].coverage.share == wide.report.jury.coverage.share == 0.0
    assert wide.ballot.margin == 0.35


def motions_file(tmp_path: Path) -> Path:
    path = tmp_path / "motions.txt"
    path.write_text("\n".join(MOTIONS) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--orders", "3"], "--orders 3"),
        (["--ballot", "vote"], "--ballot 'vote'"),
        (["--margin", "0.6"], "--margin 0.6"),
    ],
)
@pytest.mark.parametrize("source", ["motions", "labelled"])
def test_calibrate_refuses_a_ballot_it_cannot_read_in_one_line(
    tmp_path: Path, cli: Cli, args: list[str], needle: str, source: str
) -> None:
    given = ["--labelled", str(SET)] if source == "labelled" else ["--motions"]
    if source == "motions":
        given.append(str(motions_file(tmp_path)))
    out = tmp_path / "out"
    proc = cli("calibrate", "--judge", "j", *given, *args, "--dry-run", "--out", str(out))
    refused(proc, needle)
    assert not out.exists()


def test_the_api_refuses_a_ballot_as_python_spells_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^orders 3 is not allowed"):
        moot.calibrate(["j"], labelled=SET, run={"dry_run": True}, orders=3)
    with pytest.raises(UsageError, match=r"^ballot 'vote' is not allowed"):
        moot.calibrate(["j"], list(MOTIONS), run={"dry_run": True}, ballot="vote")
    assert not list(tmp_path.iterdir())


def test_the_report_and_json_say_how_ballots_were_read(tmp_path: Path, cli: Cli) -> None:
    motions = motions_file(tmp_path)
    common = ("--judge", "j", "--dry-run", "--quiet", "--controls", "1")
    proc = cli("calibrate", *common, "--motions", str(motions), "--json", "--margin", "0.2",
               "--out", str(tmp_path / "a"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["ballot"] == {"method": "pairwise", "orders": 2, "margin": 0.2}
    assert [j["judge"] for j in shown["judges"]] == ["j"]
    proc = cli("calibrate", *common, "--motions", str(motions), "--ballot", "blend",
               "--orders", "1", "--out", str(tmp_path / "b"), env={"COLUMNS": "80"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "ballots: blend, read in 1 order(s); undecided within 0.1 of even" in proc.stdout
    assert "coverage 100% [" in " ".join(proc.stdout.split())  # read once: always a side
    labelled = ("calibrate", "--labelled", str(SET), "--judge", "j", "--dry-run", "--quiet")
    proc = cli(*labelled, "--ballot", "pointwise", "--json", "--out", str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ballot"] == {"method": "pointwise", "orders": 1, "margin": 0.1}
    proc = cli(*labelled, "--lang", "zh", "--out", str(tmp_path / "d"), env={"COLUMNS": "80"})
    assert "裁决方式：两两比较，按2种顺序读取；与均势相差0.1以内为未决" in proc.stdout
    # Within 80 columns but the saved path, which runs past the edge whole: it is copied.
    # (in terminal cells: a Chinese character takes two).
    lines = [ln for ln in proc.stdout.splitlines() if not ln.startswith("已保存")]
    assert max(map(cell_len, lines)) <= 80


def test_calibrate_takes_the_ballot_settings_from_their_one_declaration() -> None:
    import moot.cli.calibrate as cli_calibrate
    import moot.cli.tournament as cli_tournament
    from moot.api import calibration

    cli_params = inspect.signature(cli_calibrate.calibrate_judges).parameters
    tournament_params = inspect.signature(cli_tournament.tournament).parameters
    fronts = [
        inspect.signature(f).parameters
        for f in (moot.calibrate, calibration.plan_calibration, calibration.plan_labelled)
    ]
    for name in ("method", "orders", "margin"):
        default = BallotSettings.model_fields[name].default
        keyword = keyword_of(name)
        # The command line: the very option `moot tournament` declares, with its default.
        [param] = [p for p in cli_params.values() if p.name == option_of(name)[2:]]
        assert param.annotation is tournament_params[param.name].annotation, name
        assert param.default == default, name
        for params in fronts:
            assert params[keyword].default == default, (name, keyword)
