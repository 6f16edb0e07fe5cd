"""The adversarial judge's `resolved` and winner read as its probabilities first."""

from __future__ import annotations

from pathlib import Path

from moot.inference.choice import ChoiceRequest
from moot.inference.scripted import ScriptedModel
from test_adversarial import Panel, review


class Reading(Panel):
    """A panel whose models read P(resolved) = 0.8 and P(beta) = 0.9, though the judge's
    reply says unresolved, won by alpha."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[ChoiceRequest] = []

    def choose(self, request: ChoiceRequest) -> dict[str, float]:
        self.read.append(request)
        if request.field == "resolved":
            return {"yes": 0.8, "no": 0.2}
        return {"alpha": 0.1, "beta": 0.9}

    def model(self, ref: str) -> ScriptedModel:
        model = super().model(ref)
        model.chooser = self.choose
        return model


def test_resolved_and_the_winner_are_read_before_the_reply(tmp_path: Path) -> None:
    panel = Reading()
    result = review(tmp_path, panel, rounds=2)
    judged = [t for t in result.transcript.turns if t.step == "judge"]
    assert judged[0].data is not None
    assert judged[0].data["resolved"] is True and judged[0].data["winner"] == "beta"
    assert judged[0].choices is not None
    assert judged[0].choices["resolved"]["probabilities"] == {"yes": 0.8, "no": 0.2}
    assert judged[0].choices["winner"]["probabilities"]["beta"] == 0.9
    assert [r.field for r in panel.read[:2]] == ["resolved", "winner"]
    assert panel.read[0].options == ("yes", "no")
    assert panel.read[1].options == ("alpha", "beta")
    r = result.transcript.result
    assert r is not None and r["winner"] == "beta"


def test_a_judge_that_reads_nothing_decides_by_its_reply(tmp_path: Path) -> None:
    result = review(tmp_path, Panel(), rounds=2)
    judged = [t for t in result.transcript.turns if t.step == "judge"]
    assert judged[0].data is not None and judged[0].data["winner"] == "alpha"
    assert judged[0].choices is None
