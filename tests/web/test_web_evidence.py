"""An adversarial review's requests for evidence on the page, in this process: the app of
`moot serve` on scripted participants that ask for evidence, its endpoint answered as the page
answers it. What the page supplies is checked as an evidence file is, recorded as the
terminal records it, and kept when the review is stopped and resumed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from moot import history
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import ScriptedModel
from moot.web import runs
from moot.web.app import build
from moot.web.guard import cookie_name
from moot.web.jobs import Hub, Job
from test_adversarial import MORE, QUESTION, Panel, asks_for_evidence

PORT = 8123
BASE = f"http://127.0.0.1:{PORT}"
ALPHA, BETA = "http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"  # checked as text, never called
WANTED = "the wind series' method note on construction deaths"
GIVEN = f'From appendix.md (supplied before round 2):\n"""\n{MORE}'


class Pool:
    """The models of the page's debates: a panel's scripted ones (the panel may change)."""

    def __init__(self, panel: Panel) -> None:
        self.panel = panel

    def get(self, ref: str) -> ScriptedModel:
        return self.panel.model(ref)


@dataclass
class Served:
    client: TestClient
    hub: Hub
    pool: Pool


@pytest.fixture
def served(moot_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    pool = Pool(Panel(asks_for_evidence("participant_2", 1)))
    monkeypatch.setattr(runs, "models_for", lambda setup, pace: pool)
    guard, hub = build(token="t", host="127.0.0.1", port=PORT, dry_run=True, pace=0)
    with TestClient(guard, base_url=BASE) as client:
        client.headers["origin"] = BASE
        client.cookies.set(cookie_name(PORT), "t")
        yield Served(client, hub, pool)


def wait(condition: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)
    return found


def backlog(job: Job) -> list[dict[str, Any]]:
    listener: Callable[[dict[str, Any]], None] = lambda item: None  # noqa: E731
    seen = job.subscribe(listener)
    job.unsubscribe(listener)
    return seen


def start(served: Served) -> Job:
    form = {
        "motion": QUESTION,
        "format": "adversarial",
        "models": [ALPHA, BETA],
        "seed": "3",
        "params": {"rounds": "2"},
    }
    answer = served.client.post("/api/debates", json=form)
    assert answer.status_code == 201, answer.text
    job = served.hub.get(answer.json()["id"])
    assert job is not None
    return job


def asked(job: Job) -> dict[str, Any]:
    """The request for evidence the job's pages are shown now."""

    def shown() -> dict[str, Any] | None:
        return next((e for e in backlog(job) if e["type"] == "evidence"), None)

    return dict(wait(shown))


def answer(served: Served, job: Job, **body: Any) -> Any:
    """The page's answer BODY, as JSON (ASCII: a lone surrogate is sent as its escape)."""
    return served.client.post(
        f"/api/jobs/{job.id}/evidence",
        content=json.dumps(body),
        headers={"content-type": "application/json"},
    )


def saved(job: Job, name: str) -> str:
    """The file NAME of the job's saved debate."""
    assert job.folder is not None
    return (history.find(job.folder).path / name).read_text(encoding="utf-8")


def kept(job: Job) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in saved(job, "journal.jsonl").splitlines()]
    return [r for r in lines if r["type"] == "kept"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"text": "   \n"}, "evidence file pasted.txt holds no words"),
        ({"text": "a table\x00", "name": "t.md"}, "evidence file t.md is not text (it holds byte"),
        ({"text": "word " * 801}, "evidence file pasted.txt is 801 words (字), over 800"),
        ({"text": "x" * 70_000}, "evidence file pasted.txt is 70,000 bytes, over moot's limit"),
        ({"text": "a lone \ud800 surrogate"}, "evidence file pasted.txt is not UTF-8 text"),
        (
            {"text": "fine", "name": "a\x1b[31m.md"},
            "evidence file 'a\\x1b[31m.md' is not a file name",
        ),
        ({"text": ["a list"]}, "the evidence is text, with a file name or none"),
        ({"text": "fine", "name": 3}, "the evidence is text, with a file name or none"),
    ],
)
def test_evidence_the_review_would_refuse_is_named_beside_its_field_and_the_request_stays(
    served: Served, body: dict[str, Any], problem: str
) -> None:
    job = start(served)
    ask = asked(job)
    refused = answer(served, job, ask=ask["ask"], **body)
    assert refused.status_code == 400, refused.text
    beside = refused.json()["errors"]["evidence"]
    assert beside["message"].startswith(problem) and beside["hint"]
    assert not job.over and asked(job) == ask  # still asked, nothing handed to the review
    answer(served, job, ask=ask["ask"], skip=True)
    wait(lambda: job.over)
    assert job.state == "finished"


def test_the_page_is_shown_the_request_and_what_it_supplies_every_seat_sees_from_round_2(
    served: Served,
) -> None:
    job = start(served)
    ask = asked(job)
    assert ask == {
        "type": "evidence",
        "ask": 1,
        "round": 2,
        "requests": [{"name": BETA, "request": WANTED}],
        "room": 800,
        "bytes": 64 * 1024,
        "language": "en",
    }
    notices = [e["message"] for e in backlog(job) if e["type"] == "notice"]
    assert f"Participant 2 · {BETA} asks for evidence: {WANTED}" in notices
    stale = answer(served, job, ask=ask["ask"] + 1, text=MORE)
    assert stale.status_code == 409, stale.text
    # A file the browser read comes with its name; where it lay is not sent, nor kept.
    given = answer(served, job, ask=ask["ask"], text=MORE, name="C:\\fakepath\\appendix.md")
    assert given.status_code == 200, given.text
    again = answer(served, job, ask=ask["ask"], text=MORE)
    assert again.status_code == 409  # answered once
    wait(lambda: job.over)
    assert job.state == "finished", job.error
    events = backlog(job)
    assert [e["type"] for e in events if e["type"].startswith("evidence")] == []  # answered
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert "Evidence from appendix.md is shown to every seat from round 2 on" in notices
    # Recorded as the terminal records a file it read: the journal, then the result.
    supplied = {"round": 2, "name": "appendix.md", "text": MORE}
    assert kept(job) == [{"type": "kept", "key": "evidence:2", "value": supplied}]
    transcript = json.loads(saved(job, "transcript.json"))
    assert transcript["result"]["supplied"] == [supplied]
    assert "appendix.md (supplied before round 2)" in saved(job, "debate.md")
    panel = served.pool.panel
    assert MORE not in panel.prompts("participant_1", 1)[0]
    for seat in ("participant_1", "participant_2", "judge"):
        assert GIVEN in panel.prompts(seat, 2)[0], seat


def test_going_on_without_is_kept_as_the_terminals_enter_is(served: Served) -> None:
    job = start(served)
    ask = asked(job)
    assert answer(served, job, ask=ask["ask"], skip=True).status_code == 200
    wait(lambda: job.over)
    assert kept(job) == [{"type": "kept", "key": "evidence:2", "value": None}]
    assert json.loads(saved(job, "transcript.json"))["result"]["supplied"] == []
    assert "Shared evidence" not in served.pool.panel.prompts("judge", 2)[0]


def test_stopped_while_it_asks_the_resumed_review_asks_the_page_again(served: Served) -> None:
    job = start(served)
    asked(job)
    assert served.client.post(f"/api/jobs/{job.id}/stop").status_code == 200
    wait(lambda: job.over)
    assert (job.state, job.error) == ("stopped", None)
    assert kept(job) == []  # not answered: nothing kept, so it is asked again
    resumed = served.client.post(f"/api/history/{job.folder}/resume")
    assert resumed.status_code == 201, resumed.text
    again = served.hub.get(resumed.json()["id"])
    assert again is not None
    ask = asked(again)
    assert (ask["round"], ask["requests"]) == (2, [{"name": BETA, "request": WANTED}])
    assert answer(served, again, ask=ask["ask"], text=MORE, name="appendix.md").status_code == 200
    wait(lambda: again.over)
    assert again.state == "finished", again.error
    assert json.loads(saved(again, "transcript.json"))["result"]["supplied"] == [
        {"round": 2, "name": "appendix.md", "text": MORE}
    ]


def test_a_review_stopped_after_the_page_supplied_evidence_resumes_with_it(
    served: Served,
) -> None:
    holder: dict[str, Job] = {}

    def stop_in_round_2(request: ChatRequest) -> str:
        served.hub.stop(holder["job"])  # the review stops at its next event
        return "PARTICIPANT_1-R2: a revision.\nVOTE: OBJECT - the figures still differ"

    served.pool.panel = Panel(
        {**asks_for_evidence("participant_2", 1), ("participant_1", 2): stop_in_round_2}
    )
    job = holder["job"] = start(served)
    ask = asked(job)
    assert answer(served, job, ask=ask["ask"], text=MORE, name="appendix.md").status_code == 200
    wait(lambda: job.over)
    assert job.state == "stopped", job.error
    assert [k["key"] for k in kept(job)] == ["evidence:2"]
    served.pool.panel = Panel()  # the file is nowhere now: the journal holds what was shown
    resumed = served.client.post(f"/api/history/{job.folder}/resume")
    assert resumed.status_code == 201, resumed.text
    again = served.hub.get(resumed.json()["id"])
    assert again is not None
    wait(lambda: again.over)
    assert again.state == "finished", again.error
    assert not [e for e in backlog(again) if e["type"] == "evidence"]  # not asked again
    panel = served.pool.panel
    assert GIVEN in panel.prompts("judge", 2)[0] and MORE in panel.prompts("synthesizer", 1)[0]
    result = json.loads(saved(again, "transcript.json"))["result"]
    assert result["supplied"] == [{"round": 2, "name": "appendix.md", "text": MORE}]


def test_a_debate_that_asks_nothing_refuses_an_answer(served: Served) -> None:
    served.pool.panel = Panel()
    job = start(served)
    wait(lambda: job.over)
    refused = answer(served, job, ask=1, text=MORE)
    assert refused.status_code == 409
    assert refused.json()["error"]["message"] == "the debate is not waiting for this evidence"
    missing = served.client.post("/api/jobs/nope/evidence", json={"ask": 1, "skip": True})
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("language", "says", "needs"),
    [("zh", "无法使用这份证据：证据文件 pasted.txt 里没有文字",
            "它必须是不为空、不含二进制字节的 UTF-8 文本，不超过65,536字节、120字"),
     ("en", "evidence file pasted.txt holds no words", "")],
)  # fmt: skip
def test_evidence_refused_in_a_review_is_said_in_the_reviews_language(
    language: str, says: str, needs: str
) -> None:
    import threading

    from moot.errors import UsageError
    from moot.formats.adversarial.evidence import EvidenceAsked
    from moot.web.evidence import WebEvidence
    from moot.words import words

    page, shown = WebEvidence(), []
    page.attach(shown.append)
    asked = EvidenceAsked("?", round=2, requests={"甲": WANTED}, room=120, language=language)
    answers: list[str] = []
    review = threading.Thread(target=lambda: answers.append(page.ask(asked)))
    review.start()
    wait(lambda: shown)
    with pytest.raises(UsageError) as refused:
        page.answer({"ask": 1, "text": "   ", "name": ""})
    said = words(language).error(refused.value)  # as the page shows it
    assert said["message"] == says and needs in said["hint"], said
    page.answer({"ask": 1, "skip": True})  # the request stayed open: going on without closes it
    review.join(timeout=10)
    assert answers == [""]
