"""A person's seat from the page, over HTTP against `moot serve --dry-run` on 127.0.0.1: each
ask reaches the page with what the seat sees and its limit, the answer posted back is the
turn; the seat's endpoint needs the token and the page's Origin; a stopped debate asks the
seat again when it is resumed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from moot.inference.human import Ask
from moot.inference.protocol import Message
from moot.web.jobs import Job
from moot.web.seat import WebSeat
from web_serve import Served, serve

MOTION = "cities should ban cars"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = serve(tmp_path_factory.mktemp("seat-home"), "--dry-run", "--pace", "0.002")
    yield served
    served.stop()
    assert "Traceback" not in "".join(served.stderr)


@pytest.fixture
def client(server: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base, timeout=30, verify=False) as c:
        assert c.get(f"/?token={server.token}").status_code == 303
        c.headers["origin"] = server.base
        yield c


def start(client: httpx.Client, seat: str = "opposition") -> dict[str, Any]:
    form = {"motion": MOTION, "seed": "3", "params": {"max_rounds": "3"}, "roles": {seat: "human"}}
    answer = client.post("/api/debates", json=form)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def stream(client: httpx.Client, job: str) -> Iterator[dict[str, Any]]:
    with client.stream("GET", f"/api/jobs/{job}/events", timeout=60) as events:
        for line in events.iter_lines():
            if line.startswith("data:"):
                yield json.loads(line[5:])


def answer_of(ask: dict[str, Any]) -> dict[str, Any]:
    if ask["kind"] == "decision":
        return {"ask": ask["ask"], "accept": False}
    return {"ask": ask["ask"], "text": f"From the page, ask {ask['ask']}: buses first."}


def test_the_page_takes_a_seat_every_ask_answered_becomes_the_turn(
    server: Served, client: httpx.Client
) -> None:
    job = start(client)
    assert job["seat"] is True
    asks: list[dict[str, Any]] = []
    done = None
    for ev in stream(client, job["id"]):
        if ev["type"] == "seat":
            asks.append(ev)
            posted = client.post(f"/api/jobs/{job['id']}/seat", json=answer_of(ev))
            assert posted.status_code == 200, posted.text
        elif ev["type"] == "done":
            done = ev
        elif ev["type"] == "end":
            break
    assert done is not None
    first = asks[0]
    assert (first["kind"], first["role"], first["limit"], first["units"]) == (
        "speech",
        "opposition",
        15,
        "words",
    )
    assert first["label"].startswith("Point of Information 🔴 Opposition → 🔵 Proposition")
    assert first["instruction"].endswith("at most 15 words")
    assert (
        'An Oxford Union debate on the motion "This House Believes That cities should ban cars"'
        in (first["messages"][0]["content"])
    )
    # The question goes on the Proposition's conversation: its speech is the reply above.
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user"]
    decisions = [a for a in asks if a["kind"] == "decision"]
    assert len(decisions) == 3 and all(a["question"] for a in decisions)
    saved = client.get(f"/api/history/{done['folder']}/files/transcript.json").json()
    people = [t for t in saved["turns"] if t["model"] == "human"]
    speeches = [a for a in asks if a["kind"] == "speech"]
    assert [t["text"] for t in people] == [answer_of(a)["text"] for a in speeches]
    assert [t["index"] for t in people] == [a["turn"] for a in speeches]
    put = [t for t in saved["turns"] if t["step"] == "poi_question" and t["role"] == "proposition"]
    assert [t["accepted"] for t in put] == [False, False, False]
    # Answered asks are not kept: a page opened now is not asked anything.
    again = [e["type"] for e in stream(client, job["id"])]
    assert "seat" not in again and "seat_done" not in again


def first_ask(client: httpx.Client, job: str) -> dict[str, Any]:
    return next(e for e in stream(client, job) if e["type"] == "seat")


def test_the_seat_needs_the_token_the_pages_origin_and_the_open_ask(
    server: Served, client: httpx.Client
) -> None:
    job = start(client)
    ask = first_ask(client, job["id"])
    path = f"{server.base}/api/jobs/{job['id']}/seat"
    body = {"ask": ask["ask"], "text": "Who pays?"}
    with httpx.Client(verify=False) as stranger:  # no token at all
        refused = stranger.post(path, json=body, headers={"origin": server.base})
        assert (refused.status_code, refused.text) == (403, "forbidden\n")
    with httpx.Client(verify=False, cookies={f"moot-token-{server.port}": "wrong"}) as wrong:
        assert wrong.post(path, json=body, headers={"origin": server.base}).status_code == 403
    for origin in ("http://evil.example", "null"):
        assert client.post(path, json=body, headers={"origin": origin}).status_code == 403
    cross = client.post(path, json=body, headers={"sec-fetch-site": "cross-site"})
    assert cross.status_code == 403
    assert "access-control-allow-origin" not in {k.lower() for k in cross.headers}
    stale = client.post(path, json={**body, "ask": ask["ask"] + 7})
    assert stale.status_code == 409 and "not waiting" in stale.json()["error"]["message"]
    not_text = client.post(path, json={"ask": ask["ask"], "text": ["a list"]})
    assert not_text.status_code == 400, not_text.text
    assert not_text.json()["errors"]["text"]["message"] == "a speech is text"
    assert ask["ask"] == 1
    for wrong in (True, 1.0, "1", None):  # true == 1 in Python: only the number 1 is ask 1
        refused = client.post(path, json={**body, "ask": wrong})
        assert refused.status_code == 400, (wrong, refused.text)
        assert refused.json()["errors"]["ask"]["message"].startswith("ask: "), refused.text
    twice = b'{"ask": 1, "text": "Who pays?", "text": "Who gains?"}'
    repeated = client.post(path, content=twice, headers={"content-type": "application/json"})
    assert repeated.status_code == 400 and "text" in repeated.json()["errors"], repeated.text
    as_form = client.post(path, content=b"text=Who+pays", headers={"content-type": "text/plain"})
    assert as_form.status_code == 415
    assert client.post(path, json=body).status_code == 200
    assert client.post(path, json=body).status_code == 409  # answered once only
    client.post(f"/api/jobs/{job['id']}/stop")


def test_a_debate_without_a_person_has_no_seat_to_answer(client: httpx.Client) -> None:
    answer = client.post("/api/debates", json={"motion": MOTION, "params": {"max_rounds": "3"}})
    job = answer.json()
    assert job["seat"] is False
    posted = client.post(f"/api/jobs/{job['id']}/seat", json={"ask": 1, "text": "hello"})
    assert (
        posted.status_code == 409 and "no person holds a seat" in posted.json()["error"]["message"]
    )
    missing = client.post("/api/jobs/nosuchjob/seat", json={"ask": 1, "text": "hello"})
    assert missing.status_code == 404


def test_the_models_offer_a_persons_seat(client: httpx.Client) -> None:
    models = client.get("/api/models").json()["models"]
    assert {"id": "human", "default": False, "size": None, "human": True} in models


def test_stopped_while_the_seat_waits_the_resumed_debate_asks_it_again(
    client: httpx.Client,
) -> None:
    job = start(client)
    ask = first_ask(client, job["id"])
    client.post(f"/api/jobs/{job['id']}/seat", json=answer_of(ask))
    events = stream(client, job["id"])
    waiting = next(e for e in events if e["type"] == "seat" and e["ask"] > ask["ask"])
    assert (waiting["ask"], waiting["kind"]) == (ask["ask"] + 1, "speech")
    client.post(f"/api/jobs/{job['id']}/stop")
    states = [e["state"] for e in events if e["type"] == "job"]
    assert states[-1] == "stopped"
    stopped = client.get(f"/api/jobs/{job['id']}").json()
    assert stopped["state"] == "stopped" and stopped["error"] is None
    folder = stopped["folder"]
    saved = client.get(f"/api/history/{folder}").json()
    assert saved["status"] == "interrupted"
    resumed = client.post(f"/api/history/{folder}/resume")
    assert resumed.status_code == 201, resumed.text
    again = first_ask(client, resumed.json()["id"])
    assert (again["kind"], again["turn"], again["label"]) == (
        waiting["kind"],
        waiting["turn"],
        waiting["label"],
    )
    client.post(f"/api/jobs/{resumed.json()['id']}/stop")


# -- in process ----------------------------------------------------------------------------


def test_a_later_page_is_shown_the_open_ask_and_not_the_answered_ones() -> None:
    job = Job(lambda j: None, kind="debate", title="t", holds=("human",))
    seat = WebSeat()
    seat.attach(job.publish)
    ask = Ask(
        kind="speech", role="opposition", label="L", messages=(Message(role="user", content="m"),)
    )
    job.publish({"type": "turn_started", "index": 0})
    job.publish({"type": "seat", "ask": 1})
    job.publish({"type": "seat_done", "ask": 1})
    job.publish({"type": "seat", "ask": 2})
    backlog = job.subscribe(lambda item: None)
    assert [e.get("ask") for e in backlog if e.get("type") == "seat"] == [2]
    assert "seat_done" not in [e.get("type") for e in backlog]
    assert seat.answer({"ask": 1, "text": "x"}) == "the seat is not waiting for this answer"
    assert ask.instruction() == "L: your turn"
