"""The adversarial format on scripted models through the real engine, pack and CLI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from moot.debates.runner import DebateResult, DebateRun
from moot.debates.settings import DebateSetup
from moot.errors import CallTimeoutError, UsageError
from moot.formats.adversarial.flow import FORMAT, settle
from moot.formats.adversarial.schemas import AdversarialParams, Earlier, judge_schema, read_vote
from moot.formats.adversarial.text import render
from moot.formats.base import RunOptions
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import ScriptedModel
from moot.records.transcript import Transcript

QUESTION = "Is nuclear power safer per TWh than wind?"
BODY = (
    "Deaths per TWh are about 0.03 for nuclear and 0.04 for wind in the Our World in Data "
    "series, so both are far safer than coal; the difference between them is within the "
    "uncertainty of the estimates."
)
# Each seat in words of its own: a sentence that copies another seat's is cut.
SAID = {
    "participant_1": BODY,
    "participant_2": (
        "Nuclear power causes roughly as few deaths per terawatt-hour as wind does: the "
        "published estimates overlap, and coal is hundreds of times more deadly than either."
    ),
    "participant_3": (
        "Counting accidents, pollution and mining, nuclear and wind come out close together, "
        "well below fossil fuels, and the honest answer is that neither is clearly safer."
    ),
}
SAID_ZH = {
    "participant_1": ("按每太瓦时计算，核电约0.03人死亡，风电约0.04人，两者都远比煤电安全。"),
    "participant_2": "核电与风电的死亡率在已发表的估计中相互重叠，煤电的危险则高出数百倍。",
    "participant_3": "把事故、污染和采矿都算上，核电与风电相差无几，都远低于化石燃料。",
}
SYNTHESIS_ZH = "两者都比煤电安全得多；按每太瓦时计算，核电与风电相近，差距小于研究的误差。"
OBJECT_ZH = "投票：反对 - 风电数据遗漏了建设期的死亡"
SYNTHESIS = (
    "Both sources are far safer than coal; per terawatt-hour nuclear and wind are close, "
    "and the gap between them is smaller than what the studies can resolve."
)
ACCEPT = "VOTE: ACCEPT - the figures agree within their uncertainty"
OBJECT = "VOTE: OBJECT - the wind figure omits construction deaths"

Reply = str | Callable[[ChatRequest], str]


def verdict(resolved: bool, winner: str = "alpha", **extra: Any) -> str:
    conflicts = (
        []
        if resolved
        else [{"claim": "deaths per TWh", "participants": [winner], "why": "two studies differ"}]
    )
    return json.dumps(
        {
            "claim_audit_complete": True,
            "critical_conflicts": conflicts,
            "resolved": resolved,
            "winner": winner,
            **extra,
        }
    )


def round_of(request: ChatRequest) -> int:
    prompt = request.messages[-1].content
    # A revision asks for its round (after the previous round's answers); the judge judges
    # a round's answers; the synthesis is round 1's key whatever it follows.
    found = re.search(r"for round (\d+)", prompt)
    if found is None and request.reply_schema is not None:
        found = re.search(r"answers of round (\d+)", prompt)
    return int(found.group(1)) if found else 1


class Panel:
    """Scripted participants, judge and synthesizer; `script[(session, round)]` overrides."""

    def __init__(self, script: dict[tuple[str, int], Reply] | None = None) -> None:
        self.script = script or {}
        self.calls: list[tuple[str, int, ChatRequest]] = []

    def reply(self, request: ChatRequest) -> str:
        session = request.session or ""
        rnd = round_of(request)
        self.calls.append((session, rnd, request))
        found = self.script.get((session, rnd))
        if found is not None:
            return found(request) if callable(found) else found
        if request.reply_schema is not None:
            return verdict(False)
        if "问题：" in request.messages[-1].content:  # a Chinese review, in Chinese
            if session == "synthesizer":
                return SYNTHESIS_ZH
            return f"{SAID_ZH[session]}" + (f"\n{OBJECT_ZH}" if rnd > 1 else "")
        if session == "synthesizer":
            return f"FINAL: {SYNTHESIS}"
        return f"{session.upper()}-R{rnd}: {SAID[session]}" + (f"\n{OBJECT}" if rnd > 1 else "")

    def model(self, ref: str) -> ScriptedModel:
        return ScriptedModel([self.reply] * 200, model_id=ref)

    def prompts(self, session: str, rnd: int) -> list[str]:
        return [r.messages[-1].content for s, n, r in self.calls if (s, n) == (session, rnd)]


def setup_for(
    out_dir: Path | None,
    *,
    models: tuple[str, ...] = ("alpha", "beta"),
    language: str = "en",
    default_model: str | None = None,
    **params: Any,
) -> DebateSetup:
    """A review of QUESTION (or its Chinese) by MODELS, seed 3, saved in OUT_DIR."""
    return DebateSetup(
        format=FORMAT,
        motion=QUESTION if language == "en" else "每太瓦时核电比风电更安全吗？",
        language=language,  # type: ignore[arg-type]
        seed=3,
        params=AdversarialParams(participants=models, **params),
        out_dir=out_dir,
        default_model=default_model,
    )


def review(tmp_path: Path, panel: Panel, **settings: Any) -> DebateResult:
    setup = setup_for(tmp_path / "out", default_model="judge-model", **settings)
    return DebateRun(setup, model_factory=panel.model).run()


def steps(result: DebateResult) -> list[tuple[int | None, str, str]]:
    return [(t.round, t.role, t.step) for t in result.transcript.turns]


def test_round_one_is_independent(tmp_path: Path) -> None:
    panel = Panel()
    review(tmp_path, panel, rounds=1)
    first, second = panel.prompts("participant_1", 1)[0], panel.prompts("participant_2", 1)[0]
    assert "PARTICIPANT_2" not in first and "PARTICIPANT_1" not in second
    assert "You are alpha" in first and "You are beta" in second
    assert "never invent sources" in first


def test_later_rounds_see_own_and_peer_answers_and_the_trajectory(tmp_path: Path) -> None:
    panel = Panel()
    result = review(tmp_path, panel, rounds=3)
    r2 = panel.prompts("participant_1", 2)[0]
    assert f'The answers of round 1:\n\nalpha:\n"""\nPARTICIPANT_1-R1: {BODY}' in r2
    assert f'beta:\n"""\nPARTICIPANT_2-R1: {SAID["participant_2"]}' in r2
    assert "You are alpha: your previous answer is alpha's above" in r2
    assert "- deaths per TWh (alpha): two studies differ" in r2  # the judge's conflicts of round 1
    assert "claim by claim" in r2 and "VOTE: ACCEPT" in r2
    r3 = panel.prompts("participant_2", 3)[0]
    assert "PARTICIPANT_2-R2" in r3 and "PARTICIPANT_1-R2" in r3
    assert "The earlier rounds:" in r3 and "- alpha: PARTICIPANT_1-R1: Deaths per TWh" in r3
    assert "Judge after round 1: the judge found it unresolved" in r3
    assert steps(result) == [
        (1, "participant_1", "answer"),
        (1, "participant_2", "answer"),
        (1, "judge", "judge"),
        (2, "participant_1", "revise"),
        (2, "participant_2", "revise"),
        (2, "judge", "judge"),
        (3, "participant_1", "revise"),
        (3, "participant_2", "revise"),
        (3, "judge", "judge"),
        (None, "synthesizer", "synthesis"),  # after the rounds: no round number
    ]
    assert result.transcript.stop_reason == "cap"


def test_the_judge_and_every_revision_open_on_the_same_record(tmp_path: Path) -> None:
    panel = Panel()
    review(tmp_path, panel, rounds=2)
    judge_1, judge_2 = panel.prompts("judge", 1)[0], panel.prompts("judge", 2)[0]
    alpha, beta = panel.prompts("participant_1", 2)[0], panel.prompts("participant_2", 2)[0]
    synthesis = panel.prompts("synthesizer", 1)[0]
    # The answers the judge read open each revision's prompt, and the two revisions differ
    # only where each is told which answer is its own: the model reads the answers once.
    answers = judge_1[: judge_1.rindex('"""') + 3]
    assert "PARTICIPANT_1-R1" in answers and "PARTICIPANT_2-R1" in answers
    assert alpha.startswith(answers) and beta.startswith(answers)
    shared = alpha[: alpha.index("You are alpha")]
    assert beta.startswith(shared) and "The conflicts the judge found:" in shared
    assert synthesis.startswith(judge_2[: judge_2.rindex('"""') + 3])


def test_resolved_in_round_one_when_the_judge_finds_alignment(tmp_path: Path) -> None:
    panel = Panel({("judge", 1): verdict(True, "beta")})
    result = review(tmp_path, panel, rounds=3)
    r = result.transcript.result
    assert r is not None and r["stop_reason"] == "resolved" and r["rounds_held"] == 1
    assert r["winner"] == "beta" and r["final_answer"] == f"FINAL: {SYNTHESIS}"
    assert result.transcript.stop_reason == "resolved"
    synthesis = panel.prompts("synthesizer", 1)[0]
    assert "PARTICIPANT_1-R1" in synthesis and "The judge named beta" in synthesis


def test_round_one_cannot_resolve_when_a_participant_failed(tmp_path: Path) -> None:
    def down(request: ChatRequest) -> str:
        raise CallTimeoutError(seconds=240, model="beta")

    panel = Panel({("participant_2", 1): down, ("judge", 1): verdict(True)})
    result = review(tmp_path, panel, rounds=2)
    r = result.transcript.result
    assert r is not None and r["rounds"][0]["outcome"] == "participant_failed"
    assert r["rounds"][0]["failed"] == ["beta"]
    assert r["failures"][0]["role"] == "participant_2"
    assert r["stop_reason"] == "cap" and r["rounds_held"] == 2


def test_later_rounds_resolve_only_when_every_participant_accepts(tmp_path: Path) -> None:
    accept = {seat: f"{said}\n{ACCEPT}" for seat, said in SAID.items()}
    both = Panel(
        {
            ("participant_1", 2): accept["participant_1"],
            ("participant_2", 2): accept["participant_2"],
            ("judge", 2): verdict(True, "beta"),
        }
    )
    r = review(tmp_path / "a", both, rounds=3).transcript.result
    assert r is not None and r["stop_reason"] == "resolved" and r["rounds_held"] == 2
    assert r["rounds"][1]["votes"]["alpha"]["vote"] == "accept"
    # The judge says resolved, but one participant still objects: the code does not stop.
    one = Panel(
        {
            ("participant_1", 2): accept["participant_1"],
            ("judge", 2): verdict(True),
            ("judge", 3): verdict(True),
        }
    )
    r = review(tmp_path / "b", one, rounds=3).transcript.result
    assert r is not None and r["stop_reason"] == "cap" and r["rounds_held"] == 3
    assert r["rounds"][1]["outcome"] == "not_all_accepted"


def test_settle_checks_the_rulebook_in_code() -> None:
    from moot.formats.adversarial.flow import _Answer

    good = {"claim_audit_complete": True, "critical_conflicts": [], "resolved": True}
    voted = {"a": _Answer("x", read_vote(ACCEPT)), "b": _Answer("y", read_vote(ACCEPT))}
    assert settle(2, good, voted) == "resolved"
    assert settle(2, {**good, "claim_audit_complete": False}, voted) == "audit_incomplete"
    assert settle(2, {**good, "critical_conflicts": [{}]}, voted) == "conflicts_remain"
    assert settle(2, {**good, "resolved": False}, voted) == "judge_unresolved"
    assert settle(2, None, voted) == "no_verdict"
    bare = {"a": _Answer("x", read_vote("VOTE: ACCEPT")), "b": voted["b"]}
    assert settle(2, good, bare) == "not_all_accepted"  # no reason given


@pytest.mark.parametrize(
    ("line", "vote", "accepts"),
    [
        ("VOTE: ACCEPT - the figures agree", "accept", True),
        ("**Vote: accept** — no objection remains", "accept", True),
        ("VOTE: OBJECT - the wind figure is off", "object", False),
        ("投票：接受 - 数据一致", "accept", True),
        ("投票：反对 - 风电数据有误", "object", False),
        ("VOTE: ACCEPT", "accept", False),
        ("I accept nothing here.", None, False),
    ],
)
def test_votes_are_read_from_the_last_line(line: str, vote: str | None, accepts: bool) -> None:
    ballot = read_vote(f"Some answer.\n\n{line}\n")
    assert ballot.vote == vote and ballot.accepts is accepts


def test_the_winner_is_always_a_participant(tmp_path: Path) -> None:
    schema = judge_schema(("alpha", "beta"), "en").model_json_schema()
    assert schema["properties"]["winner"]["enum"] == ["alpha", "beta"]
    conflict = schema["$defs"]["Conflict"]["properties"]["participants"]
    assert conflict["items"]["enum"] == ["alpha", "beta"]
    panel = Panel({("judge", 1): verdict(True, "gpt-9")})
    r = review(tmp_path, panel, rounds=1).transcript.result
    assert r is not None and r["winner"] is None and r["rounds"][0]["verdict"] is None
    assert r["failures"] == [
        {"round": 1, "role": "judge", "error": "PARSE_ERROR:StructuredReplyError:literal_error"}
    ]
    assert "gpt-9" not in (tmp_path / "out" / "transcript.json").read_text()


def test_the_same_model_twice_gets_two_names(tmp_path: Path) -> None:
    panel = Panel()
    r = review(tmp_path, panel, models=("alpha", "alpha"), rounds=1).transcript.result
    assert r is not None and r["participants"] == {
        "participant_1": "alpha",
        "participant_2": "alpha #2",
    }
    assert panel.calls[2][2].reply_schema is judge_schema(("alpha", "alpha #2"), "en")


def test_fewer_than_two_models_is_refused() -> None:
    with pytest.raises(UsageError, match="at least two participants"):
        FORMAT.params(RunOptions(models=("alpha",)))
    params = FORMAT.params(RunOptions(models=("a", "b", "c"), rounds=2))
    cast = FORMAT.cast(params)
    assert cast.roles == ("participant_1", "participant_2", "participant_3", "judge", "synthesizer")
    assert dict(cast.models) == {"participant_1": "a", "participant_2": "b", "participant_3": "c"}


def test_continue_carries_the_earlier_answer_into_round_one(tmp_path: Path) -> None:
    review(tmp_path / "first", Panel({("synthesizer", 1): "FINAL: nuclear is safer per TWh."}))
    saved = tmp_path / "first" / "out" / "transcript.json"
    params = FORMAT.params(RunOptions(models=("alpha", "beta"), continue_from=saved))
    assert params.earlier == [Earlier(question=QUESTION, answer="FINAL: nuclear is safer per TWh.")]
    panel = Panel()
    setup = DebateSetup(
        format=FORMAT,
        motion="And per unit of land?",
        language="en",
        seed=3,
        params=params,
        out_dir=tmp_path / "second",
    )
    result = DebateRun(setup, model_factory=panel.model).run()
    first = panel.prompts("participant_1", 1)[0]
    assert QUESTION in first and "FINAL: nuclear is safer per TWh." in first
    assert "the new question has priority" in first
    assert first.index(QUESTION) < first.index("And per unit of land?")
    assert QUESTION not in panel.prompts("participant_1", 2)[0]
    assert result.transcript.result is not None
    assert result.transcript.result["session"][0]["question"] == QUESTION


def test_continue_refuses_what_is_not_an_adversarial_transcript(tmp_path: Path) -> None:
    other = tmp_path / "t.json"
    other.write_text(json.dumps({"format": "oxford", "result": {}}))
    for path, needle in [(other, "not a transcript"), (tmp_path / "none.json", "--continue")]:
        with pytest.raises(UsageError, match=needle):
            FORMAT.params(RunOptions(models=("a", "b"), continue_from=path))


def test_a_chinese_review_uses_the_chinese_pack(tmp_path: Path) -> None:
    panel = Panel()
    result = review(tmp_path, panel, language="zh", rounds=1)
    assert "问题：" in panel.prompts("participant_1", 1)[0]
    assert "# 对抗式评审" in result.markdown and "## 最终答案" in result.markdown


def test_the_document_leads_with_the_final_answer(tmp_path: Path) -> None:
    result = review(tmp_path, Panel(), rounds=2)
    md = (tmp_path / "out" / "debate.md").read_text()
    order = [
        "# Adversarial review",
        "**The judge's pick:** alpha",
        "## Final answer",
        "### Round 2",
    ]
    assert [md.index(s) for s in order] == sorted(md.index(s) for s in order)
    assert "round cap reached (2 rounds)" in md and f"FINAL: {SYNTHESIS}" in md
    assert result.transcript.result is not None
    assert set(result.transcript.result) >= {"rounds", "final_answer", "winner", "stop_reason"}


def test_fewer_than_two_models_exits_2_on_the_command_line(tmp_path: Path, cli: Cli) -> None:
    args = ["run", QUESTION, "--format", "adversarial", "--model", "smollm2-135m"]
    proc = cli(*args, home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "at least two participants" in lines[0] and lines[1].startswith("hint:")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_step_renders_in_both_languages_with_its_limits(lang: str) -> None:
    from moot.formats.adversarial.flow import STEPS, sample_variables
    from moot.prompts import load_pack

    pack = load_pack(lang, "adversarial")  # type: ignore[arg-type]
    variables = sample_variables()
    pack.validate(STEPS, variables)
    assert sorted(p.name for p in pack.dir.glob("*.j2")) == sorted(f"{s}.j2" for s in STEPS)
    for step, limit in (("answer", "200"), ("revise", "200"), ("synthesis", "250")):
        assert limit in pack.render(step, **variables[step]), step
    judge = pack.render("judge", **variables["judge"])
    assert "claim_audit_complete" in judge and ("a、b" in judge or "a, b" in judge)


def test_every_participant_failing_in_round_one_ends_the_review(tmp_path: Path) -> None:
    from moot.errors import MootError

    panel = Panel({("participant_1", 1): "", ("participant_2", 1): ""})
    with pytest.raises(MootError, match="every participant failed in round 1"):
        review(tmp_path, panel, rounds=2)


def test_a_failed_synthesis_is_recorded_not_invented(tmp_path: Path) -> None:
    def down(request: ChatRequest) -> str:
        raise CallTimeoutError(seconds=1, model="judge-model")

    result = review(tmp_path, Panel({("synthesizer", 1): down}), rounds=1)
    r = result.transcript.result
    assert r is not None and r["final_answer"] is None
    assert r["failures"][-1]["role"] == "synthesizer"
    assert r["failures"][-1]["round"] is None  # after the rounds
    assert r["failures"][-1]["error"].startswith("timeout:")
    assert "No final answer: the synthesizer failed." in result.markdown
    assert "- after the rounds · synthesizer: timeout:" in result.markdown
    assert "None" not in result.markdown


def test_an_interrupted_review_resumes_from_its_journal(tmp_path: Path) -> None:
    from moot.debates.runner import resume_setup

    def interrupt(request: ChatRequest) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        review(tmp_path, Panel({("judge", 2): interrupt}), rounds=2)
    setup, records = resume_setup(tmp_path / "out")
    assert setup.params == AdversarialParams(participants=("alpha", "beta"), rounds=2)
    panel = Panel()
    result = DebateRun(setup, model_factory=panel.model, replay=records).run()
    assert [(s, n) for s, n, _ in panel.calls] == [("judge", 2), ("synthesizer", 1)]
    assert len(result.transcript.turns) == 7 and result.transcript.stop_reason == "cap"


@pytest.mark.parametrize(
    ("lang", "stop", "said", "not_said"),
    [
        ("en", "resolved", "resolved after round 2", "round cap reached"),
        ("en", "cap", "round cap reached (2 rounds)", "resolved after"),
        ("zh", "resolved", "第2轮后达成一致", "已达轮数上限"),
        ("zh", "cap", "已达轮数上限（2轮）", "达成一致"),
    ],
)
def test_the_document_says_why_the_review_stopped(
    lang: str, stop: str, said: str, not_said: str
) -> None:
    transcript = Transcript(
        format="adversarial",
        motion=QUESTION,
        language=lang,
        seed=3,
        models={},
        stop_reason=stop,  # type: ignore[arg-type]
        result={
            "question": QUESTION,
            "participants": {"participant_1": "alpha", "participant_2": "beta"},
            "rounds_held": 2,
            "stop_reason": stop,
            "winner": "alpha",
            "final_answer": f"FINAL: {BODY}",
            "rounds": [],
        },
    )
    md = render(transcript)
    assert said in md and not_said not in md


def test_a_reply_of_brackets_nested_past_the_parser_is_a_parse_error_not_a_crash() -> None:
    from moot.inference.protocol import parse_error

    code = parse_error(ValueError("bad"), "[" * 100_000, judge_schema(("alpha", "beta"), "en"))
    assert code == "PARSE_ERROR:ValueError:json"


# -- a review built on degraded turns says so ---------------------------------------------

LONG = " ".join(f"point{i}" for i in range(300)) + "."  # one sentence past the limit


def test_a_clean_review_claims_nothing_about_degraded_turns(tmp_path: Path) -> None:
    result = review(tmp_path, Panel(), rounds=2)
    assert not [t for t in result.transcript.turns if t.flags or t.note]
    md = (tmp_path / "out" / "debate.md").read_text()
    assert "degraded" not in md and not any(line.startswith(">") for line in md.splitlines())


def test_a_review_on_degraded_turns_says_so_first_the_final_answer_before_all(
    tmp_path: Path,
) -> None:
    preamble = f"Sure! Here is my answer. {SAID['participant_2']}"
    panel = Panel({("participant_2", 1): preamble, ("synthesizer", 1): LONG})
    result = review(tmp_path, panel, rounds=1)
    flagged = [t for t in result.transcript.turns if t.flags or t.note]
    assert [(t.round, t.step) for t in flagged] == [(1, "answer"), (None, "synthesis")]
    md = (tmp_path / "out" / "debate.md").read_text()
    title, blank, own, blank2, rest, blank3, question = md.splitlines()[:7]
    assert title == "# Adversarial review" and blank == blank2 == blank3 == ""
    assert own == (
        "> ⚠️ This final answer comes from a degraded reply: Synthesizer · final answer "
        f"({'; '.join(flagged[1].flags)})."
    )
    assert "cut at the limit" in own
    assert rest == (
        "> Also built on 1 degraded turn: round 1 · Participant 2 · beta · answer "
        f"({'; '.join(flagged[0].flags)})."
    )
    assert question.startswith("- **Question:**") and "None" not in md


def test_a_chinese_review_names_its_failed_synthesis_in_chinese(tmp_path: Path) -> None:
    result = review(tmp_path, Panel({("synthesizer", 1): ""}), language="zh", rounds=1)
    [failed] = [t for t in result.transcript.turns if t.flags or t.note]
    assert failed.step == "synthesis" and failed.note and failed.note.startswith("degenerate")
    lines = result.markdown.splitlines()
    assert lines[0] == "# 对抗式评审"
    # The note recorded in English ("degenerate reply: the reply is empty"), shown in Chinese.
    assert lines[2] == "> ⚠️ 本最终答案出自有缺陷的回答：综合者 · 最终答案（无效回答：回答为空）。"


# -- shared evidence ------------------------------------------------------------------------

from moot.debates.runner import saved_sides  # noqa: E402
from moot.engine.audit import check_debate  # noqa: E402
from moot.formats.adversarial.schemas import Evidence, read_request  # noqa: E402
from moot.formats.adversarial.text import evidence_asked, evidence_prompt  # noqa: E402

FACTS = "Table 3: deaths per TWh, 2021 update: nuclear 0.03, wind 0.04, coal 24.6."
FACTS_ZH = "表3：每太瓦时死亡人数（2021年更新）：核电0.03，风电0.04，煤电24.6。"
MORE = "Appendix B: the wind series counts construction deaths since 2012."
REQUEST = "EVIDENCE REQUEST: the wind series' method note on construction deaths"


def evidence_file(tmp_path: Path, name: str = "facts.md", text: str = FACTS) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_shared_evidence_is_shown_to_every_participant_the_judge_and_the_synthesizer(
    tmp_path: Path,
) -> None:
    panel = Panel()
    evidence = [Evidence(name=str(tmp_path / "facts.md"), text=FACTS)]
    review(tmp_path, panel, rounds=2, evidence=evidence)
    seen = {(session, rnd): request.messages[-1].content for session, rnd, request in panel.calls}
    assert set(seen) == {
        ("participant_1", 1),
        ("participant_2", 1),
        ("judge", 1),
        ("participant_1", 2),
        ("participant_2", 2),
        ("judge", 2),
        ("synthesizer", 1),
    }
    for key, prompt in seen.items():
        assert f'From facts.md:\n"""\n{FACTS}\n"""' in prompt, key
        assert str(tmp_path) not in prompt, key  # by its name: where it lies is no evidence
    assert "use the shared evidence above" in seen[("participant_1", 2)]
    assert "checked against the shared evidence above" in seen[("judge", 1)]
    # Fixed for the whole review, it comes right after the question, before any answer.
    first = seen[("judge", 1)]
    assert first.index(FACTS) < first.index("The answers of round 1")


def test_words_both_participants_take_from_the_shared_evidence_are_not_copying(
    tmp_path: Path,
) -> None:
    """Two participants citing one evidence sentence word for word: the second is not held
    to copy the first, in the engine or in `moot check`; a sentence not in the evidence is."""
    cited = (
        "The 2021 update counts every death from accidents, pollution and construction "
        "in each source."
    )
    evidence = [Evidence(name="facts.md", text=f"{cited} Wind is counted the same way.")]
    own = "Operators report every incident to the regulator within one week of it happening."
    panel = Panel(
        {
            ("participant_1", 1): f"Nuclear is safer. {cited} {own}",
            ("participant_2", 1): f"Wind is as safe. {cited} {own}",
        }
    )
    result = review(tmp_path, panel, rounds=1, evidence=evidence)
    second = next(t for t in result.transcript.turns if t.role == "participant_2")
    assert second.text == f"Wind is as safe. {cited}"  # the evidence kept, the copy removed
    assert second.flags == ["the other side's words removed"]
    second.text = f"Wind is as safe. {cited} {own}"  # as if it had been kept
    sides = saved_sides(result.transcript.model_dump(mode="json"))
    problems = check_debate(result.transcript, sides).turns[second.index].problems
    assert [p.split(":")[0] for p in problems] == ["copied"] and own[:40] in problems[0]


def test_without_evidence_no_prompt_speaks_of_it(tmp_path: Path) -> None:
    panel = Panel()
    review(tmp_path, panel, rounds=2)
    for _, _, request in panel.calls:
        assert "Shared evidence" not in request.messages[-1].content


def test_evidence_files_are_read_once_into_the_params(tmp_path: Path) -> None:
    one = evidence_file(tmp_path)
    two = evidence_file(tmp_path, "more.txt", f"\ufeff{MORE}\n")
    params = FORMAT.params(RunOptions(models=("a", "b"), evidence=(one, two)))
    assert params.evidence == [
        Evidence(name=str(one), text=FACTS),
        Evidence(name=str(two), text=MORE),  # its byte-order mark and last newline dropped
    ]
    # The context is sized for it: every prompt quotes it.
    plain = FORMAT.params(RunOptions(models=("a", "b")))
    from moot.formats.base import context_need

    assert context_need(FORMAT, params, "en") > context_need(FORMAT, plain, "en")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "does not exist"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8 text"),
        (b"text\x00with a NUL", "is not text"),
        (b"   \n\n", "holds no words"),
        (("word " * 2100).encode(), "over 2,000"),
        (b"x" * (64 * 1024 + 1), "over moot's limit"),
    ],
)
def test_a_bad_evidence_file_is_refused_in_one_line(
    tmp_path: Path, content: bytes | str | None, says: str
) -> None:
    path = tmp_path / "evidence.md"
    if isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(UsageError, match=re.escape(says)) as caught:
        FORMAT.params(RunOptions(models=("a", "b"), evidence=(path,)))
    said = caught.value.message
    assert said.startswith(f"--evidence {path}") and "\n" not in said
    assert caught.value.hint


def test_the_evidence_files_together_stay_within_the_bound(tmp_path: Path) -> None:
    half = " ".join(["fact"] * 1200)
    one, two = evidence_file(tmp_path, "a.md", half), evidence_file(tmp_path, "b.md", half)
    with pytest.raises(UsageError, match=r"b\.md is 1,200 words \(字\), over 800"):
        FORMAT.params(RunOptions(models=("a", "b"), evidence=(one, two)))


def test_evidence_on_the_command_line_reaches_the_transcript(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    one, two = evidence_file(tmp_path), evidence_file(tmp_path, "more.txt", MORE)
    a, b = dry_models
    args = ["run", QUESTION, "--format", "adversarial", "--model", a, "--model", b]
    args += ["--rounds", "1", "--dry-run", "--yes", "--out", str(tmp_path / "out")]
    proc = cli(*args, "--evidence", str(one), "--evidence", str(two), home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((tmp_path / "out" / "transcript.json").read_text())
    assert [e["text"] for e in saved["params"]["evidence"]] == [FACTS, MORE]
    md = (tmp_path / "out" / "debate.md").read_text()
    assert "- **Shared evidence:** facts.md, more.txt" in md


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--evidence", "missing.md"], "evidence missing.md does not exist"),
        (["--evidence", "missing/"], "missing does not exist"),
        (["--format", "oxford", "--evidence", "missing/"], "missing does not exist"),
    ],
)
def test_a_bad_evidence_option_exits_2_in_one_line(
    tmp_path: Path,
    cli: Cli,
    dry_models: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    says: str,
) -> None:
    evidence_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    a, b = dry_models
    fmt = [] if "--format" in extra else ["--format", "adversarial", "--model", b]
    args = ["run", QUESTION, *fmt, "--model", a, "--dry-run", "--yes", "--no-save", *extra]
    proc = cli(*args, home=tmp_path / "home")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and says in lines[0] and lines[1].startswith("hint:"), lines
    assert "Traceback" not in proc.stderr


def test_evidence_from_python_takes_one_path_or_several(tmp_path: Path) -> None:
    from moot.api.debates import debate_settings
    from moot.debates.settings import format_params
    from moot.formats import get_format

    one = evidence_file(tmp_path)
    for given, read in ((str(one), [str(one)]), ([one, one], [str(one), str(one)])):
        chosen = debate_settings(QUESTION, format="adversarial", model=["a", "b"], evidence=given)
        params = format_params(FORMAT, chosen.params, ("a", "b"))
        assert isinstance(params, AdversarialParams)
        assert [e.name for e in params.evidence] == read
    # Every format takes documents, as absolute paths; only this one shows a text file whole.
    chosen = debate_settings(QUESTION, format="challenge", evidence=str(one))
    params = format_params(get_format("challenge"), chosen.params)
    assert params.evidence == (one.absolute(),)  # type: ignore[attr-defined]


def test_a_folder_or_a_pdf_is_read_for_passages_never_shown_whole(tmp_path: Path) -> None:
    one = evidence_file(tmp_path)
    (tmp_path / "docs").mkdir()
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4 not read here")
    params = FORMAT.params(RunOptions(models=("a", "b"), evidence=(one, tmp_path / "docs", pdf)))
    assert [e.name for e in params.evidence] == [str(one)]


def test_a_dry_run_from_python_shows_the_evidence(
    tmp_path: Path, dry_models: tuple[str, str]
) -> None:
    import moot

    one = evidence_file(tmp_path)
    result = moot.debate(
        QUESTION,
        format="adversarial",
        model=list(dry_models),
        evidence=one,
        rounds=1,
        save=False,
        run={"dry_run": True},
    )
    assert result.transcript.params["evidence"] == [{"name": str(one), "text": FACTS}]
    assert "facts.md" in result.markdown


# -- evidence requests -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "wanted"),
    [
        (f"An answer.\n{REQUEST}", "the wind series' method note on construction deaths"),
        (f"An answer.\n**Evidence request:** the 2024 data\n{OBJECT}", "the 2024 data"),
        ("回答。\n证据请求：2024年的风电数据\n投票：反对 - 数据不全", "2024年的风电数据"),
        ("An answer.\nEVIDENCE REQUEST: none", None),
        ("An answer.\nEVIDENCE REQUEST: No further evidence is needed.", None),
        ("An answer.\nEvidence request: not needed", None),
        ("回答。\n证据请求：不需要额外证据", None),
        ("回答。\n证据请求：无法判断，需要2024年的数据", "无法判断，需要2024年的数据"),
        ("An answer.\n证据请求：无", None),
        ("An answer that needs no more evidence.", None),
    ],
)
def test_evidence_requests_are_read_from_their_line(reply: str, wanted: str | None) -> None:
    assert read_request(reply) == wanted


def test_a_request_after_the_vote_does_not_hide_the_vote() -> None:
    ballot = read_vote(f"An answer.\n{ACCEPT}\n{REQUEST}")
    assert ballot.vote == "accept" and ballot.accepts


def asks_for_evidence(session: str, rnd: int) -> dict[tuple[str, int], Reply]:
    body = f"{session.upper()}-R{rnd}: {SAID[session]}"
    return {(session, rnd): f"{body}\n{REQUEST}" + (f"\n{OBJECT}" if rnd > 1 else "")}


def test_a_request_is_shown_recorded_and_answered_with_a_file_before_the_next_round(
    tmp_path: Path,
) -> None:
    from moot.events import Notice

    more = evidence_file(tmp_path, "appendix.md", MORE)
    shown: list[str] = []
    events: list[Any] = []

    def ask(proposal: str) -> str:
        shown.append(proposal)
        return str(more)

    panel = Panel(asks_for_evidence("participant_2", 1))
    setup = setup_for(tmp_path / "out", rounds=2)
    result = DebateRun(setup, model_factory=panel.model, ask=ask, listeners=[events.append]).run()
    notices = [e.message for e in events if isinstance(e, Notice)]
    wanted = "the wind series' method note on construction deaths"
    assert f"Participant 2 · beta asks for evidence: {wanted}" in notices
    assert "Evidence from appendix.md is shown to every seat from round 2 on" in notices
    assert shown == [
        "## Evidence requested before round 2\n\n"
        f"- **beta:** {wanted}\n\n"
        "Type the path of a text or Markdown file here to show every participant and the judge "
        "as evidence from round 2 on, or press Enter to go on without. Nothing is sent "
        "anywhere: only a file on this machine is read."
    ]
    assert evidence_prompt(shown[0]) == "Evidence file (Enter: go on without)"
    # Round 1 did not have it; round 2, its judge and the synthesis do.
    assert MORE not in panel.prompts("participant_1", 1)[0]
    for session, rnd in (("participant_1", 2), ("participant_2", 2), ("judge", 2)):
        assert (
            f'From appendix.md (supplied before round 2):\n"""\n{MORE}'
            in panel.prompts(session, rnd)[0]
        )
    assert MORE in panel.prompts("synthesizer", 1)[0]
    r = result.transcript.result
    assert r is not None and r["rounds"][0]["requests"] == {"beta": wanted}
    assert r["supplied"] == [{"round": 2, "name": str(more), "text": MORE}]
    md = (tmp_path / "out" / "debate.md").read_text()
    assert f"- Evidence requested · beta: {wanted}" in md
    assert "- **Shared evidence:** appendix.md (supplied before round 2)" in md
    journal = (tmp_path / "out" / "journal.jsonl").read_text()
    assert '"key": "evidence:2"' in journal and MORE in journal


def test_unattended_a_request_is_recorded_and_the_review_goes_on_without(tmp_path: Path) -> None:
    panel = Panel(asks_for_evidence("participant_1", 1))
    result = review(tmp_path, panel, rounds=2)
    r = result.transcript.result
    assert r is not None and r["rounds"][0]["requests"] == {
        "alpha": "the wind series' method note on construction deaths"
    }
    assert r["supplied"] == [] and r["rounds_held"] == 2
    assert "Shared evidence" not in panel.prompts("participant_1", 2)[0]


def test_enter_goes_on_without_and_a_bad_path_is_asked_again(tmp_path: Path) -> None:
    from moot.events import Notice

    replies = iter([str(tmp_path / "missing.md"), ""])
    events: list[Any] = []
    panel = Panel(asks_for_evidence("participant_1", 1))
    setup = setup_for(None, rounds=2)
    DebateRun(
        setup, model_factory=panel.model, ask=lambda _: next(replies), listeners=[events.append]
    ).run()
    warned = [e.message for e in events if isinstance(e, Notice) and e.level == "warn"]
    assert any("missing.md does not exist" in w for w in warned)
    assert next(replies, "done") == "done"  # asked twice: the bad path, then Enter
    assert "Shared evidence" not in panel.prompts("judge", 2)[0]


def test_no_request_is_put_to_the_user_after_the_last_round(tmp_path: Path) -> None:
    asked: list[str] = []
    panel = Panel(asks_for_evidence("participant_1", 2))
    setup = setup_for(None, rounds=2)
    result = DebateRun(setup, model_factory=panel.model, ask=lambda p: asked.append(p) or "").run()
    assert asked == []
    r = result.transcript.result
    assert r is not None and r["rounds"][1]["requests"] == {
        "alpha": "the wind series' method note on construction deaths"
    }


def test_a_resumed_review_keeps_the_evidence_supplied_before_it_stopped(tmp_path: Path) -> None:
    from moot.debates.runner import resume_setup

    more = evidence_file(tmp_path, "appendix.md", MORE)

    def interrupt(request: ChatRequest) -> str:
        raise KeyboardInterrupt

    panel = Panel({**asks_for_evidence("participant_2", 1), ("judge", 2): interrupt})
    setup = setup_for(tmp_path / "out", rounds=2)
    with pytest.raises(KeyboardInterrupt):
        DebateRun(setup, model_factory=panel.model, ask=lambda _: str(more)).run()
    more.unlink()  # the file is gone: the journal holds what was shown
    again, records = resume_setup(tmp_path / "out")
    panel = Panel()
    result = DebateRun(again, model_factory=panel.model, replay=records).run()
    assert MORE in panel.prompts("judge", 2)[0] and MORE in panel.prompts("synthesizer", 1)[0]
    assert result.transcript.result is not None
    assert result.transcript.result["supplied"][0]["text"] == MORE


@pytest.mark.usefixtures("moot_home", "any_model_name")
def test_a_new_judge_is_shown_the_evidence_supplied_between_rounds(tmp_path: Path) -> None:
    """`moot judge` re-judges a review with the evidence the user supplied before round 2,
    from the transcript: the file itself may be gone."""
    import moot
    from moot.inference.scripted import ScriptedModel

    more = evidence_file(tmp_path, "appendix.md", MORE)
    panel = Panel(asks_for_evidence("participant_2", 1))
    DebateRun(setup_for(tmp_path / "out", rounds=2), model_factory=panel.model,
              ask=lambda _: str(more)).run()  # fmt: skip
    more.unlink()
    judge = ScriptedModel(model_id="j")
    [result] = moot.judge(tmp_path / "out" / "transcript.json", judges="j", pool=Pool(judge))
    prompts = [r.messages[-1].content for r in judge.requests]
    assert len(prompts) == 2 and result.same_prompts  # the judge's two rounds, as first asked
    assert MORE not in prompts[0]
    assert f'From appendix.md (supplied before round 2):\n"""\n{MORE}' in prompts[1]


class Pool:
    """A pool that hands out one scripted judge."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge

    def get(self, ref: str) -> Any:
        return self.judge


def test_a_chinese_review_asks_and_shows_evidence_in_chinese(tmp_path: Path) -> None:
    more = evidence_file(tmp_path, "附录.md", FACTS_ZH)
    shown: list[str] = []
    request = "证据请求：风电数据是否计入建设期死亡"
    panel = Panel({("participant_1", 1): f"{SAID_ZH['participant_1']}\n{request}"})
    evidence = [Evidence(name="数据.md", text=FACTS_ZH)]
    setup = setup_for(tmp_path / "out", language="zh", rounds=2, evidence=evidence)

    def ask(proposal: str) -> str:
        shown.append(proposal)
        return str(more)

    result = DebateRun(setup, model_factory=panel.model, ask=ask).run()
    assert shown[0].startswith("## 第2轮前的证据请求\n\n- **alpha:** 风电数据是否计入建设期死亡")
    assert evidence_prompt(shown[0]) == "证据文件（按回车不提供，继续）"
    # (Panel tells rounds by the English prompts' words: a Chinese revision counts as round 1.)
    prompt = panel.prompts("participant_1", 1)[-1]
    assert "第2轮修订后的回答" in prompt
    assert f'来自数据.md：\n"""\n{FACTS_ZH}' in prompt and "来自附录.md（第2轮前提供）：" in prompt
    assert "利用上面的共享证据" in prompt and "证据请求：" in prompt
    md = result.markdown
    assert "- **共享证据:** 数据.md、附录.md（第2轮前提供）" in md
    assert "- 证据请求 · alpha: 风电数据是否计入建设期死亡" in md


def test_the_terminal_asks_for_an_evidence_file_not_for_corrections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from rich.console import Console

    from moot.cli import run as cli_run
    from moot.formats.adversarial.text import evidence_asked

    asked: list[str] = []

    def prompt(text: str, default: str = "") -> str:
        asked.append(text)
        return "appendix.md"

    monkeypatch.setattr(cli_run.typer, "prompt", prompt)
    screen = io.StringIO()
    ask = cli_run._asker(Console(file=screen, width=100), "zh")
    assert ask(evidence_asked("zh", 2, {"alpha": "2024年的风电数据"})) == "appendix.md"
    assert ask("## Proposal\n\nTopic: …") == "appendix.md"
    assert asked[0] == "证据文件（按回车不提供，继续）" and asked[1] != asked[0]
    assert "2024年的风电数据" in screen.getvalue()


def test_other_proposals_keep_their_prompt() -> None:
    assert evidence_prompt("## Proposal\n\nTopic: …") is None
    assert evidence_prompt("## 第2轮的回答") is None


def test_a_front_end_may_give_the_evidence_itself_held_to_what_a_file_is_held_to(
    tmp_path: Path,
) -> None:
    """What the page does: the ask carries the round, the requests and the room left, and
    the answer is the text itself under a file's name (no folder), checked as a file's text
    would be; a text the review refuses is warned about and asked for again."""
    from moot.engine.rules import length_units
    from moot.events import Notice
    from moot.formats.adversarial.evidence import EvidenceAsked, EvidenceGiven

    asked: list[EvidenceAsked] = []
    replies = iter(
        [
            EvidenceGiven("", "one two three " * 300),  # 900 words: over the room
            EvidenceGiven("C:\\fakepath\\appendix.md", "\ufeff" + MORE),
            EvidenceGiven("", "A second note, pasted."),
        ]
    )

    def ask(proposal: str) -> str:
        assert isinstance(proposal, EvidenceAsked)
        asked.append(proposal)
        return next(replies)

    events: list[Any] = []
    again = "the coal series for the same years"
    revised = f"PARTICIPANT_1-R2: {SAID['participant_1']}\nEVIDENCE REQUEST: {again}\n{OBJECT}"
    script = {**asks_for_evidence("participant_2", 1), ("participant_1", 2): revised}
    setup = setup_for(tmp_path / "out", rounds=3)
    result = DebateRun(
        setup, model_factory=Panel(script).model, ask=ask, listeners=[events.append]
    ).run()
    wanted = "the wind series' method note on construction deaths"
    assert [(a.round, a.requests, a.room, a.language) for a in asked] == [
        (2, {"beta": wanted}, 800, "en"),
        (2, {"beta": wanted}, 800, "en"),
        (3, {"alpha": again}, 800 - length_units(MORE), "en"),
    ]
    assert asked[0] == evidence_asked("en", 2, {"beta": wanted})  # what a terminal shows
    warned = [e.message for e in events if isinstance(e, Notice) and e.level == "warn"]
    assert any("is 900 words (字), over 800" in w for w in warned)
    r = result.transcript.result
    assert r is not None and r["supplied"] == [
        {"round": 2, "name": "appendix.md", "text": MORE},
        {"round": 3, "name": "pasted.txt", "text": "A second note, pasted."},
    ]


# -- the synthesis merges what held up across the rounds -----------------------------------


def test_the_synthesizer_sees_every_round_and_what_the_judge_flagged_in_each(
    tmp_path: Path,
) -> None:
    panel = Panel()
    review(tmp_path, panel, rounds=3)
    synthesis = panel.prompts("synthesizer", 1)[0]
    # The last round in full; the rounds before it, each answer with the judge's findings.
    assert "PARTICIPANT_1-R3" in synthesis and "PARTICIPANT_2-R3" in synthesis
    assert "- alpha: PARTICIPANT_1-R1: Deaths per TWh" in synthesis
    assert "- beta: PARTICIPANT_2-R2: Nuclear power causes" in synthesis
    assert "Judge after round 1: the judge found it unresolved" in synthesis
    assert "Judge after round 2: the judge found it unresolved" in synthesis
    assert "merge the points validated again and again across the rounds" in synthesis


def test_a_chinese_synthesis_sees_the_trajectory_in_chinese(tmp_path: Path) -> None:
    panel = Panel()
    review(tmp_path, panel, language="zh", rounds=2)
    synthesis = panel.prompts("synthesizer", 1)[0]
    assert "之前各轮：" in synthesis and "第1轮后裁判：裁判认为尚未解决" in synthesis
    assert "融合在各轮中一再得到验证的观点" in synthesis


# -- on a real model ----------------------------------------------------------------------


@pytest.mark.real
def test_shared_evidence_on_a_real_model_is_read_once_for_every_step(
    tmp_path: Path, cli: Cli
) -> None:
    """The evidence opens every prompt after the question, so a model in this process
    evaluates it once: each later step finds it in its cache."""
    from conftest import REAL_HOME

    facts = " ".join(
        f"Study {i} reports {0.02 + i / 1000:.3f} deaths per TWh for nuclear and "
        f"{0.03 + i / 1000:.3f} for wind, counting accidents and mining."
        for i in range(6)
    )
    path = evidence_file(tmp_path, "studies.md", facts)
    args = ["run", QUESTION, "--format", "adversarial", "--rounds", "1", "--seed", "3"]
    args += ["--model", "smollm2-135m", "--model", "smollm2-135m", "--max-tokens", "24"]
    args += ["--evidence", str(path), "--out", str(tmp_path / "out")]
    proc = cli.subprocess(*args, env={"MOOT_HOME": str(REAL_HOME)}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "transcript.json").read_text(encoding="utf-8"))
    assert data["params"]["evidence"] == [{"name": str(path), "text": facts}]
    first, *later = data["turns"]
    assert [t["step"] for t in later] == ["answer", "judge", "synthesis"]
    evidence_tokens = len(facts.split())  # SmolLM2 takes at least a token a word here
    assert first["prompt_tokens"] > evidence_tokens
    for turn in later:
        assert turn["cached_tokens"] > evidence_tokens, turn["step"]
