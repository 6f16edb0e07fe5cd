"""The challenge format's words: labels in the debate's language, its messages, its document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.formats.failures import degraded, degraded_notes
from moot.records.journal import held_round
from moot.records.transcript import Transcript
from moot.words import words

# The CLI's messages are English whatever the debate's language; the rulebook fixes them.
ALL_TIMED_OUT = "[ERROR] Debate failed: all tool invocations timed out."
NO_EXCHANGES = "[ERROR] Debate failed: no successful exchanges were recorded."
UNCONTESTED = {
    "en": "[WARN] Challenger failed. Showing proposer's uncontested position.",
    "zh": "[警告] 挑战方失败。以下是提议方未受质疑的立场。",
}

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "proposer": "Proposer",
        "challenger": "Challenger",
        "summary": "Summariser: summary of the earlier rounds",
        "verdict": "Judge: synthesis",
        "exchange": "Round {n} - {side} ({model}):",
        "title": "Debate Summary",
        "topic": "Topic",
        "rounds_completed": "Rounds completed",
        "of": "{done} of {total}",
        "rigor": "Rigor",
        "rigor_line": "structured perspective comparison, prompt-enforced adversarial rules, "
        "no deterministic verification",
        "verdict_h": "Verdict",
        "quality": "Debate quality",
        "genuine_disagreement": "Genuine disagreement",
        "evidence_quality": "Evidence quality",
        "challenge_depth": "Challenge depth",
        "agreements": "Key agreements",
        "agreement": "{point} (evidence: {evidence})",
        "disagreements": "Key disagreements",
        "disagreement": "{point}: {proposer} argues {x}, {challenger} argues {y}",
        "unnamed": "{proposer} argues {x}, {challenger} argues {y}",
        "stronger": "{winner} had the stronger argument because:",
        "won": "Verdict: {winner} had the stronger argument",
        "unresolved": "Unresolved questions",
        "recommendation": "Recommendation",
        "position": "Proposer's position",
        "no_verdict": "No verdict: the judge failed ({error}).",
        "failures": "Failures",
        "after_rounds": "after the rounds",
        "exchanges": "Exchanges",
        "incomplete": "[WARN] Round {n} is incomplete: the {role} failed ({error}). "
        "The synthesis uses the completed rounds only.",
        "summary_failed": "[WARN] The summariser failed ({error}); the earlier rounds stay "
        "in full.",
        "high": "high",
        "medium": "medium",
        "low": "low",
    },
    "zh": {
        "proposer": "提议方",
        "challenger": "挑战方",
        "summary": "总结者：前几轮的总结",
        "verdict": "裁判：综合评议",
        "exchange": "第{n}轮 - {side}（{model}）：",
        "title": "辩论总结",
        "topic": "议题",
        "rounds_completed": "已完成轮数",
        "of": "{done} / {total}",
        "rigor": "严谨性",
        "rigor_line": "结构化的观点比较，由提示词强制执行的对抗规则，没有确定性验证",
        "verdict_h": "裁决",
        "quality": "辩论质量",
        "genuine_disagreement": "真实分歧",
        "evidence_quality": "证据质量",
        "challenge_depth": "质疑深度",
        "agreements": "主要共识",
        "agreement": "{point}（证据：{evidence}）",
        "disagreements": "主要分歧",
        "disagreement": "{point}：{proposer}主张{x}，{challenger}主张{y}",
        "unnamed": "{proposer}主张{x}，{challenger}主张{y}",
        "stronger": "{winner}的论证更有力，因为：",
        "won": "裁决：{winner}的论证更有力",
        "unresolved": "未解决的问题",
        "recommendation": "建议",
        "position": "提议方的立场",
        "no_verdict": "没有裁决：裁判失败（{error}）。",
        "failures": "失败记录",
        "after_rounds": "各轮之后",
        "exchanges": "辩论记录",
        "incomplete": "[警告] 第{n}轮未完成：{role}失败（{error}）。综合评议只依据已完成的轮次。",
        "summary_failed": "[警告] 总结者失败（{error}）；前几轮保留全文。",
        "high": "高",
        "medium": "中",
        "low": "低",
    },
}


SIDE_LABELS = ("proposer", "challenger")

# The seats and steps as the document's header names them (where a turn was degraded).
NAMES: dict[str, dict[str, str]] = {
    "en": {
        "proposer": "Proposer",
        "challenger": "Challenger",
        "summariser": "Summariser",
        "judge": "Judge",
        "opening": "opening",
        "response": "response",
        "defence": "defence",
        "follow_up": "follow-up",
        "summary": "summary",
        "verdict": "verdict",
    },
    "zh": {
        "proposer": "提议方",
        "challenger": "挑战方",
        "summariser": "总结者",
        "judge": "裁判",
        "opening": "开篇立场",
        "response": "回应",
        "defence": "辩护",
        "follow_up": "追问",
        "summary": "总结",
        "verdict": "裁决",
    },
}


def label(language: str, key: str) -> str:
    return LABELS.get(language, LABELS["en"])[key]


def speaker(language: str, role: str, model: str) -> str:
    return f"{label(language, role)} ({model})"


def exchange(language: str, rnd: int, role: str, model: str) -> str:
    """'Round k - Proposer (model):' — how an earlier exchange is labelled in context."""
    side = label(language, role)
    return label(language, "exchange").format(n=rnd, side=side, model=model)


def agreement(language: str, item: dict[str, Any]) -> str:
    """A key agreement as one line: its point and the evidence behind it."""
    point, evidence = (str(item.get(k, "")) for k in ("point", "evidence"))
    return label(language, "agreement").format(point=point, evidence=evidence)


def disagreement(language: str, item: dict[str, Any]) -> str:
    """A key disagreement as the rulebook's line: "{point}: {proposer} argues X, {challenger}
    argues Y" (a verdict saved before disagreements named their point: without it)."""
    x, y = (_clause(str(item.get(side, ""))) for side in ("proposer", "challenger"))
    sides = {"proposer": label(language, "proposer"), "challenger": label(language, "challenger")}
    point = _clause(str(item.get("point") or ""))
    if not point:
        return label(language, "unnamed").format(x=x, y=y, **sides)
    return label(language, "disagreement").format(point=point, x=x, y=y, **sides)


def _clause(text: str) -> str:
    """A judge's phrase set inside a line: its closing stop, colon or semicolon dropped."""
    return text.strip().rstrip(".;:,。；：，").strip()


def winner_name(language: str, result: dict[str, Any], winner: str) -> str:
    """The winner as the verdict line names it: its side and the model reference it ran."""
    side = result.get(winner) or {}
    tool = side.get("tool") or side.get("model") or "?"
    return f"{label(language, winner)} ({tool})"


def span(language: str, upto: int) -> str:
    """The rounds a summary covers: "round 1", "rounds 1–3" (第1轮, 第1–3轮)."""
    rounds = "1" if upto <= 1 else f"1–{upto}"
    if language == "zh":
        return f"第{rounds}轮"
    return f"round {rounds}" if upto <= 1 else f"rounds {rounds}"


def summary_failed(language: str, error: str) -> str:
    return label(language, "summary_failed").format(error=words(language).shown(error))


def incomplete(language: str, rnd: int, role: str, error: str) -> str:
    """The note on a round that a side's failure left incomplete."""
    why = words(language).shown(error)
    return label(language, "incomplete").format(n=rnd, role=label(language, role), error=why)


def seat_labels(params: object, language: str) -> dict[str, str]:
    """Each seat as the debate names it: the two sides, the summariser, the judge."""
    names = NAMES.get(language, NAMES["en"])
    return {role: names[role] for role in ("proposer", "challenger", "summariser", "judge")}


def outcome(transcript: Transcript, models: Mapping[str, str]) -> str:
    """The judge's verdict: which side, and the model it ran, argued better; an uncontested
    position or a judge that failed says so."""
    lang, result = transcript.language, transcript.result or {}
    verdict = result.get("verdict")
    if result.get("status") == "uncontested":
        return UNCONTESTED.get(lang, UNCONTESTED["en"])
    if not isinstance(verdict, dict):
        judge = [f for f in result.get("failures") or [] if f.get("role") == "judge"]
        error = judge[-1]["error"] if judge else "?"
        return label(lang, "no_verdict").format(error=words(lang).shown(error))
    side = str(verdict.get("winner", ""))
    winner = label(lang, side) if side in SIDE_LABELS else side
    if models.get(side):
        winner = f"{winner} ({models[side]})" if lang != "zh" else f"{winner}（{models[side]}）"
    return label(lang, "won").format(winner=winner)


def render(transcript: Transcript) -> str:
    """The "Debate Summary": header, verdict, quality, agreements, disagreements, the rounds."""
    lang, result = transcript.language, transcript.result or {}
    parts = [
        f"# {label(lang, 'title')}",
        "",
        *[line for note in built_on(transcript) for line in (note, "")],
        *_header(lang, result),
        "",
        *_incomplete(lang, result),
    ]
    verdict = result.get("verdict")
    if result.get("status") == "uncontested":
        parts += [UNCONTESTED.get(lang, UNCONTESTED["en"]), ""]
        opening = next((t.text for t in _exchanges(transcript) if t.role == "proposer"), "")
        parts += [f"## {label(lang, 'position')}", "", opening, ""]
    elif verdict is None:
        judge = [f for f in result.get("failures", []) if f["role"] == "judge"]
        error = judge[-1]["error"] if judge else "?"
        parts += [
            f"## {label(lang, 'verdict_h')}",
            "",
            label(lang, "no_verdict").format(error=words(lang).shown(error)),
        ]
        parts.append("")
    else:
        parts += _verdict(lang, verdict, result)
    parts += _failures(lang, result)
    parts += [f"## {label(lang, 'exchanges')}", ""]
    for t in _exchanges(transcript):
        parts += [f"### {exchange(lang, t.round, t.role, t.model)}", "", t.text or "—", ""]
    return "\n".join(parts)


def built_on(transcript: Transcript) -> list[str]:
    """The header's lines on the degraded turns of the debate: the verdict's own first."""
    names = NAMES.get(transcript.language, NAMES["en"])
    result = transcript.result or {}
    last = int(result.get("max_rounds") or transcript.params.get("rounds") or 5)
    return degraded_notes(
        degraded(transcript.turns, closing=("verdict",), last=last),
        transcript.language,
        seat=lambda role: names.get(role, role),
        step=lambda step: names.get(step, step),
        own=("verdict",),
        document=names["verdict"],
    )


def _header(lang: str, result: dict[str, Any]) -> list[str]:
    rows = [(label(lang, "topic"), str(result.get("topic", "")))]
    for side in ("proposer", "challenger"):
        rows.append((label(lang, side), _who(result.get(side) or {})))
    done = label(lang, "of").format(
        done=result.get("rounds_completed", 0), total=result.get("max_rounds", 0)
    )
    rows += [
        (label(lang, "rounds_completed"), done),
        (label(lang, "rigor"), label(lang, "rigor_line")),
    ]
    return [f"- **{k}:** {v}" for k, v in rows]


def _who(side: dict[str, Any]) -> str:
    """A side as the rulebook's summary names it: its tool (the model reference), then its
    backend and model; a debate saved before sides had a tool: its model and backend."""
    tool, model, backend = side.get("tool"), side.get("model", "?"), side.get("backend", "?")
    if not tool or tool == model:
        return f"{tool or model} ({backend})"
    return f"{tool} ({backend}, {model})"


def _verdict(lang: str, verdict: dict[str, Any], result: dict[str, Any]) -> list[str]:
    stronger = label(lang, "stronger").format(winner=winner_name(lang, result, verdict["winner"]))
    parts = [f"## {label(lang, 'verdict_h')}", ""]
    parts += [f"**{stronger}** {verdict['reasoning']}", "", f"## {label(lang, 'quality')}", ""]
    for key in ("genuine_disagreement", "evidence_quality", "challenge_depth"):
        parts.append(f"- {label(lang, key)}: {label(lang, verdict[key])}")
    parts += ["", f"## {label(lang, 'agreements')}", ""]
    parts += [f"- {agreement(lang, a)}" for a in verdict["agreements"]]
    parts += _none(verdict["agreements"])
    parts += ["", f"## {label(lang, 'disagreements')}", ""]
    parts += [f"- {disagreement(lang, d)}" for d in verdict["disagreements"]]
    parts += _none(verdict["disagreements"])
    parts += ["", f"## {label(lang, 'unresolved')}", ""]
    parts += [f"- {q}" for q in verdict["unresolved"]] + _none(verdict["unresolved"])
    parts += ["", f"## {label(lang, 'recommendation')}", "", verdict["recommendation"], ""]
    return parts


def _none(items: list[Any]) -> list[str]:
    return [] if items else ["—"]


def _failures(lang: str, result: dict[str, Any]) -> list[str]:
    failures = result.get("failures") or []
    if not failures:
        return []
    parts = [f"## {label(lang, 'failures')}", ""]
    last = int(result.get("max_rounds") or 0)
    for f in failures:
        # Only the judge's synthesis comes after the rounds; a summary may come before one.
        rnd = held_round(f["round"], last=last, closing=f["role"] == "judge")
        where = label(lang, "after_rounds") if rnd is None else str(rnd)
        who = NAMES[lang].get(f["role"], f["role"]) if lang != "en" else f["role"]
        parts.append(f"- {where} · {who}: {words(lang).shown(f['error'])}")
    return [*parts, ""]


def _incomplete(lang: str, result: dict[str, Any]) -> list[str]:
    """The note on the round a side's failure cut short (round 1 has its own warning)."""
    rnd = result.get("incomplete_round")
    failures = result.get("failures") or []
    sides = [f for f in failures if f["round"] == rnd and f["role"] in ("proposer", "challenger")]
    if not rnd or not sides or result.get("status") == "uncontested":
        return []
    return [incomplete(lang, rnd, sides[0]["role"], sides[0]["error"]), ""]


def _exchanges(transcript: Transcript) -> list[Any]:
    """The proposer's and the challenger's turns that succeeded, in order."""
    return [
        t
        for t in transcript.turns
        if t.role in ("proposer", "challenger")
        and not (t.note and t.note.startswith("degenerate reply"))
    ]
