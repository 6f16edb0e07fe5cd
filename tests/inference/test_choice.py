"""A decision's probabilities: a backend's own reading, or counted over held samples."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from moot.inference.choice import ChoiceRequest, choose, schema_for
from moot.inference.protocol import messages
from moot.inference.scripted import ScriptedModel

WINNER = ("proposition", "opposition", "draw")


def _request(**kw: object) -> ChoiceRequest:
    fields: dict[str, object] = {
        "messages": messages(("user", "Who won?")),
        "field": "winner",
        "options": WINNER,
        "seed": 3,
    }
    return ChoiceRequest(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_backends_own_reading_is_normalised_over_the_options() -> None:
    model = ScriptedModel(chooser=lambda r: {"proposition": 3, "opposition": 1, "elsewhere": 9})
    choice = choose(model, _request())
    assert choice.method == "scripted"
    assert choice.probabilities == {"proposition": 0.75, "opposition": 0.25, "draw": 0.0}
    assert choice.best() == "proposition"


def test_without_a_reading_the_held_samples_are_counted_and_said() -> None:
    replies = ['{"winner": "opposition"}'] * 3 + ['{"winner": "draw"}', "not json"]
    choice = choose(ScriptedModel(replies), _request(samples=5))
    assert choice.method == "samples" and choice.samples == 5
    assert choice.probabilities == {"proposition": 0.0, "opposition": 0.75, "draw": 0.25}


def test_a_score_is_the_mean_of_its_distribution_not_its_mode() -> None:
    bimodal = ScriptedModel(chooser=lambda r: {"1": 0.5, "9": 0.5})
    choice = choose(bimodal, _request(field="score", options=tuple(range(11))))
    assert choice.expected() == pytest.approx(5.0)


def test_the_reply_a_value_continues_is_one_key_of_json() -> None:
    request = _request()
    assert request.prefix() + request.spelled("draw") == '{"winner": "draw"}'
    assert schema_for(request).model_validate({"winner": "draw"})
    with pytest.raises(ValidationError):
        schema_for(request).model_validate({"winner": "nobody"})
    with pytest.raises(ValidationError):
        _request(options=("only",))
