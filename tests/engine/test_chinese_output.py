"""A Chinese debate shows only Chinese: what `moot run` prints, the document it writes and
`moot check`'s lines hold no English word but names, model ids and numbers.

The debates run through the real command line on its scripted models (`--dry-run`), made to
answer in Chinese: every flag, notice and label moot adds is its own, in the debate's
language, while what it records (a turn's flags in transcript.json) keeps its English keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Cli
from moot.formats.base import RunOptions
from moot.inference import scripted
from moot.inference.protocol import ChatRequest
from moot.records.journal import load
from moot.words import words

# Sentences no two seats share (a sentence another seat said is the other side's words).
CLAUSES = (
    "城市交通拥堵每年浪费大量时间",
    "公共交通投资能够带来长期回报",
    "步行街区让商户收入明显增加",
    "噪音污染损害居民的睡眠质量",
    "老年人出行依赖私家车接送",
    "物流配送需要车辆进入市中心",
    "自行车道建设成本远低于高架路",
    "停车位占用了宝贵的公共空间",
    "空气质量改善能减少呼吸疾病",
    "偏远社区缺少可靠的公交线路",
    "电动汽车正在降低尾气排放",
    "限行政策在多个城市效果有限",
)

# What may be English in a Chinese debate's output: names and model ids. `moot` is the
# program; `echo:smollm2-135m` the dry run's model; `scripted` the backend of a dry run, as
# `llama.cpp` is a real one's; the files moot writes.
# The model a Chinese debate on the default model is told of (it was made for Chinese).
NAMES = ("echo:", "smollm2-135m", "gemma3-270m", "moot", "scripted", "transcript.json")
NAMES += ("debate.md", "decision.md")
_WORD = re.compile(r"[A-Za-z]{2,}")


class Chinese:
    """A scripted model that speaks Chinese: distinct sentences in every speech, every
    structured reply's prose in Chinese, and a few replies that break the rules so that
    moot's notices and flags are shown (a point of information that asks nothing, a speech
    that drifts into English)."""

    def __init__(self) -> None:
        self.n = 0

    def sentences(self, k: int) -> str:
        said = []
        for _ in range(k):
            self.n += 1
            said.append(f"{CLAUSES[self.n % len(CLAUSES)]}，第{self.n}条理由说明这一点。")
        return "".join(said)

    def speech(self, request: ChatRequest) -> str:
        if self.n % 5 == 4:  # drifts into English: ended before it does
            return self.sentences(1) + "This turns into English and keeps going for a while."
        return self.sentences(2)

    def reply(self, schema: Any) -> dict[str, Any]:
        js = schema.model_json_schema()
        return self._value(js, js.get("$defs", {}))

    def _value(self, node: dict[str, Any], defs: dict[str, Any]) -> Any:
        if "$ref" in node:
            return self._value(defs[node["$ref"].split("/")[-1]], defs)
        if "enum" in node:
            return node["enum"][0]
        if "const" in node:
            return node["const"]
        if "anyOf" in node:
            return self._value(node["anyOf"][0], defs)
        kind = node.get("type")
        if kind == "object":
            return {k: self._value(v, defs) for k, v in node.get("properties", {}).items()}
        if kind == "array":
            count = max(1, node.get("minItems", 0))
            return [self._value(node["items"], defs) for _ in range(count)]
        if kind == "string":
            return self.sentences(1)[: node.get("maxLength", 200)]
        if kind in ("number", "integer"):
            return node.get("maximum", node.get("minimum", 0))
        return True if kind == "boolean" else None

    def uncontested(self, schema: Any) -> dict[str, Any]:
        """Its reply, finding the topic no contested choice (the decision format's refusal)."""
        reply = self.reply(schema)
        return {**reply, "contested": False} if "contested" in reply else reply


@pytest.fixture
def chinese(monkeypatch: pytest.MonkeyPatch) -> Chinese:
    """The dry run's scripted models, answering in Chinese."""
    model = Chinese()
    monkeypatch.setattr(scripted, "_echo", model.speech)
    monkeypatch.setattr(scripted, "_minimal", model.reply)
    return model


def english(text: str, *, also: tuple[str, ...] = ()) -> list[str]:
    """The English words of TEXT, names and model ids (NAMES, ALSO) left out. Lines are
    joined first: the terminal wraps a long path or model id anywhere (in a quote, after
    its bar)."""
    text = re.sub(r"[ \t]*\n[ \t▌]*", "", text)
    for name in sorted((*NAMES, *also), key=len, reverse=True):
        text = text.replace(name, " ")
    return _WORD.findall(text)


def body(markdown: str) -> str:
    """A document (or the terminal that shows it) without its YAML front matter: the
    decision rulebook's fixed keys (`topic:`, `confidence: low`) and the turns its header
    names (`role: debater_c`, a flag's key), data for grep, not words shown to a reader;
    nor its HTML comments (the mark the speeches begin at), which a reader never sees."""
    return _COMMENT.sub("", _FRONT_MATTER.sub("", markdown, count=1))


_FRONT_MATTER = re.compile(r"^---\n.*?\n---\n", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


RUNS = {
    "oxford": ["城市应该禁止汽车吗", "--max-rounds", "3", "--min-score", "5"],
    "decision": [
        "城市应该禁止汽车还是限制汽车",
        "--positions",
        "禁止汽车",
        "--positions",
        "限制汽车",
    ],
    "challenge": ["城市应该禁止汽车吗", "--rounds", "2"],
    "adversarial": ["城市应该禁止汽车吗", "--rounds", "2"],
}


def run(cli: Cli, tmp_path: Path, fmt: str, extra: tuple[str, ...] = ()) -> tuple[str, Path]:
    out = tmp_path / fmt
    args = [*RUNS[fmt], "--format", fmt, "--dry-run", "--yes", "--seed", "3", "--out", str(out)]
    done = cli("run", *args, *extra, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr, out


@pytest.mark.parametrize("fmt", list(RUNS))
def test_a_chinese_debate_shows_no_english(
    fmt: str, cli: Cli, tmp_path: Path, chinese: Chinese, dry_models: tuple[str, str]
) -> None:
    extra = tuple(a for m in dry_models for a in ("--model", m)) if fmt == "adversarial" else ()
    printed, out = run(cli, tmp_path, fmt, extra)
    saved, _ = load(out / "transcript.json")
    assert saved.language == "zh"
    ids = tuple(str(p) for p in (*dry_models, out, tmp_path))
    assert english(body(printed), also=ids) == [], printed
    document = next(out.glob("*.md")).read_text(encoding="utf-8")
    assert english(body(document), also=ids) == [], document
    checked = cli("check", str(out / "transcript.json"))
    assert english(checked.stdout) == [], checked.stdout


def test_the_rules_broken_are_flagged_in_english_and_shown_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese
) -> None:
    """The Oxford debate above breaks rules on purpose: its turns record their flags by
    their English keys (a saved debate is read by them), and every one is shown in Chinese
    in the live view, the brief's header and `moot check`."""
    printed, out = run(cli, tmp_path, "oxford")
    saved, _ = load(out / "transcript.json")
    flags = [f for t in saved.turns for f in t.flags]
    assert any(f.startswith("changed into English") for f in flags)
    assert any("not a question" in f for f in flags)
    printed = "".join(printed.split())
    assert "在15字内没有提出问题；重新生成" in printed
    assert "转为英文：在转换之前结束" in printed
    brief = (out / "debate.md").read_text(encoding="utf-8")
    assert "（有一句话超过15字的限制：在限制处截断；不是问题）" in brief
    checked = cli("check", str(out / "transcript.json"))
    table = "".join(checked.stdout.split())  # however the terminal wrapped it
    assert "有一句话超过15字的限制" in table and "以完整的句子结尾" in table
    report = json.loads(cli("check", str(out / "transcript.json"), "--json").stdout)
    assert any("not a question" in f for t in report["turns"] for f in t["flags"])


def _recorded() -> Iterator[str]:
    """Flags, notes and problems as the engine and the checks write them."""
    from moot.engine.audit import speech_problems
    from moot.engine.rules import fit, fit_question, opening_problem, voice_for
    from moot.formats.oxford.flow import SIDES
    from moot.inference.protocol import degeneracy

    long = "城" * 40 + "。"
    yield fit(long, 15, ended=True).flag or ""
    yield fit_question(long, 15, ended=True).flag or ""
    voice = voice_for(
        SIDES["opposition"], "zh", ["远程办公让员工省下通勤时间，研究表明产出更高。"], "题"
    )
    for text in (
        "当然！下面是我的发言。",
        "远程办公让员工省下通勤时间，研究表明产出更高。",
        "This is English from the first word to the last.",
    ):
        problem = opening_problem(text, voice)
        if problem:
            yield problem[1]
        yield from speech_problems(text, voice)
    yield f"degenerate reply: {degeneracy('')}"
    yield "hollow reply: reasoning says nothing: '好'"
    yield "over the limit: 30 of 25 字, kept as the speaker's"
    yield "time ran out: submitted as it stood"
    yield "in English, not the debate's language"
    yield "an opening in English removed"
    yield "every sentence broke the rulebook's voice rules: kept as said"


def test_every_kind_of_flag_has_its_chinese_words() -> None:
    recorded = [r for r in _recorded() if r]
    assert len(recorded) >= 12
    shown = [words("zh").shown(r) for r in recorded]
    left = {r: english(s) for r, s in zip(recorded, shown, strict=True)}
    assert {r: w for r, w in left.items() if w} == {}
    assert words("en").shown(recorded[0]) == recorded[0]  # English shows what it records


def test_a_chinese_decision_says_in_chinese_why_its_topic_cannot_be_debated(
    cli: Cli, tmp_path: Path, chinese: Chinese, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The framing's refusal, a notice before the run stops, is in the debate's language."""

    monkeypatch.setattr(scripted, "_minimal", chinese.uncontested)
    args = ["城市应该禁止汽车吗", "--format", "decision", "--dry-run", "--yes"]
    done = cli("run", *args, home=tmp_path / "home")
    assert done.returncode == 2
    printed = "".join(done.stdout.split())
    assert "议题不是在几个具名立场之间的有争议的选择：城市应该禁止汽车吗：请更正立场" in printed
    assert english(done.stdout) == [], done.stdout


def test_a_chinese_review_says_in_chinese_why_a_participant_failed(
    cli: Cli,
    tmp_path: Path,
    chinese: Chinese,
    dry_models: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A participant whose reply is empty fails that turn; its reason, recorded in English,
    is said in Chinese in the notice and in the review's list of failures."""

    def speech(request: ChatRequest) -> str:
        return "" if request.session == "participant_2" else chinese.speech(request)

    monkeypatch.setattr(scripted, "_echo", speech)
    extra = tuple(a for m in dry_models for a in ("--model", m))
    printed, out = run(cli, tmp_path, "adversarial", extra)
    saved, _ = load(out / "transcript.json")
    failures = (saved.result or {})["failures"]
    assert failures and failures[0]["error"].startswith("degenerate reply")
    assert "[警告]" in printed and "失败：无效回答：回答为空" in "".join(printed.split())
    document = (out / "debate.md").read_text(encoding="utf-8")
    assert "参与者2: 无效回答：回答为空" in document
    ids = tuple(str(p) for p in (*dry_models, out, tmp_path))
    assert english(body(printed), also=ids) == [], printed
    assert english(body(document), also=ids) == [], document


def test_the_page_shows_a_chinese_debates_flags_in_chinese() -> None:
    """The page reads a turn's flags and note from the server: in the debate's language,
    while the turn itself keeps their English keys."""
    from moot.events import TurnFinished
    from moot.records.transcript import Turn
    from moot.web import wire

    flag = "one sentence longer than the limit of 15: cut at the limit; not a question"
    turn = Turn(
        index=1, round=1, role="opposition", step="poi_question", model="m", temperature=0.7,
        text="谁来付钱？", flags=[flag], note="degenerate reply: the reply is empty",
    )  # fmt: skip
    shown = wire.event(TurnFinished(turn, "信息点提问"), "zh")["turn"]
    assert shown["flags"] == ["有一句话超过15字的限制：在限制处截断；不是问题"]
    assert shown["note"] == "无效回答：回答为空"
    assert turn.flags == [flag]
    assert wire.turn(turn)["flags"] == [flag]  # an English debate's page: as recorded


def test_a_chinese_proposal_is_offered_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """At a terminal, a decision's proposal ends on a prompt in the debate's language."""
    import io

    import typer
    from rich.console import Console

    from moot.cli.run import _asker

    asked: list[str] = []
    monkeypatch.setattr(typer, "prompt", lambda text, **_: asked.append(text) or "")
    console = Console(file=io.StringIO())
    assert _asker(console, "zh")("## 拟定的决策辩论\n\n- **议题:** 租房还是买房") == ""
    assert _asker(console, "en")("## Proposed decision debate") == ""
    assert asked == ["直接回车表示接受，或输入更正", "Press Enter to accept, or type corrections"]


def test_a_chinese_debate_stopped_by_ctrl_c_says_so_in_chinese(tmp_path: Path) -> None:
    from moot.cli.run import _interrupted
    from moot.debates.settings import DebateSetup
    from moot.formats import get_format

    fmt = get_format("oxford")
    setup = DebateSetup(
        format=fmt, motion="本院认为城市应该禁止汽车", language="zh", seed=1,
        params=fmt.params(RunOptions()), out_dir=tmp_path / "d1",
    )  # fmt: skip
    (tmp_path / "d1").mkdir()
    (tmp_path / "d1" / "journal.jsonl").write_text('{"type": "debate"}\n')  # its header
    line = _interrupted(setup, seated=True)
    assert (
        "已中断" in line and f"`moot resume {tmp_path / 'd1'}` 会再次请你完成当时那一轮发言" in line
    )
    assert english(line, also=(str(tmp_path), "journal.jsonl", "yellow", "resume")) == []


def test_the_page_has_words_for_every_reason_a_debate_stops() -> None:
    """The page says why the rounds ended in the debate's language, for every stop reason
    a transcript can hold (each key once in English and once in Chinese)."""
    from typing import get_args

    from moot.records.transcript import StopReason

    static = REPO / "src" / "moot" / "web" / "static"
    labels = (static / "i18n.js").read_text(encoding="utf-8")
    shown = (static / "debate.js").read_text(encoding="utf-8")
    for reason in get_args(StopReason):
        assert labels.count(f"    stop_{reason}: ") == 2, reason
        assert f'"{reason}"' in shown, reason


def test_a_person_in_a_chinese_debate_is_asked_in_chinese(tmp_path: Path) -> None:
    """The Opposition typed from piped input: what the seat sees and each step's limit are
    headed in Chinese."""
    import os
    import subprocess
    import sys

    said = ""
    for rnd in range(1, 4):
        said += f"第{rnd}轮谁来付钱？\n.\n第{rnd}轮先修公交，再谈禁车。\n.\n拒绝\n"
    said += "总结：先投资公交，再禁止汽车。\n.\n"
    args = ["本院认为城市应该禁止汽车", "--dry-run", "--max-rounds", "3", "--seed", "3"]
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "moot", "run", *args, "--role", "opposition=human", "--no-save"],
        input=said, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "🔴 反方看到的内容" in done.stdout
    assert "🔴 反方：最多150字" in done.stdout
    assert "：接受还是拒绝这个信息点提问" in done.stdout
    assert "at most" not in done.stdout and " sees" not in done.stdout


def test_a_saved_files_hostile_flags_are_shown_as_recorded() -> None:
    """A flag is a line: a long one (a changed file may hold anything) is shown as recorded,
    without matching its patterns at length; a language moot has no pack for is English."""
    huge = "a " * 50_000 + "says nothing: 'x'"
    assert words("zh").shown(huge) == huge
    many = "; ".join(["x " * 250 + "says nothing: 'x'"] * 12)  # each part a long line
    assert words("zh").shown(many).count("没有实际内容") == 12
    assert words("../../etc").shown("not a question") == "not a question"
    assert words("../../etc").say("units") == "words"
