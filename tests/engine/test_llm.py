"""The seam's pure parts: degenerate replies, structured replies with one re-ask."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from moot.errors import DegenerateReplyError, StructuredReplyError
from moot.inference.protocol import (
    HELD_PROSE,
    ChatRequest,
    Completion,
    Sampling,
    chat_structured,
    check_not_degenerate,
    degeneracy,
    held_budget,
    messages,
    reply_json_schema,
    reply_token_bound,
    room,
)
from moot.inference.scripted import ScriptedModel


class Score(BaseModel):
    score: float = Field(ge=0, le=10)


def test_empty_and_repeated_replies_are_degenerate() -> None:
    assert degeneracy("   ") == "the reply is empty"
    assert degeneracy("the cat sat " * 10)
    assert degeneracy("好的" * 30)
    assert degeneracy("Remote work frees hours once lost to commuting and widens hiring.") is None
    speech = "We hold that remote work wins. " + "It saves time, money and carbon. " * 2
    assert degeneracy(speech) is None


def test_a_degenerate_reply_keeps_what_it_cost() -> None:
    spent = Completion(text="the cat sat " * 10, prompt_tokens=50, completion_tokens=30)
    with pytest.raises(DegenerateReplyError) as info:
        check_not_degenerate(spent)
    assert info.value.raw == spent.text
    assert info.value.completion == spent  # the transcript records the tokens it took
    check_not_degenerate(Completion(text="Remote work frees hours once lost to commuting."))


def test_structured_reply_is_re_asked_once_then_fails_with_the_raw_text() -> None:
    model = ScriptedModel(['{"score": 42}', '{"score": 7}'])
    req = ChatRequest(messages=messages(("user", "score it")))
    parsed, _ = chat_structured(model, req, Score)
    assert parsed.score == 7
    assert len(model.requests) == 2
    assert model.requests[0].sampling.seed == model.requests[1].sampling.seed  # both None

    model = ScriptedModel(["nope", "{bad"])
    with pytest.raises(StructuredReplyError) as info:
        chat_structured(model, req, Score)
    assert info.value.raw == "{bad"
    assert all(r.reply_schema is Score for r in model.requests)


def test_a_reply_nested_too_deeply_is_an_invalid_reply_not_a_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000  # what a hostile server could send
    model = ScriptedModel([deep, '{"score": 6}'])
    parsed, _ = chat_structured(model, ChatRequest(messages=messages(("user", "x"))), Score)
    assert parsed.score == 6


def test_a_wanting_reply_is_kept_when_the_re_ask_is_not_valid_at_all() -> None:
    req = ChatRequest(messages=messages(("user", "score it")))
    wanting = lambda parsed: "too low" if parsed.score < 5 else None  # noqa: E731
    model = ScriptedModel(['{"score": 2}', "{truncated"])
    parsed, completion = chat_structured(model, req, Score, check=wanting)
    assert parsed.score == 2 and completion.text == '{"score": 2}'
    model = ScriptedModel(['{"score": 2}', '{"score": 8}'])
    assert chat_structured(model, req, Score, check=wanting)[0].score == 8


class Verdict(BaseModel):
    winner: bool
    why: str = Field(max_length=300)


class Essay(BaseModel):
    text: str  # no maxLength: no bound


def test_a_structured_reply_gets_room_for_the_longest_reply_its_grammar_allows() -> None:
    bound = reply_token_bound(Verdict)
    assert bound is not None and bound > 300  # every character of `why` may be a token
    assert reply_token_bound(Essay) is None
    ask = lambda n: ChatRequest(  # noqa: E731
        messages=messages(("user", "judge it")), sampling=Sampling(max_tokens=n)
    )
    model = ScriptedModel(['{"winner": true, "why": "clearer"}'])
    chat_structured(model, ask(220), Verdict)
    assert model.requests[0].sampling.max_tokens == bound  # 220 could cut a valid reply
    model = ScriptedModel(['{"winner": true, "why": "clearer"}'])
    chat_structured(model, ask(100), Verdict)
    assert model.requests[0].sampling.max_tokens == 200  # at most twice the step's budget
    model = ScriptedModel(['{"text": "x"}'])
    chat_structured(model, ask(100), Essay)
    assert model.requests[0].sampling.max_tokens == 100


class Audit(BaseModel):
    """A judge's reply with prose in a list, as the formats' verdicts have."""

    why: str = Field(min_length=1, max_length=300)
    conflicts: list[str] = Field(max_length=3)  # names: no prose, never held


class Said(BaseModel):
    why: str = Field(min_length=1, max_length=300)
    points: list[Annotated[str, Field(max_length=200)]] = Field(max_length=3)


def test_a_capped_structured_reply_holds_its_prose_shorter_and_still_closes() -> None:
    full = room(Said, 500)
    assert full == 500  # its room, uncapped: lists are not counted, as before
    budget, prose = held_budget(Said, 500, 64)
    assert prose is not None and HELD_PROSE <= prose < 200
    bound = reply_token_bound(Said, prose)
    assert bound is not None and bound <= budget <= full  # the longest held reply fits
    assert held_budget(Said, 500, 5000) == (500, None)  # a cap over its room changes nothing
    budget, prose = held_budget(Verdict, 220, 100)
    assert prose is not None and reply_token_bound(Verdict, prose) == budget <= 100 + 100
    # The schema the backend holds the reply to: prose shortened, names left alone.
    held = reply_json_schema(Audit, 80)
    assert held["properties"]["why"]["maxLength"] == 80
    assert held["properties"]["conflicts"]["items"] == {"type": "string"}
    # Asked with a held budget, the call keeps it: no room beyond it is added.
    model = ScriptedModel(['{"winner": true, "why": "clearer"}'])
    request = ChatRequest(
        messages=messages(("user", "judge it")), sampling=Sampling(max_tokens=budget), prose=prose
    )
    chat_structured(model, request, Verdict)
    assert model.requests[0].sampling.max_tokens == budget
