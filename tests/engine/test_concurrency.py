"""Debates running at the same time never share a folder, a state file or a half-written file."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from pathlib import Path

import pytest

from conftest import Cli
from moot import history
from moot.errors import UsageError
from moot.formats.challenge import state as challenge_state
from moot.formats.challenge.state import DebateState, Side
from moot.records.files import create_atomic, write_atomic
from moot.records.journal import read_journal

TOPIC = "Should we rewrite the billing service in Rust?"


def leftovers(root: Path) -> list[Path]:
    """Temp files a writer left behind (write_atomic's and create_atomic's start with a dot)."""
    return [p for p in root.rglob(".*") if p.is_file()]


def test_debates_started_together_each_get_their_own_files(moot_home: Path, cli: Cli) -> None:
    args = ["run", TOPIC, "--format", "challenge", "--rounds", "1", "--dry-run", "--quiet"]
    # Four processes at once, as four terminals would start them.
    procs = [cli.popen(*args, "--seed", str(seed), home=moot_home) for seed in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]

    folders = sorted((moot_home / "debates").iterdir())
    assert len(folders) == 4  # the same motion, most likely in the same second
    for folder in folders:
        transcript = json.loads((folder / "transcript.json").read_text())
        records = read_journal(folder / "journal.jsonl")
        assert [r["type"] for r in records].count("debate") == 1
        assert [r for r in records if r["type"] == "turn"] == [
            {"type": "turn", **t} for t in transcript["turns"]
        ]
    assert {json.loads((f / "transcript.json").read_text())["seed"] for f in folders} == {
        0,
        1,
        2,
        3,
    }

    state = moot_home / "state" / "debate" / "dry-run"  # dry runs: their own state files
    states = {p.name: json.loads(p.read_text()) for p in state.glob("debate-*.json")}
    assert len(states) == 4 and all(s["status"] == "completed" for s in states.values())
    last = json.loads((state / "last-debate.json").read_text())
    assert last in states.values()  # whole, and one of the four
    assert leftovers(moot_home) == []


def test_two_claims_on_one_motion_in_one_second_get_two_folders(
    moot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Frozen(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Frozen:  # type: ignore[override]
            return cls(2025, 1, 2, 3, 4, 5)

    monkeypatch.setattr(history, "datetime", Frozen)
    claims: list[history.Claim] = []
    threads = [
        threading.Thread(target=lambda: claims.append(history.claim(None, motion="Tea!")))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    names = sorted(c.path.name for c in claims)
    assert names == ["20250102-030405-tea"] + [f"20250102-030405-tea-{n}" for n in range(2, 9)]
    assert all((c.path / "journal.jsonl").is_file() for c in claims)
    assert all(c.path.stat().st_mode & 0o777 == 0o700 for c in claims)


def test_an_out_folder_that_holds_a_debate_is_refused(tmp_path: Path, moot_home: Path) -> None:
    out = tmp_path / "out"
    first = history.claim(out, motion="x")
    with pytest.raises(UsageError, match="already holds a debate"):
        history.claim(out, motion="x")
    first.release()  # nothing was written: the claim is given back, folder and all
    assert not out.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    history.claim(mine, motion="x").release()
    assert mine.is_dir() and list(mine.iterdir()) == []  # a folder the user made stays
    kept = history.claim(mine, motion="x")
    (mine / "journal.jsonl").write_text('{"type": "debate"}\n')
    kept.release()
    assert (mine / "journal.jsonl").is_file()  # a journal with records is never given back


def test_the_cli_refuses_to_mix_two_debates_in_one_folder(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    out = tmp_path / "out"
    run = ["run", "tea is better than coffee", "--dry-run"]
    run += ["--max-rounds", "3", "--quiet", "--out", str(out)]
    assert cli(*run, home=home).returncode == 0
    journal = (out / "journal.jsonl").read_text()
    again = cli(*run, home=home)
    assert again.returncode == 2 and "already holds a debate" in again.stderr
    assert (out / "journal.jsonl").read_text() == journal

    # A debate that fails before its first record leaves no folder behind.
    bad = [*run[:2], "--quiet", "--model", str(tmp_path / "missing.gguf")]
    failed = cli(*bad, home=home)
    assert failed.returncode == 2 and "missing.gguf" in failed.stderr
    debates = tmp_path / "home" / "debates"
    assert not debates.exists() or list(debates.iterdir()) == []


def test_state_ids_drawn_twice_still_name_two_files(
    moot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = "debate-20250102T030405Z-abcd"  # both debates drew the same id
    monkeypatch.setattr(challenge_state, "new_id", lambda: "debate-x")
    side = Side(tool="m", model="m")
    made = [
        DebateState(id=drawn, topic=t, proposer=side, challenger=side, effort="low", max_rounds=1)
        for t in ("one", "two")
    ]
    paths = [state.save() for state in made]
    assert [p.name for p in paths] == ["debate-20250102T030405Z-abcd.json", "debate-x.json"]
    assert [json.loads(p.read_text())["topic"] for p in paths] == ["one", "two"]
    made[0].save()  # a later save rewrites its own file
    assert json.loads(paths[0].read_text())["topic"] == "one"


def test_many_writers_of_one_file_leave_it_whole(tmp_path: Path) -> None:
    target = tmp_path / "last-debate.json"
    seen: list[str] = []

    def write(n: int) -> None:
        for i in range(30):
            write_atomic(target, json.dumps({"writer": n, "i": i, "pad": "x" * 5000}))
            seen.append(target.read_text())

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 6 * 30  # every write was read back: no writer died in its thread
    assert all(json.loads(text)["pad"] == "x" * 5000 for text in seen)
    created = [create_atomic(tmp_path / "once.json", str(n)) for n in range(5)]
    assert created == [True, False, False, False, False]
    assert (tmp_path / "once.json").read_text() == "0"
    assert leftovers(tmp_path) == []
