"""A speaker who quotes the other side, inside quotation marks and saying whose words they
are, is quoting, not copying: the sentence is kept as said (flagged `quoted at length` past
the bound, never cut mid-quote). A chair, judge or summariser may quote anyone. Whatever
the engine removes, it removes whole sentences with their quotations whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Cli
from moot.debates.runner import saved_sides
from moot.engine.audit import DebateCheck, check_debate
from moot.engine.rules import (
    QUOTED_AT_LENGTH,
    Voice,
    clean_voice,
    copy_spans,
    length_units,
    quotations,
    quoted_at_length,
    sentence_ends,
    sentences,
    voice_for,
)
from moot.events import Notice
from moot.formats.oxford.flow import SIDES as OXFORD
from moot.records.transcript import Transcript
from test_voice import BySeat, run_oxford, shown_by_turn

PROP = (
    "Remote work lets parents collect their children from school every single afternoon "
    "without losing pay."
)
THEIRS = PROP.rstrip(".")
MOTION = "remote work is better"
ZH_PROP = "远程办公让父母每天下午都能从学校接孩子回家而且不会因此少拿一分钱的工资。"
ZH_THEIRS = ZH_PROP.rstrip("。")


def opposition(others: list[str], lang: str = "en") -> Voice:
    return voice_for(OXFORD["opposition"], lang, others, MOTION)


def check_saved(transcript: Transcript) -> DebateCheck:
    """TRANSCRIPT checked as `moot check` checks it: its sides as its format casts them."""
    return check_debate(transcript, saved_sides(transcript.model_dump(mode="json")))


@pytest.mark.parametrize(
    "sentence",
    [
        f'You said, "{THEIRS}." That is false.',
        f"The Opposition told us, “{THEIRS}.” That is false.",
        f"As the Proposition put it, '{THEIRS}.' That is false.",
        f"My opponent claims ‘{THEIRS}’, and that is false.",
        f'"{THEIRS}," said the Proposition. That is false.',
        f"The Proposition's speech argued that “{THEIRS}” but offices matter.",
        f'We were told "{THEIRS}" and it is not so.',
    ],
)
def test_an_attributed_quotation_is_kept_as_said(sentence: str) -> None:
    text = f"Offices matter. {sentence} Output falls."
    assert clean_voice(text, final=True, voice=opposition([PROP])) == (text, [])


@pytest.mark.parametrize(
    ("seat", "sentence"),
    [
        ("opposition", f"对方说：“{ZH_THEIRS}。”这是错的。"),
        ("opposition", f"正方认为「{ZH_THEIRS}」，但这并不成立。"),
        ("proposition", f"反方指出『{ZH_THEIRS}』，可事实并非如此。"),
        ("devil", f"正如对方所说，“{ZH_THEIRS}”，可这只是表面。"),
        ("proposition", f"对方辩友刚才讲“{ZH_THEIRS}”，我们不同意。"),
        ("opposition", f"魔鬼辩手说“{ZH_THEIRS}”，可事实并非如此。"),  # the rulebook's name
    ],
)
def test_an_attributed_chinese_quotation_is_kept_as_said(seat: str, sentence: str) -> None:
    text = f"办公室很重要。{sentence}产出下降。"
    voice = voice_for(OXFORD[seat], "zh", [ZH_PROP], "远程办公更好")
    assert clean_voice(text, final=True, voice=voice) == (text, [])


@pytest.mark.parametrize(
    "copied",
    [
        f"{THEIRS}.",  # no quotation marks, no one named
        f'"{THEIRS}."',  # quotation marks, but no one said to have said it
        f"“{THEIRS},” is what offices deny.",
        f"You said so, and {THEIRS}.",  # named, but not quoted
    ],
)
def test_an_unattributed_copied_passage_is_still_removed(copied: str) -> None:
    text = f"Offices matter. {copied} Output falls."
    assert clean_voice(text, final=True, voice=opposition([PROP])) == (
        "Offices matter. Output falls.",
        ["the other side's words removed"],
    )


def test_words_copied_outside_an_attributed_quotation_are_still_copying() -> None:
    sentence = f'You said "no", yet {THEIRS}.'
    assert quotations(sentence)  # the quotation is one, the rest of the sentence is not
    kept, cut = clean_voice(f"Offices matter. {sentence}", final=True, voice=opposition([PROP]))
    assert kept == "Offices matter." and cut == ["the other side's words removed"]


def test_chinese_copied_without_attribution_is_still_removed() -> None:
    voice = voice_for(OXFORD["proposition"], "zh", [ZH_PROP], "远程办公更好")
    text = f"办公室很重要。“{ZH_THEIRS}。”产出下降。"
    assert clean_voice(text, final=True, voice=voice) == (
        "办公室很重要。产出下降。",
        ["the other side's words removed"],
    )


def test_quoting_past_the_bound_is_flagged_and_a_chair_never_is() -> None:
    long_quote = " ".join(["cars"] * 31)
    text = f'You said, "{long_quote}." Offices matter.'
    assert quoted_at_length(text, opposition([]))
    assert not quoted_at_length(
        f'You said, "{" ".join(["cars"] * 30)}." ' + "Yes. " * 60, opposition([])
    )
    # One short quotation after another, together over a third of a short turn.
    short = " ".join(f'You said "{" ".join(["cars"] * 12)}".' for _ in range(3))
    assert quoted_at_length(short + " Offices matter.", opposition([]))
    assert not quoted_at_length(text, voice_for(OXFORD.get("chair", ()), "en"))
    assert quoted_at_length(f"对方说：“{'车' * 61}。”", opposition([], "zh"))
    assert not quoted_at_length(f"对方说：“{'车' * 60}。”不对。", opposition([], "zh"))


def test_the_broken_half_quotation_is_gone() -> None:
    """The other side told us, "is over. — what the sentence-wise removal used to leave."""
    theirs = "The age of private cars in our cities is over for good and for everyone."
    text = f'The other side told us, "Buses are slow. {theirs}" Buses are fast.'
    kept, cut = clean_voice(text, final=True, voice=opposition([theirs]))
    assert kept == text and cut == []
    unattributed = f'Buses are fast. "Buses are slow. {theirs}" Trams too.'
    kept, cut = clean_voice(unattributed, final=True, voice=opposition([theirs]))
    assert kept == "Buses are fast. Trams too." and cut == ["the other side's words removed"]


def test_a_speech_stopped_inside_a_quotation_is_cut_before_it_not_in_it() -> None:
    from moot.engine.rules import fit

    stopped = 'Offices matter. You said, "Cars kill. Buses are slow. Trams run'
    assert fit(stopped, 8, ended=False).text == "Offices matter."
    # A speech that ended itself with a mark left open: the mark is a stray one.
    stray = 'Offices matter. You said "cars kill. Buses are slow. Trams are fast.'
    assert fit(stray, 7, ended=True).text == 'Offices matter. You said "cars kill.'


# -- in a debate ---------------------------------------------------------------------


def _turn(transcript: Any, role: str, step: str) -> Any:
    return next(t for t in transcript.turns if (t.role, t.step) == (role, step))


def test_a_debater_quoting_the_other_side_keeps_the_quotation(tmp_path: Path) -> None:
    quoting = f'Offices matter. The Proposition told us, "{THEIRS}." Output falls.'
    transcript, events = run_oxford(tmp_path, BySeat(proposition=[PROP], opposition=[quoting]))
    opp = _turn(transcript, "opposition", "speech")
    assert opp.text == quoting and not opp.flags
    assert shown_by_turn(events)[opp.index].strip() == quoting
    report = check_saved(transcript)
    assert not report.turns[opp.index].problems


def test_a_long_quotation_is_flagged_not_cut(tmp_path: Path) -> None:
    prop = " ".join([PROP.rstrip("."), "and", PROP.rstrip("."), "and", PROP]).capitalize()
    quoting = f'Offices matter. You said, "{prop.rstrip(".")}." Output falls.'
    transcript, events = run_oxford(tmp_path, BySeat(proposition=[prop], opposition=[quoting]))
    opp = _turn(transcript, "opposition", "speech")
    assert opp.text == quoting
    assert opp.flags == [QUOTED_AT_LENGTH]
    assert any(QUOTED_AT_LENGTH in e.message for e in events if isinstance(e, Notice))


def test_a_chinese_long_quotation_is_flagged_in_chinese(tmp_path: Path) -> None:
    prop = ZH_THEIRS + "，" + ZH_THEIRS + "，" + ZH_PROP
    quoting = f"办公室很重要。对方说：“{prop}”产出下降。"
    transcript, events = run_oxford(
        tmp_path, BySeat(proposition=[prop], opposition=[quoting]), lang="zh"
    )
    opp = _turn(transcript, "opposition", "speech")
    assert opp.text == quoting and opp.flags == [QUOTED_AT_LENGTH]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("引用过长" in n for n in notices), notices
    assert not any(QUOTED_AT_LENGTH in n for n in notices)


def test_the_chair_quoting_a_speaker_is_not_flagged(tmp_path: Path) -> None:
    summary = f'The Proposition said, "{THEIRS}." {PROP} The Opposition answered on costs.'
    transcript, events = run_oxford(tmp_path, BySeat(proposition=[PROP], chair=[summary]))
    chair = next(t for t in transcript.turns if t.role == "chair" and t.data is None)
    assert chair.text == summary and not chair.flags
    assert not check_saved(transcript).turns[chair.index].problems


def test_moot_check_reads_quotations_as_the_engine_does(tmp_path: Path) -> None:
    transcript, _ = run_oxford(tmp_path, BySeat(proposition=[PROP]))
    opp = _turn(transcript, "opposition", "speech")
    opp.text = f'Offices matter. You said, "{THEIRS}." Output falls.'
    assert not check_saved(transcript).turns[opp.index].problems
    opp.text = f"Offices matter. {PROP} Output falls."
    problems = check_saved(transcript).turns[opp.index].problems
    assert [p.split(":")[0] for p in problems] == ["copied"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_moot_check_names_a_turn_quoted_at_length(tmp_path: Path, cli: Cli, lang: str) -> None:
    """The engine keeps and flags a turn that quotes past the bound; `moot check` says how
    far it quoted, as declared by that flag, and counts it in its summary line."""
    prop = PROP if lang == "en" else ZH_PROP
    theirs = THEIRS if lang == "en" else ZH_THEIRS
    quoting = (
        f'You said, "{theirs}," you said, "{theirs}," and you said, "{theirs}." Offices matter.'
        if lang == "en"
        else f"你们说：“{theirs}。”你们还说：“{theirs}。”正方又说：“{theirs}。”办公室很重要。"
    )
    transcript, _ = run_oxford(tmp_path, BySeat(proposition=[prop], opposition=[quoting]), lang)
    opp = _turn(transcript, "opposition", "speech")
    assert opp.text == quoting and QUOTED_AT_LENGTH in opp.flags
    found = check_saved(transcript)
    problems = [p for p in found.turns[opp.index].problems if p.startswith(QUOTED_AT_LENGTH)]
    longest = len(theirs.split()) if lang == "en" else len(theirs)
    assert problems == [
        f"{QUOTED_AT_LENGTH}: {longest} in one quotation, {3 * longest} of "
        f"{length_units(quoting)} in all"
    ]
    assert not found.turns[opp.index].undeclared  # the turn's own flag declares it
    flagged = sum(QUOTED_AT_LENGTH in t.flags for t in transcript.turns)
    assert found.summary()["quoted_at_length"] == flagged >= 1
    checked = cli("check", str(tmp_path / "out" / "transcript.json"))
    shown = "".join(checked.stdout.split())  # however the terminal wrapped it
    if lang == "en":
        assert f"{longest}inonequotation" in shown and f"{flagged}quotedatlength" in shown
    else:
        assert f"引用过长：单处引用{longest}字" in shown and f"{flagged}次引用过长" in shown


# -- whatever is removed, what is left is whole sentences -----------------------------

_PAIRS = {"“": "”", "‘": "’", "「": "」", "『": "』", "(": ")", "[": "]", "（": "）", "【": "】"}


def balanced(text: str) -> bool:
    """Do TEXT's quotation marks and brackets pair up (an apostrophe between letters is
    none)?"""
    stack: list[str] = []
    for i, c in enumerate(text):
        before, after = text[i - 1 : i], text[i + 1 : i + 2]
        if c in "'’" and before.isalnum() and after.isalnum():
            continue
        if c in _PAIRS:
            stack.append(_PAIRS[c])
        elif c in "\"'" and stack and stack[-1] == c:
            stack.pop()
        elif c in "\"'":
            stack.append(c)
        elif c in _PAIRS.values():
            if not stack or stack.pop() != c:
                return False
    return not stack


_WORDS = st.sampled_from(
    "cars buses kill don't we walk cities Proposition's are slow 车 公交".split()
)
_ENDS = st.sampled_from([".", "!", "?", "…", "。", "？"])


def _sentence(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    part = st.one_of(_WORDS, _WORDS, inner)
    return st.builds(
        lambda ws, end: " ".join(ws) + end, st.lists(part, min_size=1, max_size=12), _ENDS
    )


def _quoted(inner: st.SearchStrategy[str], pairs: list[str]) -> st.SearchStrategy[str]:
    body = st.lists(_sentence(inner), min_size=1, max_size=3).map(" ".join)
    return st.builds(lambda p, b: p[0] + b + p[1], st.sampled_from(pairs), body)


# Straight quotation marks nest in neither language: inside one, the other kind is used.
_NESTED = st.recursive(
    _WORDS,
    lambda inner: _quoted(inner, ["“”", "‘’", "「」", "『』", "()", "[]", "（）"]),
    max_leaves=4,
)
_GROUP = st.one_of(_WORDS, _quoted(_NESTED, ['""', "''", "“”", "「」", "()", "【】"]))
_TEXT = st.lists(_sentence(_GROUP), min_size=1, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(text=_TEXT, data=st.data())
def test_any_removal_keeps_quotation_marks_balanced(text: str, data: st.DataObject) -> None:
    assert balanced(text)
    said = sentences(text)
    assert "".join(said) == text
    keep = data.draw(st.lists(st.booleans(), min_size=len(said), max_size=len(said)))
    kept = "".join(s for s, k in zip(said, keep, strict=True) if k)
    assert balanced(kept), (said, kept)


@settings(max_examples=60, deadline=None)
@given(text=_TEXT, data=st.data())
def test_what_the_engine_removes_leaves_marks_balanced(text: str, data: st.DataObject) -> None:
    """The engine's own removal: the sentences that hold the other side's words, whichever
    they are, cut once the turn is said, and as it streams (a prefix of the text, whose
    complete sentences clean to a prefix of the whole's)."""
    others = data.draw(st.lists(st.sampled_from(sentences(text)), max_size=3))
    voice = Voice("en", ("opposition",), copy_spans(others, "en"))
    kept, _ = clean_voice(text, final=True, voice=voice)
    assert balanced(kept), (text, kept)
    cut = data.draw(st.integers(0, len(text)))
    partial, _ = clean_voice(text[:cut], voice=voice)
    ends = sentence_ends(partial)
    shown = partial[: ends[-1]] if ends else ""
    assert kept.startswith(shown), (text[:cut], shown, kept)


# What each format's side seats are called in the third person: what narration is told by.
NAMED = {
    "oxford": {
        "proposition": ("proposition", "government", "正方"),
        "opposition": ("opposition", "反方"),
        "devil": ("devil's advocate", "devil", "魔鬼辩手", "魔鬼代言人"),
    },
    "decision": {
        "debater_a": ("debater a", "辩手A"),
        "debater_b": ("debater b", "辩手B"),
        "debater_c": ("debater c", "辩手C"),
        "debater_d": ("debater d", "辩手D"),
    },
    "challenge": {"proposer": ("proposer", "提议方"), "challenger": ("challenger", "挑战方")},
    "adversarial": {"participant_1": ("participant 1",), "participant_2": ("participant 2",)},
}


@pytest.mark.parametrize("name", list(NAMED))
def test_only_the_seats_that_speak_for_a_side_are_held_to_the_copying_rule(name: str) -> None:
    """Every format's seats: a chair, judge, summariser or synthesizer quotes anyone; every
    other seat argues a side and may not copy the other side's words back."""
    from moot.formats import get_format
    from moot.formats.base import RunOptions

    fmt = get_format(name)
    cast = fmt.cast(fmt.params(RunOptions(models=("a", "b"))))
    assert cast.sides == NAMED[name]
    judging = {"chair", "judge", "summariser", "synthesizer"}
    assert judging & set(cast.roles) and set(cast.roles) - judging
    for role in cast.roles:
        voice = voice_for(cast.sides.get(role, ()), "en", [PROP], MOTION)
        assert voice.speaks_for_a_side == (role not in judging), role
        assert bool(voice.copied) == (role not in judging), role


def test_the_format_says_which_seats_speak_for_a_side(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A format of seats no other format has: the one its cast declares a side is held to
    the voice rules of a side, by the engine and by `moot check`; the moderator it does not
    declare one quotes the speakers freely."""
    import dataclasses
    import json

    import moot.formats.oxford
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare
    from moot.debates.settings import settings as debate_settings
    from moot.formats import get_format
    from moot.formats.base import Cast

    def run(engine: Any, motion: str, params: Any) -> dict[str, Any]:
        for role in ("advocate", "respondent", "moderator"):
            engine.speak(role, "say", round=1, label=role, limit=60, motion=motion)
        return {}

    monkeypatch.setattr(
        moot.formats.oxford,
        "FORMAT",
        dataclasses.replace(
            get_format("oxford"),
            steps=("say",),
            sample_variables=lambda: {"say": {"motion": MOTION}},
            cast=lambda params: Cast(
                roles=("advocate", "respondent", "moderator"),
                temperatures={"advocate": 0.3, "respondent": 0.3, "moderator": 0.3},
                sides={"advocate": ("advocate",), "respondent": ("respondent",)},
            ),
            run=run,
            render=lambda transcript: "",
        ),
    )
    (tmp_path / "pack" / "en" / "oxford").mkdir(parents=True)
    (tmp_path / "pack" / "en" / "oxford" / "say.j2").write_text("Speak on {{ motion }}.")
    copying = f"Offices matter. {PROP} Output falls."
    model = BySeat(advocate=[PROP], respondent=[copying], moderator=[f"{PROP} {copying}"])
    chosen = debate_settings(motion=MOTION, seed=2, prompts=tmp_path / "pack")
    setup = prepare(chosen, out_dir=tmp_path / "out")
    transcript = DebateRun(setup, model_factory=lambda ref: model).run().transcript
    advocate, respondent, moderator = transcript.turns
    assert respondent.text == "Offices matter. Output falls."
    assert respondent.flags == ["the other side's words removed"]
    assert moderator.text == f"{PROP} {copying}" and not moderator.flags

    saved = tmp_path / "out" / "transcript.json"
    data = json.loads(saved.read_text(encoding="utf-8"))
    data["turns"][1].update(text=f"The respondent argues that offices matter. {PROP}", flags=[])
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    checked = cli("check", str(edited), "--json")
    assert checked.returncode == 1, checked.stderr
    found = {t["role"]: t["undeclared"] for t in json.loads(checked.stdout)["turns"]}
    assert [p.split(":")[0] for p in found["respondent"]] == ["narration", "copied"]
    assert found["moderator"] == [] and found["advocate"] == []
