"""The rulebooks' length limits are kept by the engine, whatever the model: a limited turn is
never shown, journaled or passed on longer than its limit, ends on a complete sentence, and
records its length, its limit and whether it was cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.debates.runner import DebateRun
from moot.debates.settings import prepare, settings
from moot.engine.rules import ELLIPSIS, ends_sentence, fit, length_units
from moot.events import Token, TurnStarted
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel
from moot.records.journal import read_journal

EN = "Point {} is that cities with fewer cars grow calmer and richer."
LONG = {
    "en": " ".join(EN.format(i) for i in range(60)),
    "zh": "".join(f"第{i}点，少车的城市更安静也更富裕。" for i in range(60)),
}


class Overrun(ScriptedModel):
    """A model that never stops talking: every free-text reply is hundreds of words long."""

    def __init__(self, language: str) -> None:
        super().__init__((), model_id="overrun")
        self.language = language
        self.told_to_stop = 0

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is not None:
            return super().chat(request, on_text=on_text)
        self.queue(LONG[self.language])

        def listen(piece: str) -> bool | None:
            stop = on_text(piece) if on_text else None
            self.told_to_stop += bool(stop)
            return stop

        return super().chat(request, on_text=listen)


CASES = {
    "oxford": {"max_rounds": 3},
    "decision": {"positions": ("ban cars", "keep cars"), "rounds": 1},
    "challenge": {"rounds": 2},
    "adversarial": {"rounds": 1},
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", list(CASES))
def test_no_limited_turn_is_longer_than_its_limit_in_any_format(
    tmp_path: Path, fmt: str, lang: str, dry_models: tuple[str, str]
) -> None:
    motion = "cities should ban cars" if lang == "en" else "城市应当禁止汽车"
    models = dry_models if fmt == "adversarial" else ()
    chosen = settings(
        motion=motion, format=fmt, lang=lang, seed=5, models=models, params=CASES[fmt]
    )
    setup = prepare(chosen, out_dir=tmp_path / "out")
    model = Overrun(lang)
    events: list[Any] = []
    result = DebateRun(setup, listeners=[events.append], model_factory=lambda ref: model).run()

    shown: dict[int, str] = {}
    current = None
    for event in events:
        if isinstance(event, TurnStarted):
            current = event.index
            shown[current] = ""
        elif isinstance(event, Token) and current is not None:
            shown[current] += event.text
    limited = [t for t in result.transcript.turns if t.limit is not None]
    assert len(limited) >= 3, [t.step for t in result.transcript.turns]
    records = read_journal(tmp_path / "out" / "journal.jsonl")
    journal = {r["index"]: r for r in records if r.get("type") == "turn"}
    for turn in limited:
        assert turn.limit is not None
        assert length_units(turn.text) <= turn.limit, (turn.step, turn.limit, turn.text)
        assert turn.length == length_units(turn.text)
        assert turn.cut  # the model ran on: the engine cut it
        assert ends_sentence(turn.text), turn.text  # a whole sentence, never half of one
        assert shown[turn.index].strip() == turn.text  # what was shown is what is kept
        assert journal[turn.index]["text"] == turn.text
    assert model.told_to_stop >= len(limited)  # generation stopped at the limit


def test_fit_keeps_whole_sentences_within_the_limit() -> None:
    text = "We hold this. It is true! And then a sentence that runs on and on and on"
    assert fit(text, 6, ended=False).text == "We hold this. It is true!"
    assert fit(text, 5, ended=False).text == "We hold this."
    assert fit("Short and done", 10, ended=True).text == "Short and done"
    assert not fit("Short and done", 10, ended=True).cut
    half = fit("Short and cut off by the budget", 10, ended=False)
    assert half.cut and half.text.endswith(ELLIPSIS) and half.flag
    assert fit("城市应当禁止汽车。因为污染严重！还有", 10, ended=False).text == "城市应当禁止汽车。"
    assert fit('He said "no." Then he left.', 4, ended=False).text == 'He said "no."'


def test_a_first_sentence_over_the_limit_is_cut_at_it_with_an_ellipsis_and_flagged() -> None:
    one = "This single sentence goes on far longer than any rulebook allows a point to run"
    fitted = fit(one, 5, ended=False)
    assert fitted.text == "This single sentence goes on" + ELLIPSIS
    assert fitted.length == 5 and fitted.cut
    assert fitted.flag and "longer than the limit of 5" in fitted.flag


def test_length_counts_words_and_chinese_characters() -> None:
    assert length_units("I think it's a well-known fact") == 6
    assert length_units("城市应当禁止汽车。") == 8
    assert length_units("In 2024, 城市 grew.") == 5


def test_moot_check_reports_each_limited_turn_and_fails_on_a_broken_rule(
    tmp_path: Path, cli: Any
) -> None:
    out = tmp_path / "out"
    done = cli("run", "cities should ban cars", "--dry-run", "--max-rounds", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    checked = cli("check", str(out / "transcript.json"), "--json")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert report["summary"]["over_limit"] == 0
    limited = [t for t in report["turns"] if t["limit"] is not None]
    assert report["summary"]["limited_turns"] == len(limited) >= 12
    assert {t["step"] for t in limited} >= {"speech", "devil_attack", "rebuttal"}
    assert report["summary"]["turns"] == len(report["turns"]) > len(limited)  # judges too

    data = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    speech = next(t for t in data["turns"] if t["step"] == "speech")
    speech["text"] = "word " * (speech["limit"] + 1)  # a file someone lengthened
    (tmp_path / "edited.json").write_text(json.dumps(data), encoding="utf-8")
    broken = cli("check", str(tmp_path / "edited.json"))
    assert broken.returncode == 1
    assert "over" in broken.stdout and "1 over" in " ".join(broken.stdout.split())

    (tmp_path / "notes.json").write_text("[1, 2]")
    wrong = cli("check", str(tmp_path / "notes.json"))
    assert wrong.returncode == 2 and wrong.stderr.startswith("error:")
    data["moot_version"] = "99.0"
    (tmp_path / "newer.json").write_text(json.dumps(data), encoding="utf-8")
    newer = cli("check", str(tmp_path / "newer.json"))
    assert newer.returncode == 2 and "newer" in newer.stderr


def test_a_point_of_information_is_one_question_within_its_limit() -> None:
    from moot.engine.rules import fit_question

    asked = fit_question(
        "Remote work saves time. But who mentors the juniors? And more.", 15, ended=True
    )
    assert asked.text == "But who mentors the juniors?" and asked.cut and not asked.flag
    assert (
        fit_question("你们如何保证安全？我们认为不能。", 15, ended=True).text
        == "你们如何保证安全？"
    )
    statement = fit_question("Remote work saves time and money for every worker.", 15, ended=True)
    assert statement.flag == "not a question" and not statement.text.endswith("?")
    late = "One two three four five six seven eight nine ten eleven twelve. Why not?"
    assert fit_question(late, 12, ended=True).flag  # the question ends past the limit: not taken


def test_moot_check_finds_what_the_rules_forbid_and_tells_declared_from_hidden(
    tmp_path: Path, cli: Any
) -> None:
    out = tmp_path / "out"
    done = cli("run", "cities should ban cars", "--dry-run", "--max-rounds", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    speeches = [t for t in data["turns"] if t["step"] == "speech"]
    speeches[0]["text"] = "Sure! Here is my speech. Cars pollute the air we breathe."
    speeches[1]["text"] = "The opposition argues that cars matter. They carry goods."
    judged = next(t for t in data["turns"] if t["data"] is not None and "reasoning" in t["data"])
    judged["data"]["reasoning"] = "yes"
    (tmp_path / "edited.json").write_text(json.dumps(data), encoding="utf-8")
    hidden = cli("check", str(tmp_path / "edited.json"), "--json")
    assert hidden.returncode == 1
    summary = json.loads(hidden.stdout)["summary"]
    assert summary["preamble"] == 1 and summary["narration"] == 1 and summary["hollow"] == 1
    assert summary["undeclared"] == 3

    speeches[0]["flags"] = ["preamble removed"]
    speeches[1]["flags"] = ["narration removed"]
    judged["flags"] = ["hollow reply: reasoning says nothing"]
    (tmp_path / "flagged.json").write_text(json.dumps(data), encoding="utf-8")
    declared = cli("check", str(tmp_path / "flagged.json"))
    assert declared.returncode == 0, declared.stdout
    assert "3 not declared" not in declared.stdout and "0 not declared" in declared.stdout
    assert cli("check", str(tmp_path / "flagged.json"), "--strict").returncode == 1


def test_a_chinese_transcript_is_checked_for_its_language(tmp_path: Path, cli: Any) -> None:
    out = tmp_path / "out"
    done = cli("run", "城市应当禁止私家车", "--lang", "zh", "--dry-run", "--out", str(out))
    assert done.returncode == 0, done.stderr
    clean = cli("check", str(out / "transcript.json"), "--json")
    assert json.loads(clean.stdout)["summary"]["language"] == 0
    data = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    speech = next(t for t in data["turns"] if t["step"] == "speech")
    speech["text"] = "Cities should ban private cars from their centres today."
    (tmp_path / "drift.json").write_text(json.dumps(data), encoding="utf-8")
    drift = cli("check", str(tmp_path / "drift.json"), "--json")
    assert drift.returncode == 1
    assert json.loads(drift.stdout)["summary"]["language"] == 1


class Asker(ScriptedModel):
    """Points of information that ask nothing on the first draw and a question on the next;
    POI answers of one sentence too long on the first draw; speeches that keep the rules."""

    def __init__(self) -> None:
        super().__init__((), model_id="asker")
        self.draws: dict[str, int] = {}
        self.grammars: list[tuple[str, str | None]] = []
        self.asked: list[tuple[str, str]] = []

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        prompt = request.messages[-1].content if request.messages else ""
        kind = (
            "poi"
            if "as a Point of Information" in prompt
            else "answer"
            if "You accept it." in prompt
            else "other"
        )
        n = self.draws[kind] = self.draws.get(kind, 0) + 1
        self.grammars.append((kind, request.grammar))
        self.asked.append((kind, request.messages[-1].content))
        if request.reply_schema is None:
            if kind == "poi":
                self.queue("Offices cost less." if n % 2 else "Who pays for the desks?")
            elif kind == "answer":
                long = (
                    "The employer pays for the desks, the chairs, the screens, the power, the "
                    "heating, the broadband, the software licences, the training and the travel "
                    "that every remote worker needs."
                )
                self.queue(long if n % 2 else "The employer pays.")
            else:
                self.queue(f"Speech {n}: remote work saves hours. It widens hiring.")
        return super().chat(request, on_text=on_text)


def test_a_point_of_information_that_asks_nothing_is_drawn_again(tmp_path: Path) -> None:
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings

    chosen = settings(motion="remote work is better", seed=2, params={"max_rounds": 3})
    model = Asker()
    events: list[Any] = []
    setup = prepare(chosen, out_dir=tmp_path / "out")
    transcript = DebateRun(setup, listeners=[events.append], model_factory=lambda r: model).run()
    turns = transcript.transcript.turns
    questions = [t for t in turns if t.step == "poi_question"]
    answers = [t for t in turns if t.step == "poi_answer"]
    assert questions and all(t.text == "Who pays for the desks?" for t in questions)
    assert answers and all(t.text == "The employer pays." for t in answers)
    assert not any(t.flags for t in questions + answers)
    notices = " ".join(e.message for e in events if type(e).__name__ == "Notice")
    assert "asked no question within 15 words; asking again" in notices
    assert "first sentence ran past the limit of 25; asking again" in notices
    assert model.draws["poi"] == 2 * len(questions)
    # Each draw again is told why: a question asked, sentences kept short.
    ask_again = "Ask one short question of at most 15 words, ending with a question mark."
    shorter = "Keep every sentence short: no sentence may run past 25 words."
    told = [(kind, text.rsplit("\n\n", 1)[-1]) for kind, text in model.asked]
    assert told.count(("poi", ask_again)) == len(questions)
    assert told.count(("answer", shorter)) == len(answers)
    # A backend that takes a grammar is held to one question within the limit; only there.
    from moot.engine.rules import question_grammar

    held = {kind: {g for k, g in model.grammars if k == kind} for kind in model.draws}
    assert held["poi"] == {question_grammar(15, "en")}
    assert held["answer"] == {None} and held["other"] == {None}


def test_a_saved_reply_whose_choice_is_one_word_is_not_hollow() -> None:
    from moot.engine.audit import hollow_fields

    # A decision's recommendation is one of its positions, whatever their length.
    assert hollow_fields({"recommendation": "Postgres", "confidence_reason": "the data say"}) == []
    assert hollow_fields({"confidence_reason": "yes"}) == ["confidence_reason says nothing: 'yes'"]
    # Numbers, or JSON punctuation held inside a string, say nothing either.
    assert hollow_fields({"trade_offs": ["1,2,4,8,16", "] },  {  }"]}) == [
        "trade_offs.0 says nothing: '1,2,4,8,16'",
        "trade_offs.1 says nothing: '] },  {  }'",
    ]
    assert hollow_fields({"reason": "2 of 3 say so"}) == []


@pytest.mark.parametrize(
    ("piece", "opens"),
    [(" looking", True), ("\n", True), (".", True), ("。", True), ("城", True),
     ("ly", False), ("-", False), (" (", False), (' "', False), ("'s", False)],
)  # fmt: skip
def test_a_draw_that_opens_another_word_or_sentence_is_told_apart(piece: str, opens: bool) -> None:
    from moot.inference.decoding import OPENS_MORE

    assert bool(OPENS_MORE.match(piece)) is opens


def test_the_question_grammar_opens_as_a_question_and_counts_the_limit() -> None:
    from moot.engine.rules import question_grammar

    english = question_grammar(15, "en")
    assert '"Does"' in english and "(sep word){1,14}" in english and english.count('"?"') == 1
    assert "." not in english.split("root ::=")[1].split("\n")[0]  # no full stop, one sentence
    chinese = question_grammar(15, "zh")
    assert '"请问"' in chinese and "{1,12}" in chinese and '"？"' in chinese  # 15 less 为什么
    with pytest.raises(ValueError):
        question_grammar(1, "en")
    with pytest.raises(ValueError):
        question_grammar(2, "zh")


def test_a_backend_is_asked_for_prose_with_room_for_more_than_yes() -> None:
    from moot.formats.oxford.schemas import Brief, CompletenessRubric
    from moot.inference.protocol import PROSE_MIN_CHARS, reply_json_schema
    from moot.tournaments.judge import Ballot

    held = reply_json_schema(CompletenessRubric)["properties"]
    assert held["reasoning"]["minLength"] == PROSE_MIN_CHARS > len("yes, it does")
    assert "minLength" not in held["key_objections_answered"]
    assert all(
        v["minLength"] == PROSE_MIN_CHARS for v in reply_json_schema(Brief)["properties"].values()
    )
    ballot = reply_json_schema(Ballot)
    assert ballot["properties"]["reasons"]["minLength"] == PROSE_MIN_CHARS
    # Validation keeps the schema's own bounds: a saved one-word reason still loads.
    saved = CompletenessRubric(
        proposition_argued_for_motion=True,
        opposition_argued_against_motion=True,
        proposition_gave_evidence=False,
        opposition_gave_evidence=False,
        key_objections_answered=False,
        reasoning="yes",
    )
    assert saved.reasoning == "yes"
