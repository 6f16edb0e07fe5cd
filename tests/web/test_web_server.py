"""`moot serve` over HTTP, against the running server on 127.0.0.1: the token, the Host
header, the Origin of what changes anything, no CORS, saved debates only by id; and the
debates themselves: streamed, kept past a closed tab, queued per model, stopped, resumed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import Cli
from moot.web import forms
from moot.web.jobs import shown
from web_serve import Served, serve

MOTION = "cities should ban cars"
OTHER_MODEL = "http://127.0.0.1:9/v1"  # a server URL: checked as text, never called on a dry run


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = serve(tmp_path_factory.mktemp("serve-home"), "--dry-run", "--pace", "0.002")
    yield served
    assert served.stop() == 130  # Ctrl-C: interrupted, as every moot command exits on it
    assert "Traceback" not in "".join(served.stderr)


@pytest.fixture
def client(server: Served) -> Iterator[httpx.Client]:
    """The page's own requests: the token's cookie, the server's Origin on what changes."""
    with httpx.Client(base_url=server.base, timeout=30, verify=False) as c:
        first = c.get(f"/?token={server.token}")
        assert first.status_code == 303
        c.headers["origin"] = server.base
        yield c


def get(url: str, *, cookies: Any = None, **kwargs: Any) -> httpx.Response:
    """One request with only the COOKIES given (plain HTTP: no TLS context to build)."""
    with httpx.Client(verify=False, cookies=cookies) as c:
        return c.get(url, **kwargs)


def start(client: httpx.Client, **form: Any) -> dict[str, Any]:
    answer = client.post(
        "/api/debates", json={"motion": MOTION, "params": {"max_rounds": "3"}, **form}
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def events(client: httpx.Client, job: str, *, until: str = "end") -> list[dict[str, Any]]:
    """The job's event stream read up to the first event of type UNTIL (then closed)."""
    seen = []
    with client.stream("GET", f"/api/jobs/{job}/events", timeout=60) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("data:"):
                seen.append(json.loads(line[5:]))
                if seen[-1]["type"] == until:
                    break
    return seen


def wait_state(client: httpx.Client, job: str, *states: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = str(client.get(f"/api/jobs/{job}").json()["state"])
        if state in states:
            return state
        time.sleep(0.05)
    raise AssertionError(f"job {job} never reached {states}")


# -- the token -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/api/info", "/api/history", "/static/app.js"])
def test_a_request_without_the_token_gets_403_and_nothing_else(server: Served, path: str) -> None:
    answer = get(server.base + path)
    assert answer.status_code == 403
    assert answer.text == "forbidden\n"
    assert "set-cookie" not in answer.headers
    assert not [h for h in answer.headers if h.lower().startswith("access-control")]


def test_a_wrong_token_is_refused_in_the_url_and_in_the_cookie(server: Served) -> None:
    assert get(f"{server.base}/?token=not-{server.token}").status_code == 403
    assert get(f"{server.base}/api/info?token=").status_code == 403
    last = "y" if server.token.endswith("x") else "x"  # one character off, whatever it was
    cookie = {f"moot-token-{server.port}": server.token[:-1] + last}
    assert get(f"{server.base}/api/info", cookies=cookie).status_code == 403
    # Another server's cookie (another port) is not this one's.
    other = {f"moot-token-{server.port + 1}": server.token}
    assert get(f"{server.base}/api/info", cookies=other).status_code == 403


def test_the_url_token_becomes_a_strict_cookie_and_leaves_the_address(server: Served) -> None:
    first = get(server.url)
    assert first.status_code == 303
    assert first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"moot-token-{server.port}={server.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    page = get(server.base + "/", cookies=first.cookies)
    assert page.status_code == 200 and '<script type="module"' in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_the_server_listens_on_loopback_and_prints_one_url(server: Served) -> None:
    assert server.url == f"http://127.0.0.1:{server.port}/?token={server.token}"
    assert len(server.token) >= 32


# -- the Host header -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1:{other}", "localhost.evil:{port}"]
)
def test_a_host_header_naming_another_server_is_refused(
    server: Served, client: httpx.Client, host: str
) -> None:
    header = host.format(port=server.port, other=server.port + 1)
    answer = client.get("/api/info", headers={"host": header})
    assert answer.status_code == 403 and answer.text == "forbidden\n"


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_the_bound_address_and_localhost_are_served(
    server: Served, client: httpx.Client, host: str
) -> None:
    answer = client.get("/api/info", headers={"host": host.format(port=server.port)})
    assert answer.status_code == 200 and answer.json()["dry_run"] is True


# -- Origin, CORS ------------------------------------------------------------------------


@pytest.mark.parametrize("origin", [None, "http://evil.example", "null", "http://localhost:1"])
def test_a_request_that_changes_something_needs_the_pages_origin(
    server: Served, client: httpx.Client, origin: str | None
) -> None:
    before = len(client.get("/api/jobs").json()["jobs"])
    headers = {} if origin is None else {"origin": origin}
    if origin is None:
        del client.headers["origin"]
    answer = client.post("/api/debates", json={"motion": MOTION}, headers=headers)
    assert answer.status_code == 403 and answer.text == "forbidden\n"
    assert len(client.get("/api/jobs").json()["jobs"]) == before  # nothing was started


def test_a_cross_site_fetch_is_refused_even_with_a_matching_origin(client: httpx.Client) -> None:
    answer = client.post(
        "/api/debates", json={"motion": MOTION}, headers={"sec-fetch-site": "cross-site"}
    )
    assert answer.status_code == 403


def test_no_cors_headers_and_no_preflight(server: Served, client: httpx.Client) -> None:
    evil = {"origin": "http://evil.example"}
    got = client.get("/api/info", headers=evil)
    assert got.status_code == 200
    assert not [h for h in got.headers if h.lower().startswith("access-control")]
    preflight = client.options(
        "/api/debates", headers={**evil, "access-control-request-method": "POST"}
    )
    assert preflight.status_code in (403, 405)
    assert not [h for h in preflight.headers if h.lower().startswith("access-control")]


def test_a_form_must_be_json(client: httpx.Client) -> None:
    answer = client.post(
        "/api/debates", content=b"motion=x", headers={"content-type": "text/plain"}
    )
    assert answer.status_code == 415


# -- saved debates only by id --------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/history/..",
        "/api/history/../../etc/passwd",
        "/api/history/%2e%2e/files/transcript.json",
        "/api/history/..%2F..%2Fetc/files/passwd",
        "/api/history/%2Fetc",
        "/api/history/{done}/files/..%2Fjournal.jsonl",
        "/api/history/{done}/files/%2e%2e",
        "/api/history/{done}/files/meta.json",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/../app.py",
        "/api/tournaments/..%2F..%2Fdebates/ratings.png",
    ],
)
def test_paths_out_of_the_data_directory_are_404(
    client: httpx.Client, finished: str, path: str
) -> None:
    url = httpx.URL(client.base_url.join("/"), raw_path=path.format(done=finished).encode())
    answer = client.get(url)
    assert answer.status_code == 404, answer.text
    assert "root:" not in answer.text


def test_a_folder_outside_the_data_directory_is_not_served_by_its_path(
    server: Served, client: httpx.Client, finished: str, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "transcript.json").write_text('{"format": "oxford", "motion": "secret"}')
    quoted = str(outside).replace("/", "%2F")
    answer = client.get(httpx.URL(server.base, raw_path=f"/api/history/{quoted}".encode()))
    assert answer.status_code == 404
    # A link in the data directory to a folder elsewhere is not a saved debate either.
    link = server.home / "debates" / "20990101-000000-linked"
    link.symlink_to(outside)
    try:
        assert client.get("/api/history/20990101-000000-linked").status_code == 404
        listed = [d["id"] for d in client.get("/api/history").json()["debates"]]
        assert "20990101-000000-linked" not in listed
    finally:
        link.unlink()


# -- debates -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(server: Served) -> str:
    """A debate run to its end on the module's server: its saved id."""
    with httpx.Client(base_url=server.base, timeout=30, verify=False) as c:
        c.get(f"/?token={server.token}")
        c.headers["origin"] = server.base
        job = start(c)
        wait_state(c, job["id"], "finished")
        return str(c.get(f"/api/jobs/{job['id']}").json()["folder"])


def test_a_debate_streams_its_turns_then_its_document(client: httpx.Client) -> None:
    job = start(client)
    seen = events(client, job["id"])
    kinds = [e["type"] for e in seen]
    assert kinds[0] == "job" and kinds[-1] == "end"
    # Speeches stream: their text comes while their turn is open, before it is finished.
    open_turns = [
        kinds[:i].count("turn_started") - kinds[:i].count("turn_finished")
        for i, kind in enumerate(kinds)
        if kind == "token"
    ]
    assert open_turns and set(open_turns) == {1}
    # A score and the stop are the journal's records, as they are written.
    assert "score" in kinds and "stop" in kinds
    # Every event of the debate is what `moot schema events` describes, and reads back as one
    # (the job's own items, its state, its document and the end, are the server's).
    jsonschema = pytest.importorskip("jsonschema")
    from moot.events import EVENTS, json_schema

    schema = json_schema("events")
    validator = jsonschema.Draft202012Validator(schema)
    debate_events = [e for e in seen if e["type"] in schema["discriminator"]["mapping"]]
    assert len(debate_events) == len([k for k in kinds if k not in ("job", "done", "end")])
    for sent in debate_events:
        validator.validate(sent)
        assert EVENTS.validate_python(sent).type == sent["type"]
    done = next(e for e in seen if e["type"] == "done")
    assert "<h1>" in done["document"] and done["files"] == ["transcript.json", "debate.md"]
    assert seen[-2]["state"] == "finished"
    saved = client.get(f"/api/history/{done['folder']}").json()
    finished_turns = [e for e in seen if e["type"] == "turn_finished"]
    assert len(saved["list"]) == len(finished_turns) == saved["turns"]
    assert saved["list"][0]["label"] == "Proposition · speech"
    assert [s["round"] for s in saved["scores"]] == [2, 3]
    # A saved debate's scores are shown as the live page got them: the score events.
    live = [e for e in seen if e["type"] == "score"]
    assert saved["scores"] == live
    for score in saved["scores"]:
        validator.validate(score)


def test_an_adversarial_review_from_the_page_shows_its_evidence_files(
    client: httpx.Client, tmp_path: Path
) -> None:
    """The page names evidence files as `--evidence` does, one path a line: every seat is
    shown them, and one that cannot be read is named beside its field."""
    facts = tmp_path / "facts.md"
    facts.write_text("Wind farms kill 0.3 birds per GWh.\n", encoding="utf-8")
    form = {
        "format": "adversarial",
        "models": [OTHER_MODEL, "http://127.0.0.1:8/v1"],
        "params": {"rounds": "1", "evidence": f"{facts}\n"},
    }
    job = start(client, **form)
    wait_state(client, job["id"], "finished")
    folder = client.get(f"/api/jobs/{job['id']}").json()["folder"]
    saved = client.get(f"/api/history/{folder}/files/transcript.json").json()
    assert saved["params"]["evidence"] == [
        {"name": str(facts), "text": "Wind farms kill 0.3 birds per GWh."}
    ]
    form["params"]["evidence"] = str(tmp_path / "missing.md")
    answer = client.post("/api/debates", json={"motion": MOTION, **form})
    assert answer.status_code == 400, answer.text
    beside = answer.json()["errors"]["params.evidence"]
    assert "missing.md does not exist" in beside["message"] and beside["hint"]


def test_the_pages_form_keeps_the_documents_whole_text_only_when_its_box_is_ticked(
    client: httpx.Client, server: Served, documents: Path
) -> None:
    kept = {}
    for ticked in (True, False):
        params = {"max_rounds": "3", "evidence": f"{documents}\n", "keep_sources": ticked}
        job = start(client, params=params)
        seen = events(client, job["id"])
        folder = client.get(f"/api/jobs/{job['id']}").json()["folder"]
        saved = client.get(f"/api/history/{folder}/files/transcript.json").json()
        assert saved["evidence"]["passages"]
        # Live, each finished turn carries the text of the passages it was shown or cited.
        finished = [e for e in seen if e["type"] == "turn_finished" and e["turn"]["evidence"]]
        assert finished
        for e in finished:
            ids = {*e["turn"]["evidence"]["shown"]}
            ids |= {c["id"] for c in e["turn"]["evidence"]["citations"]}
            assert e["passages"] == {i: saved["evidence"]["passages"][i] for i in ids}
        assert saved["evidence"].get("keep_sources", False) is ticked
        # The page reads each turn's citations and the text of the passages they name from
        # the saved debate's own ledger.
        shown = client.get(f"/api/history/{folder}").json()
        assert shown["passages"] == saved["evidence"]["passages"]
        ledgers = [t["evidence"] for t in shown["list"] if t["evidence"]]
        assert ledgers == [t["evidence"] for t in saved["turns"] if "evidence" in t]
        assert all(c["id"] in shown["passages"] for e in ledgers for c in e["citations"])
        [path] = [p for p in server.home.rglob(folder) if p.is_dir()]
        kept[ticked] = (path / "evidence" / "paragraphs").is_dir()
    assert kept == {True: True, False: False}
    wrong = {"max_rounds": "3", "evidence": f"{documents}\n", "keep_sources": "yes"}
    answer = client.post("/api/debates", json={"motion": MOTION, "params": wrong})
    assert answer.status_code == 400, answer.text
    assert "a boolean" in answer.json()["errors"]["params.keep_sources"]["message"]


def test_the_transcript_downloads_as_an_attachment(client: httpx.Client, finished: str) -> None:
    answer = client.get(f"/api/history/{finished}/files/transcript.json")
    assert answer.status_code == 200
    assert answer.headers["content-disposition"] == 'attachment; filename="transcript.json"'
    assert json.loads(answer.text)["motion"] == f"This House Believes That {MOTION}"
    brief = client.get(f"/api/history/{finished}/files/debate.md")
    assert brief.headers["content-type"].startswith("text/markdown")


def test_a_closed_stream_does_not_stop_the_debate_and_a_new_one_starts_at_the_beginning(
    client: httpx.Client,
) -> None:
    job = start(client)
    early = events(client, job["id"], until="turn_finished")  # then the "tab" closes
    assert early[-1]["type"] == "turn_finished"
    assert wait_state(client, job["id"], "finished") == "finished"
    again = events(client, job["id"])
    finished_turns = [e for e in again if e["type"] == "turn_finished"]
    assert finished_turns[0]["turn"] == early[-1]["turn"]
    assert len(finished_turns) > 20
    # The backlog keeps each turn's whole text, not the tokens that streamed it.
    assert "token" not in [e["type"] for e in again]


def test_one_debate_per_model_at_a_time_the_next_waits(client: httpx.Client) -> None:
    first = start(client)
    second = start(client)
    other = start(client, models=[OTHER_MODEL])
    assert second["state"] == "queued" and second["waiting"]
    assert other["state"] == "running"  # its model is free
    wait_state(client, first["id"], "finished")
    assert wait_state(client, second["id"], "running", "finished") in ("running", "finished")
    wait_state(client, second["id"], "finished")
    wait_state(client, other["id"], "finished")


def test_a_stopped_debate_keeps_its_turns_and_resumes_from_the_history(
    client: httpx.Client,
) -> None:
    job = start(client)
    events(client, job["id"], until="turn_finished")
    stopped = client.post(f"/api/jobs/{job['id']}/stop")
    assert stopped.status_code == 200
    assert wait_state(client, job["id"], "stopped") == "stopped"
    folder = client.get(f"/api/jobs/{job['id']}").json()["folder"]
    saved = client.get(f"/api/history/{folder}").json()
    assert saved["status"] == "interrupted" and saved["turns"] >= 1
    assert saved["files"] == ["journal.jsonl"]
    resumed = client.post(f"/api/history/{folder}/resume")
    assert resumed.status_code == 201, resumed.text
    wait_state(client, resumed.json()["id"], "finished")
    assert client.get(f"/api/history/{folder}").json()["status"] == "finished"
    again = client.post(f"/api/history/{folder}/resume")
    assert again.status_code == 400 and "finished" in again.json()["error"]["message"]


def test_a_queued_debate_stops_without_running(client: httpx.Client) -> None:
    first = start(client)
    second = start(client)
    assert second["state"] == "queued"
    client.post(f"/api/jobs/{second['id']}/stop")
    assert client.get(f"/api/jobs/{second['id']}").json()["state"] == "stopped"
    client.post(f"/api/jobs/{first['id']}/stop")
    wait_state(client, first["id"], "stopped", "finished")


def test_delete_needs_the_origin_and_removes_the_folder(
    server: Served, client: httpx.Client
) -> None:
    job = start(client)
    wait_state(client, job["id"], "finished")
    folder = client.get(f"/api/jobs/{job['id']}").json()["folder"]
    refused = client.delete(f"/api/history/{folder}", headers={"origin": "http://evil.example"})
    assert refused.status_code == 403
    assert (server.home / "debates" / folder).is_dir()
    assert client.delete(f"/api/history/{folder}").json() == {"deleted": folder}
    assert not (server.home / "debates" / folder).exists()
    assert client.get(f"/api/history/{folder}").status_code == 404


# -- the form, checked as moot run checks it -------------------------------------------------


@pytest.mark.parametrize(
    ("form", "field", "words"),
    [
        ({"motion": ""}, "motion", "the motion is empty"),
        ({"motion": "   -  "}, "motion", "has no words"),
        ({"params": {"max_rounds": "99"}}, "params.max_rounds", "99 is not allowed"),
        ({"params": {"max_rounds": "three"}}, "params.max_rounds", "not a whole number"),
        ({"params": {"min_score": "2"}}, "params.min_score", "2.0 is not allowed"),
        ({"temperatures": {"judge": "5"}}, "temperatures.judge", "5.0 is not allowed"),
        ({"temperatures": {"king": "0.5"}}, "temperatures.king", "unknown role 'king'"),
        ({"seed": "-1"}, "seed", "-1 is not allowed"),
        ({"format": "parliament"}, "format", "unknown format 'parliament'"),
        ({"format": "adversarial"}, "models.0", "at least two participants"),
        ({"format": "decision", "params": {"positions": "only one"}}, "params.positions", "2 to 4"),
        ({"format": "challenge", "params": {"effort": "huge"}}, "params.effort", "'huge'"),
        ({"max_tokens": "0"}, "max_tokens", "0 is not allowed"),
        ({"motion": ["a"]}, "motion", "motion: a list given where a string is expected"),
        ({"motion": None}, "motion", "motion: null given where a string is expected"),
        ({"models": "a.gguf"}, "models", "models: a string given where a list is expected"),
        ({"roles": {"judge": 3}}, "roles.judge", "a number given where a string is expected"),
        ({"seed": True}, "seed", "seed: a boolean given where a number is expected"),
    ],
)
def test_a_form_problem_is_named_by_its_field(
    client: httpx.Client, form: dict[str, Any], field: str, words: str
) -> None:
    before = len(client.get("/api/jobs").json()["jobs"])
    answer = client.post("/api/debates", json={"motion": MOTION, **form})
    assert answer.status_code == 400, answer.text
    errors = answer.json()["errors"]
    assert field in errors, errors
    assert words in errors[field]["message"]
    assert errors[field]["hint"]
    assert len(client.get("/api/jobs").json()["jobs"]) == before


@pytest.mark.parametrize(
    ("form", "field", "words"),
    [
        ({"roles": {"judge": "no-such-model"}}, "roles.judge", "unknown model 'no-such-model'"),
        ({"models": ["a.gguf"]}, "models.0", ""),
    ],
)
def test_a_model_that_is_not_here_is_named_by_its_field_unless_a_dry_run(
    moot_home: Path, form: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(forms.FormErrors) as refused:
        forms.debate_setup({"motion": MOTION, **form}, dry_run=False)
    said_en = shown(refused.value.fields[field], "en")
    assert words in said_en["message"] and said_en["hint"]
    if field == "roles.judge":  # a Chinese debate's form says it in Chinese
        said = shown(refused.value.fields[field], "zh")
        assert said["message"] == "未知模型 'no-such-model'" and said["hint"], said
    setup = forms.debate_setup({"motion": MOTION, **form}, dry_run=True)  # scripted: any name
    assert setup.run.dry_run


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/debates", f'{{"motion": "{MOTION}", "temperatures": {{"devil": "0.1", "devil": '
         '"0.9"}}', "temperatures.devil"),
        ("/api/debates", f'{{"motion": "{MOTION}", "roles": {{"opposition": "{OTHER_MODEL}", '
         f'"opposition": "{OTHER_MODEL}"}}}}', "roles.opposition"),
        ("/api/debates", f'{{"motion": "{MOTION}", "motion": "{MOTION}"}}', "motion"),
        ("/api/tournaments", '{"models": ["a", "b"], "motions": "x y", "motions": "y z"}',
         "motions"),
    ],
)  # fmt: skip
def test_a_field_given_twice_is_a_400_naming_it(
    client: httpx.Client, path: str, body: str, field: str
) -> None:
    """JSON keeps the last of a repeated key: the server refuses the form instead, as the
    command line refuses an option given twice."""
    before = len(client.get("/api/jobs").json()["jobs"])
    answer = client.post(path, content=body.encode(), headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    error = answer.json()["errors"][field]
    assert error["message"].endswith("is given twice") and error["hint"], error
    assert len(client.get("/api/jobs").json()["jobs"]) == before


def test_a_tournament_field_of_another_kind_is_a_400_naming_it(client: httpx.Client) -> None:
    answer = client.post("/api/tournaments", json={"models": "a", "motions": ["x y", "y z"]})
    assert answer.status_code == 400, answer.text
    errors = answer.json()["errors"]
    assert errors["models"]["message"] == "models: a string given where a list is expected"
    assert errors["motions"]["message"] == "motions: a list given where a string is expected"


# A Chinese debate's form: its problems are said in Chinese; what stays is what the user
# typed or would type (a value, an option, a role's or a format's id).
ZH_MOTION = "城市应该禁止汽车吗"
ROLES = ("proposition", "opposition", "devil", "chair", "judge")
FORMATS = ("oxford", "decision", "challenge", "adversarial")


_EFFORT = ("huge", "low", "medium", "high", "max")


@pytest.mark.parametrize(
    ("form", "field", "message", "typed"),
    [({"motion": "", "lang": "zh"}, "motion", "辩题是空的", ()),
     ({"params": {"max_rounds": "99"}}, "params.max_rounds",
      "99 不允许：应不大于8", ()),
     ({"params": {"max_rounds": "three"}}, "params.max_rounds", "'three' 不是整数", ("three",)),
     ({"temperatures": {"judge": "5"}}, "temperatures.judge",
      "5.0 不允许：应不大于2", ()),
     ({"temperatures": {"king": "0.5"}}, "temperatures.king",
      "温度：--format oxford 没有角色 'king'", ("king", *ROLES)),
     ({"seed": "x"}, "seed", "'x' 不是整数", ()),
     ({"format": "parliament"}, "format", "未知赛制 'parliament'", ("parliament", *FORMATS)),
     ({"format": "challenge", "params": {"effort": "huge"}}, "params.effort",
      "'huge' 不允许：应为 'low', 'medium', 'high' 或 'max'", _EFFORT),
     ({"lang": "fr"}, "lang",
      "'fr' 不允许：应为 'auto', 'en' 或 'zh'", ("fr", "auto", "en", "zh")),
     ({"max_tokens": "0"}, "max_tokens", "0 不允许：应不小于1", ()),
     ({"seed": True}, "seed", "seed：应为数字，给的却是布尔值", ("seed",)),
     ({"roles": {"judge": ["a"]}}, "roles.judge", "roles.judge：应为字符串，给的却是列表",
      ("roles.judge",))],
)  # fmt: skip
def test_a_chinese_forms_problem_is_said_in_chinese(
    client: httpx.Client, form: dict[str, Any], field: str, message: str, typed: tuple[str, ...]
) -> None:
    from test_chinese_commands import said

    answer = client.post("/api/debates", json={"motion": ZH_MOTION, **form})
    assert answer.status_code == 400, answer.text
    error = answer.json()["errors"][field]
    assert error["message"] == message and error["hint"], error
    assert said(f"{error['message']} {error['hint']}", also=(*typed, "moot")) == [], error


def test_the_debates_language_beats_the_pages_and_the_page_says_the_rest(
    client: httpx.Client,
) -> None:
    """A form's problems are said in its debate's language (its lang, else its motion's);
    a form with neither, or one the server cannot read, in the page's (Accept-Language)."""
    zh, en = {"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"}, {"accept-language": "en-GB"}
    rounds = {"params": {"max_rounds": "99"}}

    def message(form: dict[str, Any], page: dict[str, str]) -> str:
        answer = client.post("/api/debates", json=form, headers=page)
        assert answer.status_code == 400, answer.text
        return str(next(iter(answer.json()["errors"].values()))["message"])

    assert message({"motion": ZH_MOTION, **rounds}, en).endswith("不允许：应不大于8")
    assert message({"motion": MOTION, **rounds}, zh).endswith(
        "is not allowed: input should be less than or equal to 8"
    )
    assert message({"motion": MOTION, "lang": "zh", **rounds}, en).endswith("不允许：应不大于8")
    assert message({"motion": ""}, zh) == "辩题是空的"
    assert message({"motion": ""}, en) == message({"motion": ""}, {}) == "the motion is empty"

    unread = [
        (b"{not", "application/json", 400, "the form is not JSON", "表单不是 JSON"),
        (b"[1]", "application/json", 400, "the form is not an object", "表单不是 JSON 对象"),
        (b"x", "text/plain", 415, "send the form as JSON", "请以 JSON 发送表单"),
    ]
    for body, kind, status, english, chinese in unread:
        for page, said, hint in ((zh, chinese, "请重新加载页面"), ({}, english, "reload the page")):
            for path in ("/api/debates", "/api/tournaments"):
                headers = {"content-type": kind, **page}
                answer = client.post(path, content=body, headers=headers)
                assert answer.status_code == status
                assert answer.json() == {"error": {"message": said, "hint": hint}}
    missing = client.get("/api/jobs/nosuch", headers=zh)
    assert missing.status_code == 404
    assert missing.json() == {"error": {"message": "没有这场辩论", "hint": ""}}
    assert client.get("/api/jobs/nosuch").json()["error"]["message"] == "no such debate"


def test_an_answer_to_a_chinese_debate_is_refused_in_chinese(client: httpx.Client) -> None:
    """The page shows the debate in its language: what it answers is refused in it too."""
    said = {
        "seat": {"message": "这场辩论中没有真人席位", "hint": "把一个席位的模型设为 human"},
        "evidence": {
            "message": "辩论没有在等这份证据",
            "hint": "请重新加载页面：页面会显示辩论现在要求的内容",
        },
    }
    chinese, english = start(client, motion=ZH_MOTION)["id"], start(client)["id"]
    for path, error in said.items():
        refused = client.post(f"/api/jobs/{chinese}/{path}", json={"ask": 1, "text": "x"})
        assert (refused.status_code, refused.json()) == (409, {"error": error})
        refused = client.post(f"/api/jobs/{english}/{path}", json={"ask": 1, "text": "x"})
        assert refused.status_code == 409 and refused.json()["error"]["message"].isascii()


@pytest.mark.parametrize(
    ("form", "field", "message", "hint"),
    [({"models": ["a"]}, "models", "锦标赛需要两个或更多模型",
      "请在两个模型栏里各填一个模型，或再添加一个模型"),
     ({"models": ["a", "b"], "format": "decision"}, "format",
      "--format decision 没有可让模型对阵的正反两方", "锦标赛可用 oxford 或 challenge"),
     ({"models": ["a", "b"], "swaps": "x"}, "swaps", "'x' 不是整数", "请输入数字，例如 3"),
     ({"models": ["a", "b"], "motions": "", "lang": "zh"}, "motions",
      "没有辩题", "每行写一个辩题")],
)  # fmt: skip
def test_a_chinese_tournaments_form_problem_is_said_in_chinese(
    client: httpx.Client, form: dict[str, Any], field: str, message: str, hint: str
) -> None:
    answer = client.post(
        "/api/tournaments", json={"motions": f"{ZH_MOTION}\n学校应该取消作业吗", **form}
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"][field] == {"message": message, "hint": hint}
    as_english = {"motions": MOTION, **{k: v for k, v in form.items() if k != "lang"}}
    english = client.post("/api/tournaments", json=as_english)
    assert english.status_code == 400 and english.json()["errors"][field]["message"].isascii()


def test_the_formats_describe_their_seats_and_rules(client: httpx.Client) -> None:
    formats = {f["name"]: f for f in client.get("/api/formats").json()["debate"]}
    assert set(formats) == {"oxford", "decision", "challenge", "adversarial"}
    oxford = formats["oxford"]
    assert oxford["roles"] == ["proposition", "opposition", "devil", "chair", "judge"]
    assert [p["name"] for p in oxford["params"]] == [
        "min_score", "max_rounds", "judge_rubric", "evidence", "keep_sources"
    ]  # fmt: skip
    # Every format takes documents, one path a line, and whether to keep their whole text.
    assert all({("evidence", "array"), ("keep_sources", "boolean")}
               <= {(p["name"], p["kind"]) for p in f["params"]}
               for f in formats.values())  # fmt: skip
    adversarial = formats["adversarial"]["params"]
    assert [(p["name"], p["kind"]) for p in adversarial] == [
        ("rounds", "integer"),
        ("evidence", "array"),
        ("keep_sources", "boolean"),
    ]
    rubric = oxford["params"][2]
    assert rubric["default"] == "checklist"
    assert (
        formats["adversarial"]["models"] > 1
        and "participant_1" not in formats["adversarial"]["roles"]
    )


# -- the command line ----------------------------------------------------------------------


def test_a_port_in_use_is_a_usage_error(server: Served, cli: Cli, tmp_path: Path) -> None:
    done = cli.subprocess("serve", "--no-browser", "--port", str(server.port), home=tmp_path)
    assert done.returncode == 2
    assert f"port {server.port} is in use" in done.stderr and "Traceback" not in done.stderr


def test_a_port_out_of_range_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    done = cli("serve", "--no-browser", "--port", "70000", home=tmp_path)
    assert done.returncode == 2 and "--port" in done.stderr


def test_serving_beyond_loopback_warns(tmp_path: Path) -> None:
    served = serve(tmp_path, "--dry-run", "--host", "0.0.0.0")
    try:
        warning = "".join(served.stderr)
        deadline = time.monotonic() + 10
        while "warning" not in warning and time.monotonic() < deadline:
            time.sleep(0.05)
            warning = "".join(served.stderr)
        assert "warning: serving on 0.0.0.0" in warning
        # Bound to every address, it still refuses names: only addresses and localhost.
        cookie = {f"moot-token-{served.port}": served.token}
        by_name = get(
            f"{served.base}/api/info",
            cookies=cookie,
            headers={"host": f"evil.example:{served.port}"},
        )
        assert by_name.status_code == 403
        assert get(f"{served.base}/api/info", cookies=cookie).status_code == 200
    finally:
        served.stop()


def test_a_finished_tournament_is_served_by_its_id_only(client: httpx.Client) -> None:
    assert isinstance(client.get("/api/tournaments").json()["tournaments"], list)
    for ident in ("nope", "..", ".hidden", "%2e%2e%2fdebates"):
        answer = client.get(f"/api/tournaments/{ident}")
        assert answer.status_code == 404, (ident, answer.text)
