"""The Oxford format's orchestration, on scripted models through the real engine and pack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from moot.debates.runner import DebateRun
from moot.debates.settings import DebateSetup
from moot.engine.turns import Engine
from moot.errors import CallTimeoutError
from moot.events import TurnFinished, TurnStarted
from moot.formats.oxford.flow import FORMAT
from moot.formats.oxford.schemas import Brief, CompletenessReply, CompletenessRubric, OxfordParams
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import ScriptedModel
from moot.records.journal import read_journal
from moot.speeches import brief

MOTION = "This House Believes That remote work is better than office work"
SPEECH = (
    "Remote work is better than office work: studies of remote teams show higher output, "
    "no commute, wider hiring and happier staff, and the office work model wastes hours "
    "every single day for millions of people who could do the same work from home."
)


# Each seat in words of its own (a sentence that copies another seat's is cut), in the
# debate's language.
SAID = {
    "en": {
        "proposition": SPEECH,
        "opposition": (
            "Office work is better than remote work for most teams: people learn faster beside "
            "their colleagues, surveys show remote staff feel isolated, and the best ideas still "
            "come from chance meetings in a corridor or over lunch at the office."
        ),
        "devil": (
            "Both benches ignore cost: remote work moves desks and power bills onto workers, "
            "office rents keep rising, and whoever pays that bill decides which model is better "
            "for the people doing the work."
        ),
        "chair": (
            "The case for remote work rested on output and satisfaction, the case against it on "
            "learning and cohesion, and neither bench has yet answered the question of cost that "
            "the next round of work must address."
        ),
    },
    "zh": {
        "proposition": (
            "远程办公让员工省下通勤时间，研究表明远程团队产出更高、"
            "招聘范围更广，所以我们认为远程办公更好。"
        ),
        "opposition": (
            "办公室让同事当面协作，新人在身边学得更快，"
            "调查显示长期远程削弱凝聚力，因此我们认为办公室更可取。"
        ),
        "devil": (
            "双方都忽略了成本：远程把设备和电费转嫁给员工，"
            "办公室租金也在上涨，我认为谁承担这笔账才是关键。"
        ),
        "chair": (
            "本轮支持远程的一方强调效率与满意度，"
            "反对的一方强调协作与培养新人，我认为下一轮应回应成本问题。"
        ),
    },
}


def rubric(ok: bool) -> str:
    keys = CompletenessRubric.model_fields.keys() - {"reasoning"}
    return json.dumps({**{k: ok for k in keys}, "reasoning": "both sides argued"})


def brief_json() -> str:
    return json.dumps({k: f"{k} text" for k in Brief.model_fields})


class Chamber:
    """A scripted chamber: substantive speeches, a judge that is satisfied or not."""

    def __init__(self, *, judge_ok: bool | list[bool] = False) -> None:
        self.judge_ok = judge_ok
        self.counter = 0
        self.model = ScriptedModel(model_id="scripted")
        self.model.queue(*[self.reply] * 500)

    def reply(self, request: ChatRequest) -> str:
        self.counter += 1
        if request.reply_schema is CompletenessRubric:
            ok = self.judge_ok.pop(0) if isinstance(self.judge_ok, list) else self.judge_ok
            return rubric(ok)
        if request.reply_schema is CompletenessReply:
            ok = self.judge_ok.pop(0) if isinstance(self.judge_ok, list) else self.judge_ok
            return json.dumps({"score": 9.0 if ok else 2.0, "reasoning": "both sides argued"})
        if request.reply_schema is Brief:
            return brief_json()
        prompt = request.messages[-1].content
        language = "zh" if "辩题" in prompt else "en"
        if "as a Point of Information" in prompt:  # a point of information asks one question
            return f"Who pays for that, speaker {self.counter}?"
        if "You accept it." in prompt:  # and is answered within its 25 words
            return f"The employer pays, as answer {self.counter} shows."
        said = SAID[language][request.session or "proposition"]
        return f"{said} [{request.session} #{self.counter}]"


def run_debate(tmp_path: Path, chamber: Chamber, **params: Any) -> Any:
    setup = DebateSetup(
        format=FORMAT,
        motion=params.pop("motion", MOTION),
        language=params.pop("language", "en"),
        seed=params.pop("seed", 11),
        params=OxfordParams(**params),
        out_dir=tmp_path / "out",
    )
    events: list[Any] = []
    debate = DebateRun(setup, listeners=[events.append], model_factory=lambda ref: chamber.model)
    return debate.run(), events


def journal_of(tmp_path: Path) -> list[dict[str, Any]]:
    return read_journal(tmp_path / "out" / "journal.jsonl")


def resumed_after(tmp_path: Path, cut: int) -> tuple[Any, list[dict[str, Any]]]:
    """The debate in TMP_PATH as `moot resume` finds it with only its first CUT journal
    records (killed there): its setup and the records to replay."""
    from moot.debates.runner import resume_setup

    journal = tmp_path / "out" / "journal.jsonl"
    records = read_journal(journal)
    journal.write_text("".join(json.dumps(r) + "\n" for r in records[:cut]), encoding="utf-8")
    return resume_setup(tmp_path / "out")


def expected_steps(seed: int, rounds: int) -> list[tuple[int | None, str, str]]:
    """The rulebook's order, with POI answers only where the seeded draw accepts."""
    probe = Engine.__new__(Engine)
    probe.seed = seed
    steps: list[tuple[int | None, str, str]] = []
    for r in range(1, rounds + 1):
        steps.append((r, "proposition", "speech"))
        steps.append((r, "opposition", "poi_question"))
        if probe.draw(0.6, "poi", r, "opposition"):
            steps.append((r, "proposition", "poi_answer"))
        steps.append((r, "opposition", "speech"))
        steps.append((r, "proposition", "poi_question"))
        if probe.draw(0.6, "poi", r, "proposition"):
            steps.append((r, "opposition", "poi_answer"))
        steps += [(r, "devil", "devil_attack"), (r, "chair", "round_summary")]
        if r >= 2:
            steps.append((r, "judge", "judge"))
    c = None  # the closing comes after the rounds: it carries no round number
    steps += [
        (c, "proposition", "rebuttal"),
        (c, "opposition", "rebuttal"),
        (c, "chair", "verdict"),
        (c, "judge", "brief"),
    ]
    return steps


def test_three_round_debate_follows_the_rulebook_order(tmp_path: Path) -> None:
    result, _ = run_debate(tmp_path, Chamber(judge_ok=False), max_rounds=3)
    got = [(t.round, t.role, t.step) for t in result.transcript.turns]
    assert got == expected_steps(11, 3)
    assert result.transcript.stop_reason == "hard_cap"
    assert set(result.transcript.scores) == {"2", "3"}


def test_the_steps_after_the_last_round_carry_no_round_number(tmp_path: Path) -> None:
    chamber = Chamber(judge_ok=True)
    result, events = run_debate(tmp_path, chamber, max_rounds=5)
    t = result.transcript
    assert t.stop_reason == "converged"
    closing = [turn for turn in t.turns if turn.step in ("rebuttal", "verdict", "brief")]
    assert len(closing) == 4 and all(turn.round is None for turn in closing)
    assert {turn.round for turn in t.turns} - {None} == {1, 2}
    started = [e for e in events if isinstance(e, TurnStarted)]
    assert [e.round for e in started[-4:]] == [None] * 4
    assert set(t.scores) == {"2"}  # the score of the round it judged, nothing after
    saved = json.loads((tmp_path / "out" / "transcript.json").read_text())
    assert [turn["round"] for turn in saved["turns"][-4:]] == [None] * 4
    md = (tmp_path / "out" / "debate.md").read_text()
    assert "round 3" not in md.lower() and "None" not in md
    # Every prompt is told its round where it has one, never "None".
    assert not any("None" in r.messages[-1].content for r in chamber.model.requests)


def test_pois_on_both_sides_are_shown_with_their_outcome(tmp_path: Path) -> None:
    result, events = run_debate(tmp_path, Chamber(), max_rounds=3)
    questions = [t for t in result.transcript.turns if t.step == "poi_question"]
    assert {t.role for t in questions} == {"proposition", "opposition"}
    assert all(t.accepted is not None for t in questions)
    labels = [
        e.label for e in events if isinstance(e, TurnFinished) and e.turn.step == "poi_question"
    ]
    assert len(labels) == len(questions)  # every question is shown
    assert all(("accepted" in lb) or ("declined" in lb) for lb in labels)


def test_early_stop_when_the_score_reaches_the_threshold(tmp_path: Path) -> None:
    result, _ = run_debate(tmp_path, Chamber(judge_ok=True), max_rounds=5)
    t = result.transcript
    assert t.stop_reason == "converged"
    assert max(turn.round for turn in t.turns if turn.step == "speech") == 2
    assert t.scores["2"]["score"] == 10.0
    assert "Converged" in result.markdown


def test_hard_cap_when_the_judge_is_never_satisfied(tmp_path: Path) -> None:
    result, _ = run_debate(tmp_path, Chamber(judge_ok=[False] * 10), max_rounds=4, min_score=9)
    t = result.transcript
    assert t.stop_reason == "hard_cap"
    assert max(turn.round for turn in t.turns if turn.step == "speech") == 4
    assert t.scores and all(s["score"] < 9 for s in t.scores.values())
    assert "Hard cap reached" in result.markdown


def test_closing_order_and_the_opposition_sees_the_proposition_rebuttal(tmp_path: Path) -> None:
    chamber = Chamber()
    result, _ = run_debate(tmp_path, chamber, max_rounds=3)
    closing = [t for t in result.transcript.turns if t.step in ("rebuttal", "verdict")]
    assert [(t.role, t.step) for t in closing] == [
        ("proposition", "rebuttal"),
        ("opposition", "rebuttal"),
        ("chair", "verdict"),
    ]
    prop_rebuttal = closing[0].text
    opp_request = [r for r in chamber.model.requests if r.session == "opposition"][-1]
    # The Opposition's rebuttal goes on the Proposition's: its reply, then the instructions.
    assert opp_request.messages[-2].role == "assistant"
    assert opp_request.messages[-2].content == prop_rebuttal
    assert "closing rebuttal" in opp_request.messages[-1].content
    verdict_request = [r for r in chamber.model.requests if r.session == "chair"][-1]
    assert prop_rebuttal in verdict_request.messages[-1].content
    assert "do NOT declare an outright winner" in verdict_request.messages[-1].content


def test_every_devil_attack_reaches_the_brief(tmp_path: Path) -> None:
    chamber = Chamber()
    result, _ = run_debate(tmp_path, chamber, max_rounds=4)
    attacks = [t.text for t in result.transcript.turns if t.step == "devil_attack"]
    assert len(attacks) == 4
    brief_request = chamber.model.requests[-1]
    assert brief_request.reply_schema is Brief
    prompt = brief_request.messages[-1].content
    assert all(a in prompt for a in attacks)
    assert "\n---\n".join(attacks) in prompt
    assert result.transcript.result == json.loads(brief_json())


def test_roles_get_their_rulebook_temperatures_and_personas(tmp_path: Path) -> None:
    chamber = Chamber()
    run_debate(tmp_path, chamber, max_rounds=3)
    temps = {r.session: r.sampling.temperature for r in chamber.model.requests}
    assert temps == {
        "proposition": 0.3,
        "opposition": 0.3,
        "devil": 0.7,
        "chair": 0.4,
        "judge": 0.2,
    }
    personas = {
        "proposition": "debater speaking FOR the motion",
        "opposition": "debater speaking AGAINST the motion",
        "devil": "You are the Devil's Advocate",
    }
    repeated = 0
    for req in chamber.model.requests:
        # No system prompt for anyone: a prompt opens on the record, or goes on an earlier
        # step's conversation; the debaters' personas are in their steps, each once in a
        # conversation: a step on a conversation its speaker's persona is in does not
        # repeat it.
        roles = [m.role for m in req.messages]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
        prompt = req.messages[-1].content
        asked = [m.content for m in req.messages if m.role == "user"]
        for role, persona in personas.items():
            if persona in prompt:
                assert req.session == role, (req.session, role)
            if req.session == role:
                assert sum(persona in text for text in asked) == 1, (req.session, asked)
        own = personas.get(req.session or "")
        repeated += len(asked) > 1 and own is not None and own not in prompt
    assert repeated  # some steps went on a conversation their persona was already in


def test_prompts_open_on_a_shared_record_and_show_only_what_each_step_sees(
    tmp_path: Path,
) -> None:
    chamber = Chamber()
    result, _ = run_debate(tmp_path, chamber, max_rounds=3)
    reqs = chamber.model.requests
    turns = [(r.session, r.messages[-1].content, r.reply_schema) for r in reqs]
    round2 = [i for i, (_, p, _) in enumerate(turns) if "summary of the debate so far" in p]
    first = round2[0]  # round 2's Proposition speech: the first prompt with a summary

    def request(role: str, start: int, schema: Any = None) -> ChatRequest:
        return next(r for r in reqs[start:] if r.session == role and r.reply_schema is schema)

    opening = reqs[first]
    summary_1 = opening.messages[-1].content.split('"""')[1].strip()
    said = {(t.round, t.role, t.step): t.text for t in result.transcript.turns}
    prop_speech = said[(2, "proposition", "speech")]
    opp = next(r for r in reqs[first:] if "the Opposition's speech" in r.messages[-1].content)
    devil = request("devil", first)
    chair = request("chair", first).messages[-1].content
    judge = request("judge", first, CompletenessRubric).messages[-1].content
    # The Opposition's speech and the devil's prompt go on the Proposition's conversation:
    # its prompt (the summary so far), its speech as the reply, then their own.
    for req in (opp, devil):
        assert req.messages[0] == opening.messages[-1]
        assert req.messages[1].role == "assistant" and req.messages[1].content == prop_speech
        assert summary_1 not in req.messages[-1].content
    assert devil.messages[2] == opp.messages[2]  # and the devil's goes on the Opposition's
    assert devil.messages[3].content == said[(2, "opposition", "speech")]
    # No point of information, asked or answered, is in any later step's view.
    questions = [t.text for t in result.transcript.turns if t.step.startswith("poi_")]
    for later in (opp, devil):
        assert not any(q in m.content for q in questions for m in later.messages)
    # The Chair sees this round's three speeches, not the summary so far; the judge
    # sees the two speeches only, and its prompt opens as the Chair's does.
    assert summary_1 not in chair and summary_1 not in judge
    devil_text = chair.split('"""')[5].strip()
    assert devil_text and devil_text not in judge
    opp_speech = judge.split('"""')[3]
    assert chair.split(opp_speech)[0] == judge.split(opp_speech)[0]


def test_judge_prompt_hands_the_model_no_number(tmp_path: Path) -> None:
    chamber = Chamber()
    run_debate(tmp_path, chamber, max_rounds=3)
    judge_prompts = [
        r.messages[-1].content
        for r in chamber.model.requests
        if r.reply_schema is CompletenessRubric
    ]
    assert judge_prompts
    for prompt in judge_prompts:
        instructions = prompt.split('"""')[-1]
        assert not any(ch.isdigit() and ch not in "3" for ch in instructions.replace("300", ""))


def test_the_poi_draw_is_seeded_and_about_sixty_forty() -> None:
    probe = Engine.__new__(Engine)
    draws = []
    for seed in range(2000):
        probe.seed = seed
        draws.append(probe.draw(0.6, "poi", 1, "opposition"))
    share = sum(draws) / len(draws)
    assert 0.56 < share < 0.64
    probe.seed = 5
    again = [probe.draw(0.6, "poi", r, s) for r in range(5) for s in ("a", "b")]
    assert again == [probe.draw(0.6, "poi", r, s) for r in range(5) for s in ("a", "b")]


def test_same_seed_same_debate(tmp_path: Path) -> None:
    a, _ = run_debate(tmp_path / "a", Chamber(), max_rounds=3, seed=99)
    b, _ = run_debate(tmp_path / "b", Chamber(), max_rounds=3, seed=99)
    assert [(t.step, t.seed, t.accepted) for t in a.transcript.turns] == [
        (t.step, t.seed, t.accepted) for t in b.transcript.turns
    ]


def test_each_turn_is_journaled_before_the_next_starts(tmp_path: Path) -> None:
    seen: list[int] = []
    chamber = Chamber()
    journal = tmp_path / "out" / "journal.jsonl"

    def reply(request: ChatRequest) -> str:
        seen.append(sum(1 for r in read_journal(journal) if r["type"] == "turn"))
        return chamber.reply(request)

    chamber.model._replies = [reply] * 500
    result, _ = run_debate(tmp_path, chamber, max_rounds=3)
    # Call k (0-based) saw k finished turns on disk: nothing was held back in memory.
    assert seen == list(range(len(result.transcript.turns)))


def test_transcript_and_debate_md_are_written(tmp_path: Path) -> None:
    result, _ = run_debate(tmp_path, Chamber(judge_ok=True), max_rounds=3)
    data = json.loads((tmp_path / "out" / "transcript.json").read_text())
    for key in (
        "format",
        "motion",
        "language",
        "seed",
        "models",
        "turns",
        "scores",
        "stop_reason",
        "result",
    ):
        assert key in data
    for key in (
        "round",
        "role",
        "step",
        "model",
        "temperature",
        "text",
        "prompt_tokens",
        "completion_tokens",
        "duration_ms",
    ):
        assert key in data["turns"][0]
    md = (tmp_path / "out" / "debate.md").read_text()
    order = [
        "📋 Debate Brief",
        "🔵 Proposition Case",
        "🔴 Opposition Case",
        "💜 Key Rebuttal Lines",
        "🟡 Likely Floor Attacks",
        "⚖️ Balanced Assessment",
        "✅ Converged",
    ]
    positions = [md.index(h) for h in order]
    assert positions == sorted(positions)
    assert (tmp_path / "out" / "transcript.json").stat().st_mode & 0o777 == 0o600


def test_chinese_debate_uses_the_chinese_pack_and_labels(tmp_path: Path) -> None:
    chamber = Chamber(judge_ok=True)
    result, events = run_debate(
        tmp_path, chamber, max_rounds=3, language="zh", motion="本院认为远程办公比办公室工作更好"
    )
    assert "辩题" in chamber.model.requests[0].messages[-1].content
    labels = [e.label for e in events if isinstance(e, TurnFinished)]
    assert "🔵 正方" in labels and "🔴 反方" in labels
    assert "📋 辩论简报" in result.markdown and "✅ 已收敛" in result.markdown


@pytest.mark.parametrize(("value", "ok"), [(4.9, False), (5, True), (10, True), (10.1, False)])
def test_min_score_range(value: float, ok: bool) -> None:
    from moot.config import validate_params
    from moot.errors import UsageError

    if ok:
        assert validate_params(OxfordParams, min_score=value).min_score == value
    else:
        with pytest.raises(UsageError, match="--min-score"):
            validate_params(OxfordParams, min_score=value)


# -- a brief built on degraded turns says so ----------------------------------------------

POINTS = {  # (question, answer) of each side, each within its limit
    "proposition": (
        "Why would isolated remote staff be worse off than office workers stuck in traffic?",
        "Two years of data from remote firms show output holding steady, and the hours saved "
        "on commuting go back into the job.",
    ),
    "opposition": (
        "What evidence shows remote teams keep their output after the first year?",
        "Traffic costs an hour, but isolation costs a career: juniors who never meet mentors "
        "fall behind their peers.",
    ),
}


class CleanChamber(Chamber):
    """A chamber whose every turn keeps the rules: points of information are questions, and
    answers fit their limit."""

    def reply(self, request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        question, answer = POINTS.get(request.session or "", ("", ""))
        if "probing question" in prompt:
            return question
        if "rises on a Point of Information" in prompt:
            return answer
        return super().reply(request)


class HollowBrief(Chamber):
    """Points of information that ask nothing, and a brief that says nothing."""

    def reply(self, request: ChatRequest) -> str:
        if request.reply_schema is Brief:
            return json.dumps({k: "x" for k in Brief.model_fields})
        if "as a Point of Information" in request.messages[-1].content:
            return "Offices cost less than that, and every draw says so."  # asks nothing
        return super().reply(request)


def test_a_clean_brief_claims_nothing_about_degraded_turns(tmp_path: Path) -> None:
    result, _ = run_debate(tmp_path, CleanChamber(judge_ok=True), max_rounds=3)
    assert not [t for t in result.transcript.turns if t.flags or t.note]
    md = (tmp_path / "out" / "debate.md").read_text()
    assert "degraded" not in md and not any(line.startswith(">") for line in md.splitlines())


def test_a_brief_on_degraded_turns_says_so_first_its_own_reply_before_all(
    tmp_path: Path,
) -> None:
    result, _ = run_debate(tmp_path, HollowBrief(judge_ok=True), max_rounds=3)
    flagged = [t for t in result.transcript.turns if t.flags]
    assert flagged[-1].step == "brief" and flagged[-1].flags[0].startswith("hollow reply")
    questions = [t for t in flagged if t.step == "poi_question"]
    assert questions and all("not a question" in t.flags[-1] for t in questions)
    md = brief((tmp_path / "out" / "debate.md").read_text())  # the brief, not the speeches
    title, blank, own, blank2, rest, *_ = md.splitlines()
    assert title.startswith("# 📋 Debate Brief") and blank == blank2 == ""
    assert own.startswith(
        "> ⚠️ This brief comes from a degraded reply: Judge · brief (hollow reply:"
    )
    assert rest.startswith(f"> Also built on {len(flagged) - 1} degraded turns: round 1 · ")
    assert "round 1 · Opposition · point of information (" in rest and "not a question" in rest
    assert md.index(rest) < md.index("## 🔵 Proposition Case")
    assert "round 4" not in md.lower() and "None" not in md

    # A transcript that numbered the brief as round 4 says the same.
    from moot.records.transcript import Transcript

    saved = json.loads((tmp_path / "out" / "transcript.json").read_text())
    for turn in saved["turns"]:
        turn["round"] = 4 if turn["round"] is None else turn["round"]
    assert FORMAT.render(Transcript.model_validate(saved)) == md


def test_a_chinese_brief_names_its_degraded_turns_in_chinese(tmp_path: Path) -> None:
    result, _ = run_debate(
        tmp_path,
        HollowBrief(judge_ok=True),
        max_rounds=3,
        language="zh",
        motion="本院认为远程办公比办公室工作更好",
    )
    lines = result.markdown.splitlines()
    # The seats and steps in the Chinese rulebook's names (完整性裁判, 信息点提问).
    assert lines[2].startswith("> ⚠️ 本辩论简报出自有缺陷的回答：完整性裁判 · 辩论简报（")
    assert lines[4].startswith("> 另基于") and "第1轮 · 反方 · 信息点提问（" in lines[4]
    assert lines[4].endswith("）。")


class FailingJudge(Chamber):
    """A Completeness Judge whose first round's replies (and re-ask) are never JSON, and
    who is satisfied in the next."""

    asked = 0

    def reply(self, request: ChatRequest) -> str:
        if request.reply_schema is CompletenessRubric:
            self.asked += 1
            return "The speeches were fine {" if self.asked <= 2 else rubric(True)
        return super().reply(request)


def test_a_judge_that_gives_no_valid_reply_is_a_failed_seat_and_the_debate_goes_on(
    tmp_path: Path,
) -> None:
    from moot.engine.audit import check_debate

    result, events = run_debate(tmp_path, FailingJudge(), max_rounds=4)
    judged = [t for t in result.transcript.turns if t.step == "judge"]
    failed, later = judged[0], judged[1:]
    assert failed.round == 2 and failed.data == {} and failed.text == ""
    assert failed.note == "failed: PARSE_ERROR:StructuredReplyError:json"
    assert later and later[0].round == 3 and later[0].data  # the rounds went on, and were judged
    assert "2" not in result.transcript.scores and "3" in result.transcript.scores
    assert result.transcript.stop_reason == "converged"
    notices = [e.message for e in events if type(e).__name__ == "Notice"]
    assert any("the seat failed and the debate goes on" in n for n in notices)
    md = (tmp_path / "out" / "debate.md").read_text()
    assert "round 2 · Judge · " in md and "failed: PARSE_ERROR" in md  # the brief says so
    sides = FORMAT.cast(OxfordParams()).sides
    assert not check_debate(result.transcript, sides).broken  # declared: `moot check` passes

    # Resumed from its journal cut after the failed seat, the debate is the same.
    cut = next(i for i, r in enumerate(journal_of(tmp_path)) if r.get("step") == "judge") + 1
    setup, replay = resumed_after(tmp_path, cut)
    chamber = FailingJudge()
    chamber.asked = 2  # its failed replies are in the journal: the judge is not asked them
    again = DebateRun(setup, replay=replay, model_factory=lambda ref: chamber.model).run()

    def shape(turns: list[Any]) -> list[tuple[Any, ...]]:
        return [(t.round, t.role, t.step, t.note, t.data == {}) for t in turns]

    assert shape(again.transcript.turns) == shape(result.transcript.turns)
    assert again.transcript.turns[: cut - 1] == result.transcript.turns[: cut - 1]
    assert again.transcript.stop_reason == "converged"


class Preamble(Chamber):
    """A chamber whose first Proposition speech opens as a chatbot does: it is drawn again,
    told why."""

    prefaced = False

    def reply(self, request: ChatRequest) -> str:
        if request.session == "proposition" and not self.prefaced:
            self.prefaced = True
            return "Sure! As an AI language model, I am happy to help. " + SAID["en"]["proposition"]
        return super().reply(request)


def test_a_resumed_debate_asks_a_step_that_goes_on_a_saved_turn_what_it_asked_before(
    tmp_path: Path,
) -> None:
    first = Preamble()
    result, _ = run_debate(tmp_path, first, max_rounds=3)
    speech = result.transcript.turns[0]
    assert speech.step == "speech" and speech.redraw is not None  # drawn again, with a reminder
    cut = next(i for i, r in enumerate(journal_of(tmp_path)) if r.get("type") == "turn") + 1
    setup, replay = resumed_after(tmp_path, cut)
    again = Chamber()
    DebateRun(setup, replay=replay, model_factory=lambda ref: again.model).run()
    # The point of information after the saved speech goes on its conversation: the prompt
    # the speech was drawn from (the reminder too), the speech, then its own.
    before = next(r for r in first.model.requests if r.session == "opposition")
    asked = again.model.requests[0]
    assert asked.messages == before.messages
    assert asked.messages[1].content == speech.text
    opened = [r for r in first.model.requests if r.session == "proposition"][1]
    assert asked.messages[0] == opened.messages[-1] != first.model.requests[0].messages[-1]


# -- the motion ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language", "motion"),
    [
        ("Should cities ban cars?", "en", "This House Believes That cities should ban cars"),
        ("Ban cars from city centres", "en", "This House Would ban cars from city centres"),
        ("Must we colonise Mars?", "en", "This House Believes That we must colonise Mars"),
        ("Can money buy happiness?", "en", "This House Believes That money can buy happiness"),
        ("Will AI take our jobs?", "en", "This House Believes That AI will take our jobs"),
        ("Is AI dangerous?", "en", "This House Believes That AI is dangerous"),
        ("Are cats better than dogs?", "en", "This House Believes That cats are better than dogs"),
        (
            "Is the pen mightier than the sword?",
            "en",
            "This House Believes That the pen is mightier than the sword",
        ),
        (
            "Should drug use be decriminalised?",
            "en",
            "This House Believes That drug use should be decriminalised",
        ),
        (
            "Does social media harm teenagers?",
            "en",
            "This House Believes That social media harms teenagers",
        ),
        (
            "Do violent video games cause violence?",
            "en",
            "This House Believes That violent video games cause violence",
        ),
        ("Has feminism failed?", "en", "This House Believes That feminism has failed"),
        ("Shouldn't we ban cars?", "en", "This House Believes That we should ban cars"),
        ("Whether cities should ban cars", "en", "This House Believes That cities should ban cars"),
        ("THW ban cars", "en", "This House Would ban cars"),
        ("Tax cuts help the rich", "en", "This House Believes That Tax cuts help the rich"),
        ("When in doubt, vote", "en", "This House Believes That When in doubt, vote"),
        ("城市应该禁止汽车吗", "zh", "本院认为城市应该禁止汽车"),
        ("城市是否应该禁止汽车？", "zh", "本院认为城市应该禁止汽车"),
        ("城市应不应该禁止汽车？", "zh", "本院认为城市应该禁止汽车"),
        ("城市该不该禁止汽车", "zh", "本院认为城市应该禁止汽车"),
        ("AI是否会取代人类？", "zh", "本院认为AI会取代人类"),
        ("难道城市不应该禁止汽车吗？", "zh", "本院认为城市应该禁止汽车"),
        ("本院对现任政府表示不信任", "zh", "本院对现任政府表示不信任"),
    ],
)
def test_a_question_or_an_imperative_becomes_a_grammatical_motion(
    text: str, language: str, motion: str
) -> None:
    assert FORMAT.motion(text, language) == motion


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("What is the meaning of life?", "en"),
        ("How should cities fight congestion", "en"),
        ("城市应该如何减少汽车？", "zh"),
    ],
)
def test_an_open_question_is_refused_for_it_takes_no_side(text: str, language: str) -> None:
    from moot.errors import UsageError

    with pytest.raises(UsageError, match="open question"):
        FORMAT.motion(text, language)


def test_a_debate_on_a_question_argues_the_statement(tmp_path: Path) -> None:
    from moot.debates.settings import prepare, settings

    setup = prepare(settings(motion="Should cities ban cars?", run={"dry_run": True}))
    assert setup.motion == "This House Believes That cities should ban cars"


# -- the Completeness Judge's rubric -------------------------------------------------------


def judge_requests(chamber: Chamber) -> list[ChatRequest]:
    return [r for r in chamber.model.requests if r.session == "judge" and r.reply_schema != Brief]


def test_the_score_rubric_asks_the_rulebook_s_score_and_stops_on_it(tmp_path: Path) -> None:
    chamber = Chamber(judge_ok=[False, True])
    result, _ = run_debate(tmp_path, chamber, max_rounds=5, judge_rubric="score")
    t = result.transcript
    # The judge's own score decides: 2.0 in round 2 goes on, 9.0 in round 3 stops.
    assert t.scores == {
        "2": {"score": 2.0, "reasoning": "both sides argued"},
        "3": {"score": 9.0, "reasoning": "both sides argued"},
    }
    assert t.stop_reason == "converged" and t.params["judge_rubric"] == "score"
    asked = judge_requests(chamber)
    assert [r.reply_schema for r in asked] == [CompletenessReply, CompletenessReply]
    prompt = asked[0].messages[-1].content.split('"""')[-1]
    assert '"score"' in prompt and '"reasoning"' in prompt and "true or false" not in prompt
    assert not any(ch.isdigit() for ch in prompt)  # no number handed over to copy


def test_the_score_rubric_keeps_the_judges_number_even_on_speeches_that_fail_the_checks(
    tmp_path: Path,
) -> None:
    """The rulebook's stop rule: the score the judge gives, not one code lowers."""

    class Empty(Chamber):
        def reply(self, request: ChatRequest) -> str:
            if request.session in ("proposition", "opposition") and request.reply_schema is None:
                prompt = request.messages[-1].content
                if "Point of Information" not in prompt and "rebuttal" not in prompt:
                    return "Yes."
            return super().reply(request)

    result, _ = run_debate(tmp_path, Empty(judge_ok=True), max_rounds=3, judge_rubric="score")
    assert result.transcript.scores["2"]["score"] == 9.0
    assert result.transcript.stop_reason == "converged"
    checklist, _ = run_debate(tmp_path / "c", Empty(judge_ok=True), max_rounds=3)
    assert checklist.transcript.scores["2"]["score"] < 7.5  # the checklist's code checks do


def test_the_checklist_is_the_default_rubric_and_moves_in_whole_steps(tmp_path: Path) -> None:
    assert OxfordParams().judge_rubric == "checklist"
    chamber = Chamber(judge_ok=True)
    result, _ = run_debate(tmp_path, chamber, max_rounds=3)
    assert judge_requests(chamber)[0].reply_schema is CompletenessRubric
    assert result.transcript.scores["2"]["score"] == 10.0


def test_a_judge_rubric_out_of_its_choices_is_refused() -> None:
    from moot.config import validate_params
    from moot.errors import UsageError

    with pytest.raises(UsageError, match="--judge-rubric 'number'"):
        validate_params(OxfordParams, judge_rubric="number")


# -- what each step sees: the table of docs/formats/oxford.md against the flow --------------

DOC = REPO / "docs" / "formats" / "oxford.md"


def seen_table() -> dict[tuple[str, str], set[str]]:
    """The rows of "What each step sees": (step, role) → what moot's prompt holds."""
    section = DOC.read_text(encoding="utf-8").split("## What each step sees", 1)[1]
    rows = {}
    for line in section.split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[(cells[0].strip("`"), cells[1])] = {i.strip() for i in cells[3].split(";")}
    return rows


def what_the_prompt_holds(turns: list[Any], index: int, prompt: str, motion: str) -> set[str]:
    """The debate's replies in PROMPT (turn INDEX's request, the conversation it goes on
    included), named as the table names them; "other" for any the table has no name for."""
    turn = turns[index]
    rnd, last = turn.round, max(t.round for t in turns if t.round is not None)
    question = next(
        (t for t in reversed(turns[:index]) if t.step == "poi_question"), None
    )  # the one a POI answer answers
    held = {"motion"} if motion in prompt else set()
    for t in turns[:index]:
        if t.step == "judge" or t.text not in prompt:
            continue
        if t.step == "speech" and t.round == rnd:
            held.add(f"{t.role.capitalize()} speech")
        elif t.step == "round_summary" and rnd is not None and t.round == rnd - 1:
            held.add("previous summary")
        elif t.step == "round_summary" and rnd is None and t.round == last:
            held.add("final summary")
        elif t.step == "devil_attack" and t.round == rnd:
            held.add("Devil's Advocate")
        elif t.step == "devil_attack" and rnd is None:
            held.add("attacks")
        elif t.step == "rebuttal":
            held.add(f"{t.role.capitalize()} rebuttal")
        elif t is question and turn.step == "poi_answer":
            held.add("question")
        else:
            held.add(f"other: {t.round} {t.role} {t.step}")
    return held


def test_the_docs_table_of_what_each_step_sees_is_what_the_flow_shows(tmp_path: Path) -> None:
    table = seen_table()
    chamber = Chamber()  # never satisfied: all three rounds run
    result, _ = run_debate(tmp_path, chamber, max_rounds=3, seed=3)
    turns = result.transcript.turns
    requests = chamber.model.requests
    assert len(requests) == len(turns)  # one draw a turn: a request lines up with its turn
    assert {(t.step, t.role) for t in turns} == set(table)  # every step has its row
    for i, (turn, request) in enumerate(zip(turns, requests, strict=True)):
        prompt = "\n".join(m.content for m in request.messages)
        expected = set(table[(turn.step, turn.role)])
        if turn.round == 1:
            expected.discard("previous summary")  # round 1 has none
        assert what_the_prompt_holds(turns, i, prompt, MOTION) == expected, (
            turn.round,
            turn.role,
            turn.step,
        )


@pytest.mark.real
def test_the_real_tiny_judge_answers_the_rulebooks_score_under_the_grammar() -> None:
    """SmolLM2 asked for the rulebook's reply gives it: a score within 0–10 and a reasoning
    (whether its number means anything is another matter: see the docs)."""
    from moot.engine.turns import Role
    from moot.formats.oxford import flow as oxford
    from moot.inference.pool import ModelPool
    from moot.models import store
    from moot.prompts import load_pack
    from moot.records.transcript import Transcript

    speeches = {"proposition": SPEECH, "opposition": SAID["en"]["opposition"]}
    model = ModelPool(resolve=store.resolve, n_ctx=2048).get("smollm2-135m")
    common = {"motion": MOTION, "language": "en", "limits": oxford.LIMITS}
    t = Transcript(format="oxford", motion=MOTION, language="en", seed=1, models={})
    judge = Role("judge", model, 0.2)
    engine = Engine(pack=load_pack("en", "oxford"), transcript=t, roles={"judge": judge})
    score = oxford._judge(engine, 2, speeches, common, 7.5, "score")
    assert 0 <= score <= 10
    assert t.turns[-1].data is not None and set(t.turns[-1].data) == {"score", "reasoning"}
    assert t.scores["2"]["score"] == score and t.scores["2"]["reasoning"].strip()


class SlowJudge(Chamber):
    """A Completeness Judge that never answers within the call time limit."""

    def reply(self, request: ChatRequest) -> str:
        if request.reply_schema is CompletenessRubric:
            raise CallTimeoutError(seconds=240, model="slow-judge")
        return super().reply(request)


def test_a_judge_that_times_out_is_a_failed_seat_said_with_the_option_that_gives_it_longer(
    tmp_path: Path,
) -> None:
    from moot import history

    result, events = run_debate(tmp_path, SlowJudge(), max_rounds=3)
    judged = [t for t in result.transcript.turns if t.step == "judge"]
    assert [t.round for t in judged] == [2, 3]  # every round it judges asked it, none scored
    assert all(t.data == {} and t.note == "failed: timeout: slow-judge did not finish within 240 s"
               for t in judged)  # fmt: skip
    assert result.transcript.scores == {} and result.transcript.stop_reason == "hard_cap"
    # The journal holds each failure as it happened, not a silence.
    failed = [r for r in journal_of(tmp_path) if r.get("step") == "judge"]
    assert [r["note"].startswith("failed: timeout:") for r in failed] == [True] * 2
    notices = [e.message for e in events if type(e).__name__ == "Notice"]
    told = [n for n in notices if "--call-timeout" in n]
    assert told == ["Completeness Judge: no reply within 240 s; hint: raise --call-timeout "
                    "to give each model call longer"] * 2  # fmt: skip
    brief = (tmp_path / "out" / "debate.md").read_text()  # the brief names what it lacks
    assert "round 2 · Judge · completeness score (failed: timeout: slow-judge" in brief
    assert history.find(str(tmp_path / "out")).status == "unjudged"


def test_a_judge_that_answers_in_the_last_round_leaves_the_debate_judged(tmp_path: Path) -> None:
    from moot import history

    class LateJudge(Chamber):
        asked = 0

        def reply(self, request: ChatRequest) -> str:
            if request.reply_schema is CompletenessRubric:
                self.asked += 1
                if self.asked == 1:
                    raise CallTimeoutError(seconds=240, model="slow-judge")
            return super().reply(request)

    result, _ = run_debate(tmp_path, LateJudge(), max_rounds=3)
    assert [t.data == {} for t in result.transcript.turns if t.step == "judge"] == [True, False]
    assert history.find(str(tmp_path / "out")).status == "finished"


def test_max_tokens_holds_the_judges_reply_too_and_it_still_closes(tmp_path: Path) -> None:
    from moot.config import RunSettings
    from moot.inference.protocol import reply_token_bound

    def judged(cap: int | None) -> list[ChatRequest]:
        chamber = Chamber()
        setup = DebateSetup(
            format=FORMAT, motion=MOTION, language="en", seed=11,
            params=OxfordParams(max_rounds=3), out_dir=None, run=RunSettings(max_tokens=cap),
        )  # fmt: skip
        DebateRun(setup, model_factory=lambda ref: chamber.model).run()
        return [r for r in chamber.model.requests if r.reply_schema is not None]

    free, held = judged(None), judged(48)
    assert [r.reply_schema for r in free] == [r.reply_schema for r in held]
    for before, after in zip(free, held, strict=True):
        assert before.prose is None and after.prose is not None  # shorter reasons asked
        assert after.sampling.max_tokens < before.sampling.max_tokens
        bound = reply_token_bound(after.reply_schema, after.prose)  # type: ignore[arg-type]
        assert bound is not None and bound <= after.sampling.max_tokens  # it still closes
