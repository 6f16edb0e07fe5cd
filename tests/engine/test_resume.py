"""Nothing lost: a seeded debate killed with SIGKILL and resumed equals one never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_HOME, Cli
from moot.debates.runner import DebateRun, resume_setup
from moot.debates.settings import DebateSetup
from moot.events import Event, TurnFinished
from moot.formats.base import RunOptions
from moot.formats.decision.flow import FORMAT as DECISION
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel
from moot.records.journal import read_journal
from moot.speeches import brief
from test_offline import run_audited

ARGS = ["--max-rounds", "3", "--min-score", "10", "--max-tokens", "16", "--seed", "11", "--quiet"]
REAL = {"MOOT_HOME": str(REAL_HOME)}  # where the real models are installed


@contextmanager
def at_a_terminal(cli: Cli, *args: str, typed: str) -> Iterator[subprocess.Popen[str]]:
    """`moot ARGS` with a terminal as stdin, where a user has typed TYPED."""
    terminal, keyboard = os.openpty()
    try:
        proc = cli.popen(*args, env=REAL, stdin=keyboard)
    finally:
        os.close(keyboard)
    try:
        os.write(terminal, typed.encode())  # held by the terminal until moot reads it
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(terminal)


def turns(folder: Path) -> list[dict[str, object]]:
    return json.loads((folder / "transcript.json").read_text())["turns"]  # type: ignore[no-any-return]


def journaled(folder: Path) -> int:
    path = folder / "journal.jsonl"
    if not path.exists():
        return 0
    return sum('"type": "turn"' in line for line in path.read_text().splitlines())


# An Oxford debate on SmolLM2 (its points of information drawn from the seed), and a
# challenge on Gemma-3: Gemma attends through a sliding window, so its cache is restored
# from whole-context snapshots, a path of its own.
CHALLENGE = ["--format", "challenge", "--rounds", "3", "--max-tokens", "24", "--seed", "11"]
KILLED = {
    "smollm2-135m": ("cities should ban cars", ARGS, 6),
    "gemma3-270m": ("should we rewrite the billing service in Rust?", [*CHALLENGE, "--quiet"], 4),
}


@pytest.mark.real
@pytest.mark.parametrize("model", list(KILLED))
def test_sigkill_then_resume_gives_the_uninterrupted_transcript(
    tmp_path: Path, model: str, cli: Cli
) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    motion, shape, after = KILLED[model]
    args = [*shape, "--model", model]
    # The uninterrupted run is also the Oxford debate's offline audit: a real debate opens
    # no connection beyond loopback (test_offline.py audits the other formats).
    first, connections = run_audited(["run", motion, "--out", str(whole), *args], tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert connections == []

    killed = cli.popen("run", motion, "--out", str(cut), *args, env=REAL)
    deadline = time.monotonic() + 300
    while journaled(cut) < after and time.monotonic() < deadline:
        time.sleep(0.1)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    done_before = journaled(cut)
    assert after <= done_before < len(turns(whole))
    assert not (cut / "transcript.json").exists()

    resumed = cli.popen("resume", str(cut), "--quiet", env=REAL)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err[-2000:]
    a, b = turns(whole), turns(cut)
    assert [(t["role"], t["step"], t["text"]) for t in a] == [
        (t["role"], t["step"], t["text"]) for t in b
    ]
    # The turns finished before the kill were reused, not generated again.
    lines = (cut / "journal.jsonl").read_text().splitlines()
    assert sum('"type": "turn"' in line for line in lines) == len(b)
    assert sum('"type": "debate"' in line for line in lines) == 1
    # `moot replay` of a real debate (it reads no cache of its own) is proven in
    # tests/tournaments/test_tournament_parallel.py, on a challenge debate Gemma-3 speaks in.


def test_resume_refuses_a_finished_debate(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    proc = cli(
        "run",
        "tea is better than coffee",
        "--dry-run",
        "--max-rounds",
        "3",
        "--out",
        str(tmp_path / "d"),
        "--quiet",
        home=home,
    )
    assert proc.returncode == 0
    again = cli("resume", str(tmp_path / "d"), home=home)
    assert again.returncode == 2 and "already finished" in again.stderr


def test_replay_names_the_first_turn_that_differs(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    proc = cli(
        "run",
        "tea is better than coffee",
        "--dry-run",
        "--max-rounds",
        "3",
        "--seed",
        "4",
        "--out",
        str(tmp_path / "d"),
        "--quiet",
        home=home,
    )
    assert proc.returncode == 0
    data = json.loads((tmp_path / "d" / "transcript.json").read_text())
    data["turns"][3]["text"] = "a different speech"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    again = cli("replay", str(tampered), home=home)
    assert again.returncode == 1
    assert "turn 3 differs" in again.stdout and "a different speech" in again.stdout
    assert "round 1, opposition/speech" in " ".join(again.stdout.split())
    original = json.loads((tmp_path / "d" / "transcript.json").read_text())
    closing = next(t for t in original["turns"] if t["step"] == "verdict")
    closing["text"] = "another verdict"
    tampered.write_text(json.dumps(original))
    late = cli("replay", str(tampered), home=home)
    assert late.returncode == 1
    assert "after the rounds, chair/verdict" in " ".join(late.stdout.split())
    bad = cli("replay", str(tmp_path / "nope.json"), home=home)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")


# -- the decision format: the plan a user corrected survives the kill --------------------

TOPIC = "Postgres vs MySQL for a small analytics app"
DECISION_ARGS = ["--format", "decision", "--preset", "quick", "--max-tokens", "24", "--seed", "11"]
# The user adds a third position, sees the proposal again, and accepts it.
CORRECTION = "positions: Postgres | MySQL | SQLite\n\n"
CORRECTED = {"A": "Postgres", "B": "MySQL", "C": "SQLite"}


@pytest.mark.real
def test_a_decision_killed_and_resumed_keeps_the_plan_the_user_corrected(
    tmp_path: Path, cli: Cli
) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    run = ["run", TOPIC, *DECISION_ARGS, "--quiet", "--out"]
    with at_a_terminal(cli, *run, str(whole), typed=CORRECTION) as first:
        _, err = first.communicate(timeout=600)
        assert first.returncode == 0, err[-2000:]
    assert json.loads((whole / "transcript.json").read_text())["result"]["seats"] == CORRECTED

    with at_a_terminal(cli, *run, str(cut), typed=CORRECTION) as killed:
        deadline = time.monotonic() + 300
        while journaled(cut) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
    assert 2 <= journaled(cut) < len(turns(whole))

    resumed = cli.popen("resume", str(cut), "--quiet", env=REAL)  # no terminal: nothing asked
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err[-2000:]
    a, b = turns(whole), turns(cut)
    assert [(t["role"], t["step"], t["text"]) for t in a] == [
        (t["role"], t["step"], t["text"]) for t in b
    ]
    assert json.loads((cut / "transcript.json").read_text())["result"]["seats"] == CORRECTED
    kept = [r for r in read_journal(cut / "journal.jsonl") if r["type"] == "kept"]
    assert len(kept) == 1 and kept[0]["value"]["positions"] == list(CORRECTED.values())


class Reader(ScriptedModel):
    """Says the first two lines of its conversation's first prompt (the topic, its
    position): a plan that changed on resume shows in the text."""

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            first = next(m for m in request.messages if m.role == "user")
            self.queue(" / ".join(first.content.splitlines()[:2]))
        return super().chat(request, on_text=on_text)


class Crash(Exception):
    """Stands in for a kill right after a turn reached the journal."""


def test_a_resumed_decision_goes_on_with_the_corrected_plan_without_asking(
    tmp_path: Path,
) -> None:
    model = Reader()
    asked: list[str] = []

    def ask(proposal: str) -> str:
        asked.append(proposal)
        return "positions: Postgres | MySQL | SQLite" if len(asked) % 2 else ""

    setup = DebateSetup(
        format=DECISION,
        motion=TOPIC,
        language="en",
        seed=3,
        params=DECISION.params(RunOptions(rounds=1)),
        out_dir=tmp_path / "whole",
    )
    whole = DebateRun(setup, model_factory=lambda ref: model, ask=ask).run()
    assert whole.transcript.result and whole.transcript.result["seats"] == CORRECTED

    def crash(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.turn.index == 4:
            raise Crash

    cut = replace(setup, out_dir=tmp_path / "cut")
    with pytest.raises(Crash):
        DebateRun(cut, listeners=[crash], model_factory=lambda ref: model, ask=ask).run()
    assert len(asked) == 4

    again, records = resume_setup(tmp_path / "cut")
    resumed = DebateRun(again, model_factory=lambda ref: model, replay=records).run()
    assert len(asked) == 4  # the plan came from the journal
    assert [(t.role, t.step, t.text) for t in resumed.transcript.turns] == [
        (t.role, t.step, t.text) for t in whole.transcript.turns
    ]
    assert "Your position: SQLite" in resumed.transcript.turns[5].text  # spoken after the resume


# -- records written before the steps after the rounds carried no round number ------------
# Those moot numbered the closing steps one past the last round held (the adversarial
# synthesis: the last round itself); they still resume, replay and render as they did.

DRY = {
    "oxford": ["--max-rounds", "3"],
    "decision": ["--positions", "tea", "--positions", "coffee", "--yes", "--rounds", "1"],
    "challenge": ["--rounds", "2"],
    "adversarial": ["--rounds", "2"],
}


def old_numbering(fmt: str, turns: list[dict[str, Any]]) -> int:
    """Number TURNS after the rounds as moot did before; how many there are."""
    last = max(t["round"] for t in turns if t["round"] is not None)
    after = [t for t in turns if t["round"] is None]
    for t in after:
        t["round"] = last if fmt == "adversarial" else last + 1
    return len(after)


def dry_run(cli: Cli, tmp_path: Path, fmt: str, models: tuple[str, str]) -> Path:
    folder = tmp_path / fmt
    named = ["--model", models[0], "--model", models[1]] if fmt == "adversarial" else []
    proc = cli(
        "run", "tea is better than coffee", "--format", fmt, "--dry-run", "--seed", "4",
        "--out", str(folder), "--quiet", *DRY[fmt], *named, home=tmp_path / "home",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return folder


def test_an_old_form_journal_resumes_into_the_same_debate(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    folder = dry_run(cli, tmp_path, "oxford", dry_models)
    whole = turns(folder)
    document = (folder / "debate.md").read_text()
    lines = (folder / "journal.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    old_numbering("oxford", [r for r in records if r["type"] == "turn"])
    # Cut after the first closing turn, as a kill there would have left it.
    first = next(i for i, r in enumerate(records) if r.get("step") == "rebuttal")
    kept = [json.dumps(r, ensure_ascii=False) for r in records[: first + 1]]
    (folder / "journal.jsonl").write_text("\n".join(kept) + "\n")
    (folder / "transcript.json").unlink()
    (folder / "debate.md").unlink()

    resumed = cli("resume", str(folder), "--quiet", home=tmp_path / "home")
    assert resumed.returncode == 0, resumed.stderr
    again = turns(folder)
    assert [(t["role"], t["step"], t["text"]) for t in again] == [
        (t["role"], t["step"], t["text"]) for t in whole
    ]
    # The reused turn keeps the number it was written with; the turns run now carry none.
    assert [t["round"] for t in again[-4:]] == [4, None, None, None]
    # The brief is the same; the speeches after it show each turn as it was recorded.
    assert brief((folder / "debate.md").read_text()) == brief(document)
    assert "round 4" not in brief(document).lower()


def test_an_old_form_transcript_replays_and_shows(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    folder = dry_run(cli, tmp_path, "oxford", dry_models)
    path = folder / "transcript.json"
    data = json.loads(path.read_text())
    assert old_numbering("oxford", data["turns"]) == 4
    path.write_text(json.dumps(data, ensure_ascii=False))
    home = tmp_path / "home"

    replayed = cli("replay", str(path), home=home)
    assert replayed.returncode == 0, replayed.stderr
    assert f"all {len(data['turns'])} turns match" in replayed.stdout

    (folder / "debate.md").unlink()  # history then shows the turns of the transcript
    shown = cli("history", "show", str(folder), home=home)
    assert shown.returncode == 0, shown.stderr
    assert "judge · brief" in shown.stdout and "proposition · rebuttal" in shown.stdout
    assert "round 4" not in shown.stdout.lower() and "None" not in shown.stdout


@pytest.mark.parametrize("fmt", list(DRY))
def test_an_old_form_transcript_renders_as_the_new_form_does(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str], fmt: str
) -> None:
    from moot.formats import get_format
    from moot.records.transcript import Transcript

    folder = dry_run(cli, tmp_path, fmt, dry_models)
    data = json.loads((folder / "transcript.json").read_text())
    new = Transcript.model_validate(data)
    assert old_numbering(fmt, data["turns"]) >= 1
    old = Transcript.model_validate(data)
    render = get_format(fmt).render
    saved = (folder / get_format(fmt).document).read_text()
    assert render(old) == render(new) == brief(saved)  # the brief, before every speech


def test_a_resumed_debate_keeps_its_think_budget_and_call_time_limit(
    tmp_path: Path, cli: Cli
) -> None:
    from moot.config import THINK_BUDGET
    from moot.debates.runner import setup_from_record

    out = tmp_path / "d"
    args = ["--dry-run", "--think-budget", "7", "--call-timeout", "33", "--out", str(out)]
    proc = cli("run", "tea is better than coffee", *args, "--quiet", home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "transcript.json").read_text())
    run = setup_from_record(data, out_dir=None).run
    assert (run.think_budget, run.call_timeout_s) == (7, 33.0)
    for key in ("think_budget", "call_timeout_s"):  # a record from before they were kept
        del data["params"][key]
    older = setup_from_record(data, out_dir=None).run
    assert (older.think_budget, older.call_timeout_s) == (THINK_BUDGET, None)
