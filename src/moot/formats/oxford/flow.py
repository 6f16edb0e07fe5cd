"""Oxford Union debate: speeches, points of information, a devil's advocate, the chair's
summaries, a completeness judge with an early stop, closing rebuttals and a brief.

How it keeps its rulebook, and where it departs: docs/formats/oxford.md. Every step
below is one step of that rulebook.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from moot.engine.rules import speech_checks
from moot.engine.turns import Decide, Engine
from moot.formats.base import Cast, Format, Judging, Reading, gist
from moot.formats.failures import degraded, degraded_notes
from moot.formats.oxford.motion import normalise_motion
from moot.formats.oxford.schemas import (
    Brief,
    CompletenessReply,
    CompletenessRubric,
    CompletenessScore,
    OxfordParams,
)
from moot.records.journal import render_markdown
from moot.records.transcript import StopReason, Transcript, Turn

ROLES = ("proposition", "opposition", "devil", "chair", "judge")
TEMPERATURES = {"proposition": 0.3, "opposition": 0.3, "devil": 0.7, "chair": 0.4, "judge": 0.2}
# The seats that speak for a side, and what each is called in the third person; the chair
# and the judge speak for none.
SIDES = {
    "proposition": ("proposition", "government", "正方"),
    "opposition": ("opposition", "反方"),
    "devil": ("devil's advocate", "devil", "魔鬼辩手", "魔鬼代言人"),
}
# A step's prompt opens with the record (record.j2): the motion, then what the step may
# see, in a fixed order; the speaker's persona and instructions come after it. Steps that
# see the same things therefore share the start of their prompt, and the model evaluates
# it once for all of them instead of once per speaker. A step that sees what an earlier
# step saw and that step's reply goes on that step's conversation instead (`follows`): its
# prompt is the earlier prompt, the reply as the assistant's, then its own record (only
# what is new) and instructions, so a model reuses the tokens it computed while it spoke.
# The earlier step's instructions and persona are then in view: scaffolding, not content.
# The personas are written into the steps rather than sent as system prompts, which would
# put a different text first for every speaker. Each step sees what the table "What each
# step sees" of docs/formats/oxford.md lists (a test reads it): the rulebook's message,
# and where a step goes on a conversation or closes the debate, the more it gives reasons
# for. The Chair's summary carries the debate forward; no speech sees an earlier round's.
STEPS = (
    "record",
    "persona_proposition",
    "persona_opposition",
    "persona_devil",
    "speech",
    "poi_question",
    "poi_answer",
    "devil_attack",
    "round_summary",
    "judge",
    "rebuttal",
    "verdict",
    "brief",
)
CLOSING = ("rebuttal", "verdict", "brief")  # the steps after the rounds
POI_ACCEPT = 0.6

# Length limits of the rulebook (words; 字 in Chinese): each sets its step's token budget.
LIMITS = {
    "speech": 150,
    "poi_question": 15,
    "poi_answer": 25,
    "devil": 120,
    "summary": 120,
    "rebuttal": 120,
    "verdict": 100,
}
# The budgets of the structured replies; a limited step's comes from its limit.
TOKENS = {"judge": 220, "brief": 900}
# What the Completeness Judge's decision is read as, before its reasoning is asked: the
# rulebook's score as a distribution over the whole numbers 0–10 (its expected value is the
# round's score), or each checklist item as P(yes).
SCORES = tuple(range(11))
ITEMS = tuple(k for k in CompletenessRubric.model_fields if k != "reasoning")
YES_NO = ("yes", "no")


def decisions(rubric: str) -> dict[str, Decide]:
    """The judge's fields read as probabilities, for RUBRIC."""
    if rubric == "score":
        return {"score": Decide(SCORES, expected=True)}
    return {item: Decide(YES_NO, written=(True, False)) for item in ITEMS}


LABELS: dict[str, dict[str, str]] = {
    "en": {
        "proposition": "🔵 Proposition",
        "opposition": "🔴 Opposition",
        "devil": "🟡 Devil's Advocate",
        "chair": "⚖️ Chair",
        "summary": "⚖️ Round Summary",
        "judge": "Completeness Judge",
        "poi": "Point of Information",
        "closing": "💜 Closing Rebuttals",
        "verdict": "⚖️ Chair's Verdict",
        "brief": "📋 Debate Brief",
        "pro": "🔵 Proposition Case",
        "con": "🔴 Opposition Case",
        "rebuttals": "💜 Key Rebuttal Lines",
        "attacks": "🟡 Likely Floor Attacks",
        "balance": "⚖️ Balanced Assessment",
        "converged": "✅ Converged (score reached the threshold)",
        "hard_cap": "⚠️ Hard cap reached",
        "accepted": "accepted",
        "declined": "declined",
        "motion": "Motion",
        "round": "Round {n}",
    },
    "zh": {
        "proposition": "🔵 正方",
        "opposition": "🔴 反方",
        "devil": "🟡 魔鬼辩手",
        "chair": "⚖️ 中立主席",
        "summary": "⚖️ 本轮总结",
        "judge": "完整性裁判",
        "poi": "信息点提问",
        "closing": "💜 总结陈词",
        "verdict": "⚖️ 主席裁决",
        "brief": "📋 辩论简报",
        "pro": "🔵 正方论点",
        "con": "🔴 反方论点",
        "rebuttals": "💜 关键反驳语句",
        "attacks": "🟡 可能的场内攻击",
        "balance": "⚖️ 平衡评估",
        "converged": "✅ 已收敛（得分达到阈值）",
        "hard_cap": "⚠️ 已达轮数上限",
        "accepted": "接受",
        "declined": "拒绝",
        "motion": "辩题",
        "round": "第{n}轮",
    },
}

# The seats and steps as a document names them (where a turn it is built on was degraded).
NAMES: dict[str, dict[str, str]] = {
    "en": {
        "proposition": "Proposition",
        "opposition": "Opposition",
        "devil": "Devil's Advocate",
        "chair": "Chair",
        "judge": "Judge",
        "speech": "speech",
        "poi_question": "point of information",
        "poi_answer": "answer to a point of information",
        "devil_attack": "intervention",
        "round_summary": "round summary",
        "judge_step": "completeness score",
        "rebuttal": "closing rebuttal",
        "verdict": "verdict",
        "brief": "brief",
    },
    "zh": {
        "proposition": "正方",
        "opposition": "反方",
        "devil": "魔鬼辩手",
        "chair": "中立主席",
        "judge": "完整性裁判",
        "speech": "发言",
        "poi_question": "信息点提问",
        "poi_answer": "信息点提问的回答",
        "devil_attack": "攻击",
        "round_summary": "本轮总结",
        "judge_step": "完整性评分",
        "rebuttal": "总结陈词",
        "verdict": "主席裁决",
        "brief": "辩论简报",
    },
}

EXAMPLE_MOTIONS = {
    "en": (
        "This House Believes That Artificial Intelligence Will Be Humanity's Last Great Invention",
        "This House Will Under No Circumstances Fight for Its King and Its Country",
        "This House Has No Confidence in His Majesty's Government",
    ),
    "zh": (
        "本院认为人工智能将是人类最后一项伟大发明",
        "本院认为年轻人应当生育",
        "本院对现任政府表示不信任",
    ),
}


def label(language: str, key: str) -> str:
    return LABELS[language][key]


@dataclass
class _State:
    summary: str | None = None
    attacks: list[str] = field(default_factory=list)


def run(engine: Engine, motion: str, params: OxfordParams) -> dict[str, Any]:
    """The whole debate: rounds until the judge is satisfied or the cap, then closing, brief."""
    lang = engine.language
    state = _State()
    common = {"motion": motion, "language": lang, "limits": LIMITS}
    stop: StopReason = "hard_cap"
    for rnd in range(1, params.max_rounds + 1):
        speeches = _round(engine, rnd, state, common)
        score = -1.0
        if rnd >= 2:
            score = _judge(engine, rnd, speeches, common, params.min_score, params.judge_rubric)
        if score >= params.min_score:
            stop = "converged"
            break
    engine.stop(stop)
    # The closing speeches and the brief come after the rounds: they carry no round number.
    closing = _closing(engine, state, common)
    brief = _brief(engine, state, closing, common)
    return brief.model_dump() if brief is not None else {}


def _round(engine: Engine, rnd: int, state: _State, common: dict[str, Any]) -> dict[str, str]:
    lang = engine.language
    # The Proposition's speech opens the round's conversation; the steps that see it go on
    # from it (`follows`), so its model reuses what generating it computed.
    prop = engine.speak(
        "proposition",
        "speech",
        round=rnd,
        label=label(lang, "proposition"),
        limit=LIMITS["speech"],
        side="proposition",
        summary=state.summary,
        **common,
    )
    _point_of_information(engine, rnd, common, asker="opposition", target="proposition", after=prop)
    opp = engine.speak(
        "opposition",
        "speech",
        round=rnd,
        label=label(lang, "opposition"),
        limit=LIMITS["speech"],
        side="opposition",
        follows=prop,
        after="proposition_speech",
        **common,
    )
    _point_of_information(engine, rnd, common, asker="proposition", target="opposition", after=opp)
    devil = engine.speak(
        "devil",
        "devil_attack",
        round=rnd,
        label=label(lang, "devil"),
        limit=LIMITS["devil"],
        follows=opp,
        after="opposition_speech",
        **common,
    ).text
    state.attacks.append(devil)
    # The Chair sees this round's three speeches, not the summary so far.
    state.summary = engine.speak(
        "chair",
        "round_summary",
        round=rnd,
        label=label(lang, "summary"),
        limit=LIMITS["summary"],
        proposition_speech=prop.text,
        opposition_speech=opp.text,
        devil_attack=devil,
        **common,
    ).text
    return {"proposition": prop.text, "opposition": opp.text}


def _point_of_information(
    engine: Engine, rnd: int, common: dict[str, Any], *, asker: str, target: str, after: Turn
) -> None:
    """The asker's question at the weakest claim of the speech AFTER (its conversation goes
    on); a model accepts it 60 % of the time by a seeded draw (drawn first: the question's
    heading says it), a person once they read it. A person offering a point the draw
    declines is told so, and not asked for a question no one will hear."""
    lang = engine.language
    heading = f"{label(lang, 'poi')} {label(lang, asker)} → {label(lang, target)}"
    person = engine.is_human(target)
    accepted = None if person else engine.draw(POI_ACCEPT, "poi", rnd, asker)
    if accepted is False and engine.is_human(asker):
        engine.notice(f"{heading}: {label(lang, 'declined')}")
        return
    outcome = (
        "" if accepted is None else f" ({label(lang, 'accepted' if accepted else 'declined')})"
    )
    asked = engine.speak(
        asker,
        "poi_question",
        round=rnd,
        accepted=accepted,
        label=heading + outcome,
        limit=LIMITS["poi_question"],
        one_question=True,
        side=asker,
        target=target,
        # Asked on the target's speech, whose conversation holds the Proposition's persona
        # (its speech opens it): the Proposition's persona is not repeated, the
        # Opposition's is new to it.
        introduced=asker == "proposition",
        follows=after,
        after=f"{target}_speech",
        **common,
    )
    if person:
        accepted = engine.decide(target, asked, POI_ACCEPT, "poi", rnd, asker, label=heading)
        said = label(lang, "accepted" if accepted else "declined")
        engine.notice(f"{heading}: {said}")
    if accepted:
        engine.speak(
            target,
            "poi_answer",
            round=rnd,
            label=f"{label(lang, target)} ↩",
            limit=LIMITS["poi_answer"],
            side=target,
            asker=asker,
            question=asked.text,
            introduced=True,  # the target's own speech is above, after its persona
            follows=asked,
            after=f"{asker}_poi",
            **common,
        )


def _judge(
    engine: Engine,
    rnd: int,
    speeches: dict[str, str],
    common: dict[str, Any],
    threshold: float,
    rubric: str = "checklist",
) -> float:
    """Completeness 0–10: the judge's own score (`--judge-rubric score`, the rulebook's), or
    its checklist gated by checks code can make for sure (`checklist`)."""
    schema: type[CompletenessReply | CompletenessRubric] = (
        CompletenessReply if rubric == "score" else CompletenessRubric
    )
    reply, turn = engine.structured_or_fail(
        "judge",
        "judge",
        schema,
        round=rnd,
        label=label(engine.language, "judge"),
        max_tokens=TOKENS["judge"],
        decide=decisions(rubric),
        rubric=rubric,
        proposition_speech=speeches["proposition"],
        opposition_speech=speeches["opposition"],
        **common,
    )
    if reply is None:  # the judge failed (its turn says why): this round is not scored
        return -1.0
    score = completeness(reply, speeches, common["motion"], turn.choices)
    engine.record_score(rnd, score.model_dump(exclude_defaults=True), threshold)
    return score.score


def completeness(
    reply: CompletenessReply | CompletenessRubric,
    speeches: dict[str, str],
    motion: str,
    choices: dict[str, dict[str, Any]] | None = None,
) -> CompletenessScore:
    """The round's completeness score from the judge's REPLY and the values read from it
    as probabilities (CHOICES, the turn's; None: the reply's own values decide).

    The rulebook's reply is the score: the expected score under the judge's distribution
    over 0–10 where it was read. A checklist is scored by code: score = 10 × (share of
    code checks passed) × (½ + ½ × mean weight of the rubric's items), an item's weight its
    P(yes) where read (else 1 or 0), so a round of empty or off-topic speeches scores low
    whatever the judge says, and a round that passes every check scores 5 to 10 by the
    judge's checklist. Every term is linear in the weights: the score is the expected one.
    """
    read = choices or {}
    method = next((str(c.get("method")) for c in read.values()), None)
    if isinstance(reply, CompletenessReply):
        distribution = dict(read["score"]["probabilities"]) if "score" in read else {}
        return CompletenessScore(
            score=reply.score, reasoning=reply.reasoning, distribution=distribution, method=method
        )
    rubric = reply
    checks = {
        f"{side}_{name}": ok
        for side, text in speeches.items()
        for name, ok in speech_checks(text, motion).items()
    }
    answered = rubric.model_dump(exclude={"reasoning"})
    items: dict[str, float | bool] = {
        item: _p_yes(read[item]) if item in read else answered[item] for item in answered
    }
    code_share = sum(checks.values()) / len(checks)
    rubric_share = sum(float(w) for w in items.values()) / len(items)
    score = round(10 * code_share * (0.5 + 0.5 * rubric_share), 1)
    return CompletenessScore(
        score=score, reasoning=rubric.reasoning, rubric=items, checks=checks, method=method
    )


def _p_yes(choice: dict[str, Any]) -> float:
    """An item's weight: the probability read for yes (a reply's own true counts as 1)."""
    probabilities = choice.get("probabilities") or {}
    if "yes" in probabilities:
        return round(float(probabilities["yes"]), 4)
    return 1.0 if {"True", "true"} & {k for k, p in probabilities.items() if p} else 0.0


def _closing(engine: Engine, state: _State, common: dict[str, Any]) -> dict[str, Turn]:
    lang = engine.language
    closing = label(lang, "closing")
    prop = engine.speak(
        "proposition",
        "rebuttal",
        round=None,
        limit=LIMITS["rebuttal"],
        label=f"{closing} · {label(lang, 'proposition')}",
        side="proposition",
        summary=state.summary,
        **common,
    )
    opp = engine.speak(
        "opposition",
        "rebuttal",
        round=None,
        limit=LIMITS["rebuttal"],
        label=f"{closing} · {label(lang, 'opposition')}",
        side="opposition",
        follows=prop,
        after="proposition_rebuttal",
        **common,
    )
    # The verdict sees both rebuttals, not the summary.
    engine.speak(
        "chair",
        "verdict",
        round=None,
        label=label(lang, "verdict"),
        limit=LIMITS["verdict"],
        proposition_rebuttal=prop.text,
        opposition_rebuttal=opp.text,
        **common,
    )
    return {"proposition": prop, "opposition": opp}


def _brief(
    engine: Engine, state: _State, closing: dict[str, Turn], common: dict[str, Any]
) -> Brief | None:
    """The brief, on a record of its own: the final summary, both rebuttals, the attacks;
    None where the judge gave none (a timeout, a reply still invalid when asked again): its
    seat failed, not the debate, which ends unjudged on a brief that says so. (Going on the
    closing's conversation, SmolLM2 wrote a Chinese brief of gibberish where on its own
    record it wrote one that says something: the saving, one record a debate, is not
    worth a worse brief.)"""
    brief, _ = engine.structured_or_fail(
        "judge",
        "brief",
        Brief,
        round=None,
        label=label(engine.language, "brief"),
        max_tokens=TOKENS["brief"],
        summary=state.summary,
        proposition_rebuttal=closing["proposition"].text,
        opposition_rebuttal=closing["opposition"].text,
        attacks="\n---\n".join(state.attacks),
        **common,
    )
    return brief


def render_brief(
    motion: str,
    language: str,
    brief: dict[str, Any],
    stop_reason: str,
    *,
    notes: list[str] | None = None,
) -> str:
    """The brief document: header with the motion (and NOTES: the degraded turns it is built
    on), five sections in order (none where the judge gave no brief), the stop reason."""
    sections = [
        (label(language, key), str(brief[key]))
        for key in ("pro", "con", "rebuttals", "attacks", "balance")
        if key in brief
    ]
    title = f"{label(language, 'brief')} — {motion}"
    return render_markdown(title, sections, footer=label(language, stop_reason), notes=notes or [])


def built_on(transcript: Transcript) -> list[str]:
    """The brief's header lines on the degraded turns of the debate: its own reply first."""
    names = NAMES.get(transcript.language, NAMES["en"])
    last = int(transcript.params.get("max_rounds") or OxfordParams().max_rounds)
    return degraded_notes(
        degraded(transcript.turns, closing=CLOSING, last=last),
        transcript.language,
        seat=lambda role: names.get(role, role),
        step=lambda step: names.get("judge_step" if step == "judge" else step, step),
        own=("brief",),
        document=names["brief"],
    )


def sample_variables() -> dict[str, dict[str, Any]]:
    """Variables that exercise every step of the pack (used to validate a user's pack)."""
    base = {
        "motion": "This House Believes That tests matter",
        "language": "en",
        "limits": LIMITS,
        "summary": "s",
        "round": 2,
    }
    speeches = {"proposition_speech": "p", "opposition_speech": "o"}
    rebuttals = {"proposition_rebuttal": "a", "opposition_rebuttal": "b"}
    return {
        "record": {**base, **speeches, "devil_attack": "d", **rebuttals, "attacks": "x"},
        "persona_proposition": base,
        "persona_opposition": base,
        "persona_devil": base,
        # The steps that go on an earlier step's conversation get `after` (and record.j2
        # its other branch); `record` above is checked with everything shown.
        "speech": {**base, "side": "opposition", "after": "proposition_speech"},
        "poi_question": {
            **base,
            "side": "opposition",
            "target": "proposition",
            "after": "proposition_speech",
        },
        "poi_answer": {
            **base,
            "side": "proposition",
            "asker": "opposition",
            "question": "q",
            "introduced": True,
            "after": "opposition_poi",
        },
        "devil_attack": {**base, "after": "opposition_speech"},
        "round_summary": {**base, **speeches, "devil_attack": "d"},
        "judge": {**base, **speeches, "rubric": "score"},
        # The steps after the rounds carry no round number.
        "rebuttal": {
            **base,
            "round": None,
            "side": "opposition",
            "after": "proposition_rebuttal",
        },
        "verdict": {**base, "round": None, **rebuttals},
        "brief": {**base, "round": None, **rebuttals, "attacks": "x"},
    }


def render(transcript: Transcript) -> str:
    return render_brief(
        transcript.motion,
        transcript.language,
        transcript.result or {},
        transcript.stop_reason or "hard_cap",
        notes=built_on(transcript),
    )


def seat_labels(params: OxfordParams, language: str) -> dict[str, str]:
    """Each seat as the debate's steps call it: the sides by their labels, the Chair, and
    the Completeness Judge (who writes the brief too)."""
    return {role: label(language, role) for role in ROLES}


def outcome(transcript: Transcript, models: Mapping[str, str]) -> str:
    """The Chair's verdict, its first sentence; without one, the brief's balanced
    assessment's."""
    lang = transcript.language if transcript.language in LABELS else "en"
    colon = "：" if lang == "zh" else ": "
    verdict = next((t.text for t in transcript.turns if t.step == "verdict" and t.text.strip()), "")
    if verdict:
        return label(lang, "verdict") + colon + gist(verdict)
    balance = str((transcript.result or {}).get("balance") or "")
    return label(lang, "balance") + colon + gist(balance) if balance.strip() else ""


def quoted_words(max_rounds: int) -> int:
    """The most one prompt quotes: the record holds one round (the summary, both speeches,
    a point and its answer, the Devil's Advocate) and the closing rebuttals, and the brief
    also every round's attack."""
    one_round = LIMITS["summary"] + 2 * LIMITS["speech"] + LIMITS["devil"]
    point = LIMITS["poi_question"] + LIMITS["poi_answer"]
    return one_round + point + 2 * LIMITS["rebuttal"] + max_rounds * LIMITS["devil"]


def judged_completeness(r: Reading) -> float:
    """The score code derives from a judge's completeness reply (re-judging reads it)."""
    assert isinstance(r.reply, CompletenessRubric | CompletenessReply)
    speeches = {side: r.variables[f"{side}_speech"] for side in ("proposition", "opposition")}
    return completeness(r.reply, speeches, r.variables["motion"]).score


def judged_stop(r: Reading) -> object:
    """The judge's real decision: whether the rounds stop."""
    assert isinstance(r.params, OxfordParams)
    return judged_completeness(r) >= r.params.min_score


FORMAT = Format(
    name="oxford",
    steps=STEPS,
    params_type=OxfordParams,
    options=OxfordParams,
    cast=lambda params: Cast(roles=ROLES, temperatures=TEMPERATURES, sides=SIDES),
    run=run,
    render=render,
    sample_variables=sample_variables,
    motion=normalise_motion,
    quoted_words=lambda params: quoted_words(params.max_rounds),
    # The brief is written, not judged: a new judge is asked the completeness checks.
    judging=Judging(
        ("judge",), verdict=judged_stop, score=judged_completeness, documents=("brief",)
    ),
    seat_labels=seat_labels,
    outcome=outcome,
)
