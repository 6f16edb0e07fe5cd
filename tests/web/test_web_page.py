"""The page's rough edges, in Chromium against `moot serve --dry-run`: every word in the
page's language, the history told apart, any model name in a dry run, a phone's width,
no font the machine may lack, copying, the dark scheme."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gguf_samples import write_gguf
from test_web_browser import start
from web_serve import Browser, Served, browsing, english_page, serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = serve(tmp_path_factory.mktemp("page-home"), "--dry-run")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def chromium(served: Served) -> Iterator[Browser]:
    with browsing(served) as b:
        yield b


@pytest.fixture
def tab(chromium: Browser, served: Served) -> Iterator[Any]:
    """The page, new, in English; any script error fails the test."""
    with english_page(chromium, served) as page:
        yield page


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


def finished_debate(page: Any, served: Served, motion: str, model: str) -> str:
    """A dry-run Oxford debate from the form, to its end; its saved folder."""
    page.goto(served.base + "/#/")
    page.wait_for_selector("#debate-form")
    page.fill("textarea[name=motion]", motion)
    page.fill("input[name='models.0']", model)
    page.fill("input[name='params.max_rounds']", "3")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".debate[data-state=finished] a.open-saved")
    href = page.get_attribute("a.open-saved", "href") or ""
    return href.split("/")[-1]


def test_the_history_tells_debates_on_one_motion_apart_and_counts_right(
    tab: Any, served: Served
) -> None:
    page = tab
    motion = "libraries should open at night"
    first = finished_debate(page, served, motion, "smollm2-135m")
    second = finished_debate(page, served, motion, "gemma3-270m")
    page.goto(served.base + "/#/history")
    rows = [page.locator(f".history-table tr[data-id='{f}']") for f in (first, second)]
    rows[1].wait_for()
    abouts = [row.locator(".about").inner_text() for row in rows]
    assert abouts[0] != abouts[1]
    assert all("Oxford" in a for a in abouts)
    assert "smollm2-135m" in abouts[0] and "gemma3-270m" in abouts[1]
    assert all(re.search(r"\d\d:\d\d", a) for a in abouts)  # when it began
    turns = rows[0].locator(".count").inner_text()
    assert re.fullmatch(r"\d+ turns", turns)
    counts = page.evaluate(
        """async () => {
          const { counted } = await import("/static/i18n.js");
          return [1, 2].flatMap((n) => ["en", "zh"].map((l) => counted(l, "turns", n)));
        }"""
    )
    assert counts == ["1 turn", "1 个发言", "2 turns", "2 个发言"]


def test_a_finished_tournament_is_listed_and_reopened_naming_its_winners(
    tab: Any, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moot

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    models = [str(write_gguf(tmp_path / f"{n}.gguf", name=n, chat_template=template)) for n in "ab"]
    monkeypatch.setenv("MOOT_HOME", str(served.home))
    done = moot.tournament(
        models, ["tea is better than coffee"], run={"dry_run": True}, max_rounds=3
    )
    # A dry run's judges read even odds: every debate undecided. Give each the verdict a
    # judge that read the speeches would have left, one for each side.
    for n, path in enumerate(sorted(done.folder.glob("debates/*/verdict.json"))):
        verdict = json.loads(path.read_text(encoding="utf-8"))
        winner, p = ("proposition", 0.8) if n == 0 else ("opposition", 0.3)
        verdict.update(winner=winner, p_proposition=p, decided_by="judges")
        path.write_text(json.dumps(verdict), encoding="utf-8")
    page = tab
    page.goto(served.base + "/#/history")
    row = page.locator(f".tournaments-table tr[data-tournament='{done.folder.name}']")
    row.wait_for()
    assert row.locator(".first").inner_text() in ("first: a", "first: b")
    assert row.locator(".count").inner_text() == "2 debates"
    assert "Oxford" in row.locator(".about").inner_text()
    row.locator("a").click()
    page.wait_for_selector(".ranked .ratings table tbody tr")
    assert page.locator(".ranked .meta").inner_text().startswith("Oxford · ")
    results = page.locator(".tournament-table tbody tr")
    assert results.count() == 2
    for i in range(2):
        result = results.nth(i)
        side = result.get_attribute("data-winner")
        seated = result.locator("td.model").nth(0 if side == "proposition" else 1).inner_text()
        said = result.locator(".result").inner_text()
        assert said.startswith(f"{seated} won, ") and "P(proposition) 0." in said, said
    assert set(page.locator(".ratings td.model").all_inner_texts()) == {"a", "b"}


def test_a_chinese_tournament_of_two_judges_shows_their_jury_in_chinese(
    tab: Any, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moot

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    models = [str(write_gguf(tmp_path / f"{n}.gguf", name=n, chat_template=template)) for n in "ab"]
    monkeypatch.setenv("MOOT_HOME", str(served.home))
    # Two motions in one language make controls; the two models judge each other.
    motions = ["城市应当禁止汽车", "茶比咖啡好"]
    done = moot.tournament(models, motions, run={"dry_run": True}, max_rounds=3, seed=1)
    figure = done.report.calibration
    assert figure is not None and len(figure.judges) == 2 and figure.jury is not None
    page = tab
    page.goto(f"{served.base}/#/ranked/{done.folder.name}")
    page.wait_for_selector(".ranked .ratings table.judges tbody tr")
    heads = page.locator(".ratings table.judges thead th").all_inner_texts()
    assert "覆盖率" in heads and "席位偏向" in heads
    jury = page.locator(".ratings table.judges tbody tr[data-jury]")
    assert jury.locator("th").inner_text() == "评审团"
    shown = figure.jury.coverage
    assert shown is not None

    def pct(x: float) -> int:  # as the page's Math.round
        return math.floor(100 * x + 0.5)

    low, high = pct(shown.low), pct(shown.high)
    assert jury.locator(".coverage").inner_text() == f"{pct(shown.share or 0)} % ({low}–{high})"
    assert "加权" in page.inner_text(".ratings .jury-note")
    assert english_left(page, ".ratings table.judges") == []


_OVERFLOW = """() => {
  const root = document.documentElement;
  const past = (n) => n.getBoundingClientRect().right > root.clientWidth + 1;
  const wide = [...document.querySelectorAll("body *")].filter((n) => past(n));
  const named = wide.slice(0, 5).map((n) => n.outerHTML.slice(0, 80));
  return { scroll: root.scrollWidth, client: root.clientWidth, wide: named };
}"""


def test_at_400_pixels_wide_nothing_overflows_and_no_font_is_missed(
    tab: Any, served: Served
) -> None:
    page = tab
    page.set_viewport_size({"width": 400, "height": 800})
    debate = finished_debate(page, served, "cities should ban cars", "smollm2-135m")
    job = page.url
    pages = ["/#/", "/#/tournament", "/#/history", f"/#/saved/{debate}"]
    for lang in ("en", "zh"):
        page.evaluate(f"localStorage.setItem('moot-language', '{lang}')")
        for address in pages:
            page.goto(served.base + address)
            page.wait_for_selector("#main > *")
            page.wait_for_timeout(300)
            width = page.evaluate(_OVERFLOW)
            assert width["scroll"] <= width["client"] == 400, (lang, address, width)
            header = page.locator("header.top").bounding_box()
            assert header is not None and header["width"] <= 400
    page.evaluate("localStorage.setItem('moot-language', 'en')")

    # The seats' emoji marks and the way to Chinese are drawn, needing no emoji or CJK font.
    page.goto(job)
    page.wait_for_selector(".debate[data-state=finished] .document")
    headings = page.locator(".turn h3, .round").all_text_contents()
    assert not [h for h in headings if re.search("[\U0001f300-\U0001faff\u2600-\u27bf]", h)]
    assert page.locator(".turn[data-role=proposition] h3 svg.mark.dot.blue").count() > 0
    assert page.locator(".turn[data-role=chair] h3 svg.mark.scales").count() > 0
    button = page.locator("#switch-language")
    assert button.get_attribute("aria-label") == "中文"
    assert re.search("[\u3400-\u9fff]", button.text_content() or "") is None
    assert button.locator("svg.hanzi").bounding_box()["width"] > 10


def test_a_speech_and_the_brief_are_copied_or_else_selected(
    chromium: Browser, tab: Any, served: Served
) -> None:
    page = tab
    chromium.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served.base)
    finished_debate(page, served, "trains should be free", "smollm2-135m")
    job = page.url
    speech = page.locator(".turn[data-index='0']")
    said = speech.locator(".text").inner_text()
    speech.locator("button.copy").click()
    page.wait_for_selector(".turn[data-index='0'] button.copy[data-done=copied]")
    assert page.evaluate("navigator.clipboard.readText()") == said
    assert speech.locator("button.copy").inner_text() == "Copied"
    page.locator(".document button.copy").click()
    page.wait_for_selector(".document button.copy[data-done=copied]")
    brief = page.evaluate("navigator.clipboard.readText()")
    assert brief.strip() == page.locator(".document-body").inner_text().strip()
    assert "Debate Brief" in brief

    # A browser that lets the page write no clipboard: the speech is selected instead.
    bare = chromium.page()
    bare.add_init_script(
        "Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined })"
    )
    bare.goto(job)
    bare.wait_for_selector(".debate[data-state=finished] .document")
    bare.locator(".turn[data-index='2'] button.copy").click()
    bare.wait_for_selector(".turn[data-index='2'] button.copy[data-done=selected]")
    selected = bare.evaluate("window.getSelection().toString()")
    assert selected == bare.locator(".turn[data-index='2'] .text").inner_text()
    assert "Ctrl+C" in bare.locator(".turn[data-index='2'] button.copy").inner_text()
    bare.close()


_SCHEME = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = (c) => {
    const [r, g, b] = rgb(c).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const bg = (n) => getComputedStyle(n).backgroundColor;
  const fg = (n) => getComputedStyle(n).color;
  const page = bg(document.documentElement);
  const turn = document.querySelector(".turn");
  const meta = document.querySelector(".turn footer");
  const field = document.querySelector("input, textarea");
  return {
    page: lum(page),
    text: contrast(fg(document.querySelector("h1")), page),
    speech: contrast(fg(turn.querySelector(".text")), bg(turn)),
    muted: contrast(fg(meta), bg(turn)),
  };
}"""


def test_the_dark_scheme_follows_the_system_and_reads_well(tab: Any, served: Served) -> None:
    page = tab
    finished_debate(page, served, "homework should be abolished", "smollm2-135m")
    page.emulate_media(color_scheme="dark")
    dark = page.evaluate(_SCHEME)
    assert dark["page"] < 0.05  # a dark background
    assert dark["text"] >= 7 and dark["speech"] >= 7 and dark["muted"] >= 4.5, dark
    page.emulate_media(color_scheme="light")
    light = page.evaluate(_SCHEME)
    assert light["page"] > 0.8 and light["speech"] >= 7, light
