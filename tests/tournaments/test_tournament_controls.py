"""A tournament's control debates: made from its own finished debates, decided by each of
its judges, kept across a resume, and reported: a judge that follows the seat is told
apart from one that reads the speeches, and the ratings are marked when no judge beat
chance."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import Cli
from moot.cli.tournament import show_report
from moot.inference.choice import ChoiceRequest
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel
from moot.tournaments.calibration import Control, build_controls, judge_control, jury_on, summarise
from moot.tournaments.controls import load
from moot.tournaments.executors import judge_controls
from moot.tournaments.judge import Winner
from moot.tournaments.jury import Judgement, outcome_of
from moot.tournaments.plan import Motion
from moot.tournaments.report import Report, report_of
from moot.tournaments.run import Tournament
from test_calibration import debates as calibration_debates
from test_tournament import Debater, oxford_plan, run
from test_usage_errors import refused

pytestmark = pytest.mark.usefixtures("any_model_name")

TOPICS = {"cats": "cats are better than dogs", "homework": "schools should abolish homework"}
MOTIONS = [Motion(text=f"This House Believes That {t}", language="en") for t in TOPICS.values()]
STOP = {"this", "house", "believes", "that", "should", "than", "better"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3} - STOP


class OnMotion(Debater):
    """Speaks as Debater does, naming the motion's topic in every speech; as a judge, its
    probabilities favour the side shown first (`first`), or the side whose speeches use
    more of the motion's words (`reader`)."""

    def __init__(self, model_id: str) -> None:
        super().__init__(model_id)
        self.chooser = self.probabilities

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        prompt = request.messages[-1].content
        if request.reply_schema is None and "as a Point of Information" not in prompt:
            said = " ".join(m.content for m in request.messages)
            topic = next((t for k, t in TOPICS.items() if k in said), "")
            self.queue(f"I am {self.model_id}: {topic}, because {topic} [{len(self.requests)}]")
        else:
            return super().chat(request, on_text=on_text)
        return ScriptedModel.chat(self, request, on_text=on_text)

    def probabilities(self, request: ChoiceRequest) -> dict[str, float]:
        if "A" not in request.options:  # a debate's own Completeness Judge: even odds
            return {str(o): 1.0 for o in request.options}
        if self.model_id != "reader":
            return {"A": 0.8, "B": 0.15, "draw": 0.05}
        prompt = request.messages[-1].content
        motion = prompt.split("Motion:", 1)[1].split("\n", 1)[0]
        body = prompt.split("Side A argued", 1)[1].split("Reply in JSON", 1)[0]
        first, second = body.split("Side B argued", 1)
        wanted = words(motion)
        a, b = len(wanted & words(first)), len(wanted & words(second))
        if a == b:
            return {"A": 0.1, "B": 0.1, "draw": 0.8}
        return {"A": 0.9, "B": 0.1} if a > b else {"A": 0.1, "B": 0.9}


class Models:
    def __init__(self) -> None:
        self.made: dict[str, OnMotion] = {}

    def __call__(self, ref: str) -> OnMotion:
        return self.made.setdefault(ref, OnMotion(ref))

    def ballots(self) -> int:
        return sum(1 for m in self.made.values() for c in m.choices if "A" in c.options)


def tournament(tmp_path: Path, judges: list[str], **kw: Any) -> Tournament:
    plan = oxford_plan(["weak", "strong"], MOTIONS, judges=judges)
    t = Tournament.create(plan.model_copy(update={"controls": kw.get("controls", 4)}), tmp_path)
    _, failed = run(t, Models())  # type: ignore[arg-type]
    assert failed == []
    return t


def shown(report: Report) -> str:
    return " ".join(" ".join(shown_lines(report)).split())


def shown_lines(report: Report) -> list[str]:
    out = io.StringIO()
    show_report(Console(file=out, width=200), report)
    return out.getvalue().splitlines()


def test_a_judge_that_follows_the_seat_leaves_the_ratings_not_validated(tmp_path: Path) -> None:
    t = tournament(tmp_path / "t", ["first"])
    assert judge_controls(t, model_for=Models()) == []
    report = report_of(t, samples=20)
    figure = report.calibration
    assert figure is not None and figure.status == "judged" and figure.made == 5 * 4
    [first] = figure.judges
    # Read in both orders, a judge that favours the side shown first names different
    # sides: it abstains on every control, never follows the seat, and is right on none.
    assert first.position_bias.share == 0.0
    assert first.accuracy["off_motion"].share == 0.0
    assert not first.beats_chance and figure.validated is False
    assert first.coverage is not None and first.coverage.share == 0.0
    assert figure.jury is None  # one judge: no jury to measure
    # And on every debate: no verdict for the first seat, every one undecided.
    assert {v.winner for v in t.verdicts().values()} == {"undecided"}
    assert all(b.flipped for v in t.verdicts().values() for b in v.ballots)
    assert report.coverage == 0.0 and report.debates_undecided == len(t.plan.debates)
    assert [(r.wins, r.losses, r.draws) for r in report.models] == [(0, 0, 0), (0, 0, 0)]
    text = shown(report)
    assert "not validated" in text and "rather than how well the models argued" in text
    assert " jury " not in text  # one judge: no jury row
    # A control never shows a judge, beside it, the debate it was made from.
    saved = json.loads((t.folder / "controls.json").read_text(encoding="utf-8"))
    changed = {s for c in saved["controls"] if c["kind"] in ("off_motion", "silent", "padded")
               for s in c["sources"]}  # fmt: skip
    whole = {s for c in saved["controls"] if c["kind"] in ("swap", "twice") for s in c["sources"]}
    assert changed and whole and not changed & whole


def test_a_judge_that_reads_the_motion_validates_the_ratings(tmp_path: Path) -> None:
    t = tournament(tmp_path / "t", ["reader", "first"])
    judge_controls(t, model_for=Models())
    report = report_of(t, samples=20)
    figure = report.calibration
    assert figure is not None
    reader, first = figure.judges
    assert reader.judge == "reader" and first.judge == "first"
    assert reader.accuracy["off_motion"].share == 1.0 and reader.beats_chance
    assert reader.position_bias.share == 0.0
    assert first.position_bias.share == 0.0 and not first.beats_chance
    assert figure.validated is True and "not validated" not in shown(report)
    data = json.loads(report.model_dump_json())
    assert data["calibration"]["judges"][0]["accuracy"]["off_motion"]["low"] > 0.5
    # The jury: the judge that abstains on every control is left out of each pool, so the
    # jury says what the reader says, on the controls it decided and no others.
    jury = figure.jury
    assert jury is not None and jury.judge == "jury"
    assert jury.accuracy == reader.accuracy and jury.position_bias == reader.position_bias
    assert jury.coverage == reader.coverage and jury.coverage is not None
    assert 0 < (jury.coverage.share or 0) < 1  # a side's speeches as long as the other's: a draw
    assert data["calibration"]["jury"]["coverage"]["n"] == sum(len(c.shown) for c in controls(t))
    # The terminal's table has the jury's row under its judges', scored the same way.
    rows = [line.split() for line in shown_lines(report)]
    jury_row = next(r for r in rows if r and r[0] == "jury")
    reader_row = next(r for r in rows if r and r[0] == "reader")
    assert jury_row[1:] == reader_row[1:]


def controls(t: Tournament) -> list[Control]:
    record = load(t)
    assert record is not None
    return record.controls


def test_the_jury_on_the_controls_follows_the_judge_measured_right_on_the_others() -> None:
    """Two judges that name opposite sides on every control with a known winner: the one
    right on the other such controls outweighs the one wrong on them (a judge at or below
    chance weighs nothing); two of equal weight split it even: undecided, kept as a draw
    as a judge's undecided ballot is."""
    made = build_controls(calibration_debates(), 3, seed=2)
    flip = {"proposition": "opposition", "opposition": "proposition"}

    def said(c: Control, right: bool) -> Winner:
        if c.expected is None:  # swap, twice: both name the Proposition
            return "proposition"
        return c.expected if right else flip[c.expected]  # type: ignore[return-value]

    right = [judge_control(c, lambda t, s, c=c: said(c, True)) for c in made]
    wrong = [judge_control(c, lambda t, s, c=c: said(c, False)) for c in made]
    pooled = jury_on(made, {"right": right, "wrong": wrong}, 0.1)
    assert [r.verdicts for r in pooled] == [r.verdicts for r in right]
    assert summarise("jury", pooled).accuracy["off_motion"].share == 1.0
    # As sure of itself as the right one (its rows say so), and naming the other side.
    sure = [r.model_copy(update={"correct": True}) for r in wrong]
    split = jury_on(made, {"right": right, "sure": sure}, 0.1)
    known = [r for r in split if r.kind in ("off_motion", "silent", "padded")]
    assert known and all(r.verdicts == ["draw"] for r in known)
    assert all(r.verdicts != ["draw"] for r in split if r.kind == "twice")


def test_the_jury_on_the_controls_pools_the_probabilities_read_not_the_sides() -> None:
    """Two judges right and sure on every control but one, where one is sure of the right
    side (0.9) and the other names the wrong side, unsure (0.35): as sides the two cancel
    out, undecided; as the probabilities they were read with, pooled, the right side."""
    made = build_controls(calibration_debates(), 2, seed=2)
    known = [c for c in made if c.kind in ("off_motion", "silent")]
    target = known[0].id

    def reads(c: Control, p_right: float) -> Judgement:
        p = p_right if c.expected == "proposition" else 1 - p_right
        return Judgement(outcome=outcome_of(p, 0.1), p_proposition=p)

    sure = [
        judge_control(c, lambda t, s, c=c: reads(c, 0.9 if c.id == target else 0.95)) for c in known
    ]
    unsure = [
        judge_control(c, lambda t, s, c=c: reads(c, 0.35 if c.id == target else 0.95))
        for c in known
    ]
    assert all(r.chances for r in sure + unsure)
    assert [r.correct for r in unsure] == [r.id != target for r in known]
    pooled = jury_on(known, {"sure": sure, "unsure": unsure}, 0.1)
    assert all(r.correct for r in pooled)
    (p,) = pooled[0].chances
    assert p is not None and abs(abs(p - 0.5) - 0.125) < 1e-6
    # Kept as sides only (as a controls file written before probabilities were kept), the
    # two votes on the target cancel out.
    as_sides = {
        k: [r.model_copy(update={"chances": []}) for r in v]
        for k, v in {"sure": sure, "unsure": unsure}.items()
    }
    assert jury_on(known, as_sides, 0.1)[0].verdicts == ["draw"]
    # A flipped ballot is kept with no probability and gives no vote.
    flipped = [
        judge_control(c, lambda t, s: Judgement(outcome="undecided", flipped=True)) for c in known
    ]
    assert all(r.chances == [None] and r.verdicts == ["draw"] for r in flipped)
    alone = jury_on(known, {"flipped": flipped}, 0.1)
    assert all(r.verdicts == ["draw"] and r.chances == [None] for r in alone)


def test_a_resume_asks_only_for_the_controls_not_yet_judged(tmp_path: Path) -> None:
    t = tournament(tmp_path / "t", ["first"], controls=2)
    asked = 0

    def interrupted(ref: str) -> OnMotion:
        model = OnMotion(ref)
        choose = model.choose

        def counted(request: ChoiceRequest) -> Any:
            nonlocal asked
            asked += 1
            if asked == 7:
                raise KeyboardInterrupt
            return choose(request)

        model.choose = counted  # type: ignore[method-assign]
        return model

    with pytest.raises(KeyboardInterrupt):
        judge_controls(t, model_for=interrupted)
    saved = json.loads((t.folder / "controls.json").read_text(encoding="utf-8"))
    kept = saved["judged"]["first"]
    assert 0 < len(kept) < len(saved["controls"])
    models = Models()
    judge_controls(Tournament.open(t.folder), model_for=models)
    again = json.loads((t.folder / "controls.json").read_text(encoding="utf-8"))
    assert again["controls"] == saved["controls"]
    assert again["judged"]["first"][: len(kept)] == kept
    ballots = {c["id"]: 2 * len(c["shown"]) for c in saved["controls"]}  # both orders
    assert models.ballots() == sum(ballots.values()) - sum(ballots[r["control"]] for r in kept)
    models = Models()
    assert judge_controls(t, model_for=models) == [] and models.ballots() == 0


def test_controls_off_and_an_old_plan_without_them_say_so(tmp_path: Path, cli: Cli) -> None:
    t = tournament(tmp_path / "t", ["first"], controls=0)
    plan = json.loads((t.folder / "tournament.json").read_text(encoding="utf-8"))
    del plan["controls"]  # as a tournament planned before controls were
    (t.folder / "tournament.json").write_text(json.dumps(plan), encoding="utf-8")
    proc = cli("tournament", "--resume", str(t.folder), "--bootstrap", "10", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "controls: off" in proc.stdout and "not validated" not in proc.stdout
    assert not (t.folder / "controls.json").exists() and not (t.folder / "judges.csv").exists()
    saved = json.loads((t.folder / "ratings.json").read_text(encoding="utf-8"))
    assert saved["calibration"]["status"] == "off" and saved["calibration"]["validated"] is None


def test_a_dry_run_tournament_judges_its_controls_and_a_resume_keeps_them(
    tmp_path: Path, cli: Cli
) -> None:
    motions = tmp_path / "m.txt"
    motions.write_text("\n".join(TOPICS.values()) + "\n", encoding="utf-8")
    out = tmp_path / "t"
    args = ["--motions", str(motions), "--max-rounds", "3", "--bootstrap", "10", "--quiet"]
    proc = cli("tournament", "--model", "a", "--model", "b", "--dry-run", "--out", str(out),
               "--judge-rubric", "score", *args, home=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # A dry run's judge names the first seat every time: no better than chance.
    assert "· not validated" in proc.stdout and "Judges on 20 control debates" in proc.stdout
    saved = json.loads((out / "ratings.json").read_text(encoding="utf-8"))
    assert saved["calibration"]["per_kind"] == 4  # four debates: the least, 4 of each kind
    assert [j["judge"] for j in saved["calibration"]["judges"]] == ["a", "b"]
    assert (out / "ratings.csv").read_text().splitlines()[1].endswith(",False")
    rows = (out / "judges.csv").read_text().splitlines()
    assert rows[0].startswith("judge,beats_chance,accuracy_off_motion_share") and len(rows) == 3
    # --judge-rubric reached every debate: the completeness judge gave a score, no checklist.
    debate = json.loads(next((out / "debates").glob("*/transcript.json")).read_text())
    assert debate["params"]["judge_rubric"] == "score"
    assert debate["scores"] and all("rubric" not in s for s in debate["scores"].values())
    before = (out / "controls.json").read_bytes()
    again = cli("tournament", "--resume", str(out), "--quiet", home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (out / "controls.json").read_bytes() == before and "not validated" in again.stdout
    # A controls file that names a debate the tournament does not hold is refused in a line.
    crafted = json.loads(before)
    crafted["controls"][0]["sources"] = ["../elsewhere"]
    (out / "controls.json").write_text(json.dumps(crafted), encoding="utf-8")
    refused_too = cli("tournament", "--resume", str(out), "--quiet", home=tmp_path)
    assert refused_too.returncode == 2
    assert "is not this tournament's" in refused_too.stderr.splitlines()[0]
    assert "Traceback" not in refused_too.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--controls", "-1"], "--controls -1"),
        (["--controls", "65"], "--controls 65"),
        (["--controls", "3", "--one-motion"], "two motions or more"),
        (["--format", "challenge", "--judge-rubric", "score"], "--judge-rubric"),
        (["--resume", "x", "--controls", "3"], "its plan fixes --controls"),
    ],
)
def test_bad_controls_are_one_line_and_exit_2(
    tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    motions = tmp_path / "m.txt"
    one = "--one-motion" in args
    motions.write_text("\n".join(list(TOPICS.values())[: 1 if one else 2]) + "\n")
    args = [a for a in args if a != "--one-motion"]
    out = tmp_path / "t"
    planned = ["--model", "a", "--model", "b", "--motions", str(motions), "--out", str(out)]
    if "--resume" in args:
        planned = []
    else:
        planned.append("--dry-run")
    proc = cli("tournament", *planned, *args, home=tmp_path / "home")
    refused(proc, needle)
    assert not out.exists()
