"""The parts of `moot serve` that need no server: the jobs and their queue per model, the
guard's checks, the form read as `moot run` reads it, documents made safe to show; and the
wheel carries the page."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Cli
from gguf_samples import write_gguf
from moot.errors import MootError, UsageError
from moot.web import forms, wire
from moot.web import tournament as tournaments
from moot.web.guard import Guard
from moot.web.jobs import END, Hub, Job


def job(work: Callable[[Job], None] | None = None, *holds: str) -> Job:
    return Job(work or (lambda j: None), kind="debate", title="t", holds=holds)


def wait(condition: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)


# -- jobs ----------------------------------------------------------------------------------


def test_a_job_waits_while_its_model_is_busy_and_the_queue_keeps_its_order() -> None:
    hub = Hub()
    gate = threading.Event()
    first = hub.submit(job(lambda j: gate.wait(5) and None, "small"))
    second = hub.submit(job(None, "small", "large"))
    free = hub.submit(job(None, "other"))
    later = hub.submit(job(None, "large"))  # its model is free, but an earlier job wants it
    assert first.state == "running"
    assert second.state == "queued" and second.waiting == ["small"]
    wait(lambda: free.state == "finished")
    assert later.state == "queued"
    gate.set()
    wait(lambda: later.state == "finished")
    assert second.state == "finished"


def test_a_closed_listener_misses_nothing_a_new_one_gets_the_backlog_without_tokens() -> None:
    j = job()
    heard: list[dict[str, Any]] = []
    j.subscribe(heard.append)
    j.publish({"type": "turn_started", "index": 0})
    j.publish({"type": "token", "text": "Cars "})
    j.publish({"type": "notice", "message": "m"})
    j.publish({"type": "token", "text": "go."})
    assert [e["type"] for e in heard] == ["turn_started", "token", "notice", "token"]
    j.unsubscribe(heard.append)
    j.publish({"type": "turn_finished", "turn": {"text": "Cars go."}})
    assert len(heard) == 4
    later = j.subscribe(lambda e: None)
    assert [e["type"] for e in later] == ["job", "turn_started", "notice", "turn_finished"]


def test_a_job_that_is_over_ends_its_backlog_and_its_listeners_streams() -> None:
    hub = Hub()
    j = job()
    heard: list[dict[str, Any]] = []
    j.subscribe(heard.append)
    hub.submit(j)
    wait(lambda: j.over)
    wait(lambda: bool(heard) and heard[-1] is END)
    assert [e.get("state") for e in heard if e["type"] == "job"] == ["running", "finished"]
    assert j.subscribe(lambda e: None)[-1] is END


def test_a_failed_job_says_why_and_a_stopped_one_is_not_a_failure() -> None:
    hub = Hub()

    def fails(j: Job) -> None:
        raise UsageError("the motion is empty", hint="give one")

    failed = hub.submit(job(fails, "m"))
    wait(lambda: failed.over)
    assert failed.state == "failed"
    assert failed.error == {"message": "the motion is empty", "hint": "give one"}

    gate = threading.Event()

    def stoppable(j: Job) -> None:
        j.on_stop(gate.set)
        gate.wait(5)
        raise MootError("the debate was stopped")

    running = hub.submit(job(stoppable, "m"))
    queued = hub.submit(job(None, "m"))
    wait(lambda: running.state == "running")
    hub.stop(queued)
    assert queued.state == "stopped"
    hub.stop(running)
    wait(lambda: running.over)
    assert running.state == "stopped" and running.error is None


def test_a_crash_in_a_job_is_reported_not_raised() -> None:
    hub = Hub()
    broken = hub.submit(job(lambda j: 1 / 0 and None, "m"))  # type: ignore[func-returns-value]
    wait(lambda: broken.over)
    assert broken.state == "failed"
    assert broken.error is not None and "ZeroDivisionError" in broken.error["message"]
    assert hub.submit(job(None, "m")) is not None  # its model is free again


# -- the guard -----------------------------------------------------------------------------


def guard(host: str = "127.0.0.1", port: int = 8123) -> Guard:
    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover
        return None

    return Guard(app, token="t", host=host, port=port)


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8123", True),
        ("localhost:8123", True),
        ("127.0.0.1", True),
        ("[::1]:8123", True),
        ("127.0.0.1:8124", False),
        ("evil.example:8123", False),
        ("127.0.0.1.nip.io:8123", False),
        ("", False),
        ("10.0.0.5:8123", False),
    ],
)
def test_the_host_header_must_name_this_server(host: str, allowed: bool) -> None:
    assert guard().host_allowed(host) is allowed


def test_bound_to_every_address_any_address_is_served_but_no_name() -> None:
    wide = guard("0.0.0.0")
    assert wide.host_allowed("10.0.0.5:8123") and wide.host_allowed("[fe80::1]:8123")
    assert not wide.host_allowed("evil.example:8123")


@pytest.mark.parametrize(
    ("headers", "same"),
    [
        ({"host": "127.0.0.1:8123", "origin": "http://127.0.0.1:8123"}, True),
        ({"host": "localhost:8123", "origin": "http://127.0.0.1:8123"}, False),
        ({"host": "127.0.0.1:8123"}, False),
        ({"host": "127.0.0.1:8123", "origin": "null"}, False),
        (
            {
                "host": "127.0.0.1:8123",
                "origin": "http://127.0.0.1:8123",
                "sec-fetch-site": "same-site",
            },
            False,
        ),
    ],
)
def test_what_changes_anything_comes_from_the_page_itself(
    headers: dict[str, str], same: bool
) -> None:
    assert guard().same_origin(headers) is same


# -- documents and turns ----------------------------------------------------------------------


def test_a_document_is_shown_as_text_never_as_markup_links_or_images() -> None:
    html = wire.document_html(
        "# Brief\n\n<script>alert(1)</script>\n\n![x](http://evil.example/i.png) "
        "[there](http://evil.example) <http://evil.example>\n\n<img src=x onerror=alert(1)>"
    )
    assert "<h1>Brief</h1>" in html
    assert "<script" not in html and "<img" not in html and "<a " not in html
    assert "&lt;script&gt;" in html


def test_a_saved_turn_is_labelled_in_the_debates_language() -> None:
    assert wire.turn_label("oxford", "en", "opposition", "poi_question") == (
        "Opposition · point of information"
    )
    assert wire.turn_label("oxford", "zh", "proposition", "speech") == "正方 · 发言"
    assert wire.turn_label("decision", "en", "debater_a", "opening") == "Debater A · opening"
    # A seat its format's tables do not name: the language's word for it, never English.
    assert wire.turn_label("decision", "zh", "debater_a", "opening") == "辩手A · 开篇"


# -- the form, read as moot run reads it -------------------------------------------------------


def test_a_form_becomes_the_setup_moot_run_would_build(moot_home: Path) -> None:
    setup = forms.debate_setup(
        {
            "motion": "cities should ban cars",
            "models": [""],
            "roles": {"judge": "", "chair": "http://127.0.0.1:9/v1"},
            "temperatures": {"devil": "0.9", "judge": ""},
            "seed": "7",
            "params": {"max_rounds": "3", "min_score": ""},
            "max_tokens": "64",
        },
        dry_run=True,
    )
    assert setup.motion == "This House Believes That cities should ban cars"
    assert setup.seed == 7 and setup.run.dry_run and setup.run.max_tokens == 64
    assert setup.role_models == {"chair": "http://127.0.0.1:9/v1"}
    assert setup.temperatures == {"devil": 0.9}
    assert setup.params.max_rounds == 3 and setup.params.min_score == 7.5  # type: ignore[attr-defined]


def test_several_problems_are_named_at_once(moot_home: Path) -> None:
    with pytest.raises(forms.FormErrors) as caught:
        forms.debate_setup(
            {"motion": "", "seed": "x", "temperatures": {"judge": "warm"}}, dry_run=True
        )
    assert set(caught.value.fields) == {"motion", "seed", "temperatures.judge"}


def read(body: str) -> Any:
    """A request's JSON as the server reads it: each object's repeated keys noted."""
    return json.loads(body, object_pairs_hook=forms.json_object)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"motion": "cats beat dogs", "temperatures": {"devil": "0.1", "devil": "0.9"}}',
         "temperatures.devil"),
        ('{"motion": "cats beat dogs", "roles": {"judge": "a.gguf", "judge": "b.gguf"}}',
         "roles.judge"),
        ('{"motion": "cats beat dogs", "params": {"max_rounds": "3", "max_rounds": "4"}}',
         "params.max_rounds"),
        ('{"motion": "cats beat dogs", "motion": "dogs beat cats"}', "motion"),
    ],
)  # fmt: skip
def test_a_field_given_twice_is_named_not_its_last_value_taken(
    moot_home: Path, body: str, field: str
) -> None:
    with pytest.raises(forms.FormErrors) as caught:
        forms.debate_setup(read(body), dry_run=True)
    assert field in caught.value.fields, caught.value.fields
    problem = caught.value.fields[field]
    assert isinstance(problem, MootError) and "is given twice" in problem.message
    assert problem.hint


@pytest.mark.parametrize(
    ("form", "field", "kind"),
    [
        ({"motion": ["a"]}, "motion", "a list given where a string is expected"),
        ({"motion": None}, "motion", "null given where a string is expected"),
        ({"motion": 7}, "motion", "a number given where a string is expected"),
        ({"motion": {"text": "a"}}, "motion", "an object given where a string is expected"),
        ({"format": ["oxford"]}, "format", "a list"),
        ({"lang": True}, "lang", "a boolean given where a string is expected"),
        ({"models": "a.gguf"}, "models", "a string given where a list is expected"),
        ({"models": [["a.gguf"]]}, "models.0", "a list given where a string is expected"),
        ({"roles": ["judge=a.gguf"]}, "roles", "a list given where an object is expected"),
        ({"roles": {"judge": 3}}, "roles.judge", "a number given where a string is expected"),
        ({"temperatures": "devil=0.5"}, "temperatures", "a string given where an object is"),
        ({"temperatures": {"devil": [0.5]}}, "temperatures.devil", "a list given where a num"),
        ({"temperatures": {"devil": True}}, "temperatures.devil", "a boolean given where a num"),
        ({"seed": True}, "seed", "a boolean given where a number is expected"),
        ({"max_tokens": None}, "max_tokens", "null given where a number is expected"),
        ({"params": "max_rounds=3"}, "params", "a string given where an object is expected"),
        ({"params": {"max_rounds": [3]}}, "params.max_rounds", "a list given where a number"),
        ({"format": "challenge", "params": {"effort": ["low"]}}, "params.effort", "a list"),
        ({"format": "decision", "params": {"positions": ["stay", "go"]}}, "params.positions",
         "a list given where a string is expected"),
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_kind_is_named_by_its_field_never_made_text(
    moot_home: Path, form: dict[str, Any], field: str, kind: str
) -> None:
    with pytest.raises(forms.FormErrors) as caught:
        forms.debate_setup({"motion": "cats beat dogs", **form}, dry_run=True)
    assert field in caught.value.fields, caught.value.fields
    error = caught.value.fields[field]
    assert error["message"].startswith(f"{field}: {kind}"), error
    assert error["hint"].endswith(f"or leave {field} out"), error


def test_a_number_may_be_a_json_number_or_digits(moot_home: Path) -> None:
    setup = forms.debate_setup(
        {
            "motion": "cats beat dogs",
            "seed": 7,
            "temperatures": {"devil": 0.5, "judge": 1},
            "params": {"max_rounds": 3, "min_score": "8"},
            "max_tokens": 64,
        },
        dry_run=True,
    )
    assert setup.seed == 7 and setup.run.max_tokens == 64
    assert setup.temperatures == {"devil": 0.5, "judge": 1.0}
    assert setup.params.max_rounds == 3 and setup.params.min_score == 8.0  # type: ignore[attr-defined]
    with pytest.raises(forms.FormErrors) as caught:
        forms.debate_setup({"motion": "cats beat dogs", "seed": 7.5}, dry_run=True)
    assert caught.value.fields["seed"]["message"] == "'7.5' is not a whole number"


def test_a_decisions_positions_are_one_a_line(moot_home: Path) -> None:
    setup = forms.debate_setup(
        {
            "motion": "Should we move to Lisbon?",
            "format": "decision",
            "params": {"positions": "stay\n\n move \n", "preset": "quick"},
        },
        dry_run=True,
    )
    assert setup.params.positions == ("stay", "move")  # type: ignore[attr-defined]


def test_a_tournament_form_is_planned_before_it_is_queued(moot_home: Path, tmp_path: Path) -> None:
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    a, b = (str(write_gguf(tmp_path / f"{n}.gguf", chat_template=template)) for n in "ab")
    choice = tournaments.choose(
        {"models": [a, b, ""], "motions": "cats beat dogs\n\n", "params": {"max_rounds": "3"}},
        dry_run=True,
    )
    assert len(choice.debates) == 2 and choice.params == {"max_rounds": 3}
    for form, field in [
        ({"models": [a], "motions": "x y"}, "models"),
        ({"models": [a, b], "motions": ""}, "motions"),
        ({"models": [a, b], "motions": "x y", "format": "decision"}, "format"),
        ({"models": [a, b], "motions": "x y", "swaps": "0"}, "swaps"),
        ({"models": [a, str(tmp_path / "none.gguf")], "motions": "x y"}, "models"),
        ({"models": [a, a], "motions": "x y"}, "models"),
        ({"models": [a, b], "judges": [str(tmp_path / "none.gguf")], "motions": "x y"}, "judges"),
        ({"models": [a, b], "motions": "x " * 3000}, "motions"),
        ({"models": [a, b], "motions": "x y", "lang": "fr"}, "lang"),
        ({"models": [a, b], "motions": "x y", "params": {"max_rounds": "99"}}, "params.max_rounds"),
        ({"models": [a, b], "motions": "x y", "seed": "-1"}, "seed"),
        # A value of another kind than the page sends is named, never made text.
        ({"models": [a, b], "motions": ["x y", "y z"]}, "motions"),
        ({"models": [a, b], "motions": None}, "motions"),
        ({"models": f"{a}\n{b}", "motions": "x y"}, "models"),
        ({"models": [a, [b]], "motions": "x y"}, "models.1"),
        ({"models": [a, b], "judges": a, "motions": "x y"}, "judges"),
        ({"models": [a, b], "motions": "x y", "swaps": True}, "swaps"),
        ({"models": [a, b], "motions": "x y", "format": None}, "format"),
        ({"models": [a, b], "motions": "x y", "lang": ["zh"]}, "lang"),
        ({"models": [a, b], "motions": "x y", "params": ["max_rounds"]}, "params"),
        (
            read(f'{{"models": ["{a}", "{b}"], "motions": "x y", "swaps": "1", "swaps": "2"}}'),
            "swaps",
        ),
        (
            read(
                f'{{"models": ["{a}", "{b}"], "motions": "x y", "params": {{"max_rounds": "3",'
                ' "max_rounds": "4"}}'
            ),
            "params.max_rounds",
        ),
    ]:
        with pytest.raises(forms.FormErrors) as caught:
            tournaments.choose(form, dry_run=True)
        assert field in caught.value.fields, (form, caught.value.fields)


def test_a_dry_run_tournament_takes_a_model_that_is_not_installed(moot_home: Path) -> None:
    form = {"models": ["smollm2-135m", "gemma3-270m"], "motions": "cats beat dogs"}
    choice = tournaments.choose(form, dry_run=True)  # nothing is loaded: a catalog id will do
    assert {d["proposition"] for d in choice.debates} == {"smollm2-135m", "gemma3-270m"}
    with pytest.raises(forms.FormErrors):  # a name that is no model anywhere is a mistake
        tournaments.choose({**form, "models": ["smollm2-135m", "nosuchmodel"]}, dry_run=True)
    with pytest.raises(forms.FormErrors) as caught:  # a real run needs them here
        tournaments.choose(form, dry_run=False)
    assert "models" in caught.value.fields


def test_a_tournament_from_the_page_plays_as_many_debates_at_once_as_serve_was_told(
    moot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    a, b = (str(write_gguf(tmp_path / f"{n}.gguf", chat_template=template)) for n in "ab")
    choice = tournaments.choose({"models": [a, b], "motions": "cats beat dogs"}, dry_run=True)
    given: dict[str, Any] = {}

    def tournament(*args: Any, **kw: Any) -> None:
        given.update(kw)
        raise MootError("stopped here", hint="")

    monkeypatch.setattr(tournaments, "tournament", tournament)
    hub = Hub()
    ran = hub.submit(tournaments.tournament_job(choice, parallel=3))
    wait(lambda: ran.over)
    assert given["parallel"] == 3 and given["batch"] is False
    batched = hub.submit(tournaments.tournament_job(choice, parallel=2, batch=True))
    wait(lambda: batched.over)
    assert given["parallel"] == 2 and given["batch"] is True  # `moot serve --batch`
    hub.close()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--parallel", "0"], "error: --parallel 0 is not allowed"),
        (["--batch"], "error: --batch decodes debates played at once together"),
    ],
)
def test_serve_refuses_a_parallel_out_of_range(
    cli: Cli, tmp_path: Path, args: list[str], says: str
) -> None:
    done = cli("serve", "--no-browser", *args, home=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 2, done.stderr
    assert lines[0].startswith(says) and lines[1].startswith("hint:")


# -- the command line and the package --------------------------------------------------------


def test_the_other_commands_do_not_load_the_web_server() -> None:
    probe = (
        "import sys, moot.cli; moot.cli._register(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'starlette', 'uvicorn', 'sse_starlette', 'moot'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['moot']"


def test_pace_is_for_dry_runs(cli: Cli, tmp_path: Path) -> None:
    done = cli("serve", "--no-browser", "--pace", "0.1", home=tmp_path)
    assert done.returncode == 2 and "--pace applies only to --dry-run" in done.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.insert(4, "--no-isolation")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [built] = out.glob("moot-*.whl")
    return built


def test_the_wheel_ships_the_page_and_depends_on_its_server(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    static = REPO / "src" / "moot" / "web" / "static"
    page = [f"moot/web/static/{p.name}" for p in static.iterdir() if p.is_file()]
    assert "moot/web/static/index.html" in page
    assert [p for p in page if p not in names] == []
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [
        line.split(":", 1)[1].strip().split(">")[0].split(";")[0].strip().lower()
        for line in archive.read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert {"starlette", "uvicorn", "sse-starlette", "markdown-it-py"} <= set(requires)


def test_a_thinking_models_reasoning_reaches_the_page_marked_as_such() -> None:
    from moot.events import Token
    from moot.records.transcript import Turn

    assert wire.event(Token("proposition", "my plan", reasoning=True))["reasoning"] is True
    assert wire.event(Token("proposition", "Cars go."))["reasoning"] is False
    spoken = Turn(
        index=0, round=1, role="proposition", step="speech", model="m", temperature=0.5,
        text="Cars go.", reasoning="my plan",
    )  # fmt: skip
    assert wire.turn(spoken)["reasoning"] == "my plan" and wire.turn(spoken)["text"] == "Cars go."
    page = (Path(wire.__file__).parent / "static" / "debate.js").read_text(encoding="utf-8")
    assert "ev.reasoning" in page and "details" in page


# -- finished tournaments, read back for the history ------------------------------------------


def _tournament(root: Path, name: str, *, ratings: bool = True) -> Path:
    folder = root / "tournaments" / name
    (folder / "debates" / "001-m1-a-vs-b").mkdir(parents=True)
    plan = {
        "format": "oxford",
        "models": ["/m/a.gguf", "/n/b.gguf"],
        "motions": [{"text": "THBT tea is good", "language": "en"}],
        "judges": [],
        "debates": [
            {
                "id": "001-m1-a-vs-b",
                "motion": 0,
                "proposition": "/m/a.gguf",
                "opposition": "/n/b.gguf",
            },
            {
                "id": "002-m1-b-vs-a",
                "motion": 0,
                "proposition": "/n/b.gguf",
                "opposition": "/m/a.gguf",
            },
        ],
    }
    (folder / "tournament.json").write_text(json.dumps(plan))
    verdict = {"winner": "opposition", "margin": "clear"}
    (folder / "debates" / "001-m1-a-vs-b" / "verdict.json").write_text(json.dumps(verdict))
    if ratings:
        ranked = [{"rank": 1, "model": "/n/b.gguf"}, {"rank": 2, "model": "/m/a.gguf"}]
        (folder / "ratings.json").write_text(json.dumps({"models": ranked}))
    return folder


def test_finished_tournaments_are_listed_newest_first_and_read_back(moot_home: Path) -> None:
    from moot.web import finished

    _tournament(moot_home, "20260101-090000")
    _tournament(moot_home, "20260102-100000")
    _tournament(moot_home, "20260103-110000", ratings=False)  # not finished: not listed
    broken = _tournament(moot_home, "20260104-120000")
    (broken / "tournament.json").write_text("{not json")  # unreadable: left out
    listed = finished.listed()
    assert [t["id"] for t in listed] == ["20260102-100000", "20260101-090000"]
    first = listed[0]
    assert first["date"] == "2026-01-02T10:00:00" and first["format"] == "oxford"
    assert first["first"] == ["/n/b.gguf"] and first["debates"] == 2
    assert first["labels"] == {"/m/a.gguf": "a", "/n/b.gguf": "b"}

    shown = finished.shown("20260101-090000")
    assert shown is not None and shown["title"] == "THBT tea is good"
    assert [(d["debate"], d["winner"], d["margin"]) for d in shown["list"]] == [
        ("001-m1-a-vs-b", "opposition", "clear"),
        ("002-m1-b-vs-a", None, None),  # no verdict yet: no winner
    ]
    assert finished.shown("20260103-110000") is None
    assert finished.shown("nothing-here") is None
