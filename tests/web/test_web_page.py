"""The page's rough edges, in Chromium against `moot serve --dry-run`: every word in the
page's language, the history told apart, any model name in a dry run, a phone's width,
no font the machine may lack, copying, the dark scheme."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from test_web_browser import start
from web_serve import Browser, Served, launch, serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = serve(tmp_path_factory.mktemp("page-home"), "--dry-run")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def chromium(served: Served) -> Iterator[Browser]:
    with launch() as b:
        yield b
        assert b.outside(served.base) == [], "the page reached beyond the server"


@pytest.fixture
def tab(chromium: Browser, served: Served) -> Iterator[Any]:
    """The page, new, in English; any script error fails the test."""
    page = chromium.page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(served.url)
    page.evaluate("localStorage.setItem('moot-language', 'en')")
    page.goto(served.base + "/#/")
    page.wait_for_selector("#debate-form")
    yield page
    page.close()
    assert problems == []


# What a page may show in Latin letters in Chinese: model ids, and what a model said.
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_MODEL_ID = re.compile(r"^(echo:)?[\w.-]+-\d+[mb]$|^human$")
_NAMES = ("moot", "English", "UTF-8")  # the product, and the way back to English
_FILE_NAME = re.compile(r"^[\w-]+\.(json|jsonl|md)$")  # a download's name

# The page's text outside what a model said (speeches, its reasons, structured replies)
# and outside the motion, model ids and the document a format wrote.
_PAGE_WORDS = """(root) => {
  const skip = [".turn .text", ".score .reasoning", ".turn details:not(.reasoning)", ".motion",
    ".model", ".document-body", ".notice", "datalist", "script", "style"].join(", ");
  const out = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) { out.push(node.textContent); return; }
    if (node.nodeType !== Node.ELEMENT_NODE || node.matches(skip)) return;
    if (getComputedStyle(node).display === "none" || node.hidden) return;
    for (const attr of ["placeholder", "title", "aria-label"]) {
      if (node.getAttribute(attr)) out.push(node.getAttribute(attr));
    }
    if (node.tagName === "OPTION") out.push(node.textContent);
    for (const child of node.childNodes) walk(child);
  };
  walk(document.querySelector(root));
  return out.join("\\n");
}"""


def english_left(page: Any, root: str = "body") -> list[str]:
    text = page.evaluate(_PAGE_WORDS, root)
    found = []
    for token in re.split(r"[\s,，·()（）]+", text):
        if _MODEL_ID.match(token) or _FILE_NAME.match(token) or token in _NAMES:
            continue
        found += _LATIN_WORD.findall(token)
    return found


def test_in_chinese_every_seat_format_and_choice_is_chinese(tab: Any) -> None:
    page = tab
    page.click("#switch-language")
    page.wait_for_selector("html[lang=zh] #debate-form")
    assert english_left(page, "#main") == []
    formats = page.locator("select[name=format] option").all_inner_texts()
    assert formats[0] == "牛津式辩论"
    assert page.locator(".seat[data-role=devil] .role").inner_text() == "魔鬼辩手"
    rubric = page.locator("select[name='params.judge_rubric'] option").all_inner_texts()
    assert rubric == ["核对清单", "直接打分"]
    page.select_option("select[name=format]", "decision")
    assert page.locator(".seat[data-role=debater_a] .role").inner_text() == "辩手A"
    assert english_left(page, "#main") == []
    page.select_option("select[name=format]", "oxford")

    start(page, "城市应该禁止汽车进入市中心")
    page.wait_for_selector(".debate[data-state=finished] .document")
    assert page.locator(".debate .meta .format").inner_text() == "牛津式辩论"
    assert english_left(page) == []
    page.click("a.open-saved")
    page.wait_for_selector(".debate.saved .document")
    assert english_left(page) == []
    page.goto(page.url.split("#")[0] + "#/history")
    page.wait_for_selector(".history-table tr")
    assert english_left(page) == []


def test_a_dry_run_takes_any_model_name_and_offers_every_model_moot_knows(tab: Any) -> None:
    page = tab
    offered = page.eval_on_selector_all("#model-list option", "os => os.map(o => o.value)")
    assert "smollm2-135m" in offered  # not installed in this home: a dry run loads none
    assert "human" in offered
    page.fill("textarea[name=motion]", "cities should ban cars")
    page.fill("input[name='models.0']", "smollm2-135m")
    page.fill("input[name='roles.judge']", "a-model-of-my-own")
    page.fill("input[name='params.max_rounds']", "3")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".debate[data-state=finished] .document")
    models = set(page.locator(".turn .model").all_inner_texts())
    assert models == {"echo:smollm2-135m", "echo:a-model-of-my-own"}
