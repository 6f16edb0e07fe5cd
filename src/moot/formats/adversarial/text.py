"""The adversarial format's words: labels in the debate's language, context blocks, its document."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from moot.formats.adversarial.schemas import Ballot
from moot.formats.failures import degraded, degraded_notes
from moot.records.journal import held_round
from moot.records.transcript import Transcript
from moot.words import words as moot_words

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "participant": "Participant {n} · {name}",
        "seat": "Participant {n}",
        "judge": "Judge: claim audit",
        "synthesis": "Synthesizer: final answer",
        "title": "Adversarial review",
        "question": "Question",
        "participants": "Participants",
        "stopped": "Stopped",
        "resolved": "resolved after round {n}",
        "cap": "round cap reached ({n} rounds)",
        "winner": "The judge's pick",
        "follows": "Follows up on",
        "final": "Final answer",
        "no_final": "No final answer: the synthesizer failed.",
        "rounds": "Rounds",
        "round": "Round {n}",
        "outcome": "Outcome",
        "audit": "claim audit complete",
        "conflicts": "Critical conflicts",
        "votes": "Votes",
        "failed": "Failed",
        "failures": "Failures",
        "after_rounds": "after the rounds",
        "none": "none",
        "yes": "yes",
        "no": "no",
        "accept": "ACCEPT",
        "object": "OBJECT",
        "no_vote": "no vote",
        "judge_line": "Judge after round {n}: {outcome}",
        "failed_notice": "[WARN] {who} failed: {error}",
        "no_verdict": "no valid verdict from the judge",
        "judge_unresolved": "the judge found it unresolved",
        "audit_incomplete": "the claim audit is incomplete",
        "conflicts_remain": "critical conflicts remain",
        "participant_failed": "a participant failed",
        "not_all_accepted": "not every participant accepted, with a reason",
        "resolved_outcome": "resolved",
        "evidence": "Shared evidence",
        "supplied": "supplied before round {n}",
        "requests": "Evidence requested",
        "requested_notice": "{who} asks for evidence: {request}",
        "asked_title": "Evidence requested before round {n}",
        "asked_how": "Type the path of a text or Markdown file here to show every participant "
        "and the judge as evidence from round {n} on, or press Enter to go on without. "
        "Nothing is sent anywhere: only a file on this machine is read.",
        "asked_prompt": "Evidence file (Enter: go on without)",
        "given_notice": "Evidence from {name} is shown to every seat from round {n} on",
        "evidence_file": "evidence file",
        "evidence_full": "No more evidence can be supplied: this review's room for it is used",
        "evidence_unread": "{why} ({hint}); type another path, or press Enter to go on without",
    },
    "zh": {
        "participant": "参与者{n} · {name}",
        "seat": "参与者{n}",
        "judge": "裁判：论断审核",
        "synthesis": "综合者：最终答案",
        "title": "对抗式评审",
        "question": "问题",
        "participants": "参与者",
        "stopped": "结束原因",
        "resolved": "第{n}轮后达成一致",
        "cap": "已达轮数上限（{n}轮）",
        "winner": "裁判选出的参与者",
        "follows": "接续的问题",
        "final": "最终答案",
        "no_final": "没有最终答案：综合者失败。",
        "rounds": "各轮",
        "round": "第{n}轮",
        "outcome": "结果",
        "audit": "论断审核完成",
        "conflicts": "关键冲突",
        "votes": "投票",
        "failed": "失败",
        "failures": "失败记录",
        "after_rounds": "各轮之后",
        "none": "无",
        "yes": "是",
        "no": "否",
        "accept": "接受",
        "object": "反对",
        "no_vote": "未投票",
        "judge_line": "第{n}轮后裁判：{outcome}",
        "failed_notice": "[警告] {who}失败：{error}",
        "no_verdict": "裁判没有给出有效裁决",
        "judge_unresolved": "裁判认为尚未解决",
        "audit_incomplete": "论断审核未完成",
        "conflicts_remain": "仍有关键冲突",
        "participant_failed": "有参与者失败",
        "not_all_accepted": "并非每位参与者都附理由接受",
        "resolved_outcome": "已解决",
        "evidence": "共享证据",
        "supplied": "第{n}轮前提供",
        "requests": "证据请求",
        "requested_notice": "{who}请求证据：{request}",
        "asked_title": "第{n}轮前的证据请求",
        "asked_how": "在此输入一个文本或 Markdown 文件的路径，"
        + "从第{n}轮起作为证据展示给每位参与者和裁判；或直接按回车，不提供证据，继续。"
        + "不会向任何地方发送内容：只读取本机上的文件。",
        "asked_prompt": "证据文件（按回车不提供，继续）",
        "given_notice": "从第{n}轮起，{name}中的证据展示给每个席位",
        "evidence_file": "证据文件",
        "evidence_full": "无法再提供证据：本次评审留给证据的篇幅已用完",
        "evidence_unread": "无法使用证据文件{path}："
        + "它必须是本机上存在的 UTF-8 文本或 Markdown 文件，不超过{n}字；"
        + "请输入另一个路径，或按回车继续",
    },
}


# The seats and steps as the document's header names them (where a turn was degraded).
NAMES: dict[str, dict[str, str]] = {
    "en": {
        "judge": "Judge",
        "synthesizer": "Synthesizer",
        "answer": "answer",
        "revise": "revision",
        "judge_step": "claim audit",
        "synthesis": "final answer",
    },
    "zh": {
        "judge": "裁判",
        "synthesizer": "综合者",
        "answer": "回答",
        "revise": "修订",
        "judge_step": "论断审核",
        "synthesis": "最终答案",
    },
}


def label(language: str, key: str) -> str:
    return LABELS.get(language, LABELS["en"])[key]


def participant(language: str, role: str, name: str) -> str:
    return label(language, "participant").format(n=role.rsplit("_", 1)[-1], name=name)


def seat(language: str, role: str) -> str:
    """A participant's seat before the review names it by its model: "Participant 1"."""
    return label(language, "seat").format(n=role.rsplit("_", 1)[-1])


def seat_labels(roles: Sequence[str], language: str) -> dict[str, str]:
    """Each seat of a review whose participants hold ROLES, as it is called."""
    names = NAMES.get(language, NAMES["en"])
    shown = {role: seat(language, role) for role in roles}
    return {**shown, "judge": names["judge"], "synthesizer": names["synthesizer"]}


def review_outcome(transcript: Transcript, models: Mapping[str, str]) -> str:
    """The participant the judge picked last, and the model it ran."""
    lang, result = transcript.language, transcript.result or {}
    zh = lang == "zh"
    winner = result.get("winner")
    participants: dict[str, str] = result.get("participants") or {}
    role = next((r for r, name in participants.items() if name == winner), None)
    if not winner:
        who = "—"
    elif role is None:
        who = str(winner)
    else:
        model = models.get(role) or winner
        who = f"{seat(lang, role)}（{model}）" if zh else f"{seat(lang, role)} ({model})"
    return label(lang, "winner") + ("：" if zh else ": ") + who


def failed(language: str, role: str, names: dict[str, str], error: str) -> str:
    if role in names:
        who = participant(language, role, names[role])
    else:
        who = label(language, "synthesis" if role == "synthesizer" else "judge")
    return label(language, "failed_notice").format(who=who, error=moot_words(language).shown(error))


def requested(language: str, role: str, names: dict[str, str], request: str) -> str:
    who = participant(language, role, names[role])
    return label(language, "requested_notice").format(who=who, request=request)


def evidence_asked(language: str, rnd: int, requests: dict[str, str]) -> str:
    """What the user is shown before round RND: who asked for what, and how to answer."""
    lines = [f"## {label(language, 'asked_title').format(n=rnd)}", ""]
    lines += [f"- **{name}:** {request}" for name, request in requests.items()]
    return "\n".join([*lines, "", label(language, "asked_how").format(n=rnd)])


def evidence_prompt(proposal: str) -> str | None:
    """The prompt line for a proposal that asks for evidence (None: another proposal)."""
    first = proposal.split("\n", 1)[0]
    for words in LABELS.values():
        before, after = words["asked_title"].split("{n}")
        if re.fullmatch(f"## {re.escape(before)}\\d+{re.escape(after)}", first):
            return words["asked_prompt"]
    return None


def evidence_unread(language: str, path: str, room: int, why: str, hint: str) -> str:
    """Why a file the user named cannot be used (in Chinese, what it must be)."""
    return label(language, "evidence_unread").format(path=path, n=room, why=why, hint=hint)


def evidence_given(language: str, rnd: int, name: str) -> str:
    return label(language, "given_notice").format(n=rnd, name=name)


def outcome(language: str, code: str) -> str:
    return label(language, "resolved_outcome" if code == "resolved" else code)


def ballot(language: str, vote: Ballot | None) -> str:
    if vote is None or vote.vote is None:
        return label(language, "no_vote")
    return f"{label(language, vote.vote)}: {vote.reason}".rstrip(": ")


def conflicts(language: str, verdict: dict[str, Any] | None) -> str:
    """The judge's critical conflicts, one a line; "" when there is no verdict or none."""
    if not verdict:
        return ""
    return "\n".join(
        f"- {c['claim']} ({', '.join(c['participants'])}): {c['why']}"
        for c in verdict["critical_conflicts"]
    )


def trajectory(
    language: str,
    history: Sequence[dict[str, Any]],
    rounds: Sequence[dict[str, Any]],
    names: dict[str, str],
    chars: int,
) -> str:
    """Rounds before the previous one: each answer cut short, and what the judge found."""
    lines: list[str] = []
    for answers, record in zip(history, rounds, strict=False):
        lines.append(label(language, "round").format(n=record["round"]) + ":")
        for role, answer in answers.items():
            if answer.text:
                lines.append(f"- {names[role]}: {_cut(answer.text, chars)}")
        found = outcome(language, record["outcome"])
        lines.append("- " + label(language, "judge_line").format(n=record["round"], outcome=found))
        lines += [f"  {line}" for line in conflicts(language, record["verdict"]).splitlines()]
    return "\n".join(lines)


def _cut(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[:n].rsplit(" ", 1)[0] + " …"


def render(transcript: Transcript) -> str:
    """The final answer first, then who the judge named, why it stopped, and every round."""
    lang, result = transcript.language, transcript.result or {}
    held = result.get("rounds_held", 0)
    stop = label(lang, "resolved" if result.get("stop_reason") == "resolved" else "cap")
    rows = [
        (label(lang, "question"), str(result.get("question", transcript.motion))),
        (label(lang, "participants"), ", ".join((result.get("participants") or {}).values())),
        (label(lang, "stopped"), stop.format(n=held)),
        (label(lang, "winner"), str(result.get("winner") or "—")),
    ]
    for earlier in result.get("session") or []:
        rows.append((label(lang, "follows"), earlier["question"]))
    shared = _evidence(lang, transcript.params.get("evidence"), result.get("supplied"))
    if shared:
        rows.append((label(lang, "evidence"), shared))
    parts = [f"# {label(lang, 'title')}", ""]
    parts += [line for note in built_on(transcript) for line in (note, "")]
    parts += [*[f"- **{k}:** {v}" for k, v in rows], ""]
    final = result.get("final_answer")
    parts += [f"## {label(lang, 'final')}", "", final or label(lang, "no_final"), ""]
    parts += [f"## {label(lang, 'rounds')}", ""]
    for record in result.get("rounds") or []:
        parts += _round(lang, record)
    parts += _failures(lang, result)
    return "\n".join(parts)


def _failures(lang: str, result: dict[str, Any]) -> list[str]:
    failures = result.get("failures") or []
    if not failures:
        return []
    parts = [f"## {label(lang, 'failures')}", ""]
    last = int(result.get("rounds_held") or 0)
    for f in failures:
        # The synthesizer speaks after the rounds (earlier transcripts gave it the last one).
        rnd = held_round(f["round"], last=last, closing=f["role"] == "synthesizer")
        where = label(lang, "after_rounds") if rnd is None else str(rnd)
        said = moot_words(lang)  # the role and the recorded reason, in the review's language
        parts.append(f"- {where} · {said.name(f['role'])}: {said.shown(f['error'])}")
    return [*parts, ""]


def built_on(transcript: Transcript) -> list[str]:
    """The header's lines on the degraded turns of the review: the final answer's first."""
    lang, result = transcript.language, transcript.result or {}
    names = NAMES.get(lang, NAMES["en"])
    participants: dict[str, str] = result.get("participants") or {}

    def seat(role: str) -> str:
        if role in participants:
            return participant(lang, role, participants[role])
        return names.get(role, role)

    last = int(transcript.params.get("rounds") or result.get("rounds_held") or 6)
    return degraded_notes(
        degraded(transcript.turns, closing=("synthesis",), last=last),
        lang,
        seat=seat,
        step=lambda step: names.get("judge_step" if step == "judge" else step, step),
        own=("synthesis",),
        document=names["synthesis"],
    )


def _round(lang: str, record: dict[str, Any]) -> list[str]:
    parts = [f"### {label(lang, 'round').format(n=record['round'])}", ""]
    parts.append(f"- {label(lang, 'outcome')}: {outcome(lang, record['outcome'])}")
    verdict = record.get("verdict")
    if verdict:
        audit = label(lang, "yes" if verdict["claim_audit_complete"] else "no")
        parts.append(f"- {label(lang, 'audit')}: {audit}")
        found = conflicts(lang, verdict) or label(lang, "none")
        parts.append(f"- {label(lang, 'conflicts')}:")
        parts += [f"  {line}" for line in found.splitlines()]
    for name, vote in (record.get("votes") or {}).items():
        shown = ballot(lang, Ballot(vote["vote"], vote["reason"]))
        parts.append(f"- {label(lang, 'votes')} · {name}: {shown}")
    if record.get("failed"):
        parts.append(f"- {label(lang, 'failed')}: {', '.join(record['failed'])}")
    for name, request in (record.get("requests") or {}).items():
        parts.append(f"- {label(lang, 'requests')} · {name}: {request}")
    return [*parts, ""]


def _evidence(lang: str, given: Any, supplied: Any) -> str:
    """The evidence files by name, each supplied one with the round it was first shown in."""
    zh = lang == "zh"
    names = [Path(str(e.get("name"))).name for e in given or [] if isinstance(e, dict)]
    for item in supplied or []:
        name, when = Path(item["name"]).name, label(lang, "supplied").format(n=item["round"])
        names.append(f"{name}（{when}）" if zh else f"{name} ({when})")
    return ("、" if zh else ", ").join(names)
