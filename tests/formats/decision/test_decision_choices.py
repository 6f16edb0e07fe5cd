"""The decision judge's recommendation read as its probability of each option first."""

from __future__ import annotations

from moot.inference.choice import ChoiceRequest
from test_decision import Room, run_decision, split_document


def test_the_recommendation_is_the_option_read_most_probable_and_kept_with_it() -> None:
    room = Room()  # its reply recommends the first position, Postgres
    read: list[ChoiceRequest] = []

    def choose(request: ChoiceRequest) -> dict[str, float]:
        read.append(request)
        return {"Postgres": 0.2, "MySQL": 0.1, "SQLite": 0.6, "none": 0.1}

    room.model.chooser = choose
    result = run_decision(None, room)
    [judged] = [t for t in result.transcript.turns if t.step == "judge_decision"]
    assert judged.data is not None and judged.data["recommendation"] == "SQLite"
    assert judged.choices is not None
    assert judged.choices["recommendation"]["probabilities"]["SQLite"] == 0.6
    assert judged.choices["recommendation"]["method"] == "scripted"
    data, _ = split_document(result.markdown)
    assert data["recommendation"] == "SQLite"
    # One reading, of the positions and the tie, on the judge's prompt asking for it alone.
    [reading] = read
    assert reading.options == ("Postgres", "MySQL", "SQLite", "none")
    assert 'one key, "recommendation"' in reading.messages[-1].content
    told = [r for r in room.model.requests if r.reply_schema is not None]
    assert any('has been read already: "SQLite"' in r.messages[-1].content for r in told)
    # The dissent then comes from the positions the reading did not recommend.
    sections = told[-1].reply_schema
    assert sections is not None
    enum = sections.model_json_schema()["properties"]["dissent_position"]["enum"]
    assert enum == ["Postgres", "MySQL"]


def test_a_judge_that_reads_nothing_recommends_by_its_reply() -> None:
    result = run_decision(None, Room())
    [judged] = [t for t in result.transcript.turns if t.step == "judge_decision"]
    assert judged.data is not None and judged.data["recommendation"] == "Postgres"
    assert judged.choices is None
