"""Nothing lost: a seeded debate killed with SIGKILL and resumed equals one never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import REAL_HOME

ARGS = ["--max-rounds", "3", "--min-score", "10", "--max-tokens", "24", "--seed", "11", "--quiet"]


def moot(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "MOOT_HOME": str(REAL_HOME)}
    return subprocess.Popen(
        [sys.executable, "-m", "moot", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def turns(folder: Path) -> list[dict[str, object]]:
    return json.loads((folder / "transcript.json").read_text())["turns"]  # type: ignore[no-any-return]


def journaled(folder: Path) -> int:
    path = folder / "journal.jsonl"
    if not path.exists():
        return 0
    return sum('"type": "turn"' in line for line in path.read_text().splitlines())


def test_sigkill_then_resume_gives_the_uninterrupted_transcript(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    first = moot("run", "cities should ban cars", "--out", str(whole), *ARGS)
    assert first.wait(timeout=600) == 0, first.stderr.read() if first.stderr else ""

    killed = moot("run", "cities should ban cars", "--out", str(cut), *ARGS)
    deadline = time.monotonic() + 300
    while journaled(cut) < 6 and time.monotonic() < deadline:
        time.sleep(0.1)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    done_before = journaled(cut)
    assert 6 <= done_before < len(turns(whole))
    assert not (cut / "transcript.json").exists()

    resumed = moot("resume", str(cut), "--quiet")
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

    # `moot replay` re-runs the saved transcript and finds every turn the same.
    replayed = moot("replay", str(whole / "transcript.json"))
    out, err = replayed.communicate(timeout=600)
    assert replayed.returncode == 0, err[-2000:]
    assert f"all {len(a)} turns match" in out


def test_resume_refuses_a_finished_debate(tmp_path: Path) -> None:
    proc = moot(
        "run",
        "tea is better than coffee",
        "--dry-run",
        "--max-rounds",
        "3",
        "--out",
        str(tmp_path / "d"),
        "--quiet",
    )
    assert proc.wait(timeout=120) == 0
    again = moot("resume", str(tmp_path / "d"))
    _, err = again.communicate(timeout=60)
    assert again.returncode == 2 and "already finished" in err


def test_replay_names_the_first_turn_that_differs(tmp_path: Path) -> None:
    proc = moot(
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
    )
    assert proc.wait(timeout=120) == 0
    data = json.loads((tmp_path / "d" / "transcript.json").read_text())
    data["turns"][3]["text"] = "a different speech"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    again = moot("replay", str(tampered))
    out, _ = again.communicate(timeout=120)
    assert again.returncode == 1
    assert "turn 3 differs" in out and "a different speech" in out
    bad = moot("replay", str(tmp_path / "nope.json"))
    _, err = bad.communicate(timeout=60)
    assert bad.returncode == 2 and err.startswith("error:")
