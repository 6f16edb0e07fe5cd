"""What the rulebooks forbid a speaker to say, kept out by the engine: a reply that opens
with a chatbot's preamble, the prompt's labels or a placeholder is drawn again; if the new
draw still does, the offending sentences are cut and the turn is flagged. Nothing of a
rejected draw reaches the live view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.debates.runner import DebateRun
from moot.debates.settings import prepare, settings
from moot.engine.rules import clean_voice, opening_problem
from moot.events import Notice, Token, TurnStarted
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel

BODY = "Remote work saves hours once lost to commuting. It widens hiring. Output rises."


class Chatty(ScriptedModel):
    """A model whose free-text replies open with the given openings, in turn."""

    def __init__(self, *openings: str) -> None:
        super().__init__((), model_id="chatty")
        self.openings = list(openings)
        self.free_calls = 0
        self.asked: list[str] = []  # each free-text request's last message

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            opening = self.openings[self.free_calls % len(self.openings)]
            self.free_calls += 1
            self.asked.append(request.messages[-1].content)
            self.queue(f"{opening} {BODY}".strip())
        return super().chat(request, on_text=on_text)


def debate(tmp_path: Path, model: Chatty) -> tuple[Any, list[Any]]:
    chosen = settings(motion="remote work is better", seed=2, params={"max_rounds": 3})
    setup = prepare(chosen, out_dir=tmp_path / "out")
    events: list[Any] = []
    result = DebateRun(setup, listeners=[events.append], model_factory=lambda ref: model).run()
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
     "The Proposition's speech this round:", "好的。", "我认为远程工作更好。"],
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
        # What the refused draw cost is kept beside the turn, apart from the kept one's.
        assert turn.discarded and turn.discarded["completion_tokens"] > 0
    assert all(t.discarded is None for t in transcript.turns if t.redraw is None)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("asking again" in n for n in notices)
    assert opening.split()[0].strip("[") not in "".join(shown.values())
    # Each draw again, and only a draw again, is told what the first did wrong.
    chinese = opening.startswith("我")
    said = "Speak only in English" if chinese else "Begin at once with your argument"
    again = sum("asking again" in n for n in notices)
    assert sum(asked.rsplit("\n\n", 1)[-1].startswith(said) for asked in model.asked) == again
    assert sum("Speak only" in a or "Begin at once" in a for a in model.asked) == again


def test_a_reply_of_label_lines_is_refused_at_its_first_line() -> None:
    from moot.engine.stream import Stream

    shown: list[str] = []
    stream = Stream(shown.append, 250, vet=True)
    lines = ['Question: "Should our city ban cars"\n', 'Question: "Should our city ban buses"\n']
    assert stream(lines[0]) is True  # no sentence has ended: the first line is enough
    assert stream.rejected_kind == "voice" and "labels" in (stream.rejected or "")
    assert not shown
    fine = Stream(shown.append, 250, vet=True)
    assert fine("Cars choke our streets\n") is False and fine.rejected is None


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
    # A preamble that never ends its sentence: while it is said, nothing of it is cut (it
    # may yet end); once the turn is over, all of it goes.
    unfinished = "Here's a possible outline for the debate's speech:\n\n- The Debate"
    assert clean_voice(unfinished)[0] == unfinished
    assert clean_voice(unfinished, final=True) == ("", ["preamble removed"])


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
    from moot.engine.rules import hollow
    from moot.tournaments.judge import Ballot

    fine = {"proposition_best": "the cost data", "opposition_best": "jobs", "reasons": "x y"}
    assert hollow(Ballot(**fine, winner="proposition", margin="clear")) is not None  # "jobs"
    fine["opposition_best"] = "lost jobs"
    assert hollow(Ballot(**fine, winner="proposition", margin="clear")) is None
    fine["reasons"] = "the cars " * 12
    assert "repeats" in (hollow(Ballot(**fine, winner="proposition", margin="clear")) or "")


# -- narration, copying, and a change of language ---------------------------------------


class BySeat(ScriptedModel):
    """Free-text replies chosen by seat: each seat's list, in turn (the last one repeated);
    a seat not named says BODY."""

    def __init__(self, **replies: list[str]) -> None:
        super().__init__((), model_id="by-seat")
        self.replies = replies
        self.calls: dict[str, int] = {}

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            seat = request.session or ""
            said = self.replies.get(seat, [BODY])
            n = self.calls.get(seat, 0)
            self.calls[seat] = n + 1
            self.queue(said[min(n, len(said) - 1)])
        return super().chat(request, on_text=on_text)


def run_oxford(tmp_path: Path, model: ScriptedModel, lang: str = "en") -> tuple[Any, list[Any]]:
    motion = "remote work is better" if lang == "en" else "远程办公更好"
    chosen = settings(motion=motion, seed=2, lang=lang, params={"max_rounds": 3})
    setup = prepare(chosen, out_dir=tmp_path / "out")
    events: list[Any] = []
    result = DebateRun(setup, listeners=[events.append], model_factory=lambda ref: model).run()
    return result.transcript, events


def test_a_speaker_narrating_the_debate_is_drawn_again(tmp_path: Path) -> None:
    narrated = "The proposition argues that remote work is better. " + BODY
    model = BySeat(proposition=[narrated, BODY])
    transcript, events = run_oxford(tmp_path, model)
    first = next(t for t in transcript.turns if t.role == "proposition")
    assert first.text == BODY and not first.flags
    assert "argues" not in shown_by_turn(events)[first.index]
    assert any("narrated the debate" in e.message for e in events if isinstance(e, Notice))


def test_narration_later_in_a_speech_is_cut_and_flagged_but_a_chair_may_narrate() -> None:
    from moot.engine.rules import voice_for
    from moot.formats.oxford.flow import SIDES

    text = "Commutes waste hours. In this debate, both sides agree on costs. Output rises."
    prop = voice_for(SIDES["proposition"], "en")
    assert clean_voice(text, final=True, voice=prop) == (
        "Commutes waste hours. Output rises.",
        ["narration removed"],
    )
    assert clean_voice(text, final=True, voice=voice_for(SIDES.get("chair", ()), "en"))[0] == text
    # The other side named in the third person is rebuttal, not narration.
    rebuttal = "The opposition claims offices build trust. They do not."
    assert clean_voice(rebuttal, final=True, voice=prop) == (rebuttal, [])


def test_a_decision_debater_speaking_of_itself_by_its_slot_narrates() -> None:
    """A debater is called by its slot, as the packs call it: "Debater A", 辩手A."""
    from moot.engine.rules import sentence_problem, voice_for
    from moot.formats.decision.flow import SIDES

    en, zh = voice_for(SIDES["debater_a"], "en"), voice_for(SIDES["debater_a"], "zh")
    assert sentence_problem("Debater A argues that Postgres is safer.", en) == "narration"
    assert sentence_problem("辩手A认为这是最稳妥的选择。", zh) == "narration"
    assert sentence_problem("辩手B认为这是最稳妥的选择，但并非如此。", zh) is None  # rebuttal


def test_the_other_sides_words_copied_back_are_cut_and_flagged(tmp_path: Path) -> None:
    prop_says = (
        "Remote work lets parents collect their children from school every single afternoon "
        "without losing pay. It widens hiring."
    )
    copied = "Offices matter. " + prop_says.split(". ")[0] + ". Output rises."
    model = BySeat(proposition=[prop_says], opposition=[copied])
    transcript, events = run_oxford(tmp_path, model)
    opp = next(t for t in transcript.turns if (t.role, t.step) == ("opposition", "speech"))
    assert opp.text == "Offices matter. Output rises.", opp.text
    assert "the other side's words removed" in opp.flags
    assert "collect their children" not in shown_by_turn(events)[opp.index]


def test_quoting_the_motion_is_not_copying() -> None:
    from moot.engine.rules import voice_for
    from moot.formats.oxford.flow import SIDES

    motion = "This house believes that remote work is better for workers and for their employers"
    voice = voice_for(SIDES["opposition"], "en", [motion + ". We agree."], motion)
    text = motion + " is wrong. Offices matter."
    assert clean_voice(text, final=True, voice=voice) == (text, [])


def test_a_chinese_speech_that_opens_in_english_is_drawn_again(tmp_path: Path) -> None:
    zh = "远程办公节省了通勤时间。它扩大了招聘范围。产出也随之提高。"
    en = "Remote work saves commuting time for everyone. " + zh
    model = BySeat(proposition=[en, zh])
    transcript, events = run_oxford(tmp_path, model, lang="zh")
    first = next(t for t in transcript.turns if t.role == "proposition")
    assert first.text == zh and not first.flags
    assert "Remote" not in shown_by_turn(events)[first.index]


def test_a_chinese_speech_that_turns_into_english_ends_before_it_did(tmp_path: Path) -> None:
    zh = "远程办公节省了通勤时间。它扩大了招聘范围。"
    model = BySeat(proposition=[zh + "And then it goes on in English for a while. 产出提高。"])
    transcript, events = run_oxford(tmp_path, model, lang="zh")
    first = next(t for t in transcript.turns if t.role == "proposition")
    assert first.text == zh
    assert any(f.startswith("changed into English") for f in first.flags)
    assert shown_by_turn(events)[first.index].strip() == zh


def test_a_speech_still_in_the_wrong_language_is_kept_and_flagged(tmp_path: Path) -> None:
    english = "Remote work saves commuting time for everyone. It widens hiring."
    model = BySeat(proposition=[english])
    transcript, _ = run_oxford(tmp_path, model, lang="zh")
    first = next(t for t in transcript.turns if t.role == "proposition")
    assert first.text == english
    assert "in English, not the debate's language" in first.flags


def test_a_term_or_two_in_latin_letters_is_not_a_change_of_language() -> None:
    from moot.engine.rules import foreign

    assert foreign("我们认为AI会提高GDP。", "zh") is None
    assert foreign("This is plainly English text here.", "zh") == "English"
    assert foreign("城市应当禁止私家车。", "en") == "Chinese"
    assert foreign("Cities should ban cars.", "en") is None


def test_labels_and_stage_directions_on_their_own_lines_are_cut() -> None:
    text = "Commutes waste hours.\n*clears throat*\nOpposition rebuttal: Offices matter less."
    assert clean_voice(text, final=True) == (
        "Commutes waste hours.\n\nOffices matter less.",
        ["echoed prompt labels removed", "stage directions removed"],
    )


@pytest.mark.parametrize("seat", ["魔鬼辩手", "魔鬼代言人", "正方"])
def test_a_chinese_label_under_the_rulebooks_names_is_cut(seat: str) -> None:
    from moot.engine.rules import Voice

    text = f"通勤浪费时间。\n{seat}本轮的发言：办公室没那么重要。"
    assert clean_voice(text, final=True, voice=Voice("zh")) == (
        "通勤浪费时间。\n办公室没那么重要。",
        ["echoed prompt labels removed"],
    )
