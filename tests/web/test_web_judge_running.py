"""The page in a real browser on what a debate's judge and another process do to it: a
debate whose judge does not answer is shown as such live, not plainly finished, and a
debate another process runs now is neither resumed nor deleted from the page. Against
`moot serve --dry-run` on 127.0.0.1, its Oxford judge never giving its brief in time."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from web_serve import Browser, Served, browsing, english_page, serve

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no flock: nothing is held")

# In the server's process: the dry run's judge gives no brief within the call time limit.
SLOW_BRIEF = """
from moot.errors import CallTimeoutError
from moot.inference import scripted

_minimal = scripted._minimal


def _reply(schema):
    if schema.__name__ == "Brief":
        raise CallTimeoutError(seconds=240, model="echo:judge")
    return _minimal(schema)


scripted._minimal = _reply
"""
# Holds the debate in argv[1] as a running moot does, until its stdin closes.
HOLDER = (
    "import sys; from pathlib import Path; from moot.records.journal import hold; "
    "held = hold(Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = serve(
        tmp_path_factory.mktemp("judge-home"), "--dry-run", "--pace", "0.001", prelude=SLOW_BRIEF
    )
    yield served
    served.stop()


@pytest.fixture(scope="module")
def browser(server: Served) -> Iterator[Browser]:
    with browsing(server) as b:
        yield b


@pytest.fixture
def page(browser: Browser, server: Served) -> Iterator[Any]:
    with english_page(browser, server) as page:
        yield page


def test_a_running_debate_whose_judge_does_not_answer_is_shown_unjudged_live(
    page: Any, server: Served
) -> None:
    page.fill("textarea[name=motion]", "cities should ban cars")
    page.fill("input[name='params.max_rounds']", "3")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".debate .turn")
    assert page.locator(".debate").get_attribute("data-state") in ("queued", "running")
    page.wait_for_selector(".debate[data-state=unjudged] .document", timeout=60_000)
    assert page.locator(".debate .state").first.inner_text() == (
        "finished, the judge did not answer"
    )
    document = " ".join(page.locator(".document").first.inner_text().split())
    assert "This brief is missing the judge's reply: Judge · brief (failed: timeout:" in document
    # The turns it finished stay: the closing speeches and the Chair's verdict among them.
    href = page.locator("a.open-saved").get_attribute("href")
    folder = page.evaluate("h => decodeURIComponent(h.split('/')[2])", href)
    transcript = json.loads((server.home / "debates" / folder / "transcript.json").read_text())
    steps = [t["step"] for t in transcript["turns"]]
    assert steps[-2:] == ["verdict", "brief"] and transcript["turns"][-1]["data"] == {}
    page.goto(server.base + "/#/history")
    row = page.locator(f".history-table tr[data-id='{folder}'] .state")
    assert row.inner_text() == "finished, the judge did not answer"


def interrupted(cli: Cli, home: Path) -> Path:
    """A dry-run debate saved in HOME's data directory, cut after its first turns as a
    killed one is: its journal's first lines, no transcript."""
    debates = home / "debates"
    before = set(debates.iterdir()) if debates.is_dir() else set()
    done = cli("run", "Cities should tax cars", "--dry-run", "--yes", "--seed", "3", home=home)
    assert done.returncode == 0, done.stderr
    [folder] = set(debates.iterdir()) - before
    journal = folder / "journal.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:4]))
    (folder / "transcript.json").unlink()
    (folder / "debate.md").unlink()
    return folder


def test_the_page_neither_resumes_nor_deletes_a_debate_another_process_runs(
    page: Any, server: Served, cli: Cli
) -> None:
    folder = interrupted(cli, server.home)
    page.goto(f"{server.base}/#/saved/{folder.name}")
    page.wait_for_selector(".debate.saved button.resume")  # interrupted: it may be resumed
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        # Another process took it up since the page was drawn: the page's Resume is refused.
        page.click("button.resume")
        page.wait_for_selector(".debate.saved .problem")
        said = " ".join(page.locator(".debate.saved .problem").first.inner_text().split())
        assert f"{folder} is running: another moot process is writing it now" in said
        assert "stop it (Ctrl-C where it runs, or Stop on the page)" in said
        assert "#/saved/" in page.url  # no job was started
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("button.delete")
        page.wait_for_function(
            "() => document.querySelectorAll('.debate.saved .problem').length > 1"
        )
        said = " ".join(page.locator(".debate.saved .problem").first.inner_text().split())
        assert f"{folder.name} is running: a process is writing it now" in said
        assert folder.joinpath("journal.jsonl").is_file()
        # Drawn again, it is running, with nothing to resume.
        page.reload()
        page.wait_for_selector(".debate.saved .state")
        assert page.locator(".debate.saved .state").inner_text() == "running"
        assert page.locator("button.resume").count() == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
