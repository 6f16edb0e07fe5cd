"""The page in a real browser as a new user meets it: a tournament's progress, results and
chart in both languages, on a phone's 400 px as on a desktop, and the forms at narrow
widths. Debian's Chromium, driven by Playwright, against `moot serve --dry-run` on
127.0.0.1; a request that goes anywhere but the server fails the test."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from gguf_samples import write_gguf
from web_serve import Browser, Served, browsing, serve

MOTIONS = {
    "en": "cities should ban cars\ntea is better than coffee",
    "zh": "城市应该禁止汽车进入市中心\n茶比咖啡好",
}
PHONE = {"width": 400, "height": 900}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = serve(tmp_path_factory.mktemp("narrow-home"), "--dry-run")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def browser(server: Served) -> Iterator[Browser]:
    with browsing(server) as b:
        yield b


def open_page(browser: Browser, server: Served, lang: str, *, viewport: dict[str, int]) -> Any:
    """A page in LANG at VIEWPORT's size, its script errors collected in `page.problems`."""
    page = browser.page()
    page.problems = []
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    page.set_viewport_size(viewport)
    page.goto(server.url)
    page.wait_for_selector("#debate-form")
    if page.locator("html").get_attribute("lang") != lang:
        page.click("#switch-language")
        page.wait_for_selector(f"html[lang={lang}]")
    return page


def close(page: Any) -> None:
    refused_form = "the server responded with a status of 400"  # a form with problems
    problems = [p for p in page.problems if refused_form not in p]
    # The page's language is kept for the next page: each test sets its own.
    page.evaluate("() => localStorage.removeItem('moot-language')")
    page.close()
    assert problems == [], problems


@dataclass
class Ran:
    """A finished tournament, started from the page's form: its job's address."""

    job: str
    lang: str
    seen: list[str]  # each phase the page showed while it ran, and its words


# Every change of the tournament's progress line, as it runs (phase|words).
WATCH = """() => {
  window.seen = [];
  new MutationObserver(() => {
    const line = document.querySelector('.progress');
    if (!line || line.hidden) return;
    const now = `${line.dataset.phase}|${line.textContent}`;
    if (window.seen[window.seen.length - 1] !== now) window.seen.push(now);
  }).observe(document.getElementById('main'),
    { subtree: true, childList: true, characterData: true, attributes: true });
}"""


@pytest.fixture(scope="module")
def tournaments(browser: Browser, server: Served, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One dry-run tournament a language, each run to its end from the form."""
    folder = tmp_path_factory.mktemp("narrow-models")
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    models = [
        str(write_gguf(folder / f"{n}.gguf", name=n, chat_template=template))
        for n in ("alpha-model", "beta-model")
    ]
    ran = {}
    for lang, motions in MOTIONS.items():
        page = open_page(browser, server, lang, viewport={"width": 1280, "height": 900})
        page.click("nav a[data-page=tournament]")
        page.wait_for_selector("#tournament-form")
        page.fill("textarea[name=motions]", motions)
        page.fill("input[name='models.0']", models[0])
        page.fill("input[name='models.1']", models[1])
        page.fill("input[name='params.max_rounds']", "3")
        page.evaluate(WATCH)
        page.click("#tournament-form button[type=submit]")
        page.wait_for_selector(".ratings", timeout=120_000)
        ran[lang] = Ran(job=page.evaluate("location.hash"), lang=lang, seen=page.evaluate("seen"))
        close(page)
    return ran


def show(browser: Browser, server: Served, ran: Ran, *, viewport: dict[str, int]) -> Any:
    page = open_page(browser, server, ran.lang, viewport=viewport)
    page.goto(server.base + "/" + ran.job)
    page.wait_for_selector(".ratings .judges tbody tr")
    page.wait_for_selector("#jobs-list li[data-job]")
    return page


# What a cell's text needs: its lines (the rectangles of its text), each cell of a table.
LINES = """(root) => [...root.querySelectorAll('th, td')].map((cell) => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
  const width = cell.getBoundingClientRect().width;
  return { text: cell.innerText.trim(), lines: tops.size, width };
})"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tournaments_results_are_readable_on_a_phone(
    browser: Browser, server: Served, tournaments: dict, lang: str
) -> None:
    """At 400 px the tables scroll sideways within their own box (the page does not): a
    figure, a model's name, a result and a heading each keep to one line, a motion wraps in a
    column wide enough to read, and no badge breaks over two lines."""
    page = show(browser, server, tournaments[lang], viewport=PHONE)
    try:
        page.screenshot(path=f"/tmp/page40-narrow-{lang}.png", full_page=True)
        assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
        for table in (".tournament-table", ".ratings .table:not(.judges)", ".ratings .judges"):
            cells = page.locator(table).evaluate(LINES)
            motions = page.locator(table).evaluate(
                "(t) => [...t.querySelectorAll('td.debate-motion')].map((c) => c.innerText.trim())"
            )
            for cell in cells:
                if cell["text"] in motions:
                    assert cell["width"] >= 150, (table, cell)  # a column to read, not a strip
                else:
                    assert cell["lines"] <= 1, (table, cell)
        badges = page.locator(".state").evaluate_all(
            "(all) => all.map((b) => ({ text: b.innerText, lines: b.getClientRects().length }))"
        )
        assert badges and all(b["lines"] == 1 for b in badges), badges
    finally:
        close(page)


CHART_WORDS = {
    "en": {
        "title": "moot tournament · Oxford · 4 debates",
        "axis": "Bradley-Terry strength (log), 95 % bootstrap interval",
        "legend": ["strength", "95 % interval", "0: the field's mean"],
    },
    "zh": {
        "title": "moot 锦标赛 · 牛津式辩论 · 4 场辩论",
        "axis": "Bradley-Terry 实力（对数），95% 自助法区间",
        "legend": ["实力", "95% 区间", "0：全体平均"],
    },
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_ratings_chart_is_worded_in_the_tournaments_language(
    browser: Browser, server: Served, tournaments: dict, lang: str
) -> None:
    """The chart is drawn by the page, its title, axis and legend from the language tables
    (the PNG the tournament saved keeps English, and stays a link away); each model a dot on
    its row, named by its short label."""
    page = show(browser, server, tournaments[lang], viewport={"width": 1280, "height": 900})
    try:
        chart = page.locator(".ratings svg.chart")
        chart.scroll_into_view_if_needed()
        chart.screenshot(path=f"/tmp/page40-chart-{lang}.png")
        words = CHART_WORDS[lang]
        assert chart.locator(".chart-title").text_content() == words["title"]
        assert chart.locator(".chart-axis").text_content() == words["axis"]
        assert chart.locator(".chart-legend text").all_text_contents() == words["legend"]
        named = {"en": "The ratings chart", "zh": "评分图"}[lang]
        assert chart.get_attribute("aria-label") == named
        names = chart.locator(".chart-model").evaluate_all(
            "(all) => all.map((n) => n.firstChild.data)"
        )
        assert sorted(names) == ["alpha-model", "beta-model"]
        assert chart.locator("circle.chart-strength").count() == 2 + 1  # a model's each, a key's
        png = page.locator(".chart-box a.chart-file")
        fetched = page.evaluate(
            "async (href) => { const r = await fetch(href);"
            " return [r.status, r.headers.get('content-type')]; }",
            png.get_attribute("href"),
        )
        assert fetched == [200, "image/png"]
    finally:
        close(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_ratings_chart_fits_a_phone_with_words_of_a_readable_size(
    browser: Browser, server: Served, tournaments: dict, lang: str
) -> None:
    page = show(browser, server, tournaments[lang], viewport=PHONE)
    try:
        chart = page.locator(".ratings svg.chart")
        chart.scroll_into_view_if_needed()
        chart.screenshot(path=f"/tmp/page40-chart-phone-{lang}.png")
        box = chart.bounding_box()
        assert box["x"] + box["width"] <= PHONE["width"]
        texts = chart.locator("text").evaluate_all(
            "(all) => all.map((t) => { const r = t.getBoundingClientRect();"
            " return { text: t.textContent, left: r.left, right: r.right, height: r.height }; })"
        )
        assert len(texts) > 8
        for t in texts:  # inside the chart, never shrunk below 10 px
            assert box["x"] <= t["left"] and t["right"] <= box["x"] + box["width"], t
            assert t["height"] >= 10, t
    finally:
        close(page)


PHASES = {
    "en": {
        "debates": r"debates\|Debates: [0-3] of 4 done",
        "controls": r"controls\|Debates: 4 of 4 done · control debates: (\d+) of 40 verdicts"
        r" · now judging: (alpha|beta)-model",
        "ended": "Debates: 4 of 4 done · control debates: 40 of 40 verdicts",
    },
    "zh": {
        "debates": r"debates\|辩论：已完成 [0-3]/4 场",
        "controls": r"controls\|辩论：已完成 4/4 场 · 对照辩论：已裁决 (\d+)/40"
        r" · 正在裁判：(alpha|beta)-model",
        "ended": "辩论：已完成 4/4 场 · 对照辩论：已裁决 40/40",
    },
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_running_tournament_shows_its_phase_and_how_far_it_is(
    browser: Browser, server: Served, tournaments: dict, lang: str
) -> None:
    """While it runs the page says which phase the tournament is in and how far: its debates
    done of all, then its judges' verdicts on the control debates of all (20 controls, two
    judges), and the judge now deciding; at the end, both counts whole."""
    ran, phases = tournaments[lang], PHASES[lang]
    assert any(re.fullmatch(phases["debates"], s) for s in ran.seen), ran.seen
    counts = [int(m.group(1)) for s in ran.seen if (m := re.fullmatch(phases["controls"], s))]
    assert counts and counts == sorted(counts) and counts[0] < 40, ran.seen
    assert len(set(counts)) > 5, ran.seen  # counted verdict by verdict, not once at the end
    assert ran.seen[-1] == f"ended|{phases['ended']}", ran.seen
    page = show(browser, server, ran, viewport=PHONE)  # opened again: where it ended
    try:
        line = page.locator(".debate .progress")
        assert (line.get_attribute("data-phase"), line.inner_text()) == ("ended", phases["ended"])
    finally:
        close(page)


# Each placeholder of a form against the room its box gives it: a line's width in an input
# (it never wraps there), the lines' height in a text area (it wraps, and is cut below).
PLACEHOLDERS = """(form) => [...form.querySelectorAll('input[placeholder], textarea[placeholder]')]
  .filter((box) => box.placeholder && box.offsetParent !== null)
  .map((box) => {
    const style = getComputedStyle(box);
    const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const copy = document.createElement('div');
    const kept = ['font', 'letterSpacing', 'lineHeight', 'paddingTop', 'paddingBottom'];
    for (const p of kept) copy.style[p] = style[p];
    copy.style.width = `${room}px`;
    copy.style.whiteSpace = box.tagName === 'TEXTAREA' ? 'pre-wrap' : 'pre';
    copy.style.overflowWrap = 'break-word';
    copy.style.position = 'absolute';
    copy.style.visibility = 'hidden';
    copy.textContent = box.placeholder;
    document.body.append(copy);
    const needs = { width: copy.scrollWidth, height: copy.offsetHeight };
    copy.remove();
    return { name: box.name, text: box.placeholder, room, width: needs.width,
             height: needs.height, rows: box.clientHeight, tag: box.tagName };
  })"""


@pytest.mark.parametrize("width", [1280, 400, 360])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_placeholder_fits_its_box_on_a_phone_as_on_a_desktop(
    browser: Browser, server: Served, lang: str, width: int
) -> None:
    """A seat's model box says whom it defaults to in full (a person types `human` there, or
    takes the seat with its button), as does every other box of each format's form."""
    page = open_page(browser, server, lang, viewport={"width": width, "height": 900})
    try:
        cut = []
        for name in ("oxford", "decision", "challenge", "adversarial"):
            page.select_option("select[name=format]", name)
            page.click("#debate-form details.more summary") if name == "oxford" else None
            if name == "oxford":
                page.screenshot(path=f"/tmp/page40-form-{lang}-{width}.png", full_page=True)
            for box in page.locator("#debate-form").evaluate(PLACEHOLDERS):
                too_wide = box["tag"] == "INPUT" and box["width"] > box["room"] + 1
                too_tall = box["tag"] == "TEXTAREA" and box["height"] > box["rows"] + 1
                if too_wide or too_tall:
                    cut.append((name, box["name"], box["text"], round(box["room"])))
        assert cut == []
        assert page.locator(".seat input[placeholder]").count() >= 2
    finally:
        close(page)
