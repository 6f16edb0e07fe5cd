"""A debate running in another process is running, not interrupted: the process holds its
folder (`journal.hold`, a `flock` on its journal) while it runs, and the system lets go of
it when that process dies, so a killed debate is interrupted at once and resumes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import moot
from conftest import Cli
from moot import history
from moot.debates.runner import DebateRun
from moot.debates.settings import DebateSetup
from moot.errors import UsageError
from moot.events import Event, TurnFinished
from moot.formats.oxford.flow import FORMAT
from moot.formats.oxford.schemas import OxfordParams
from moot.records.journal import running

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no flock: nothing is held")

# Holds the debate in argv[1] as a running moot does, until its stdin closes.
HOLDER = (
    "import sys; from pathlib import Path; from moot.records.journal import hold; "
    "held = hold(Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()"
)


def interrupted(cli: Cli, home: Path) -> Path:
    """A dry-run debate saved in HOME's data directory, cut after its first turns as a
    killed one is: its journal's first lines, no transcript."""
    done = cli("run", "Cities should ban cars", "--dry-run", "--yes", "--seed", "3", home=home)
    assert done.returncode == 0, done.stderr
    [folder] = (home / "debates").iterdir()
    journal = folder / "journal.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:4]))
    (folder / "transcript.json").unlink()
    (folder / "debate.md").unlink()
    return folder


@pytest.fixture(name="held")
def _held(cli: Cli, tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    folder = interrupted(cli, tmp_path / "home")
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    yield folder, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_a_debate_another_process_holds_is_running_and_is_not_resumed(
    cli: Cli, tmp_path: Path, held: tuple[Path, subprocess.Popen[str]]
) -> None:
    folder, proc = held
    home, name = tmp_path / "home", folder.name
    assert history.find(str(folder)).status == "running"
    from moot.web import wire  # the page's history, and its saved view, say so too

    assert wire.saved_summary(history.find(str(folder)))["status"] == "running"
    listed = cli("history", "list", home=home)
    assert "oxford · 3 turns · running, dry run" in listed.stdout
    shown = cli("history", "show", name, home=home)
    said = " ".join(shown.stdout.split())  # wrapped at 80 columns
    assert said.startswith(f"{name} is running in another process: its turns so far")

    checked = cli("check", name, home=home)
    assert checked.returncode == 2 and "moot resume" not in checked.stderr
    assert checked.stderr == (
        f"error: {name} is still running: it has no transcript.json yet\n"
        "hint: wait for it to finish, then run this again\n"
    )
    resumed = cli("resume", name, home=home)
    assert resumed.returncode == 2
    assert resumed.stderr.startswith(f"error: {folder} is running: another moot process")
    assert "hint: wait for it to finish, or stop it" in resumed.stderr
    with pytest.raises(UsageError) as refused:
        moot.Debate.resume(folder)
    assert refused.value.key == "records.journal.running"
    assert json.loads(folder.joinpath("journal.jsonl").read_text().splitlines()[-1])  # untouched

    # Killed, it lets go: the debate is interrupted, and resumes to its end.
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert history.find(str(folder)).status == "interrupted"
    again = cli("resume", name, home=home)
    assert again.returncode == 0, again.stderr
    assert history.find(str(folder)).status == "finished"


def test_a_debate_holds_its_folder_while_it_runs_and_lets_go_at_its_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    seen: list[bool] = []

    def listen(event: Event) -> None:
        if isinstance(event, TurnFinished):
            seen.append(running(out))  # another open of the journal finds it held

    setup = DebateSetup(
        format=FORMAT,
        motion="This House Believes That cities should ban cars",
        language="en",
        seed=3,
        params=OxfordParams(max_rounds=3),
        out_dir=out,
    )
    setup.run = setup.run.model_copy(update={"dry_run": True})
    DebateRun(setup, listeners=[listen]).run()
    assert seen and all(seen)
    assert not running(out)
