"""What the rulebooks forbid a speaker to say, kept out by the engine: a reply that opens
with a chatbot's preamble, the prompt's labels or a placeholder is drawn again; if the new
draw still does, the offending sentences are cut and the turn is flagged. Nothing of a
rejected draw reaches the live view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.checks import clean_voice, opening_problem
from moot.engine import Notice, Token, TurnStarted
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel
from moot.runner import Debate
from moot.settings import prepare, settings

BODY = "Remote work saves hours once lost to commuting. It widens hiring. Output rises."


class Chatty(ScriptedModel):
    """A model whose free-text replies open with the given openings, in turn."""

    def __init__(self, *openings: str) -> None:
        super().__init__((), model_id="chatty")
        self.openings = list(openings)
        self.free_calls = 0

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            opening = self.openings[self.free_calls % len(self.openings)]
            self.free_calls += 1
            self.queue(f"{opening} {BODY}".strip())
        return super().chat(request, on_text=on_text)


def debate(tmp_path: Path, model: Chatty) -> tuple[Any, list[Any]]:
    chosen = settings(motion="remote work is better", seed=2, params={"max_rounds": 3})
    setup = prepare(chosen, out_dir=tmp_path / "out")
    events: list[Any] = []
    result = Debate(setup, listeners=[events.append], model_factory=lambda ref: model).run()
    return result.transcript, events


def shown_by_turn(events: list[Any]) -> dict[int, str]:
    shown: dict[int, str] = {}
    current = -1
    for event in events:
        if isinstance(event, TurnStarted):
            current = event.index
            shown[current] = ""
        elif isinstance(event, Token):
            shown[current] += event.text
    return shown


@pytest.mark.parametrize(
    "opening",
    ["Sure! Here is my speech.", "As an AI, I have no opinions.", "[Your Name] here.",
     "The Proposition's speech this round:", "好的。"],
)  # fmt: skip
def test_a_bad_opening_is_drawn_again_and_never_shown(tmp_path: Path, opening: str) -> None:
    model = Chatty(opening, "")  # the second draw of a turn opens cleanly
    transcript, events = debate(tmp_path, model)
    speeches = [t for t in transcript.turns if t.step == "speech"]
    shown = shown_by_turn(events)
    for turn in speeches:
        assert turn.text.startswith("Remote work saves hours"), turn.text
        assert not turn.flags
        assert shown[turn.index].strip() == turn.text
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("asking again" in n for n in notices)
    assert opening.split()[0].strip("[") not in "".join(shown.values())


def test_a_second_bad_opening_is_cut_where_it_can_be_and_flagged(tmp_path: Path) -> None:
    model = Chatty("Sure! Here is my speech.")  # every draw opens so
    transcript, events = debate(tmp_path, model)
    shown = shown_by_turn(events)
    speeches = [t for t in transcript.turns if t.step == "speech"]
    assert speeches
    for turn in speeches:
        assert turn.text.startswith("Remote work saves hours")
        assert "preamble removed" in turn.flags
        assert shown[turn.index].strip() == turn.text
        assert "Sure" not in shown[turn.index]


def test_clean_voice_cuts_whole_sentences_only() -> None:
    assert clean_voice("Sure! Here is my speech. Cars pollute.")[0] == "Cars pollute."
    text, cut = clean_voice("I am [Your Name]. Cars pollute. I thank [Insert name].")
    assert text.strip() == "Cars pollute." and cut == ["placeholder removed"]
    assert clean_voice("Proposition speech: Cars pollute.")[0] == "Cars pollute."
    assert clean_voice("Cars pollute. Sure they do.") == ("Cars pollute. Sure they do.", [])
    assert opening_problem("Certainly, the motion stands.") is not None
    assert opening_problem("Cities should ban cars.") is None
    assert opening_problem("作为一个人工智能，我没有观点。") is not None


class Terse(ScriptedModel):
    """Speeches that are fine; a completeness judge whose reasoning is the given words."""

    def __init__(self, *reasons: str) -> None:
        super().__init__((), model_id="terse")
        self.reasons = list(reasons)
        self.judged = 0

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        from moot.formats.oxford.schemas import CompletenessRubric

        if request.reply_schema is CompletenessRubric:
            keys = CompletenessRubric.model_fields.keys() - {"reasoning"}
            reason = self.reasons[min(self.judged, len(self.reasons) - 1)]
            self.judged += 1
            self.queue(json.dumps({**{k: False for k in keys}, "reasoning": reason}))
        elif request.reply_schema is None:
            self.queue(BODY)
        return super().chat(request, on_text=on_text)


def test_a_judge_reason_of_one_word_is_asked_again(tmp_path: Path) -> None:
    model = Terse("yes", "Neither side answered the other's strongest point.")
    transcript, _ = debate(tmp_path, model)
    judged = [t for t in transcript.turns if t.step == "judge"]
    assert judged and model.judged == len(judged) + 1  # the first round's judge asked twice
    assert judged[0].data and judged[0].data["reasoning"].startswith("Neither side")
    assert not any(t.flags for t in judged)


def test_a_judge_that_stays_hollow_is_a_degraded_seat_shown_as_such(tmp_path: Path) -> None:
    model = Terse("yes")  # every time
    transcript, events = debate(tmp_path, model)
    judged = [t for t in transcript.turns if t.step == "judge"]
    assert judged and model.judged == 2 * len(judged)
    for turn in judged:
        assert any(f.startswith("hollow reply: reasoning says nothing") for f in turn.flags)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert sum("says nothing" in n for n in notices) == len(judged)


def test_hollow_finds_one_word_and_repetition_in_prose_fields_only() -> None:
    from moot.checks import hollow
    from moot.tournaments.judge import Ballot

    fine = {"proposition_best": "the cost data", "opposition_best": "jobs", "reasons": "x y"}
    assert hollow(Ballot(**fine, winner="proposition", margin="clear")) is not None  # "jobs"
    fine["opposition_best"] = "lost jobs"
    assert hollow(Ballot(**fine, winner="proposition", margin="clear")) is None
    fine["reasons"] = "the cars " * 12
    assert "repeats" in (hollow(Ballot(**fine, winner="proposition", margin="clear")) or "")
