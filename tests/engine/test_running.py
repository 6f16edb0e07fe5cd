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


def interrupted(cli: Cli, home: Path, motion: str = "Cities should ban cars") -> Path:
    """A dry-run debate on MOTION saved in HOME's data directory, cut after its first turns
    as a killed one is: its journal's first lines, no transcript."""
    done = cli("run", motion, "--dry-run", "--yes", "--seed", "3", home=home)
    assert done.returncode == 0, done.stderr
    [folder] = (home / "debates").iterdir()
    journal = folder / "journal.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:4]))
    (folder / "transcript.json").unlink()
    (folder / "debate.md").unlink()
    return folder


def holding(folder: Path) -> subprocess.Popen[str]:
    """A process of its own that holds the debate in FOLDER, as a running moot does, until
    its stdin closes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def let_go(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture(name="held")
def _held(cli: Cli, tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    folder = interrupted(cli, tmp_path / "home")
    proc = holding(folder)
    yield folder, proc
    let_go(proc)


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


RM_REFUSED = {
    "en": (
        "error: {id} is running: a process is writing it now, and moot does not delete it\n"
        "hint: wait for it to finish, or stop it (Ctrl-C where it runs, or Stop on the "
        "page), then delete it\n"
    ),
    "zh": (
        "错误： {id} 正在进行：有进程正在写入它，moot 不会删除它\n"
        "提示： 请等它结束，或先停止它（在它运行的终端按 Ctrl-C，或在页面上点“停止”），"
        "再删除它\n"
    ),
}
MOTIONS = {"en": "Cities should ban cars", "zh": "城市应该禁止私家车进入市中心吗？"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_running_debate_is_not_deleted_and_is_once_it_stops(
    lang: str, cli: Cli, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    folder = interrupted(cli, home, MOTIONS[lang])
    proc = holding(folder)
    try:
        refused = cli("history", "rm", folder.name, "--yes", home=home)
        assert refused.returncode == 2
        assert refused.stderr == RM_REFUSED[lang].format(id=folder.name)
        assert folder.joinpath("journal.jsonl").is_file()
        assert history.find(str(folder)).status == "running"
    finally:
        let_go(proc)
    done = cli("history", "rm", folder.name, "--yes", home=home)
    assert done.returncode == 0, done.stderr
    assert not folder.exists()


def test_rm_all_deletes_every_debate_but_the_running_one_and_names_it(
    cli: Cli, tmp_path: Path, held: tuple[Path, subprocess.Popen[str]]
) -> None:
    folder, _ = held
    home = tmp_path / "home"
    other = cli("run", "Cities should tax cars", "--dry-run", "--yes", home=home)
    assert other.returncode == 0, other.stderr
    assert len(list((home / "debates").iterdir())) == 2
    cleared = cli("history", "rm", "--all", "--yes", home=home)
    assert cleared.returncode == 2
    assert cleared.stdout == "deleted 1 debate(s)\n"
    assert cleared.stderr == (
        f"error: 1 running debate(s) left as they are: {folder.name}; every other was "
        "deleted\nhint: wait for them to finish, or stop them (Ctrl-C where they run, or "
        "Stop on the page), then delete them\n"
    )
    assert list((home / "debates").iterdir()) == [folder]
