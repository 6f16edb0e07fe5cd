"""The decision format's words in both languages, and its document: YAML front matter + sections.

Everything here is rendered by our code from validated replies, so the front matter always
parses as YAML and the six sections always come in the rulebook's order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import Any

import yaml

from moot.formats.failures import Degraded, degraded_notes
from moot.words import words

FRONTMATTER_KEYS = (
    "topic",
    "date",
    "positions",
    "out_of_scope",
    "recommendation",
    "tied_on_axis",
    "confidence",
    "rounds",
    "preset",
    "degraded",  # the turns the document is built on that were flagged or failed
)
SECTIONS = (
    "decision",
    "confidence",
    "key_reasoning",
    "trade_offs",
    "what_would_change",
    "dissent",
)
SEAT_MARKS = {"A": "🔵", "B": "🔴", "C": "🟢", "D": "🟣"}

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "debater": "Debater {slot}",
        "pragmatist": "Pragmatist",
        "middle_ground": "a middle ground between {a} and {b}",
        "framing": "🧭 Framing",
        "opening": "Opening",
        "rebut": "Rebuttal {n}",
        "steelman": "Steelman",
        "steelman_of": "steelman of {position}",
        "judge_decision": "⚖️ Judge · decision",
        "judge_document": "⚖️ Judge · decision document",
        "openings": "Openings",
        "rebuttals": "Rebuttal round {n}",
        "steelmen": "Steelman swap",
        "title": "⚖️ Decision: {topic}",
        "decision": "Decision",
        "confidence": "Confidence",
        "key_reasoning": "Key reasoning",
        "trade_offs": "Irreducible trade-offs",
        "what_would_change": "What would change this decision",
        "record_long": "the record is long: the judge sees each speech up to {clip} chars",
        "correct": "{problem}: correct the positions, or moot stops",
        "dissent": "Dissenting position",
        "recommend": "Recommendation: {position}.",
        "recommend_by": "Recommendation: {position} ({seat} · {model}).",
        "confidence_is": "Confidence: {level}.",
        "tie": "No clear winner on axis {axis}.",
        "failed": "⚠️ {speaker} failed in {phase}: {reason}",
        "judge": "Judge",
        "judge_role": "neutral synthesiser; never argues a side",
        "pinned": "pinned to {position}",
    },
    "zh": {
        "debater": "辩手{slot}",
        "pragmatist": "务实派",
        "middle_ground": "{a} 与 {b} 之间的折中方案",
        "framing": "🧭 议题框定",
        "opening": "开篇陈述",
        "rebut": "第{n}轮反驳",
        "steelman": "立场互换",
        "steelman_of": "为「{position}」辩护",
        "judge_decision": "⚖️ 评审 · 决定",
        "judge_document": "⚖️ 评审 · 决策文档",
        "openings": "开篇陈述",
        "rebuttals": "第{n}轮反驳",
        "steelmen": "立场互换",
        "title": "⚖️ 决策：{topic}",
        "decision": "决定",
        "confidence": "置信度",
        "key_reasoning": "关键理由",
        "trade_offs": "无法消解的权衡",
        "what_would_change": "什么会改变这一决定",
        "dissent": "异议立场",
        "recommend": "建议：{position}。",
        "recommend_by": "建议：{position}（{seat} · {model}）。",
        "confidence_is": "置信度：{level}。",
        "tie": "在「{axis}」这一维度上没有明显赢家。",
        "failed": "⚠️ {speaker}在{phase}中失败：{reason}",
        "judge": "评审",
        "judge_role": "中立的综合者；从不为任何一方辩护",
        "pinned": "固定立场：{position}",
        "record_long": "记录较长：裁判只看每篇发言的前{clip}个字符",
        "correct": "{problem}：请更正立场，否则 moot 将停止",
    },
}
# What a terminal offers when no topic is given: a contested choice, in the debate's language.
EXAMPLE_TOPICS = {
    "en": (
        "Postgres vs MySQL vs SQLite for a small analytics app",
        "Monorepo or polyrepo for a team of twelve",
        "React, Vue or Svelte for a new internal dashboard",
    ),
    "zh": (
        "小型分析应用该用 Postgres、MySQL 还是 SQLite",
        "十二人的团队该用单一仓库还是多仓库",
        "新的内部仪表盘该用 React、Vue 还是 Svelte",
    ),
}
ASK_TOPIC = {
    "en": "No topic given. What is to be decided? Type the choice, or an example's number",
    "zh": "没有给出议题。要决定什么？请输入要比较的选项，或例子的编号",
}

PROPOSAL = {
    "en": {
        "title": "Proposed decision debate",
        "topic": "Topic",
        "positions": "Positions",
        "scope": "Out of scope",
        "none": "none",
        "team": "Team",
        "columns": "| slot | role | model |",
        "preset": "Preset",
        "rounds": "Rebuttal rounds",
        "protocol": "Protocol",
        "output": "Output",
        "saved": "decision.md and transcript.json in the --out folder",
        "ephemeral": "printed here only, nothing saved (add --out DIR to keep it)",
        "openings": "openings",
        "rebuttal": "{n} rebuttal round(s)",
        "swap": "steelman swap",
        "judge": "judge's decision document",
        "help": "Press Enter to accept. To correct, type fields separated by `;`, items by `|`: "
        "`positions: A | B | C; out of scope: X | Y; preset: quick; rounds: 2` "
        "(`out of scope: none` clears the list).",
    },
    "zh": {
        "title": "拟定的决策辩论",
        "topic": "议题",
        "positions": "立场",
        "scope": "不讨论的范围",
        "none": "无",
        "team": "阵容",
        "columns": "| 席位 | 角色 | 模型 |",
        "preset": "预设",
        "rounds": "反驳轮数",
        "protocol": "流程",
        "output": "输出",
        "saved": "decision.md 与 transcript.json，保存在 --out 文件夹",
        "ephemeral": "只在此处显示，不保存（加 --out DIR 可保存）",
        "openings": "开篇陈述",
        "rebuttal": "{n} 轮反驳",
        "swap": "立场互换",
        "judge": "评审的决策文档",
        "help": "直接回车表示接受。如需更正，字段之间用 `;` 分隔，条目之间用 `|` 分隔："
        "`立场: A | B | C; 范围外: X | Y; 预设: quick; 轮数: 2`（`范围外: 无` 清空列表）。",
    },
}
CONFIDENCE_WORDS = {"zh": {"low": "低", "medium": "中", "high": "高"}}
# The steps as the document's header names them (where a turn it is built on was degraded).
STEP_NAMES = {
    "en": {
        "framing": "framing",
        "opening": "opening",
        "rebut": "rebuttal",
        "steelman": "steelman",
        "judge_decision": "decision",
        "judge_document": "decision document",
    },
    "zh": {
        "framing": "议题框定",
        "opening": "开篇陈述",
        "rebut": "反驳",
        "steelman": "立场互换",
        "judge_decision": "决定",
        "judge_document": "决策文档",
    },
}
JUDGE_STEPS = ("judge_decision", "judge_document")  # the document's own replies


def label(language: str, key: str, **values: Any) -> str:
    text = LABELS[language][key]
    return text.format(**values) if values else text


# -- YAML front matter ------------------------------------------------------------------

# No line wrapping: each value stays on its key's line, so `recommendation: Postgres` greps.
_NO_WRAP = 1 << 30
# Line breaks are written escaped in double quotes: PyYAML's other styles would fold them.
_LINE_BREAK = re.compile("[\n\r\x85\u2028\u2029]")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _FrontMatterDumper(yaml.SafeDumper):
    """safe_dump's dumper, with list items indented under their key."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if _LINE_BREAK.search(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontMatterDumper.add_representer(str, _represent_str)


def _yaml_value(key: str, value: Any) -> Any:
    """VALUE as YAML should see it: lists for sequences, and the date as a date."""
    if isinstance(value, list | tuple):
        return list(value)
    if key == "date" and isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)  # read back as a date, which is what it is
        except ValueError:
            return value
    return value


def render_frontmatter(frontmatter: dict[str, Any]) -> str:
    """The keys in the rulebook's order, between --- lines."""
    data = {key: _yaml_value(key, frontmatter[key]) for key in FRONTMATTER_KEYS}
    body = yaml.dump(
        data,
        Dumper=_FrontMatterDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=_NO_WRAP,
    )
    return f"---\n{body}---"


# -- Markdown ---------------------------------------------------------------------------

_BLOCK_START = re.compile(r"^([#>*+=|`~-]|\d+[.)])")


def one_line(text: str) -> str:
    """Model text as one safe Markdown line: no line breaks, no accidental heading or rule."""
    flat = " ".join(str(text).split())
    return "\\" + flat if _BLOCK_START.match(flat) else flat


def seat_name(language: str, role: str) -> str:
    if role.startswith("debater_"):
        return label(language, "debater", slot=role.rsplit("_", 1)[-1].upper())
    return label(language, "judge") if role == "judge" else role


def built_on(language: str, degraded: Sequence[Degraded]) -> list[str]:
    """The header's lines on the degraded turns: the judge's own replies first."""
    steps = STEP_NAMES.get(language, STEP_NAMES["en"])
    return degraded_notes(
        degraded,
        language,
        seat=lambda role: seat_name(language, role),
        step=lambda step: steps.get(step, step),
        own=JUDGE_STEPS,
        document=steps["judge_document"],
    )


def render_document(
    result: dict[str, Any], language: str, *, degraded: Sequence[Degraded] = ()
) -> str:
    """Front matter, a title, what of it is built on DEGRADED turns, then the six sections in
    order, those of a judge's reply that never came left out (and failures, if any)."""
    # The keys are the document's schema; why a turn was degraded is said to its reader, in
    # the document's language (the transcript keeps the English flags).
    shown = words(language).shown
    built = [{**d.record(), "why": shown(d.why)} for d in degraded]
    fm = {**result["frontmatter"], "degraded": built}
    bodies: dict[str, str] = {}  # a section of a judge's reply that never came is left out
    if "decision" in result and "confidence" in result:
        conf, decision = result["confidence"], result["decision"]
        level = conf["level"]
        word = CONFIDENCE_WORDS.get(language, {}).get(level)
        bodies["decision"] = f"**{one_line(decision['headline'])}** {one_line(decision['text'])}"
        # The English level stays greppable in the front matter; the body says it in its words.
        bodies["confidence"] = f"**{word or level}** — {one_line(conf['reason'])}"
    if "dissent" in result:
        dissent = result["dissent"]
        bodies |= {
            "key_reasoning": "\n".join(f"- {one_line(b)}" for b in result["key_reasoning"]),
            "trade_offs": "\n".join(f"- {one_line(b)}" for b in result["trade_offs"]),
            "what_would_change": one_line(result["what_would_change"]),
            "dissent": f"**{one_line(dissent['position'])}** — {one_line(dissent['text'])}",
        }
    parts = [
        render_frontmatter(fm),
        "",
        f"# {one_line(label(language, 'title', topic=fm['topic']))}",
    ]
    for note in built_on(language, degraded):
        parts += ["", note]
    for key in (k for k in SECTIONS if k in bodies):
        parts += ["", f"## {label(language, key)}", "", bodies[key]]
    failures = result.get("failures") or []
    if failures:
        parts += ["", "---", ""]
        parts += [f"- {one_line(f['message'])}" for f in failures]
    return "\n".join(parts) + "\n"
