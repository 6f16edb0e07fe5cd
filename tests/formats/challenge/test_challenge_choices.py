"""The synthesis judge's winner read as its probability of each side before its reply."""

from __future__ import annotations

from pathlib import Path

from moot.inference.choice import ChoiceRequest
from moot.inference.scripted import ScriptedModel
from test_challenge import VERDICT, Script, debate


class Reading(Script):
    """Scripted sides, and a judge that reads P(proposer) = 0.7 though its reply (VERDICT)
    names the challenger."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[ChoiceRequest] = []

    def choose(self, request: ChoiceRequest) -> dict[str, float]:
        self.read.append(request)
        self.calls.append(("reading", 0, None))  # type: ignore[arg-type]
        return {"proposer": 0.7, "challenger": 0.3}

    def model(self, ref: str) -> ScriptedModel:
        model = super().model(ref)
        model.chooser = self.choose
        return model


def test_the_winner_is_the_side_read_most_probable_and_its_probability_is_kept(
    tmp_path: Path, moot_home: Path
) -> None:
    assert VERDICT["winner"] == "challenger"
    script = Reading()
    result, _ = debate(tmp_path, script, rounds=2)
    [judged] = [t for t in result.transcript.turns if t.step == "verdict"]
    assert judged.data is not None and judged.data["winner"] == "proposer"
    assert judged.choices == {
        "winner": {
            "probabilities": {"proposer": 0.7, "challenger": 0.3},
            "method": "scripted",
            "samples": 0,
            "duration_ms": 0,
        }
    }
    # Read first, on the verdict's prompt asking for the winner alone; then the reply,
    # told the side decided.
    [reading] = script.read
    assert reading.field == "winner" and reading.options == ("proposer", "challenger")
    assert 'one key, "winner"' in reading.messages[-1].content
    steps = [step for step, _, _ in script.calls]
    assert steps[steps.index("reading") + 1] == "verdict"
    asked = script.prompt("verdict", 0)
    assert 'The winner has been decided already: "proposer"' in asked
    assert "proposer" in result.markdown.split("had the stronger")[0].splitlines()[-1].lower()


def test_a_judge_that_reads_nothing_decides_by_its_reply(tmp_path: Path, moot_home: Path) -> None:
    result, _ = debate(tmp_path, Script(), rounds=2)
    [judged] = [t for t in result.transcript.turns if t.step == "verdict"]
    assert judged.data is not None and judged.data["winner"] == "challenger"
    assert judged.choices is None
