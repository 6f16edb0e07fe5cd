"""What `moot run` shows a person comparing models: a header naming each seat's model and
temperature before the first turn, the model on every speech, and the outcome and totals
in its last lines; Ctrl-C ends on the `moot resume` command that goes on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from conftest import Cli

OXFORD = "This House Believes That cities should ban cars"
OXFORD_ZH = "本院认为城市应当禁止私家车"
CHALLENGE = "Should we rewrite the billing service in Rust?"
CHALLENGE_ZH = "我们应该用 Rust 重写计费服务吗？"

# Every seat, as the header shows it: its label, its model's short label (the fixture's
# files a.gguf and b.gguf: their stems), its temperature.
SEATS: dict[tuple[str, str], list[tuple[str, str, str]]] = {
    ("oxford", "en"): [
        ("🔵 Proposition", "a", "0.3"),
        ("🔴 Opposition", "b", "0.3"),
        ("🟡 Devil's Advocate", "a", "0.9"),
        ("⚖️ Chair", "a", "0.4"),
        ("Completeness Judge", "a", "0.2"),
    ],
    ("oxford", "zh"): [
        ("🔵 正方", "a", "0.3"),
        ("🔴 反方", "b", "0.3"),
        ("🟡 魔鬼辩手", "a", "0.9"),
        ("⚖️ 中立主席", "a", "0.4"),
        ("完整性裁判", "a", "0.2"),
    ],
    ("challenge", "en"): [
        ("Proposer", "a", "0.4"),
        ("Challenger", "b", "0.4"),
        ("Summariser", "a", "0.2"),
        ("Judge", "a", "0.2"),
    ],
    ("challenge", "zh"): [
        ("提议方", "a", "0.4"),
        ("挑战方", "b", "0.4"),
        ("总结者", "a", "0.2"),
        ("裁判", "a", "0.2"),
    ],
}
HEADINGS = {
    "en": ("Motion: ", "Topic: ", "seat", "model", "temperature"),
    "zh": ("辩题：", "议题：", "席位", "模型", "温度"),
}
CASES = [
    ("oxford", "en", OXFORD),
    ("oxford", "zh", OXFORD_ZH),
    ("challenge", "en", CHALLENGE),
    ("challenge", "zh", CHALLENGE_ZH),
]


def debate(
    cli: Cli, tmp_path: Path, dry_models: tuple[str, str], fmt: str, motion: str
) -> tuple[str, dict[str, Any]]:
    """A dry run at 80 columns, every seat on a.gguf but the second side's on b.gguf and the
    devil's advocate's temperature raised (Oxford): its output and transcript."""
    a, b = dry_models
    second = "opposition" if fmt == "oxford" else "challenger"
    args = ["run", motion, "--format", fmt, "--dry-run", "--yes", "--seed", "1"]
    args += ["--model", a, "--role", f"{second}={b}"]
    if fmt == "oxford":
        args += ["--max-rounds", "3", "--temperature", "devil=0.9"]
    out = tmp_path / "out"
    proc = cli(*args, "--out", str(out), home=tmp_path, env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads((out / "transcript.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("fmt", "lang", "motion"), CASES)
def test_the_header_names_each_seats_model_and_temperature(
    cli: Cli,
    tmp_path: Path,
    dry_models: tuple[str, str],
    fmt: str,
    lang: str,
    motion: str,
) -> None:
    shown, saved = debate(cli, tmp_path, dry_models, fmt, motion)
    lines = shown.splitlines()
    first_round = next(i for i, line in enumerate(lines) if line.startswith("─"))
    header = lines[:first_round]
    subject = HEADINGS[lang][0 if fmt == "oxford" else 1]
    assert header[0] == subject + saved["motion"]
    assert header[1].split() == list(HEADINGS[lang][2:])
    rows = header[2:]
    assert len(rows) == len(SEATS[fmt, lang]), header
    for row, (label, model, temperature) in zip(rows, SEATS[fmt, lang], strict=True):
        assert re.fullmatch(rf"{re.escape(label)}\s+{re.escape(model)}\s+{temperature}", row), row
    # The records keep the full references.
    assert set(saved["refs"].values()) == set(dry_models)
    # At 80 columns each seat is one row, and every line of the debate fits but a saved
    # path's, which is printed whole, to be copied.
    out = str(tmp_path / "out")
    assert all(cell_len(line) <= 80 for line in lines if out not in line)
    assert all(line.endswith(("transcript.json", ".md")) for line in lines if out in line)


@pytest.mark.parametrize(("fmt", "lang", "motion"), CASES)
def test_each_speech_names_its_model(
    cli: Cli,
    tmp_path: Path,
    dry_models: tuple[str, str],
    fmt: str,
    lang: str,
    motion: str,
) -> None:
    shown, saved = debate(cli, tmp_path, dry_models, fmt, motion)
    spent = " tokens · " if lang == "en" else "个词元 · "
    stats = [line for line in shown.splitlines() if spent in line]
    second = "opposition" if fmt == "oxford" else "challenger"
    expected = ["b" if t["role"] == second else "a" for t in saved["turns"]]
    assert [line.split(" · ")[0] for line in stats] == expected


OUTCOMES = {
    ("oxford", "en"): "⚖️ Chair's Verdict: ",
    ("oxford", "zh"): "⚖️ 主席裁决：",
    ("challenge", "en"): "Verdict: ",
    ("challenge", "zh"): "裁决：",
}
STOPPED = {
    "en": {
        "hard_cap": "The rounds ended: the most rounds were held.",
        "converged": "The rounds ended: the score reached the threshold.",
        "completed": "The rounds ended: every round was held.",
    },
    "zh": {
        "hard_cap": "各轮结束：已达轮数上限。",
        "converged": "各轮结束：得分达到阈值。",
        "completed": "各轮结束：所有轮次均已完成。",
    },
}
TOTALS = {
    "en": r"\d+\.\d s · (?P<prompt>[\d,]+) prompt \+ (?P<completion>[\d,]+) completion tokens"
    r"( · [\d.]+ tokens/s)?",
    "zh": r"用时\d+\.\d秒 · 提示(?P<prompt>[\d,]+)个词元 \+ 生成(?P<completion>[\d,]+)个词元"
    r"( · 每秒[\d.]+个词元)?",
}


@pytest.mark.parametrize(("fmt", "lang", "motion"), CASES)
def test_the_last_lines_hold_the_outcome_and_the_totals(
    cli: Cli,
    tmp_path: Path,
    dry_models: tuple[str, str],
    fmt: str,
    lang: str,
    motion: str,
) -> None:
    shown, saved = debate(cli, tmp_path, dry_models, fmt, motion)
    outcome, stopped, totals = shown.rstrip("\n").splitlines()[-3:]
    assert outcome.startswith(OUTCOMES[fmt, lang]), outcome
    if fmt == "oxford":
        verdict = next(t["text"] for t in saved["turns"] if t["step"] == "verdict")
        assert outcome.removeprefix(OUTCOMES[fmt, lang]) in " ".join(verdict.split())
    else:
        winner = saved["result"]["verdict"]["winner"]
        side = {
            "proposer": ("Proposer (a)", "提议方（a）"),
            "challenger": ("Challenger (b)", "挑战方（b）"),
        }
        assert side[winner][lang == "zh"] in outcome
    assert stopped == STOPPED[lang][saved["stop_reason"]]
    found = re.fullmatch(TOTALS[lang], totals)
    assert found, totals
    turns = saved["turns"]
    assert int(found["prompt"].replace(",", "")) == sum(t["prompt_tokens"] for t in turns)
    assert int(found["completion"].replace(",", "")) == sum(t["completion_tokens"] for t in turns)


def test_a_long_model_name_folds_in_its_column_at_80_columns(cli: Cli, tmp_path: Path) -> None:
    from gguf_samples import write_gguf

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    stem = "qwen2.5-14b-instruct-abliterated-v2-q4_k_m-imatrix-calibrated-longer-than-a-column"
    long = write_gguf(tmp_path / "models" / f"{stem}.gguf", name="q", chat_template=template)
    args = ("run", OXFORD, "--dry-run", "--yes", "--max-rounds", "3", "--no-save")
    proc = cli(*args, "--role", f"judge={long}", home=tmp_path, env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = lines[: next(i for i, line in enumerate(lines) if line.startswith("─"))]
    assert all(cell_len(line) <= 80 for line in header)
    judge = next(i for i, line in enumerate(header) if line.startswith("Completeness Judge"))
    assert header[judge].endswith(" 0.2")  # its temperature on its first line
    folded = "".join(line.split()[-1] for line in header[judge + 1 :])
    assert (header[judge].split()[2] + folded).startswith(stem[:60])


def test_a_persons_seat_shows_as_a_person_in_the_header(cli: Cli, tmp_path: Path) -> None:
    args = ("run", OXFORD_ZH, "--dry-run", "--max-rounds", "3", "--no-save")
    done = cli(*args, "--role", "opposition=human", home=tmp_path)
    assert done.returncode == 2  # the input ends before the person's turn
    row = next(line for line in done.stdout.splitlines() if line.startswith("🔴 反方"))
    assert row.split()[2:] == ["真人", "–"]


def test_paths_that_share_a_file_name_keep_the_folders_that_tell_them_apart() -> None:
    from moot.models.labels import model_labels

    refs = [
        "smollm2-135m",
        "/models/x/model.gguf",
        "/models/y/model.gguf",
        "/other/qwen.gguf",
        "hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf",
        "ollama:llama3.2:1b",
        "http://127.0.0.1:8080/v1#qwen",
        "human",
    ]
    assert model_labels(refs, person="person") == {
        "smollm2-135m": "smollm2-135m",
        "/models/x/model.gguf": "x/model",
        "/models/y/model.gguf": "y/model",
        "/other/qwen.gguf": "qwen",
        "hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf": (
            "qwen2.5-0.5b-instruct-q4_k_m"
        ),
        "ollama:llama3.2:1b": "ollama:llama3.2:1b",
        "http://127.0.0.1:8080/v1#qwen": "qwen@127.0.0.1:8080",
        "human": "person",
    }
    # A path no folder tells apart from a catalog id is shown as it was given.
    assert model_labels(["smollm2-135m", "smollm2-135m.gguf"])["smollm2-135m.gguf"] == (
        "smollm2-135m.gguf"
    )


def test_quiet_shows_no_header_and_no_totals(cli: Cli, tmp_path: Path) -> None:
    args = ("run", OXFORD, "--dry-run", "--yes", "--max-rounds", "3", "--quiet")
    proc = cli(*args, "--out", str(tmp_path / "out"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip("\n").splitlines()
    assert not any(line.startswith(("Motion:", "seat")) for line in lines)
    assert proc.stdout.rsplit("saved:", 1)[1].split() == [str(tmp_path / "out" / "debate.md")]
    assert "completion tokens" not in proc.stdout


# -- Ctrl-C --------------------------------------------------------------------------------


def stopped_at_the_third_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C pressed while the third turn is shown."""
    from moot.render import LiveView

    finished = LiveView._finished
    seen: list[object] = []

    def finish(view: LiveView, event: Any) -> None:
        seen.append(event)
        if len(seen) == 3:
            raise KeyboardInterrupt
        finished(view, event)

    monkeypatch.setattr(LiveView, "_finished", finish)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ctrl_c_ends_on_the_moot_resume_command_that_goes_on(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    stopped_at_the_third_turn(monkeypatch)
    out = tmp_path / "out"
    motion = OXFORD if lang == "en" else OXFORD_ZH
    proc = cli("run", motion, "--dry-run", "--max-rounds", "3", "--out", str(out), home=tmp_path)
    assert proc.returncode == 130, proc.stderr
    said = {"en": "; continue it with `moot resume {}`", "zh": "；用 `moot resume {}` 继续"}
    last = proc.stdout.rstrip("\n").splitlines()[-1]
    assert last.endswith(said[lang].format(out)), last
    monkeypatch.undo()
    again = cli("resume", str(out), home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (out / "transcript.json").is_file()


def test_ctrl_c_names_a_debate_in_moots_data_directory_by_its_folder(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped_at_the_third_turn(monkeypatch)
    proc = cli("run", OXFORD, "--dry-run", "--max-rounds", "3", home=tmp_path)
    assert proc.returncode == 130, proc.stderr
    found = re.search(r"continue it with `moot resume ([^`/ ]+)`$", proc.stdout.rstrip("\n"))
    assert found, proc.stdout[-300:]
    monkeypatch.undo()
    again = cli("resume", found[1], home=tmp_path)
    assert again.returncode == 0, again.stderr


def test_ctrl_c_before_the_journal_is_written_names_no_resume(tmp_path: Path) -> None:
    from moot.cli.run import _interrupted
    from moot.debates.settings import DebateSetup
    from moot.formats import get_format
    from moot.formats.base import RunOptions

    fmt = get_format("oxford")
    out = tmp_path / "d1"
    out.mkdir()
    setup = DebateSetup(
        format=fmt, motion=OXFORD, language="en", seed=1, params=fmt.params(RunOptions()),
        out_dir=out,
    )  # fmt: skip
    assert "moot resume" not in _interrupted(setup, seated=False)
    (out / "journal.jsonl").write_text('{"type": "debate"}\n')
    assert f"`moot resume {out}`" in _interrupted(setup, seated=False)
