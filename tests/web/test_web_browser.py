"""The page in a real browser: Debian's Chromium, driven by Playwright, against `moot serve
--dry-run` on 127.0.0.1. Every request any page makes is recorded, and one that goes
anywhere but the server fails the test."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gguf_samples import write_gguf
from web_serve import Browser, Served, browsing, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = serve(tmp_path_factory.mktemp("browser-home"), "--dry-run")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def browser(server: Served) -> Iterator[Browser]:
    with browsing(server) as b:
        yield b


@pytest.fixture
def page(browser: Browser, server: Served) -> Iterator[Any]:
    page = browser.page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    # A form with problems is answered 400, which Chromium logs; anything else is a problem.
    refused_form = "the server responded with a status of 400"
    page.goto(server.url)
    page.wait_for_selector("#debate-form")
    yield page
    page.close()
    problems = [p for p in problems if refused_form not in p]
    assert problems == [], problems  # no script error, no request the policy refused
    assert browser.outside(server.base) == []


def start(page: Any, motion: str, *, rounds: str = "3") -> None:
    page.fill("textarea[name=motion]", motion)
    page.fill("input[name='params.max_rounds']", rounds)
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".debate .turn")


def spoken(page: Any) -> int:
    return int(page.locator(".turn.spoken").count())


def test_an_oxford_debate_from_the_form_to_the_history_and_back(
    page: Any, server: Served, tmp_path: Path
) -> None:
    start(page, "cities should ban cars")
    assert page.locator(".debate .motion").inner_text().startswith("This House Believes That")
    # The speeches come in one after another while it runs, not all at the end.
    page.wait_for_selector(".turn.speaking")
    early = spoken(page)
    page.wait_for_function(
        "n => document.querySelectorAll('.turn.spoken').length > n", arg=early + 3
    )
    assert page.locator(".debate").get_attribute("data-state") == "running"
    page.wait_for_selector(".debate[data-state=finished] .document")
    assert page.locator(".round").first.inner_text() == "Round 1"
    assert page.locator(".score .caption").first.inner_text().startswith("Completeness 1.7 / 10")
    assert page.locator(".score .threshold").count() == 2
    assert "Debate Brief" in page.locator(".document h1").inner_text()
    assert page.locator(".turn[data-step=poi_question] .poi").count() > 0
    turns = spoken(page)

    page.click("a.open-saved")
    page.wait_for_selector(".debate.saved .document")
    assert spoken(page) == turns
    assert page.locator(".debate.saved .state").inner_text() == "finished"

    with page.expect_download() as download:
        page.click("a.download[download='transcript.json']")
    saved = tmp_path / "transcript.json"
    download.value.save_as(saved)
    transcript = json.loads(saved.read_text())
    assert transcript["motion"] == "This House Believes That cities should ban cars"
    assert len(transcript["turns"]) == turns

    folder = page.evaluate("decodeURIComponent(location.hash.split('/')[2])")
    page.goto(server.base + "/#/history")
    page.wait_for_selector(f".history-table tr[data-id='{folder}']")
    page.click(f".history-table tr[data-id='{folder}'] a")
    page.wait_for_selector(".debate.saved button.delete")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button.delete")
    page.wait_for_url("**/#/history")
    page.wait_for_selector(".history h1")
    assert page.locator(f"tr[data-id='{folder}']").count() == 0
    assert not (server.home / "debates" / folder).exists()


def test_a_chinese_motion_is_shown_with_chinese_labels(page: Any, server: Served) -> None:
    start(page, "城市应该禁止汽车进入市中心")
    page.wait_for_selector(".debate[data-state=finished] .document")
    assert page.locator("html").get_attribute("lang") == "zh"
    assert page.locator(".round").first.inner_text() == "第1轮"
    assert page.locator(".debate .state").inner_text() == "已完成"
    assert page.locator(".score .caption").first.inner_text().startswith("完整性")
    assert "辩论简报" in page.locator(".document h1").inner_text()
    assert page.locator("a.open-saved").inner_text() == "打开已保存的辩论"
    assert page.locator("nav a[data-page=history]").inner_text() == "历史"
    assert "字" in page.locator(".turn footer .length").first.inner_text()

    page.click("a.open-saved")
    page.wait_for_selector(".debate.saved .document")
    assert page.locator("button.delete").inner_text() == "删除"
    assert page.locator("a.download").first.inner_text().startswith("下载")
    assert page.locator(".turn h3").first.inner_text() == "正方 · 发言"
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button.delete")
    page.wait_for_url("**/#/history")


def test_the_forms_problems_are_shown_beside_their_fields(page: Any, server: Served) -> None:
    page.click("#debate-form button[type=submit]")  # no motion
    page.wait_for_selector("[data-field=motion].invalid")
    assert "the motion is empty" in page.locator("[data-field=motion] .field-error").inner_text()

    page.fill("textarea[name=motion]", "cities should ban cars")
    page.fill("input[name='params.max_rounds']", "99")
    page.fill("input[name='temperatures.judge']", "0.2")
    page.click("#debate-form button[type=submit]")
    error = page.locator("[data-field='params.max_rounds'] .field-error")
    error.wait_for()
    assert "99 is not allowed" in error.inner_text() and "from 3 to 8" in error.inner_text()
    assert page.locator("[data-field=motion] .field-error").inner_text() == ""

    page.fill("input[name='params.max_rounds']", "3")
    page.fill("input[name='temperatures.judge']", "9")
    page.click("#debate-form button[type=submit]")
    page.locator("[data-field='temperatures.judge'] .field-error").wait_for()
    assert "not allowed" in page.locator("[data-field='temperatures.judge']").inner_text()
    assert page.evaluate("location.hash") in ("", "#/")  # nothing was started

    page.select_option("select[name=format]", "adversarial")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".invalid")
    assert "at least two participants" in page.locator(".invalid").first.inner_text()


@pytest.mark.parametrize(
    ("motion", "said"),
    [
        (
            "cities should ban cars",
            {
                "params.max_rounds": "99 is not allowed: input should be less than or equal to 8",
                "temperatures.judge": "9.0 is not allowed",
                "max_tokens": "-3 is not allowed: input should be greater than or equal to 1",
                "seed": "'x' is not a whole number",
            },
        ),
        (
            "城市应该禁止汽车进入市中心",
            {
                "params.max_rounds": "99 不允许：应不大于8",
                "temperatures.judge": "9.0 不允许",
                "max_tokens": "-3 不允许：应不小于1",
                "seed": "'x' 不是整数",
            },
        ),
    ],
)
def test_every_problem_of_a_form_is_shown_at_once_beside_its_field_in_its_words(
    page: Any, motion: str, said: dict[str, str]
) -> None:
    """Four fields wrong: each says so beside itself, in the debate's language, under its own
    label, never by the command line's option (`--max-rounds`)."""
    page.fill("textarea[name=motion]", motion)
    page.fill("input[name='params.max_rounds']", "99")
    page.fill("input[name='temperatures.judge']", "9")
    page.click("#debate-form details.more summary")
    page.fill("#debate-form input[name=max_tokens]", "-3")
    page.fill("#debate-form input[name=seed]", "x")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".invalid")
    invalid = page.locator(".invalid").evaluate_all("(all) => all.map((b) => b.dataset.field)")
    assert sorted(invalid) == sorted(said)
    for field, words in said.items():
        shown = page.locator(f"[data-field='{field}'] > .field-error").inner_text()
        assert shown.startswith(words), (field, shown)
    everything = page.locator("#debate-form").inner_text()
    assert "--" not in everything, everything
    assert page.evaluate("location.hash") in ("", "#/")  # nothing was started


def test_a_page_in_chinese_says_its_forms_problems_in_chinese(page: Any) -> None:
    """With no motion to tell the debate's language, the page's own decides: it names it
    in every request it sends."""
    page.click("#switch-language")
    try:
        page.wait_for_selector("html[lang=zh]")
        page.click("#debate-form button[type=submit]")  # no motion
        page.wait_for_selector("[data-field=motion].invalid")
        error = page.locator("[data-field=motion] .field-error").inner_text()
        assert "辩题是空的" in error and "请给出辩题或话题" in error, error
    finally:
        page.click("#switch-language")  # the browser's other pages are shown in English
    page.wait_for_selector("html[lang=en]")


def test_a_closed_tab_leaves_the_debate_running_and_a_new_one_finds_it(
    browser: Browser, page: Any, server: Served
) -> None:
    start(page, "the four-day week should be the norm")
    page.wait_for_function("() => document.querySelectorAll('.turn.spoken').length >= 2")
    job = page.evaluate("location.hash")
    page.close()

    again = browser.page()
    again.goto(server.url)
    again.wait_for_selector("#jobs-list li")
    again.goto(server.base + "/" + job)
    again.wait_for_selector(".debate .turn")
    again.wait_for_selector(".debate[data-state=finished] .document", timeout=60_000)
    assert again.locator(".turn.spoken").first.get_attribute("data-index") == "0"
    again.close()


def test_a_tournament_fills_its_table_then_shows_the_ratings(
    page: Any, server: Served, tmp_path: Path
) -> None:
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    models = [str(write_gguf(tmp_path / f"{n}.gguf", name=n, chat_template=template)) for n in "ab"]
    page.click("nav a[data-page=tournament]")
    page.wait_for_selector("#tournament-form")
    page.fill("textarea[name=motions]", "cities should ban cars\ntea is better than coffee")
    page.fill("input[name='models.0']", models[0])
    page.fill("input[name='models.1']", models[1])
    page.fill("input[name='params.max_rounds']", "3")
    page.click("#tournament-form button[type=submit]")
    page.wait_for_selector(".tournament-table tbody tr")
    assert page.locator(".tournament-table tbody tr").count() == 4  # a pair a motion, swapped
    page.wait_for_selector(".ratings svg.chart", timeout=60_000)
    assert page.locator(".tournament-table tr[data-status=done]").count() == 4
    assert page.locator(".ratings svg.chart circle.chart-strength").count() == 2 + 1  # the legend's
    assert page.locator(".ratings table:not(.judges) tbody tr").count() == 2
    # Two motions: control debates measure each judge (here both models, judging each
    # other), and the figures are shown beside the ratings with their intervals.
    judges = page.locator(".ratings table.judges tbody tr[data-judge]")
    assert judges.count() == 2
    assert {judges.nth(i).get_attribute("data-judge") for i in range(2)} == set(models)
    assert "%" in judges.first.inner_text() and "–" in judges.first.inner_text()
    # Two judges: their jury beneath them, its accuracy, coverage and position bias each
    # with its interval, and how it was pooled.
    heads = page.locator(".ratings table.judges thead th").all_inner_texts()
    assert "Coverage" in heads and "Position bias" in heads
    jury = page.locator(".ratings table.judges tbody tr[data-jury]")
    assert jury.count() == 1
    assert page.locator(".ratings table.judges tbody tr").last.get_attribute("data-jury") == "yes"
    assert jury.locator("th").inner_text() == "Jury"
    for cell in (
        jury.locator("td").first,
        jury.locator(".coverage"),
        jury.locator(".position-bias"),
    ):
        assert re.fullmatch(r"\d+ % \(\d+–\d+\)", cell.inner_text()), cell.inner_text()
    assert "weighted by its accuracy" in page.inner_text(".ratings .jury-note")
    validated = page.get_attribute(".ratings", "data-validated")
    heading = page.inner_text(".ratings h2")
    assert ("not validated" in heading) == (validated == "no")
    assert page.locator(".ratings .not-validated").count() == (validated == "no")


def test_a_person_takes_the_opposition_seat_submits_speeches_and_declines_a_poi(
    page: Any, server: Served
) -> None:
    page.fill("textarea[name=motion]", "cities should ban cars")
    page.fill("input[name='params.max_rounds']", "3")
    page.click(".seat[data-role=opposition] .take-seat")
    assert page.input_value("input[name='roles.opposition']") == "human"
    # A seed whose draws accept every point the Opposition offers (a model takes a point by
    # a seeded draw, 60 % of the time): a fresh seed would skip the first question 40 % of runs.
    page.click("#debate-form details.more summary")
    page.fill("#debate-form input[name=seed]", "1")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".seat-box[data-ask='1']")
    # The Opposition's point of information first: what the seat sees, its limit, a live count.
    assert page.locator(".seat-box .seat-limit").inner_text() == "at most 15 words"
    assert (
        "This House Believes That cities should ban cars"
        in page.locator(".seat-box .seat-sees pre").last.text_content()
    )
    count = page.locator(".seat-box .seat-count")
    assert count.inner_text() == "0 of 15 words"
    page.fill(".seat-box textarea", "Who pays")
    assert count.inner_text() == "2 of 15 words"
    question = "Who pays for the buses and the drivers and the depots and the new lanes too?"
    page.fill(".seat-box textarea", question)
    assert count.inner_text().startswith("16 of 15 words · over the limit")
    assert "over" in (count.get_attribute("class") or "")
    page.click(".seat-box .submit-seat")
    speeches, declined, ask = [question], 0, 2
    while True:
        page.wait_for_selector(
            f".seat-box[data-ask='{ask}'], .debate[data-state=finished] .document", timeout=60_000
        )
        if page.locator(".debate[data-state=finished]").count():
            break
        if page.locator(".seat-box").get_attribute("data-kind") == "decision":
            assert page.locator(".seat-box .seat-question").inner_text()
            page.click(".seat-box .decline-poi")
            declined += 1
        else:
            speeches.append(f"Speech {ask}: fund the buses first, then ban the cars.")
            page.fill(".seat-box textarea", speeches[-1])
            page.click(".seat-box .submit-seat")
        ask += 1
    assert declined == 3 and page.locator(".seat-box").count() == 0
    typed = page.locator(".turn.spoken[data-role=opposition] .text").all_inner_texts()
    assert typed == speeches  # every turn the person gave, as they gave it
    flag = page.locator(".turn[data-role=opposition][data-step=poi_question] .flag").first
    assert flag.inner_text() == "over the limit: 16 of 15 words, kept as the speaker's"
    # The seats' emoji marks are drawn as SVG: the words around them are what is read.
    notices = [" ".join(n.split()) for n in page.locator(".notice").all_inner_texts()]
    assert notices.count("Point of Information Proposition → Opposition: declined") == 3
    assert page.locator(".notice svg.mark.dot.blue").count() >= 3
    assert "Debate Brief" in page.locator(".document h1").inner_text()


def test_a_review_asks_for_evidence_and_the_page_supplies_a_file_read_in_the_browser(
    page: Any, server: Served
) -> None:
    """A person answers as participant 2 and asks for evidence; before round 2 the page shows
    the request, refuses what the review would refuse beside its field, reads a file of this
    machine into its box, and every seat sees it from round 2 on."""
    facts = "Table 3, 2021 update: deaths per TWh, nuclear 0.03, wind 0.04, coal 24.6."
    page.select_option("select[name=format]", "adversarial")
    page.fill("textarea[name=motion]", "Is nuclear power safer per TWh than wind?")
    page.fill("input[name='models.0']", "http://127.0.0.1:9/v1")
    page.fill("input[name='models.1']", "human")
    page.fill("input[name='params.rounds']", "2")
    page.click("#debate-form button[type=submit]")
    page.wait_for_selector(".seat-box[data-ask='1']")
    page.fill(
        ".seat-box textarea",
        "Nuclear and wind are close per TWh.\nEVIDENCE REQUEST: the 2021 table of deaths per TWh",
    )
    page.click(".seat-box .submit-seat")

    box = page.wait_for_selector(".evidence-box[data-round='2']")
    assert box.query_selector("h3").inner_text() == "Evidence requested before round 2"
    requests = page.locator(".evidence-requests li").all_inner_texts()
    assert requests == ["human: the 2021 table of deaths per TWh"]
    notices = page.locator(".notice").all_inner_texts()
    assert "Participant 2 · human asks for evidence: the 2021 table of deaths per TWh" in notices
    count = page.locator(".evidence-box .evidence-count")
    assert count.inner_text() == "0 of 800 words"
    # Nothing given: the server says why, beside the field, and the request stays.
    page.click(".evidence-box .supply-evidence")
    error = page.locator(".evidence-field .field-error")
    error.wait_for()
    assert error.inner_text().startswith("evidence file pasted.txt holds no words")
    # A file that is not UTF-8 is refused by the page itself; a text file is read into the box.
    page.set_input_files(
        ".evidence-file",
        files=[{"name": "table.md", "mimeType": "text/markdown", "buffer": b"\xff\xfe table"}],
    )
    page.wait_for_function(
        "() => document.querySelector('.evidence-field .field-error').innerText.includes('UTF-8')"
    )
    assert error.inner_text() == "table.md is not UTF-8 text"
    page.set_input_files(
        ".evidence-file",
        files=[{"name": "appendix.md", "mimeType": "text/markdown", "buffer": facts.encode()}],
    )
    page.wait_for_function(
        "() => document.querySelector('.evidence-box textarea').value.startsWith('Table 3')"
    )
    assert page.locator(".evidence-box .evidence-source").inner_text() == "from appendix.md"
    assert count.inner_text() == "16 of 800 words" and error.inner_text() == ""
    page.click(".evidence-box .supply-evidence")

    # Round 2: the person's seat is shown the evidence in its prompt; the request is gone.
    page.wait_for_selector(".seat-box[data-ask='2']")
    assert page.locator(".evidence-box").count() == 0
    seen = page.locator(".seat-box .seat-sees pre").last.text_content()
    assert f'From appendix.md (supplied before round 2):\n"""\n{facts}\n"""' in seen
    notices = page.locator(".notice").all_inner_texts()
    assert "Evidence from appendix.md is shown to every seat from round 2 on" in notices
    page.fill(
        ".seat-box textarea", "Close, as the table shows.\nVOTE: ACCEPT - the table settles it"
    )
    page.click(".seat-box .submit-seat")
    page.wait_for_selector(".debate[data-state=finished] .document")
    assert "appendix.md (supplied before round 2)" in page.locator(".document").inner_text()

    page.click("a.open-saved")
    page.wait_for_selector(".debate.saved .document")
    folder = page.evaluate("decodeURIComponent(location.hash.split('/')[2])")
    transcript = json.loads((server.home / "debates" / folder / "transcript.json").read_text())
    assert transcript["result"]["supplied"] == [{"round": 2, "name": "appendix.md", "text": facts}]
    assert transcript["result"]["rounds"][0]["requests"] == {
        "human": "the 2021 table of deaths per TWh"
    }


def test_a_debate_whose_judge_did_not_answer_is_shown_as_such_not_plainly_finished(
    page: Any, server: Served, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.errors import CallTimeoutError
    from moot.inference import scripted

    minimal = scripted._minimal

    def reply(schema: Any) -> Any:  # the challenge's judge never gives its verdict in time
        if schema.__name__ == "ChallengeVerdict":
            raise CallTimeoutError(seconds=240, model="echo:judge")
        return minimal(schema)

    monkeypatch.setattr(scripted, "_minimal", reply)
    debates = server.home / "debates"
    before = {p.name for p in debates.iterdir()} if debates.is_dir() else set()
    motion = ["Should the judge be given more time?", "--format", "challenge", "--rounds", "1"]
    done = cli("run", *motion, "--dry-run", "--yes", home=server.home)
    assert done.returncode == 0, done.stderr
    [folder] = {p.name for p in debates.iterdir()} - before

    page.goto(f"{server.base}/#/saved/{folder}")
    page.wait_for_selector(".debate.saved .document")
    assert page.locator(".debate.saved .state").inner_text() == "finished, the judge did not answer"
    page.goto(server.base + "/#/history")
    row = page.locator(f".history-table tr[data-id='{folder}'] .state")
    assert row.inner_text() == "finished, the judge did not answer"


_SHOWN = re.compile(r"^\[([^\]\n]*¶[^\]\n]*)\] (.+)$", re.MULTILINE)
_WORDS = "amber basalt cobalt dune ember fjord garnet harbour iris jasper kelp lagoon".split()


def _citing_model() -> Any:
    """A scripted speaker that, wherever it is shown passages, quotes the first exactly and
    cites it, cites it for words it does not hold, and cites an id no passage has."""
    from moot.inference.scripted import ScriptedModel

    class Citing(ScriptedModel):
        def chat(self, request: Any, *, on_text: Any = None) -> Any:
            last = request.messages[-1].content if request.messages else ""
            shown = _SHOWN.findall(last)
            if request.reply_schema is None and request.closer is None and shown:
                pid, text = shown[0]
                n = request.sampling.seed % 997 + 1
                quote = " ".join(text.split()[:6]).rstrip(".,;:")
                made = " ".join(_WORDS[(n * 5 + i) % len(_WORDS)] for i in range(5))
                self.queue(
                    f'The documents back this side: "{quote}" [{pid}]. They also report '
                    f'that "{made} were promised" [{pid}]. Annex {n} agrees '
                    f"[annex-{n}.pdf p.{n + 40} ¶9]."
                )
            return super().chat(request, on_text=on_text)

    return Citing()


def test_each_turn_shows_its_citations_checked_and_a_cited_id_opens_its_passage(
    page: Any, server: Served, documents: Path
) -> None:
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings

    chosen = settings(
        motion="Northwind Logistics should hedge its diesel purchases", seed=5,
        params={"max_rounds": 3, "evidence": [str(documents)]}, run={"dry_run": True},
    )  # fmt: skip
    folder = server.home / "debates" / "cited"
    setup = prepare(chosen, out_dir=folder, check_models=False)
    model = _citing_model()
    DebateRun(setup, model_factory=lambda ref: model).run()
    saved = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    cited = [c for t in saved["turns"] if "evidence" in t for c in t["evidence"]["citations"]]
    checks = {check: sum(c["check"] == check for c in cited) for check in ("ok", "unknown_id",
              "quote_not_found")}  # fmt: skip
    assert all(checks.values()), checks  # each kind of mark has something to show

    page.goto(server.base + "/#/saved/cited")
    page.wait_for_selector(".debate.saved .document")
    for check, n in checks.items():
        assert page.locator(f".turn .citation.{check}").count() == n
    assert page.locator(".citation.ok .mark").first.inner_text() == "✓ supported"
    assert page.locator(".citation.unknown_id .mark").first.inner_text() == "✗ no such passage"
    assert page.locator(".citation.quote_not_found .mark").first.inner_text() == "✗ invented quote"

    first = next(c for c in cited if c["check"] == "ok")
    turn = page.locator(".turn", has=page.locator(".citation.ok")).first
    turn.locator(".citation.ok .cite-id").first.click()
    passage = turn.locator(".passage")
    passage.wait_for()
    assert passage.locator(".passage-id").inner_text() == first["id"]
    assert (
        passage.locator(".passage-text").inner_text() == saved["evidence"]["passages"][first["id"]]
    )
    turn.locator(".citation.unknown_id .cite-id").first.click()
    assert (
        passage.locator(".passage-text").inner_text() == "No passage of the documents has this id."
    )
    turn.locator(".citation.unknown_id .cite-id").first.click()  # again: closed
    assert passage.is_hidden()

    # A debate from the form, given the documents: its scripted speakers cite as they speak.
    page.goto(server.url)
    page.wait_for_selector("#debate-form")
    page.fill("textarea[name='params.evidence']", str(documents))
    start(page, "Northwind Logistics should hedge its diesel purchases")
    page.wait_for_selector(".debate[data-state=finished] .document")
    assert page.locator(".turn .citation.ok").count() > 0
    assert page.locator(".turn .citation.unknown_id, .turn .citation.quote_not_found").count() == 0
    live = page.locator(".turn", has=page.locator(".citation.ok")).first
    live.locator(".cite-id").first.click()
    text = live.locator(".passage .passage-text").inner_text()
    assert text and text != "No passage of the documents has this id."
    assert "Sources" in page.locator(".document").inner_text()


def test_an_interrupted_debates_cited_id_opens_its_passage_from_the_journal(
    page: Any, server: Served, documents: Path
) -> None:
    from test_evidence_journal import interrupted_debate

    folder = server.home / "debates" / "cut-short"
    interrupted_debate(folder, documents)
    lines = [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]
    kept = {k: v for r in lines if r["type"] == "turn" for k, v in r.get("passages", {}).items()}
    cited = [c for r in lines if r["type"] == "turn" for c in r.get("evidence", {}).get(
             "citations", [])]  # fmt: skip
    assert kept and not (folder / "transcript.json").exists()

    def opened(check: str) -> tuple[str, str]:
        """The id and the text the first citation so checked opens to."""
        page.goto(server.base + "/#/saved/cut-short")
        page.reload()  # every passage closed, the journal read afresh
        page.wait_for_selector(".debate.saved .turn .citation")
        assert page.locator(".debate.saved .state").inner_text() == "interrupted"
        turn = page.locator(".turn", has=page.locator(f".citation.{check}")).first
        turn.locator(f".citation.{check} .cite-id").first.click()
        passage = turn.locator(".passage")
        passage.wait_for()
        return passage.locator(".passage-id").inner_text(), passage.locator(
            ".passage-text").inner_text()  # fmt: skip

    assert page.locator(".document").count() == 0  # no brief yet: it did not finish
    for check in ("ok", "quote_not_found"):  # an id of the documents, quoted or misquoted
        pid, text = opened(check)
        assert pid == next(c["id"] for c in cited if c["check"] == check)
        assert text == kept[pid]
    assert opened("unknown_id")[1] == "No passage of the documents has this id."

    # A journal written before turns kept their passages: each is said not to be kept.
    for line in lines:
        line.pop("passages", None)
    (folder / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    pid, text = opened("ok")
    assert pid in kept and text.startswith("This passage's text is not kept here")
