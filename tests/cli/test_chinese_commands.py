"""Everything a Chinese debate shows is Chinese, after the debate too: `moot check`, `moot
judge`, `moot replay` and `moot history show` on it, a Chinese tournament's report, the
errors a Chinese debate can end on, the decision document's front matter, a person's seat
filling in a structured reply, and the page's account of a failed debate.

As in test_chinese_output, the debates run through the real command line on scripted models
made to answer in Chinese (`--dry-run`); what may stay English is names, model ids, file
names, JSON keys and numbers. One real debate (gemma3-270m, `real`) does the same, its
models' own words left out.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from conftest import Cli, real_model_path
from gguf_samples import LLAMA_7B, STRING, gguf_string, kv, shape, u32, write_gguf
from moot.errors import CallTimeoutError, MootError, NotEnoughMemoryError
from moot.inference import scripted
from moot.inference.chat_template import chat_template_problem
from moot.inference.protocol import ChatRequest, Message
from moot.models import memory
from moot.models.catalog import CHAT_FORMATS
from moot.models.free import Free
from moot.records.journal import load
from moot.words import words
from store_layouts import MODEL_LAYER, gguf, ollama_manifest, ollama_model, place
from test_chinese_output import RUNS, Chinese, body, english, run

# A terminal wide enough that a table shows each model id (a path) in full: a name, not
# words, however long.
WIDE = {"COLUMNS": "400"}
# What a hint names for the user to type: options (`--format adversarial`) and commands.
_TYPED = re.compile(r"--[a-z][a-z-]*(?: [a-z]+\b)?|moot [a-z]+(?: [a-z]+)?")


def said(text: str, *, also: tuple[str, ...] = ()) -> list[str]:
    """The English words of TEXT, leaving out (beside names and ids) what it tells the user
    to type: an option, a command."""
    return english(_TYPED.sub(" ", text), also=also)


@pytest.fixture(name="chinese")
def _chinese(monkeypatch: pytest.MonkeyPatch) -> Chinese:
    """The dry run's scripted models, answering in Chinese (as in test_chinese_output)."""
    model = Chinese()
    monkeypatch.setattr(scripted, "_echo", model.speech)
    monkeypatch.setattr(scripted, "_minimal", model.reply)
    return model


def _ids(tmp_path: Path, models: tuple[str, ...], out: Path) -> tuple[str, ...]:
    """The paths and model ids a command may print: names, not words."""
    judged = [str(p) for p in (out / "judged").glob("*.json")] if (out / "judged").is_dir() else []
    return (*judged, *models, str(out), str(tmp_path))


def _models(fmt: str, dry_models: tuple[str, str]) -> tuple[str, ...]:
    return tuple(a for m in dry_models for a in ("--model", m)) if fmt == "adversarial" else ()


@pytest.mark.parametrize("fmt", list(RUNS))
def test_a_chinese_debate_and_every_command_on_it_show_no_english(
    fmt: str, cli: Cli, tmp_path: Path, chinese: Chinese, dry_models: tuple[str, str]
) -> None:
    printed, out = run(cli, tmp_path, fmt, _models(fmt, dry_models))
    transcript = str(out / "transcript.json")
    home = tmp_path / "home"
    shown: dict[str, str] = {"run": body(printed)}

    document = next(out.glob("*.md")).read_text(encoding="utf-8")
    shown["document"] = body(document)

    checked = cli("check", transcript, home=home)
    assert checked.returncode == 0, checked.stderr
    if fmt == "oxford":  # the seats and steps under the Chinese rulebook's own names
        assert "中立主席/主席裁决" in checked.stdout and "反方/信息点提问" in checked.stdout
    shown["check"] = checked.stdout + checked.stderr

    judged = cli("judge", transcript, "--judge", dry_models[0], "--dry-run", home=home, env=WIDE)
    assert judged.returncode == 0, judged.stderr
    assert "原裁判" in judged.stdout and "一致率" in judged.stdout
    shown["judge"] = judged.stdout + judged.stderr

    chinese.n = 0  # the scripted models say again what they said: the replay matches
    same = cli("replay", transcript, "--no-quiet", home=home)
    assert same.returncode == 0, same.stdout + same.stderr
    assert re.search(r"全部\d+次发言一致", same.stdout), same.stdout
    assert "第1轮" in same.stdout  # the live view of the replay: the debate's own
    shown["replay"] = same.stdout + same.stderr

    differs = cli("replay", transcript, home=home)  # the models go on: the first turn differs
    assert differs.returncode == 1, differs.stderr
    assert re.search(r"\d+号发言不一致（第\d轮，", differs.stdout), differs.stdout
    assert "保存的：" in differs.stdout and "重放的：" in differs.stdout
    shown["replay differs"] = differs.stdout + differs.stderr

    history = cli("history", "show", str(out), home=home)
    assert history.returncode == 0, history.stderr
    shown["history"] = body(history.stdout + history.stderr)

    ids = _ids(tmp_path, tuple(dry_models), out)
    left = {what: said(text, also=ids) for what, text in shown.items()}
    assert {what: words for what, words in left.items() if words} == {}, shown


def test_the_decision_documents_front_matter_says_why_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese
) -> None:
    """The front matter's keys and identifiers stay what they are (data for grep); why a
    turn the document is built on was degraded is said to its reader in Chinese."""
    _, out = run(cli, tmp_path, "decision")
    text = (out / "decision.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---\n")[1])
    degraded = front["degraded"]
    assert degraded, text  # the scripted models drift into English: those turns are degraded
    assert {english(d["why"]) == [] for d in degraded} == {True}, degraded
    assert "转为英文：在转换之前结束" in {d["why"] for d in degraded}
    assert {d["role"] for d in degraded} <= {"debater_a", "debater_b", "debater_c", "judge"}
    saved, _ = load(out / "transcript.json")  # the transcript keeps the English flags
    assert any(f.startswith("changed into English") for t in saved.turns for f in t.flags)


def test_an_english_decisions_front_matter_is_as_it_was(cli: Cli, tmp_path: Path) -> None:
    """English output is unchanged: the reason recorded is the reason shown."""
    out = tmp_path / "en"
    args = ["Postgres or SQLite for a small app", "--format", "decision", "--dry-run"]
    done = cli("run", *args, "--yes", "--seed", "3", "--out", str(out), home=tmp_path / "h")
    assert done.returncode == 0, done.stderr
    front = yaml.safe_load((out / "decision.md").read_text(encoding="utf-8").split("---\n")[1])
    saved, _ = load(out / "transcript.json")
    flagged = ["; ".join([*t.flags, *([t.note] if t.note else [])]) for t in saved.turns]
    assert [d["why"] for d in front["degraded"]] == [f for f in flagged if f]


def _times_out(request: ChatRequest) -> str:
    raise CallTimeoutError(seconds=240, model="echo:x")


@pytest.mark.parametrize("fmt", list(RUNS))
def test_a_chinese_debate_that_fails_says_why_in_chinese(
    fmt: str,
    cli: Cli,
    tmp_path: Path,
    chinese: Chinese,
    dry_models: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every speech times out: each format ends on its error, and the error, its hint and
    the notices before them are in Chinese."""
    monkeypatch.setattr(scripted, "_echo", _times_out)
    args = [*RUNS[fmt], "--format", fmt, "--dry-run", "--yes", "--no-save"]
    done = cli("run", *args, *_models(fmt, dry_models), home=tmp_path / "home")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("错误：") and "\n提示：" in done.stderr, done.stderr
    assert "没有在240秒内完成" in done.stdout + done.stderr
    printed = done.stdout + done.stderr
    assert said(printed, also=(*dry_models, "echo:x")) == [], printed


def test_english_errors_are_as_they_were(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripted, "_echo", _times_out)
    done = cli("run", "Cities should ban cars", "--dry-run", "--no-save", home=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "error: echo:x did not finish within 240 s\n"
        "hint: raise --call-timeout, shorten turns with --max-tokens, or use a smaller model\n"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--max-rounds", "9"], "错误： --max-rounds 9 不允许：应不大于8\n提示： 请用3到8之间的值\n"),
     (["--format", "adversarial"], "错误： 对抗式审查至少需要两个参与者，现在是0个\n"),
     (["--model", "nosuch"], "错误： 未知模型 'nosuch'\n"),
     (["--rounds", "2"], "错误： --rounds 不适用于 --format oxford\n"),
     (["--temperature", "judge=5"], "错误： --temperature judge=5.0 不允许：应不大于2\n"),
     (["--format", "foo"],
      "错误： 未知赛制 'foo'\n提示： 可选的赛制有：oxford, decision, challenge, adversarial\n"),
     (["--lang", "fr"],
      "错误： --lang 'fr' 不允许：应为 'auto', 'en' 或 'zh'\n提示： 见 moot run --help\n"),
     (["--no-save", "--out", "d"], "错误： --no-save 和 --out 互相矛盾\n提示： 只能选其中一个\n"),
     (["--format", "decision", "--max-rounds", "4"],
      "错误： --max-rounds 不适用于 --format decision\n"),
     (["--time-limit", "5"], "错误： --time-limit 只适用于真人席位\n"),
     (["--role", "judge"], "错误： --role 'judge' 不是“键=值”的形式\n提示： 例如 --role judge=…\n"),
     (["--temperature", "judge=0.5", "--temperature", "judge=0.7"],
      "错误： --temperature judge= 给了两次\n提示： --temperature judge=… 只给一次\n"),
     (["--temperature", "judge=abc"], "错误： 温度 'abc' 不是0到2之间的数字\n提示： 例如 0.7\n")],
)  # fmt: skip
def test_a_setting_wrong_for_a_chinese_motion_is_said_in_chinese(
    cli: Cli, tmp_path: Path, args: list[str], says: str
) -> None:
    done = cli("run", "城市应该禁止汽车吗", *args, "--dry-run", home=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith(says), done.stderr
    typed = ("nosuch", "smollm2-135m", "gemma3-270m", ".gguf", "hf:OWNER/REPO/FILE.gguf", "foo")
    typed += ("human", "'judge'", "'abc'")
    formats = ("oxford", "decision", "challenge", "adversarial", "'auto', 'en'", "'zh'", "'fr'")
    assert said(done.stderr, also=(*typed, *formats)) == [], done.stderr
    english = cli("run", "Cities should ban cars", *args, "--dry-run", home=tmp_path)
    assert english.returncode == 2 and english.stderr.startswith("error: "), english.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--format", "foo"],
      "error: unknown format 'foo'\n"
      "hint: choose one of: oxford, decision, challenge, adversarial\n"),
     (["--lang", "fr"],
      "error: --lang 'fr' is not allowed: input should be 'auto', 'en' or 'zh'\n"
      "hint: see moot run --help\n"),
     (["--no-save", "--out", "d"],
      "error: --no-save and --out contradict each other\nhint: choose one\n")],
)  # fmt: skip
def test_a_setting_wrong_for_an_english_motion_is_said_as_it_was(
    cli: Cli, tmp_path: Path, args: list[str], says: str
) -> None:
    done = cli("run", "Cities should ban cars", *args, "--dry-run", home=tmp_path)
    assert (done.returncode, done.stderr) == (2, says)
    bare = cli("run", "--format", "foo", "--dry-run", home=tmp_path)  # no motion: no language
    assert bare.stderr.startswith("error: unknown format 'foo'\n"), bare.stderr


# The memory plan's figures: its units, and the context size as llama.cpp names it.
_MEMORY = ("GiB", "MiB", "KiB", "KV", "n_ctx")


@pytest.mark.parametrize(
    ("args", "free", "says"),
    [([], Free(ram=1 << 20), "错误： 本场辩论的模型在 n_ctx 为"),
     (["--role", "opposition=B"], Free(ram=1 << 20), "错误： 本场辩论的2个模型在 n_ctx 为"),
     (["--gpu-layers", "-1"], Free(ram=1 << 50, gpu=1 << 20), "错误： 本场辩论的模型在 n_ctx 为")],
)  # fmt: skip
def test_a_chinese_debate_that_does_not_fit_in_memory_is_refused_in_chinese(
    cli: Cli,
    tmp_path: Path,
    dry_models: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    free: Free,
    says: str,
) -> None:
    """Refused before any model loads (no --dry-run: the models' headers are planned)."""
    monkeypatch.setattr(memory, "free_memory", lambda gpu=False: free)
    args = [a.replace("B", dry_models[1]) for a in args]
    run = ["--model", dry_models[0], *args, "--no-save", "--yes"]
    done = cli("run", "城市应该禁止汽车吗", *run, home=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(says) and "可用的只有1 MiB" in done.stderr, done.stderr
    assert "\n提示： 可以" in done.stderr, done.stderr
    names = (*dry_models, *(Path(m).stem for m in dry_models), *_MEMORY)
    assert said(done.stderr, also=names) == [], done.stderr
    english = cli("run", "Cities should ban cars", *run, home=tmp_path)
    assert english.returncode == 2
    assert (
        english.stderr.startswith("error: the debate's ")
        and " is free\nhint: use " in english.stderr
    )


def test_every_refusal_of_the_memory_plan_is_said_in_chinese(tmp_path: Path) -> None:
    """Each way the memory plan words a refusal (one model or several, one at a time, the
    GPU's memory, KV snapshots; a smaller context that fits or none) has its Chinese."""
    gguf = [
        write_gguf(tmp_path / f"{n}.gguf", extra=shape("llama", **LLAMA_7B)) for n in ("a", "b")
    ]
    zh, shown = words("zh"), set()
    for count, one_at_a_time, gpu, snapshots in itertools.product(
        (1, 2), (False, True), (0, -1), (0, 2)
    ):
        models = [(f"model-{i}", gguf[i]) for i in range(count)]
        planned = memory.plan(
            models, 8192, gpu_layers=gpu, one_at_a_time=one_at_a_time, snapshots=snapshots
        )
        at_4096 = planned.at(4096).gpu if gpu else planned.at(4096).host
        for room in (1 << 20, at_4096):  # nothing fits; half the context fits
            free = Free(ram=1 << 50, gpu=room) if gpu else Free(ram=room)
            with pytest.raises(NotEnoughMemoryError) as caught:
                memory.check_fits(planned, free)
            for english_text in (caught.value.message, caught.value.hint):
                text = zh.shown(english_text)
                assert said(text, also=("model-0", *_MEMORY)) == [], (english_text, text)
                shown.add(re.sub(r"[\d.,]+ [KMG]?i?B|\d+", "N", english_text))
    assert len(shown) == 9 + 8, sorted(shown)  # every message, every hint


def test_a_chinese_seat_whose_input_ends_says_so_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese
) -> None:
    args = [
        "本院认为城市应该禁止汽车",
        "--dry-run",
        "--role",
        "opposition=human",
        "--no-save",
        "--seed",
        "5",
    ]
    done = cli("run", *args, home=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("错误： 输入在🔴 反方：最多150字"), done.stderr
    assert "之前就结束了\n提示： 没有保存任何内容" in done.stderr
    assert said(done.stdout + done.stderr, also=("echo:", "smollm2-135m")) == []


def test_an_unfinished_chinese_debate_is_shown_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese
) -> None:
    """The person's input ends at their first turn: the debate stops there, saved; `moot
    history show` lists its finished turns under the seats' and steps' Chinese names."""
    out = tmp_path / "d1"
    args = ["本院认为城市应该禁止汽车", "--dry-run", "--role", "opposition=human"]
    done = cli("run", *args, "--out", str(out), home=tmp_path)
    assert done.returncode == 2
    assert (
        "：已完成的发言保存在" in done.stderr
        and f"`moot resume {out}` 会再次请你完成这一轮" in done.stderr
    )
    shown = cli("history", "show", str(out), home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "正方 · 发言" in shown.stdout
    assert said(shown.stdout) == [] and said(done.stderr, also=(str(out), "journal.jsonl")) == []


def test_a_chinese_decisions_refusal_is_an_error_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripted, "_minimal", chinese.uncontested)
    done = cli("run", "城市应该禁止汽车吗", "--format", "decision", "--dry-run", home=tmp_path)
    assert done.returncode == 2
    error = "".join(done.stderr.split())
    assert error.startswith("错误：议题不是在几个具名立场之间的有争议的选择")
    assert "提示：用--positionsA--positionsB给出2到4个选项" in error
    assert said(done.stderr) == [], done.stderr


def test_a_chinese_tournament_reports_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese, dry_models: tuple[str, str]
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text("城市应该禁止汽车吗\n学校应该取消作业吗\n", encoding="utf-8")
    out = tmp_path / "tour"
    models = [a for m in dry_models for a in ("--model", m)]
    args = ["--motions", str(motions), "--max-rounds", "3", "--seed", "3", "--out", str(out)]
    done = cli(
        "tournament", *models, *args, "--dry-run", "--bootstrap", "50", home=tmp_path, env=WIDE
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    assert "锦标赛（牛津式辩论，4场辩论）" in printed and "守规情况" in printed
    assert "席位偏向：" in printed and re.search(r"获胜（[正反]方，|平局|未决", printed)
    assert "覆盖率：" in printed and "裁决方式：两两比较" in printed
    files = ("ratings.json", "ratings.csv", "ratings.png", "judges.csv")
    debates = tuple(p.name for p in (out / "debates").iterdir())
    ids = (*dry_models, str(out), str(tmp_path), *files, *debates)
    assert said(printed, also=ids) == [], printed


def test_an_english_tournament_reports_as_it_did(
    cli: Cli, tmp_path: Path, dry_models: tuple[str, str]
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text("Cities should ban cars\nSchools should drop homework\n", encoding="utf-8")
    models = [a for m in dry_models for a in ("--model", m)]
    args = ["--motions", str(motions), "--max-rounds", "3", "--seed", "3", "--out", str(tmp_path)]
    done = cli(
        "tournament", *models, *args, "--dry-run", "--bootstrap", "50", home=tmp_path, env=WIDE
    )
    assert done.returncode == 0, done.stderr
    assert "Tournament (oxford, 4 debates)" in done.stdout
    assert "Rule-keeping (every turn, in every seat)" in done.stdout
    assert "side bias: the same side won both debates of" in done.stdout
    # The dry run's judge names the side shown first: read both ways round, it abstains.
    assert "✓ 001-motion1-a-vs-b: undecided: the judges could not tell" in done.stdout
    assert "coverage: 0 of 4 judged debates decided (0%)" in done.stdout


# -- a person's seat, a structured reply ----------------------------------------------------


def _seat(typed: str, *, interactive: bool) -> tuple[Any, io.StringIO]:
    from moot.cli.seat import Reader, TerminalSeat
    from moot.inference.human import HumanSeat

    shown = io.StringIO()
    console = Console(file=shown, width=200, force_terminal=False)
    seat = TerminalSeat(console, Reader(io.StringIO(typed)), interactive=interactive)
    return HumanSeat(seat), shown


REQUEST = ChatRequest(
    messages=(
        Message(role="system", content="你是完整性裁判。"),
        Message(role="user", content="辩题：本院认为城市应该禁止汽车。请评估本轮。"),
    )
)


def test_a_person_filling_in_a_chinese_reply_from_piped_input_is_asked_in_chinese() -> None:
    from moot.formats.oxford.schemas import CompletenessReply

    answers = [
        "{不是JSON",
        json.dumps({"score": 11, "reasoning": "双方都论证了"}, ensure_ascii=False),
        json.dumps({"reasoning": "双方都论证了"}, ensure_ascii=False),
        "[1, 2]",
        json.dumps({"score": 6, "reasoning": "双方都论证了"}, ensure_ascii=False),
    ]
    human, shown = _seat("".join(f"{a}\n.\n" for a in answers), interactive=False)
    reply, _ = human.fill(
        REQUEST, CompletenessReply, role="judge", label="⚖️ 完整性裁判", language="zh"
    )
    assert reply.score == 6
    out = shown.getvalue()
    assert "⚖️ 完整性裁判：填写完整性评估" in out and "完整性裁判看到的内容" in out
    assert "你是完整性裁判。" in out and "[系统]" not in out  # what it says, not who says it
    assert "一个 JSON 对象，包含 score（数字 0到10）、reasoning（文字，最多300个字符）" in out
    assert "未被接受：不是有效的 JSON（第1行）；请重新填写" in out
    assert "未被接受：得分：应不大于10；请重新填写" in out
    assert "未被接受：得分：缺少这一项；请重新填写" in out
    assert "未被接受：不是 JSON 对象" in out
    assert english(out, also=("score", "reasoning", "JSON")) == [], out


def test_a_person_filling_in_a_chinese_reply_at_a_terminal_is_asked_in_chinese() -> None:
    from moot.formats.oxford.schemas import CompletenessRubric

    fields = list(CompletenessRubric.model_fields)
    typed = "是\n否\n是\n是\n否\n双方都论证了，但正方没有给出数据。\n"
    human, shown = _seat(typed, interactive=True)
    reply, _ = human.fill(REQUEST, CompletenessRubric, role="judge", label="⚖️ 裁判", language="zh")
    assert reply.proposition_argued_for_motion and not reply.opposition_argued_against_motion
    out = shown.getvalue()
    assert "proposition_argued_for_motion（是或否）: " in out
    assert "reasoning（文字，最多300个字符）: " in out
    assert english(out, also=tuple(fields)) == [], out


def test_an_english_seats_form_is_as_it_was() -> None:
    from moot.formats.oxford.schemas import CompletenessReply

    human, shown = _seat(
        '{"score": 11, "reasoning": "r"}\n.\n{"score": 6, "reasoning": "r"}\n.\n', interactive=False
    )
    human.fill(REQUEST, CompletenessReply, role="judge", label="⚖️ Judge")
    out = shown.getvalue()
    assert "⚖️ Judge: fill in the CompletenessReply" in out and "what ⚖️ Judge sees" in out
    assert "你是完整性裁判。" in out and "[system]" not in out
    listed = "a JSON object with score (a number 0 to 10), reasoning (text, at most 300 characters)"
    assert f"{listed}; end with a line holding only '.'" in out
    assert "not taken: score: Input should be less than or equal to 10; give it again" in out


# -- the page -----------------------------------------------------------------------------


def test_the_page_says_why_a_chinese_debate_failed_in_chinese() -> None:
    from moot.web.jobs import Hub, Job

    def fails(job: Job) -> None:
        raise MootError(
            "no debater gave a usable opening",
            hint="check the models (moot models verify), try another --seed or a larger model",
        )

    hub = Hub()
    zh_job = hub.submit(Job(fails, kind="debate", title="t", holds=("m",), language="zh"))
    english_job = hub.submit(Job(fails, kind="debate", title="t", holds=("n",)))
    for job in (zh_job, english_job):
        _wait(lambda job=job: job.over)  # type: ignore[misc]
    assert zh_job.error == {
        "message": "没有一位辩手给出可用的开篇陈述",
        "hint": "检查模型（moot models verify），换一个 --seed 或更大的模型",
    }
    assert english_job.error is not None
    assert english_job.error["message"] == "no debater gave a usable opening"


def _wait(condition: Any, timeout: float = 5) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# -- a real debate --------------------------------------------------------------------------


def _said_by_models(out: Path) -> set[str]:
    """Every ASCII word the models themselves said (their speeches, replies and thinking):
    theirs to say, in whatever language; what is left is moot's own."""
    saved, _ = load(out / "transcript.json")
    said = " ".join(
        " ".join([t.text, t.reasoning or "", json.dumps(t.data or {}, ensure_ascii=False)])
        for t in saved.turns
    )
    return set(re.findall(r"[A-Za-z]{2,}", said))


@pytest.mark.real
def test_a_real_chinese_debate_and_every_command_on_it_show_no_english(
    cli: Cli, tmp_path: Path
) -> None:
    model, out, home = str(real_model_path("gemma3-270m")), tmp_path / "real", tmp_path / "home"
    # A challenge of one round: a real model's Chinese through every command, in a fraction
    # of an Oxford debate's time (the scripted tests above cover each format's words).
    args = ["城市应该禁止汽车吗", "--model", model, "--format", "challenge", "--rounds", "1"]
    args += ["--seed", "3"]
    more = ["--max-tokens", "32", "--lang", "zh", "--out", str(out)]
    done = cli.subprocess("run", *args, *more, home=home, env=WIDE, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    document = (out / "debate.md").read_text(encoding="utf-8")
    shown = {"run": body(done.stdout + done.stderr), "document": body(document)}
    transcript = str(out / "transcript.json")
    checked = cli.subprocess("check", transcript, home=home)
    shown["check"] = checked.stdout + checked.stderr
    judged = cli.subprocess("judge", transcript, "--judge", model, home=home, env=WIDE, timeout=900)
    assert judged.returncode == 0, judged.stderr[-2000:]
    shown["judge"] = judged.stdout + judged.stderr
    history = cli.subprocess("history", "show", str(out), home=home, env=WIDE)
    shown["history"] = history.stdout + history.stderr
    theirs = _said_by_models(out)
    # The challenge names each side's backend and model file: names, not words.
    ids = _ids(tmp_path, (model, Path(model).name, Path(model).stem, "llama.cpp"), out)
    left = {w: [x for x in said(t, also=ids) if x not in theirs] for w, t in shown.items()}
    assert {w: x for w, x in left.items() if x} == {}, shown


def test_with_no_motion_a_chinese_run_offers_its_examples_in_chinese(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    import typer

    from moot.cli.run import _motion

    asked: list[str] = []
    monkeypatch.setattr(sys, "stdin", type("Tty", (io.StringIO,), {"isatty": lambda s: True})())
    monkeypatch.setattr(typer, "prompt", lambda text, **_: asked.append(text) or "1")
    assert _motion(None, "zh", yes=False).startswith("本院")
    assert _motion(None, "en", yes=False).startswith("This House")
    assert asked == ["没有给出辩题；请选一个", "No motion given; pick one"]
    assert english(capsys.readouterr().out.split("This House")[0]) == []


@pytest.mark.parametrize(
    ("args", "says", "english"),
    [(["--seed", "abc"], "错误： '--seed' 的值无效：应为整数",
      "error: invalid value for '--seed': Input should be a valid integer"),
     (["--formt", "oxford"], "错误： 没有这个选项：--formt（可用的选项：",
      "error: no such option: --formt (Possible options:"),
     (["extra"], "错误： 多出了参数（extra）", "error: got unexpected extra argument"),
     (["--yes=1"], "错误： 选项 '--yes' 不带值。", "error: option '--yes' does not take a value."),
     (["--out"], "错误： 选项 '--out' 需要一个值。",
      "error: option '--out' requires an argument.")],
)  # fmt: skip
def test_a_command_line_click_refuses_is_said_in_the_motions_language(
    cli: Cli, tmp_path: Path, args: list[str], says: str, english: str
) -> None:
    """Refused before moot reads it (click's parse errors): told in the language of the
    motion on the command line, or of --lang, and as they were for an English motion."""
    done = cli("run", "城市应该禁止汽车吗", *args, home=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith(says), done.stderr
    assert "提示： 见 moot" in done.stderr
    assert said(done.stderr, also=("extra", "oxford")) == [], done.stderr
    told = cli("run", "--lang", "zh", "cities", *args, home=tmp_path)
    assert told.stderr.startswith(says), told.stderr
    plain = cli("run", "Cities should ban cars", *args, home=tmp_path)
    assert plain.returncode == 2 and plain.stderr.startswith(english), plain.stderr


def test_a_command_on_a_saved_chinese_debate_refused_by_click_says_so_in_chinese(
    cli: Cli, tmp_path: Path, chinese: Chinese
) -> None:
    _, out = run(cli, tmp_path, "oxford", ())
    for command in ("check", "replay", "judge"):
        done = cli(command, str(out / "transcript.json"), "--nosuch", home=tmp_path)
        assert done.returncode == 2 and done.stderr.startswith("错误： 没有这个选项：--nosuch")


def _bad_model(case: str, folder: Path, home: Path) -> str:
    """The model reference of CASE, made for real under FOLDER (a registered name in HOME's
    registry): one a debate's model cannot resolve or load from."""
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    path = folder / f"{case}.gguf"
    folder.mkdir(parents=True, exist_ok=True)
    if case == "missing":
        return str(path)
    if case == "folder":
        path.mkdir()
    elif case == "loop":
        (folder / "other.gguf").symlink_to(path)
        path.symlink_to(folder / "other.gguf")
    elif case == "dangling":
        path.symlink_to(folder / "nowhere.gguf")
    elif case == "text":
        path.write_text("hello, not a model\n")
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "short":
        path.write_bytes(write_gguf(path).read_bytes()[:12])
    elif case == "truncated":
        path.write_bytes(write_gguf(path, chat_template=template).read_bytes()[:-20])
    elif case == "version":
        write_gguf(path, version=9, chat_template=template)
    elif case == "no-template":
        write_gguf(path)
    elif case == "fifo":
        os.mkfifo(path)
    elif case in _TEMPLATES:
        write_gguf(path, chat_template=_TEMPLATES[case])
    elif case == "embedding":
        write_gguf(path, arch="bert", chat_template=template)
    elif case == "speech":
        write_gguf(path, arch="wavtokenizer-dec", chat_template=template)
    elif case == "projector":
        write_gguf(path, arch="clip", chat_template=template)
    elif case == "adapter":
        write_gguf(
            path, chat_template=template, extra=[kv("general.type", STRING, gguf_string("adapter"))]
        )
    elif case == "split-part":
        write_gguf(path, chat_template=template, extra=[u32("split.no", 1), u32("split.count", 3)])
    elif case in ("registry-not-json", "catalog-default", "catalog-not-toml"):
        if case == "registry-not-json":
            (home / "models").mkdir(parents=True)
            (home / "models" / "registry.json").write_text("{")
        else:
            home.mkdir(parents=True)
            (home / "catalog.toml").write_text(_CATALOGS[case])
        return "mine"
    elif case in ("registered-gone", "registered-changed", "registered-malformed"):
        if case == "registered-changed":
            write_gguf(path, chat_template=template)
        entry = {"path": str(path), "sha256": "0" * 64, "chat_format": "chatml"}
        if case == "registered-malformed":
            entry["path"] = ""
        registry = home / "models" / "registry.json"
        registry.parent.mkdir(parents=True, exist_ok=True)
        registry.write_text(json.dumps({"mine": entry}))
        return "mine"
    else:  # an id: of no model, of a catalog model not pulled, of a hub file not cached
        return {"unknown": "nosuch", "not-pulled": "smollm2-135m", "hub": "hf:a/b/c.gguf"}[case]
    return str(path)


# What each case's English error says after the path or id (English output is unchanged).
_BAD_MODELS = {
    "missing": "error: no such model file: ",
    "folder": " is a folder, not a model file\nhint: name the .gguf file inside it\n",
    "loop": " is a symlink loop\nhint: point it at a .gguf file\n",
    "dangling": "nowhere.gguf, which does not exist\nhint: point it at a .gguf file\n",
    "text": " is not a GGUF model file (starts with b'hell', expected b'GGUF')\n",
    "empty": " is empty (0 bytes)\nhint: pull the model again: `moot models pull …`\n",
    "short": " is truncated: 12 bytes, shorter than a GGUF header\n",
    "truncated": "\nhint: an interrupted download? pull the model again\n",
    "version": ": unsupported GGUF version 9 (supported: 2, 3)\n",
    "no-template": "chat format cannot be told from its architecture\n",
    "embedding": " is an embedding model: it turns text into vectors and writes no replies\n",
    "registered-gone": "error: the file registered as 'mine' is gone: ",
    "registered-changed": f"expected {'0' * 64}\nhint: the file changed since it was registered",
    "registered-malformed": ": the entry 'mine' is malformed: its path is not a file name\n",
    "registry-not-json": "registry.json is not valid JSON: Expecting property name enclosed in",
    "catalog-default": "error: catalog default model 'nosuch' is not in the catalog (",
    "catalog-not-toml": "catalog.toml is not valid TOML: Invalid statement (at line 1, column 1)\n",
    "fifo": " is not a regular file (a FIFO, a device or a socket)\nhint: name a .gguf file\n",
    "template-broken": ": the chat template tokenizer.chat_template is broken: Expected an",
    "template-unsafe": "is malicious or unsafe (it reaches for the private attribute '__mro__')",
    "speech": " is a speech model (wavtokenizer-dec), not a text-generation model\n",
    "projector": " is a vision projector (mmproj), not a model: it goes with one\n",
    "adapter": " is a LoRA adapter, not a model: it goes with one\n",
    "split-part": " is part 2 of 3 of a split model: name its first part\n",
    "unknown": "error: unknown model 'nosuch'\n",
    "not-pulled": "error: model 'smollm2-135m' is not installed\n",
    "hub": "error: hf:a/b/c.gguf is not in the local cache\n",
}
# Names, not words: a file's first bytes, a format, a model's architecture and chat formats.
_MODEL_NAMES = ("b'hell'", "b'GGUF'", "GGUF", "llama.cpp", "UTF-8", "'llama'", "sha256", "mmproj")
_MODEL_NAMES += ("MOOT_HOME", "path", "chat_format", "mine", "nosuch", "smollm2-135m", ".gguf")


_TEMPLATES = {"template-broken": "{% if %}", "template-unsafe": "{{ ().__class__.__mro__ }}"}
_CATALOGS = {"catalog-default": 'default = "nosuch"\n', "catalog-not-toml": "= x\n"}
# What a parser says of a file, beside moot's words: jinja's of a template, tomllib's.
_PARSERS = (
    chat_template_problem(_TEMPLATES["template-broken"], rendered=True).detail,  # type: ignore[union-attr]
    "Invalid statement (at line 1, column 1)",
    "'__mro__'",
    "wavtokenizer-dec",
    "LoRA",
    "tokenizer.chat_template",  # a GGUF key
    "JSON",
    "TOML",
    "default",  # catalog.toml's keys
    "[[models]]",
    " id",
)


# Hashed only when a debate runs (a dry run checks headers, not checksums): exit 1, as a
# damaged file is.
_HASHED = {"registered-changed"}


@pytest.mark.parametrize("seat", ["model", "role"])
@pytest.mark.parametrize("case", list(_BAD_MODELS))
def test_a_model_that_does_not_resolve_or_load_is_refused_in_the_motions_language(
    cli: Cli, tmp_path: Path, dry_models: tuple[str, str], case: str, seat: str
) -> None:
    """Before any debate starts: the reference, the file, its header, its checksum."""
    home = tmp_path / "home"
    ref = _bad_model(case, tmp_path / "bad", home)
    run = ["--model", ref] if seat == "model" else ["--model", dry_models[0]]
    run += [] if seat == "model" else ["--role", f"opposition={ref}"]
    run += ["--no-save", "--yes"] if case in _HASHED else ["--no-save", "--dry-run"]
    code = 1 if case in _HASHED else 2
    done = cli("run", "城市应该禁止汽车吗", *run, home=home)
    assert done.returncode == code and done.stderr.startswith("错误："), done.stderr
    files = [p for p in (tmp_path / "bad").iterdir() if p.is_file() and not p.is_symlink()]
    digests = tuple(hashlib.sha256(p.read_bytes()).hexdigest() for p in files)
    paths = tuple(str(p) for p in (tmp_path / "bad").iterdir())
    paths += (
        str(home / "models" / "registry.json"),
        str(home / "catalog.toml"),
        str(tmp_path / "bad" / f"{case}.gguf"),
        str(tmp_path / "bad" / "nowhere.gguf"),
    )
    formats = tuple(sorted(CHAT_FORMATS, key=len, reverse=True))
    names = (*paths, ref, *digests, *_MODEL_NAMES, *formats, *_PARSERS, "hf:OWNER/REPO/FILE.gguf")
    assert said(done.stderr, also=names) == [], done.stderr
    english = cli("run", "Cities should ban cars", *run, home=home)
    assert english.returncode == code and english.stderr.startswith("error: "), english.stderr
    assert _BAD_MODELS[case] in english.stderr, english.stderr


def _store_model(case: str, home: Path) -> str:
    """The reference of CASE: a model of Ollama's store, LM Studio's models folder or
    llama.cpp's cache under HOME, laid out for real, that a debate cannot resolve or load."""
    ollama, lmstudio = home / ".ollama" / "models", home / ".lmstudio" / "models"
    llamacpp = home / ".cache" / "llama.cpp"
    layer = {"mediaType": MODEL_LAYER, "digest": "sha256:" + "3" * 64, "size": 10}
    if case == "ollama-manifest-folder":
        (ollama / "manifests" / "registry.ollama.ai" / "library" / "bad" / "latest").mkdir(
            parents=True
        )
    elif case == "ollama-manifest-not-json":
        ollama_manifest(ollama, "bad", layers=[]).write_text("{")
    elif case == "ollama-manifest-not-utf8":
        ollama_manifest(ollama, "bad", layers=[]).write_bytes(b"\xff")
    elif case == "ollama-manifest-too-large":
        ollama_manifest(ollama, "bad", layers=[]).write_bytes(b" " * (2**20 + 1))
    elif case == "ollama-no-layers":
        ollama_manifest(ollama, "bad", layers=[]).write_text('{"layers": "none"}')
    elif case == "ollama-no-model-layer":
        ollama_manifest(ollama, "bad", layers=[{**layer, "mediaType": "text/plain"}])
    elif case == "ollama-tensors":
        tensor = {**layer, "mediaType": "application/vnd.ollama.image.tensor"}
        ollama_manifest(ollama, "bad", layers=[tensor, tensor, tensor])
    elif case == "ollama-digest":
        ollama_manifest(ollama, "bad", layers=[{**layer, "digest": "md5:0"}])
    elif case == "ollama-blob-missing":
        ollama_manifest(ollama, "bad", layers=[layer])
    elif case == "ollama-blob-size":
        blob = ollama_model(ollama, "bad")
        blob.write_bytes(blob.read_bytes() + b"\0")
    elif case == "ollama-blob-changed":
        blob = ollama_model(ollama, "bad")
        blob.write_bytes(blob.read_bytes().replace(b"m.content", b"m.Content"))
    elif case == "ollama-blob-loop":
        blob = ollama_model(ollama, "bad")
        blob.unlink()
        blob.symlink_to(blob)
    elif case == "lmstudio-no-file":
        place(lmstudio / "pub" / "bad" / "other.gguf")
        return "lmstudio:pub/bad/bad.gguf"
    elif case == "lmstudio-no-model":
        (lmstudio / "pub" / "bad").mkdir(parents=True)
        (lmstudio / "pub" / "bad" / "README.md").write_text("hello")
    elif case == "lmstudio-two":
        place(lmstudio / "pub" / "bad" / "one.gguf")
        place(lmstudio / "pub" / "bad" / "two.gguf")
    elif case == "lmstudio-not-folder":
        place(lmstudio / "pub" / "bad", data=b"hello")
    elif case in ("lmstudio-split", "llamacpp-split"):
        folder = lmstudio / "pub" / "bad" if case == "lmstudio-split" else llamacpp
        place(folder / "bad-00001-of-00002.gguf", data=gguf(extra={"split.count": 2}))
        if case == "llamacpp-split":
            return "llamacpp:bad-00001-of-00002.gguf"
    elif case == "llamacpp-folder":
        (llamacpp / "bad.gguf").mkdir(parents=True)
    refs = {"ollama": "ollama:bad", "lmstudio": "lmstudio:pub/bad", "llamacpp": "llamacpp:bad.gguf"}
    bad = {"ollama-bad-ref": "ollama:bad/x/y/z", "lmstudio-bad-ref": "lmstudio:bad"}
    return (
        bad.get(case)
        or {"llamacpp-bad-ref": "llamacpp:bad.bin"}.get(case)
        or refs[case.split("-")[0]]
    )


# What each case's English error says (English output is unchanged).
_STORE_MODELS = {
    "ollama-bad-ref": "error: bad Ollama reference 'ollama:bad/x/y/z'\nhint: write ollama:NAME",
    "ollama-missing": "error: ollama:bad:latest is not in Ollama's store (",
    "ollama-elsewhere": "error: ollama:bad:latest is not in Ollama's store (",
    "ollama-manifest-folder": "/latest cannot be read\nhint: `ollama pull bad:latest` fetches",
    "ollama-manifest-not-json": "/latest is not valid JSON: Expecting property name enclosed",
    "ollama-manifest-not-utf8": "/latest is not UTF-8 text (byte 0)\nhint: `ollama pull bad",
    "ollama-manifest-too-large": "/latest is 1,048,577 bytes, over moot's limit of 1,048,576\n",
    "ollama-no-layers": "/latest lists no layers moot can read\nhint: `ollama pull",
    "ollama-no-model-layer": "for bad:latest has no model layer (application/vnd.ollama.image.",
    "ollama-tensors": "stores bad:latest as 3 per-tensor layers, not one GGUF file; llama.cpp",
    "ollama-digest": "/latest: the model layer's digest is not sha256:<hex>\n",
    "ollama-blob-missing": f"names the blob sha256-{'3' * 64}, which is not in ",
    "ollama-blob-size": "bytes where its manifest says ",
    "ollama-blob-changed": "this one no longer matches its name: it is damaged; `ollama pull",
    "ollama-blob-loop": " is a symlink loop\nhint: `ollama pull bad:latest` fetches it",
    "lmstudio-bad-ref": "error: bad LM Studio reference 'lmstudio:bad'\nhint: write lmstudio:",
    "lmstudio-missing": "error: lmstudio:pub/bad is not in LM Studio's models folder (",
    "lmstudio-no-file": "error: lmstudio:pub/bad/bad.gguf: there is no ",
    "lmstudio-no-model": "/pub/bad holds no GGUF model\nhint: download it in LM Studio (or `lms",
    "lmstudio-two": "pub/bad holds 2 models: one.gguf, two.gguf\nhint: name one: lmstudio:",
    "lmstudio-not-folder": "/pub/bad cannot be read\nhint: download it in LM Studio",
    "lmstudio-split": ": part 2 of 2 of the split model is missing: ",
    "llamacpp-bad-ref": "error: bad llama.cpp cache reference 'llamacpp:bad.bin'\nhint: write",
    "llamacpp-missing": "error: llamacpp:bad.gguf is not in llama.cpp's cache (",
    "llamacpp-folder": "/bad.gguf cannot be read\nhint: llama.cpp downloads into its cache",
    "llamacpp-split": "llamacpp:bad-00001-of-00002.gguf: part 2 of 2 of the split model is",
}
# Names, not words: the stores, their tools' commands and forms, a layer's media type.
_STORE_NAMES = ("Ollama", "LM Studio", "llama.cpp", "llama-cli -hf OWNER/REPO", "FILE")
_STORE_NAMES += ("ollama:NAME[:TAG]", "ollama:qwen3:8b", "ollama:hf.co/OWNER/REPO:TAG")
_STORE_NAMES += ("lmstudio:PUBLISHER/MODEL/FILE.gguf", "lmstudio:PUBLISHER/MODEL")
_STORE_NAMES += ("llamacpp:FILE.gguf", MODEL_LAYER, "sha256:<hex>", "sha256-", "one.gguf")
_STORE_NAMES += ("two.gguf", "ollama pull bad:latest", "ollama:bad:latest", "bad:latest")
_STORE_NAMES += ("lms get pub/bad", "lmstudio:pub/bad/one.gguf", *_PARSERS)
_STORE_NAMES += ("lmstudio:pub/bad",)  # offered for a file of it mistyped


@pytest.mark.parametrize("case", list(_STORE_MODELS))
def test_a_model_of_another_tools_store_that_cannot_be_used_is_refused_in_the_motions_language(
    cli: Cli, tmp_path: Path, case: str
) -> None:
    """`ollama:`, `lmstudio:` and `llamacpp:` references: not in the store, or its manifest,
    blob, folder or split parts unusable, laid out for real in a private HOME."""
    home = tmp_path / "home"
    home.mkdir()
    ref = _store_model(case, home)
    env: dict[str, str | None] = {"COLUMNS": "400"}
    env |= {var: None for var in ("OLLAMA_MODELS", "LLAMA_CACHE", "XDG_CACHE_HOME")}
    if case == "ollama-elsewhere":  # the one store $OLLAMA_MODELS names
        env["OLLAMA_MODELS"] = str(home / "elsewhere")
    hashed = case == "ollama-blob-changed"  # hashed when a debate runs (a dry run does not)
    run = ["--model", ref, "--no-save", "--yes" if hashed else "--dry-run"]
    code = 2
    done = cli("run", "城市应该禁止汽车吗", *run, home=home, env=env)
    assert done.returncode == code and done.stderr.startswith("错误："), done.stderr
    files = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]
    digests = tuple(hashlib.sha256(p.read_bytes()).hexdigest() for p in files)
    digests += tuple(p.name.removeprefix("sha256-") for p in files)  # a blob's name
    paths = tuple(str(p) for p in sorted(home.rglob("*"), key=lambda p: -len(str(p))))
    shard = "bad-00002-of-00002.gguf"
    for path in (
        home / ".lmstudio" / "models" / "pub" / "bad" / "bad.gguf",
        home / ".lmstudio" / "models" / "pub" / "bad" / shard,
        home / ".lmstudio" / "models",
        home / ".cache" / "lm-studio" / "models",
        home / ".cache" / "llama.cpp" / shard,
        home / ".cache" / "llama.cpp",
        home / ".ollama" / "models" / "blobs",
        home / ".ollama" / "models",
        home / "elsewhere",
        Path("/usr/share/ollama/.ollama/models"),
    ):
        paths += (str(path),)
    names = (*paths, str(home), ref, *digests, *_MODEL_NAMES, *_STORE_NAMES, "3" * 64)
    assert said(done.stderr, also=names) == [], done.stderr
    english = cli("run", "Cities should ban cars", *run, home=home, env=env)
    assert english.returncode == code and english.stderr.startswith("error: "), english.stderr
    assert _STORE_MODELS[case] in english.stderr, english.stderr
