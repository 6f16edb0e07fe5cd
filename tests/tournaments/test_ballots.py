"""Tournament ballots read as probabilities: both orders (a judge that follows the order
abstains), pointwise questions calibrated on a content-free speech, forfeits found in code,
juries that weigh their judges and leave out the failed, and old sampled records still
read."""

from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from moot.errors import MootError, UsageError
from moot.inference.choice import ChoiceRequest, LikelihoodRequest
from moot.inference.scripted import ScriptedModel, overlap
from moot.records.transcript import Transcript
from moot.tournaments.ballots import LIKELIHOOD_SCALE, forfeit, judge_debate
from moot.tournaments.calibration import ballot_judge, build_controls, calibrate_judge
from moot.tournaments.judge import Verdict
from moot.tournaments.report import build, judge_weights, outcome
from moot.tournaments.run import Tournament
from moot.tournaments.settings import (
    BallotSettings,
    TournamentSettings,
    check_ballot,
    keyword_of,
    on_page,
    option_of,
)
from test_calibration import MOTIONS, debate, debates
from test_tournament import Models, oxford_plan, run
from test_usage_errors import refused

pytestmark = pytest.mark.usefixtures("any_model_name")

STOP = {"this", "house", "believes", "that", "should"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3} - STOP


def first_shown(request: ChoiceRequest) -> dict[str, float]:
    """A judge whose probabilities favour whichever side is shown first."""
    return {"A": 0.7, "B": 0.25, "draw": 0.05}


def motion_reader(request: ChoiceRequest) -> dict[str, float]:
    """A judge whose probabilities follow the motion's words: pairwise, toward the side
    (A or B) that uses more of them; pointwise, yes as often as the speech holds them."""
    prompt = request.messages[-1].content
    wanted = words(prompt.split("Motion:", 1)[1].split("\n", 1)[0])
    if request.field == "answer":
        said = prompt.split("It said:", 1)[1].split("Question:", 1)[0]
        hits = len(wanted & words(said))
        return {"yes": 0.3 + 0.2 * min(hits, 3), "no": 0.7 - 0.2 * min(hits, 3) + 0.05}
    body = prompt.split("Side A argued", 1)[1].split("Reply in JSON", 1)[0]
    first, second = body.split("Side B argued", 1)
    a, b = len(wanted & words(first)), len(wanted & words(second))
    if a == b:
        return {"A": 0.45, "B": 0.45, "draw": 0.1}
    return {"A": 0.85, "B": 0.1, "draw": 0.05} if a > b else {"A": 0.1, "B": 0.85, "draw": 0.05}


def judged(chooser: Any, transcript: Transcript, **kw: Any) -> Verdict:
    return judged_by(ScriptedModel(model_id="j", chooser=chooser), transcript, **kw)


def judged_by(model: ScriptedModel, transcript: Transcript, **kw: Any) -> Verdict:
    """TRANSCRIPT judged by MODEL alone, as a debate's only judge."""
    return judge_debate(
        "d", transcript, [model.model_id], self_judged=False, model_for=lambda r: model, **kw
    )


# -- both orders ------------------------------------------------------------------------------


def test_a_judge_that_favours_the_side_shown_first_abstains_never_crowning_the_first_seat() -> None:
    verdicts = [judged(first_shown, t) for t in debates().values()]
    assert {v.winner for v in verdicts} == {"undecided"}
    for v in verdicts:
        [b] = v.ballots
        # Each order's P(proposition): 0.7/0.95 shown first, 0.25/0.95 shown second.
        assert b.orders == [
            pytest.approx(0.7 / 0.95, abs=1e-5),
            pytest.approx(0.25 / 0.95, abs=1e-5),
        ]
        assert b.flipped and b.outcome == "undecided" and b.method == "scripted"
        assert b.draw == [0.05, 0.05]
        assert v.p_proposition is None and v.ballot_method == "pairwise" and v.orders == 2
    # With one order only, the same judge hands the first seat every debate: what two
    # orders are for.
    once = [judged(first_shown, t, ballot=BallotSettings(orders=1)) for t in debates().values()]
    assert {v.winner for v in once} == {"proposition"}


def test_both_orders_show_the_sides_swapped_and_map_the_answer_back() -> None:
    model = ScriptedModel(model_id="j", chooser=motion_reader)
    shown = debate("cars", 0)
    verdict = judge_debate("d", shown, ["j"], self_judged=False, model_for=lambda r: model)
    first, second = (c.messages[-1].content for c in model.choices)
    prop = "Cities should ban cars: cars choke city streets."
    assert first.index(prop) < first.index("Side B argued") < second.index(prop)
    assert "Side A argued for the motion" in first and "Side A argued against" in second
    [b] = verdict.ballots
    assert b.orders[0] == pytest.approx(b.orders[1]) and not b.flipped


def test_a_judge_that_reads_the_motion_is_right_on_the_off_motion_controls() -> None:
    controls = build_controls(debates(), 8, seed=3)
    for method in ("pairwise", "pointwise", "blend"):
        model = ScriptedModel(model_id="reader", chooser=motion_reader)
        ballot = BallotSettings(method=method)  # type: ignore[arg-type]
        figures = calibrate_judge(
            "reader",
            controls,
            ballot_judge("reader", lambda r, m=model: m, ballot),
            clock=lambda: 0.0,
        )
        assert figures.accuracy["off_motion"].share == 1.0, method
        assert figures.accuracy["off_motion"].n == 8 and figures.beats_chance, method
    # The first-shown judge on the same controls: right on none, never following the seat.
    model = ScriptedModel(model_id="first", chooser=first_shown)
    figures = calibrate_judge(
        "first", controls, ballot_judge("first", lambda r: model), clock=lambda: 0.0
    )
    assert figures.accuracy["off_motion"].share == 0.0 and figures.position_bias.share == 0.0


# -- pointwise ------------------------------------------------------------------------------


def test_pointwise_calibration_removes_a_judge_that_says_yes_to_anything() -> None:
    def yes_man(request: ChoiceRequest) -> dict[str, float]:
        return {"yes": 0.9, "no": 0.1}

    model = ScriptedModel(model_id="j", chooser=yes_man)
    ballot = BallotSettings(method="pointwise")
    verdict = judge_debate(
        "d", debate("cars", 0), ["j"], self_judged=False, model_for=lambda r: model, ballot=ballot
    )
    [b] = verdict.ballots
    # Every question is also asked of "N/A": a yes that the probe gets too is worth nothing.
    assert b.scores == {"proposition": 0.5, "opposition": 0.5}
    assert verdict.winner == "undecided" and b.p_proposition == 0.5
    probes = [c for c in model.choices if '"""\nN/A\n"""' in c.messages[-1].content]
    assert len(model.choices) == 8 and len(probes) == 4
    assert {c.options for c in model.choices} == {("yes", "no")}


def test_pointwise_scores_each_side_alone() -> None:
    model = ScriptedModel(model_id="j", chooser=motion_reader)
    ballot = BallotSettings(method="pointwise")
    [control] = [c for c in build_controls(debates(), 1, seed=2) if c.kind == "off_motion"]
    verdict = judge_debate(
        "d", control.shown[0], ["j"], self_judged=False, model_for=lambda r: model, ballot=ballot
    )
    [b] = verdict.ballots
    assert (
        b.scores[control.expected]
        > b.scores[  # type: ignore[index]
            "opposition" if control.expected == "proposition" else "proposition"
        ]
    )
    assert verdict.winner == control.expected
    for c in model.choices:  # a question shows one side's speeches as its own
        assert c.messages[-1].content.count("It said:") == 1


# -- forfeits -------------------------------------------------------------------------------


def test_a_side_that_said_nothing_or_never_the_motion_forfeits_without_a_judge() -> None:
    full = debate("cars", 0)
    silent = full.model_copy(update={"turns": [t for t in full.turns if t.role == "proposition"]})
    model = ScriptedModel(model_id="j", chooser=first_shown)
    verdict = judge_debate(
        "d", silent, ["j"], self_judged=False, model_for=lambda r: model, forfeits=True
    )
    assert verdict.winner == "proposition" and verdict.decided_by == "forfeit"
    assert verdict.forfeit == "the opposition said nothing" and model.choices == []
    other = debate("tax", 1)
    off = full.model_copy(
        update={
            "turns": [t for t in full.turns if t.role == "proposition"]
            + [t for t in other.turns if t.role == "opposition"]
        }
    )
    assert forfeit(off) == ("opposition", "never touched the motion's words")
    assert forfeit(full) is None
    # Without forfeits (the controls), the judge is asked, and its accuracy is its own.
    asked = judge_debate("d", silent, ["j"], self_judged=False, model_for=lambda r: model)
    assert asked.decided_by == "judges" and model.choices


# -- juries ---------------------------------------------------------------------------------


def test_a_jury_leaves_out_a_flip_and_a_failed_judge_and_pools_the_rest() -> None:
    class Broken(ScriptedModel):
        def choose(self, request: ChoiceRequest) -> Any:
            raise MootError("the judge's server is gone")

    made = {
        "first": ScriptedModel(model_id="first", chooser=first_shown),
        "reader": ScriptedModel(model_id="reader", chooser=motion_reader),
        "broken": Broken(model_id="broken"),
    }
    [control] = [c for c in build_controls(debates(), 1, seed=2) if c.kind == "off_motion"]
    shown = control.shown[0]
    verdict = judge_debate("d", shown, list(made), self_judged=False, model_for=made.__getitem__)
    first, reader, broken = verdict.ballots
    assert first.flipped and first.outcome == "undecided"
    assert broken.error == "the judge's server is gone" and broken.outcome is None
    assert verdict.left_out == ["broken"]
    # The flip is left out: the jury's P is the reader's alone.
    assert verdict.p_proposition == reader.p_proposition
    assert reader.outcome == control.expected == verdict.winner
    assert verdict.votes == {"undecided": 1, reader.outcome: 1}
    with pytest.raises(MootError, match="no judge could read debate d"):
        judge_debate("d", shown, ["broken"], self_judged=False, model_for=made.__getitem__)


def test_a_judge_weighs_by_its_accuracy_on_the_controls_once_measured() -> None:
    shown = debate("cars", 0)

    # Two judges reading opposite ways: the heavier one carries the jury.
    def towards(side: str) -> Any:
        def chooser(request: ChoiceRequest) -> dict[str, float]:
            prompt = request.messages[-1].content
            prop_first = "Side A argued for" in prompt
            wants_a = (side == "proposition") == prop_first
            return {"A": 0.8, "B": 0.2} if wants_a else {"A": 0.2, "B": 0.8}

        return chooser

    made = {
        "pro": ScriptedModel(model_id="pro", chooser=towards("proposition")),
        "con": ScriptedModel(model_id="con", chooser=towards("opposition")),
    }
    verdict = judge_debate(
        "d", shown, ["pro", "con"], self_judged=False, model_for=made.__getitem__
    )
    assert verdict.winner == "undecided" and verdict.p_proposition == pytest.approx(0.5)
    assert outcome(verdict, {"pro": 2.0, "con": 0.5}, 0.1) == "proposition"
    assert outcome(verdict, {"pro": 0.0, "con": 1.0}, 0.1) == "opposition"
    assert outcome(verdict, {}, 0.1) == "undecided"


def test_a_tournament_report_gives_its_coverage_and_how_it_read_ballots(tmp_path: Path) -> None:
    t = Tournament.create(oxford_plan(["weak", "strong"], judges=["middling"]), tmp_path / "t")
    models = Models()
    _, failed = run(t, models)
    assert failed == []
    verdicts = t.verdicts()
    report = build(t.plan, verdicts, samples=20, transcripts=t.transcripts(verdicts))
    # The scripted judge reads the speeches: every debate decided, for the stronger side.
    assert report.coverage == 1.0 and report.debates_undecided == 0
    assert report.ballot == BallotSettings().model_dump()
    assert {v.decided_by for v in verdicts.values()} == {"judges"}
    assert judge_weights(None) == {}


# -- old records ----------------------------------------------------------------------------


def test_a_tournament_judged_by_sampled_ballots_still_reads_and_reports(tmp_path: Path) -> None:
    t = Tournament.create(oxford_plan(["weak", "strong"], judges=["middling"]), tmp_path / "t")
    run(t, Models())
    # Rewrite its records as a tournament judged before ballots were read as probabilities
    # wrote them: a plan without ballot settings, verdicts of sampled ballots.
    plan = json.loads((t.folder / "tournament.json").read_text())
    del plan["ballot"]
    (t.folder / "tournament.json").write_text(json.dumps(plan))
    winners = {}
    for p in t.plan.debates:
        path = t.debate_dir(p) / "verdict.json"
        new = json.loads(path.read_text())
        winners[p.id] = new["winner"]
        old = {
            "debate": p.id,
            "winner": new["winner"],
            "margin": "clear",
            "votes": {new["winner"]: 1},
            "self_judged": False,
            "ballots": [
                {
                    "judge": "middling",
                    "ballot": {
                        "proposition_best": "p",
                        "opposition_best": "o",
                        "reasons": "r",
                        "winner": new["winner"],
                        "margin": "clear",
                    },
                }
            ],
            "turns": [],
        }
        path.write_text(json.dumps(old))
    again = Tournament.open(t.folder)
    verdicts = again.verdicts()
    assert {v.decided_by for v in verdicts.values()} == {"sampled"}
    assert {k: v.winner for k, v in verdicts.items()} == winners
    report = build(again.plan, verdicts, samples=20, transcripts=again.transcripts(verdicts))
    assert report.models[0].model == "strong" and report.models[0].wins == 2
    assert report.coverage == 1.0


# -- one declaration ------------------------------------------------------------------------


def test_every_setting_is_in_every_front_end_with_its_default() -> None:
    import moot.cli.tournament as cli_tournament
    from moot.api.tournaments import tournament as api_tournament
    from moot.web import tournament as web_tournament

    cli_params = inspect.signature(cli_tournament.tournament).parameters
    api_params = inspect.signature(api_tournament).parameters
    for name, field in TournamentSettings.model_fields.items():
        keyword = keyword_of(name)
        option = option_of(name)
        assert keyword in api_params, (name, "moot.tournament")
        # The command line: an option spelled as declared.
        spelled = [p for p in cli_params.values() if option in _opts(p) or p.name == option[2:]]
        assert spelled, (name, option)
        if name in BallotSettings.model_fields:
            # The ballot's settings: the same default in the API and on the command line.
            assert api_params[keyword].default == field.default, name
            assert spelled[0].default == field.default, name
        assert (keyword in web_tournament._FIELDS) == on_page(name), (name, "the page")


def _opts(param: inspect.Parameter) -> list[str]:
    metadata = getattr(param.annotation, "__metadata__", ())
    return [o for m in metadata for o in getattr(m, "param_decls", ())]


def test_ballot_settings_refuse_out_of_range_as_each_front_end_spells_them() -> None:
    with pytest.raises(UsageError, match=r"^--orders 3 is not allowed") as raised:
        check_ballot(orders=3)
    assert raised.value.field == "orders"
    with pytest.raises(UsageError, match=r"^ballot 'vote' is not allowed") as raised:
        check_ballot(api=True, method="vote")
    assert raised.value.field == "ballot"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--orders", "3"], "--orders 3"),
        (["--orders", "0"], "--orders 0"),
        (["--ballot", "vote"], "--ballot 'vote'"),
        (["--margin", "0.6"], "--margin 0.6"),
        (
            ["--ballot", "likelihood", "--judge", "http://127.0.0.1:9/v1"],
            "http://127.0.0.1:9/v1 cannot score how likely a speech is",
        ),
    ],
)
def test_the_command_line_refuses_a_ballot_it_cannot_read(
    tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text("\n".join(MOTIONS.values()) + "\n", encoding="utf-8")
    out = tmp_path / "t"
    proc = cli(
        "tournament", "--model", "a", "--model", "b", "--motions", str(motions),
        "--dry-run", "--out", str(out), *args,
    )  # fmt: skip
    refused(proc, needle)
    assert not out.exists()


def test_the_pages_form_reads_the_ballot_and_places_a_wrong_one_beside_its_field() -> None:
    from moot.web.forms import FormErrors
    from moot.web.tournament import choose

    form = {"models": ["a.gguf", "b.gguf"], "motions": "\n".join(MOTIONS.values())}
    chosen = choose({**form, "ballot": "pointwise", "orders": "1", "margin": "0.2"}, dry_run=True)
    assert chosen.ballot == {"orders": 1, "ballot": "pointwise", "margin": 0.2}
    assert choose(form, dry_run=True).ballot == {"orders": 2, "ballot": "pairwise", "margin": 0.1}
    with pytest.raises(FormErrors) as raised:
        choose({**form, "orders": "3"}, dry_run=True)
    assert list(raised.value.fields) == ["orders"]


# -- likelihood -----------------------------------------------------------------------------


def test_likelihood_reads_each_side_as_written_for_its_side_and_is_right_on_the_controls() -> None:
    # The scripted scorer finds a reply likelier the more of the request's words it holds:
    # a side on the motion is explained by the motion; one off it, or silent, is not.
    controls = build_controls(debates(), 8, seed=3)
    model = ScriptedModel(model_id="reader", scorer=overlap)
    figures = calibrate_judge(
        "reader",
        controls,
        ballot_judge("reader", lambda r: model, BallotSettings(method="likelihood")),
        clock=lambda: 0.0,
    )
    assert figures.accuracy["off_motion"].share == 1.0 and figures.accuracy["silent"].share == 1.0
    assert figures.beats_chance and figures.position_bias.share == 0.0
    # Each side's speeches are scored three ways: for its own side, for the other, on no motion.
    asked = {r.messages[-1].content.split(" the motion:")[0] for r in model.scored}
    assert asked == {
        "Give a short debate speech for",
        "Give a short debate speech against",
        "Give a short speech.",
    }


def test_likelihood_is_the_logistic_of_the_sides_scores_and_undecided_when_they_tie() -> None:
    def fixed(request: LikelihoodRequest) -> float:
        prompt = request.messages[-1].content
        if "speech for" in prompt:
            return -100.0 if "cars choke" in request.reply else -130.0
        return -120.0

    likely = BallotSettings(method="likelihood")
    verdict = judged_by(ScriptedModel(model_id="j", scorer=fixed), debate("cars", 0), ballot=likely)
    [b] = verdict.ballots
    assert b.method == "likelihood" and verdict.orders == 1
    prop = b.scores["proposition"]
    assert prop == pytest.approx(2 * -100.0 + 120.0 + 120.0)
    gap = prop - b.scores["opposition"]
    assert b.p_proposition == pytest.approx(1 / (1 + math.exp(-gap / LIKELIHOOD_SCALE)), abs=1e-6)
    even = ScriptedModel(model_id="j", scorer=lambda r: -50.0)
    tie = judged_by(even, debate("cars", 0), ballot=likely)
    assert tie.winner == "undecided" and tie.ballots[0].p_proposition == 0.5


def test_a_judge_that_cannot_score_a_speech_is_left_out_in_words_naming_the_fix() -> None:
    server_like = ScriptedModel(model_id="http://127.0.0.1:9/v1")  # no scorer: as a server
    with pytest.raises(MootError) as caught:
        judged_by(server_like, debate("cars", 0), ballot=BallotSettings(method="likelihood"))
    # A judge found out only as it judges is left out, and named with why.
    assert caught.value.key == "tournaments.ballots.no_judge_read"
    assert "cannot score how likely a speech is" in caught.value.message
