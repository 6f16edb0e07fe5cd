"""The page in Chromium against `moot serve` running the real tiny models: an Oxford debate
started from the form streams in, the page takes the Opposition seat (speeches typed, points
of information declined), the debate ends in its brief, is opened again from the history,
downloaded and deleted; a Chinese debate the same way, in Chinese; nothing on the page
leaves the server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, real_model_path
from web_serve import Browser, Served, browsing, serve

pytestmark = pytest.mark.real

LONG = 600_000  # ms: a whole debate on a CPU
ENDED = ".debate[data-state=finished] .document, .debate[data-state=failed]"


def ended(page: Any) -> bool:
    """Whether the debate has ended; a debate that failed fails the test with its error."""
    if page.locator(".debate[data-state=failed]").count():
        pytest.fail(f"the debate failed: {page.locator('.debate').first.inner_text()[-600:]}")
    return bool(page.locator(".debate[data-state=finished]").count())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("real-serve-home")
    for model in ("smollm2-135m", "gemma3-270m"):
        real = real_model_path(model)
        link = home / "models" / model / real.name
        link.parent.mkdir(parents=True)
        link.symlink_to(real)
    served = serve(home)
    yield served
    served.stop()


@pytest.fixture(scope="module")
def browser(server: Served) -> Iterator[Browser]:
    with browsing(server) as b:
        yield b


@pytest.fixture
def page(browser: Browser, server: Served) -> Iterator[Any]:
    page = browser.page()
    page.goto(server.url)
    page.wait_for_selector("#debate-form")
    yield page
    page.close()
    assert browser.outside(server.base) == []


def start(page: Any, motion: str, model: str, *, seat: str | None = None) -> None:
    """Start a short debate from the form (SEAT: the role the page takes), and watch its
    first speech stream in."""
    page.fill("textarea[name=motion]", motion)
    page.fill("input[name='models.0']", model)
    page.fill("input[name='params.max_rounds']", "3")
    if seat:
        page.click(f".seat[data-role={seat}] .take-seat")
    page.click("summary")
    page.fill("input[name=seed]", "7")
    page.fill("input[name=max_tokens]", "48")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".turn.speaking", timeout=LONG)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.turn.speaking .text')].some(t => t.textContent)",
        timeout=LONG,
    )


def debate(page: Any, motion: str, model: str) -> int:
    """A short debate from the form, to its brief; how many turns it spoke."""
    start(page, motion, model)
    page.wait_for_selector(ENDED, timeout=LONG)
    assert ended(page)
    return int(page.locator(".turn.spoken").count())


def reopen_download_delete(page: Any, server: Served, tmp_path: Path, turns: int) -> None:
    page.click("a.open-saved")
    page.wait_for_selector(".debate.saved .document")
    assert page.locator(".turn.spoken").count() == turns
    with page.expect_download() as download:
        page.click("a.download[download='transcript.json']")
    path = tmp_path / "transcript.json"
    download.value.save_as(path)
    assert len(json.loads(path.read_text(encoding="utf-8"))["turns"]) == turns
    folder = page.evaluate("decodeURIComponent(location.hash.split('/')[2])")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button.delete")
    page.wait_for_url("**/#/history")
    assert not (server.home / "debates" / folder).exists()


def test_a_chinese_debate_on_gemma(page: Any, server: Served, tmp_path: Path, cli: Cli) -> None:
    turns = debate(page, "本院认为人工智能将是人类最后一项伟大发明", "gemma3-270m")
    assert page.locator(".round").first.inner_text() == "第1轮"
    assert "辩论简报" in page.locator(".document h1").inner_text()
    assert page.locator(".debate .state").inner_text() == "已完成"
    reopen_download_delete(page, server, tmp_path, turns)
    # The rulebook's guarantees on the real model, as `moot check` reads the download back:
    # no limit broken, every problem declared by its turn's flags, every turn in Chinese.
    checked = cli("check", str(tmp_path / "transcript.json"), "--json")
    assert checked.returncode == 0, checked.stdout[-3000:]
    summary = json.loads(checked.stdout)["summary"]
    assert summary["over_limit"] == summary["undeclared"] == summary["language"] == 0
    data = json.loads((tmp_path / "transcript.json").read_text(encoding="utf-8"))
    assert data["language"] == "zh" and {m["id"] for m in data["models"].values()} == {
        "gemma3-270m"
    }
    assert set(data["result"]) == {"pro", "con", "rebuttals", "attacks", "balance"}


def test_the_page_takes_the_opposition_seat_against_smollm2(
    page: Any, server: Served, tmp_path: Path
) -> None:
    start(page, "cities should ban cars from their centres", "smollm2-135m", seat="opposition")
    typed, declined, ask = [], 0, 1
    while True:
        page.wait_for_selector(f".seat-box[data-ask='{ask}'], {ENDED}", timeout=LONG)
        if ended(page):
            break
        box = page.locator(".seat-box")
        if box.get_attribute("data-kind") == "decision":
            page.click(".seat-box .decline-poi")
            declined += 1
        else:
            # The seat sees the Proposition's real speech before it answers it.
            assert "This House Believes That" in box.locator(".seat-sees pre").last.text_content()
            typed.append(f"Turn {ask}: buses first, then the ban, or night workers are stranded.")
            page.fill(".seat-box textarea", typed[-1])
            assert page.locator(".seat-box .seat-count").inner_text().endswith("words")
            page.click(".seat-box .submit-seat")
        ask += 1
    assert declined >= 2  # rounds 1 and 2 come before the judge may end the rounds
    assert page.locator(".turn.spoken[data-role=opposition] .text").all_inner_texts() == typed
    assert "Debate Brief" in page.locator(".document h1").inner_text()
    assert page.locator(".score .caption").count() >= 1
    reopen_download_delete(page, server, tmp_path, int(page.locator(".turn.spoken").count()))
