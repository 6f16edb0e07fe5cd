"""The Completeness Judge's decision read as a probability: the expected score, each
checklist item weighed by its P(yes), the early stop on the expected score, and the
reasons asked only after the values are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.formats.oxford.schemas import CompletenessReply, CompletenessRubric
from moot.inference.choice import ChoiceRequest
from moot.inference.protocol import ChatRequest
from moot.records.journal import read_transcript
from test_oxford import Chamber, journal_of, run_debate


class Reading(Chamber):
    """A chamber whose judge reads probabilities: DISTRIBUTIONS[field] by the field read,
    and a log of what was asked in which order (a reading, or the judge's reply)."""

    def __init__(self, distributions: dict[str, dict[str, float]], **kw: Any) -> None:
        super().__init__(**kw)
        self.distributions = distributions
        self.model.chooser = self.choose
        self.log: list[str] = []

    def choose(self, request: ChoiceRequest) -> dict[str, float]:
        self.log.append(f"read {request.field}")
        return self.distributions[request.field]

    def reply(self, request: ChatRequest) -> str:
        if request.reply_schema in (CompletenessReply, CompletenessRubric):
            self.log.append("reply")
        return super().reply(request)


BIMODAL = {"score": {"1": 0.5, "9": 0.5}}  # half on 1, half on 9: expected 5


def test_a_bimodal_judge_scores_its_expected_score_not_a_sampled_end(tmp_path: Path) -> None:
    # The scripted reply writes 9.0 every round: sampled, it would stop the rounds at once.
    chamber = Reading(BIMODAL, judge_ok=True)
    result, _ = run_debate(tmp_path, chamber, max_rounds=3, judge_rubric="score", min_score=5)
    t = result.transcript
    assert t.scores["2"]["score"] == 5.0
    assert t.scores["2"]["distribution"] == {
        **{str(k): 0.0 for k in range(11) if k not in (1, 9)},
        "1": 0.5,
        "9": 0.5,
    }
    assert t.scores["2"]["method"] == "scripted"
    # The reply keeps the value read, whatever the model wrote beside its reasons.
    judged = [turn for turn in t.turns if turn.step == "judge"]
    assert judged[0].data == {"score": 5.0, "reasoning": "both sides argued"}
    assert judged[0].choices is not None
    assert judged[0].choices["score"]["probabilities"]["9"] == 0.5
    # Expected 5 meets a threshold of 5: the rounds stop after round 2.
    assert t.stop_reason == "converged" and len(judged) == 1


def test_the_early_stop_follows_the_expected_score(tmp_path: Path) -> None:
    # Expected 5 is short of 7.5, though a sample of 9 would have stopped the rounds.
    chamber = Reading(BIMODAL, judge_ok=True)
    result, _ = run_debate(tmp_path, chamber, max_rounds=3, judge_rubric="score")
    t = result.transcript
    assert t.stop_reason == "hard_cap"
    assert [t.scores[r]["score"] for r in ("2", "3")] == [5.0, 5.0]


def test_the_score_is_read_before_the_reasons_are_asked(tmp_path: Path) -> None:
    chamber = Reading(BIMODAL, judge_ok=True)
    run_debate(tmp_path, chamber, max_rounds=3, judge_rubric="score", min_score=5)
    assert chamber.log == ["read score", "reply"]
    [reading] = chamber.model.choices
    assert reading.options == tuple(range(11)) and reading.session == "judge"
    asked = reading.messages[-1].content
    assert 'one key: "score"' in asked and '"reasoning"' not in asked
    reasons = [r for r in chamber.model.requests if r.reply_schema is CompletenessReply]
    assert "has been read already: 5.0" in reasons[0].messages[-1].content


def test_a_checklist_item_weighs_its_probability_of_yes(tmp_path: Path) -> None:
    weights = {
        "proposition_argued_for_motion": 0.9,
        "opposition_argued_against_motion": 0.8,
        "proposition_gave_evidence": 0.3,
        "opposition_gave_evidence": 0.2,
        "key_objections_answered": 0.3,
    }
    distributions = {item: {"yes": p, "no": 1 - p} for item, p in weights.items()}
    # The scripted checklist answers all true: sampled, every round would score 10.
    chamber = Reading(distributions, judge_ok=True)
    result, _ = run_debate(tmp_path, chamber, max_rounds=3)
    score = result.transcript.scores["2"]
    assert score["rubric"] == weights
    assert score["method"] == "scripted"
    # Every code check passes: 10 × (½ + ½ × mean P(yes)) = 10 × (0.5 + 0.5 × 0.5) = 7.5.
    assert all(score["checks"].values())
    assert score["score"] == 7.5
    assert result.transcript.stop_reason == "converged"
    assert chamber.log == [f"read {item}" for item in weights] + ["reply"]
    # Each item is asked alone, yes or no, on the judge's prompt.
    first = chamber.model.choices[0]
    assert first.options == ("yes", "no")
    assert '"proposition_argued_for_motion", and the value "yes" or "no"' in (
        first.messages[-1].content
    )
    # The reply holds each item's more probable answer.
    [judged] = [t for t in result.transcript.turns if t.step == "judge"]
    assert judged.data is not None and judged.data["proposition_gave_evidence"] is False
    assert judged.data["proposition_argued_for_motion"] is True


def test_the_readings_are_saved_and_a_resumed_debate_scores_from_them(tmp_path: Path) -> None:
    from moot.debates.runner import DebateRun, resume_setup

    chamber = Reading(BIMODAL, judge_ok=True)
    result, _ = run_debate(tmp_path, chamber, max_rounds=3, judge_rubric="score")
    out = tmp_path / "out"
    saved, _ = read_transcript(out / "transcript.json")
    judged = [t for t in saved.turns if t.step == "judge"]
    assert judged[0].choices == result.transcript.turns[judged[0].index].choices
    records = journal_of(tmp_path)
    [turn_line] = [r for r in records if r["type"] == "turn" and r["step"] == "judge"][:1]
    assert turn_line["choices"]["score"]["method"] == "scripted"
    # Cut after the first judged round's score: resumed by a judge that would now read
    # otherwise, the saved reading stands.
    cut = next(i for i, r in enumerate(records) if r["type"] == "score") + 1
    journal = out / "journal.jsonl"
    journal.write_text("".join(json.dumps(r) + "\n" for r in records[:cut]), encoding="utf-8")
    setup, replay = resume_setup(out)
    other = Reading({"score": {"10": 1.0}}, judge_ok=True)
    resumed = DebateRun(setup, replay=replay, model_factory=lambda ref: other.model).run()
    assert resumed.transcript.scores["2"]["score"] == 5.0
    assert resumed.transcript.scores["3"]["score"] == 10.0
    assert other.log == ["read score", "reply"]  # round 3 only


def test_a_turn_read_by_no_probabilities_saves_as_before(tmp_path: Path) -> None:
    """A scripted judge without a chooser (as a dry run's echo) reads nothing: its reply
    decides, in one call, and the turn and score are saved in the form they had."""
    chamber = Chamber(judge_ok=True)
    result, _ = run_debate(tmp_path, chamber, max_rounds=3, judge_rubric="score")
    t = result.transcript
    assert t.scores["2"] == {"score": 9.0, "reasoning": "both sides argued"}
    judge_calls = [r for r in chamber.model.requests if r.session == "judge"]
    assert len(judge_calls) == 2  # the round's judge and the brief: no draws beside them
    line = next(r for r in journal_of(tmp_path) if r["type"] == "turn" and r["step"] == "judge")
    assert "choices" not in line


@pytest.mark.real
def test_the_real_tiny_judge_records_the_distribution_it_read_from_its_logits() -> None:
    """SmolLM2 as the Completeness Judge of a round: its score is the expected score under
    the distribution read from its logits, and the turn and the round's record keep it."""
    from moot.engine.turns import Engine, Role
    from moot.formats.oxford import flow as oxford
    from moot.inference.pool import ModelPool
    from moot.models import store
    from moot.prompts import load_pack
    from moot.records.transcript import Transcript
    from test_oxford import MOTION, SAID, SPEECH

    speeches = {"proposition": SPEECH, "opposition": SAID["en"]["opposition"]}
    model = ModelPool(resolve=store.resolve, n_ctx=2048).get("smollm2-135m")
    common = {"motion": MOTION, "language": "en", "limits": oxford.LIMITS}
    t = Transcript(format="oxford", motion=MOTION, language="en", seed=1, models={})
    engine = Engine(
        pack=load_pack("en", "oxford"), transcript=t, roles={"judge": Role("judge", model, 0.2)}
    )
    score = oxford._judge(engine, 2, speeches, common, 7.5, "score")
    [turn] = t.turns
    assert turn.choices is not None
    read = turn.choices["score"]
    assert read["method"] == "logits"
    assert set(read["probabilities"]) == {str(k) for k in range(11)}
    assert abs(sum(read["probabilities"].values()) - 1) < 1e-6
    expected = sum(int(k) * p for k, p in read["probabilities"].items())
    assert score == round(expected, 2) == t.scores["2"]["score"]
    assert t.scores["2"]["method"] == "logits" and t.scores["2"]["distribution"]
    assert turn.data is not None and turn.data["score"] == score


def test_a_debate_with_readings_validates_against_the_printed_schemas(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from moot.records.transcript import json_schema

    run_debate(tmp_path, Reading(BIMODAL, judge_ok=True), max_rounds=3, judge_rubric="score")
    out = tmp_path / "out"
    saved = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    assert any("choices" in turn for turn in saved["turns"])
    jsonschema.Draft202012Validator(json_schema("transcript")).validate(saved)
    journal = jsonschema.Draft202012Validator(json_schema("journal"))
    for record in journal_of(tmp_path):
        journal.validate(record)
