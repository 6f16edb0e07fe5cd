"""A person in a seat, in every format: shown what a model in the seat would be sent (and
nothing hidden from it), their turn kept as typed (never cut, flagged when over), points of
information accepted or declined by them, a judge's ballot checked by the same schema, a
time limit, Ctrl-C and `moot resume`; driven in process by a scripted console and through
`moot run` with its input piped in."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Cli
from moot.debates.runner import DebateResult, DebateRun, resume_setup
from moot.debates.settings import DebateSetup, check_model_ref, prepare, settings
from moot.errors import UsageError
from moot.events import Event, Notice
from moot.formats.oxford.flow import LIMITS
from moot.inference.human import Ask, HumanSeat, ScriptedConsole, SeatLeft, form_fields
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import EchoModel, ScriptedModel
from moot.records.journal import read_journal
from moot.records.transcript import Transcript

MOTION = "cities should ban cars"
SERVER = "http://127.0.0.1:9/v1"  # a server URL: checked as text, never called on a dry run
SECRET = "SECRET-PLAN"


def setup_of(out: Path | None = None, **values: Any) -> DebateSetup:
    values.setdefault("seed", 1)  # the Proposition accepts each of the Opposition's points
    values.setdefault("params", {"max_rounds": 3})
    chosen = settings(motion=MOTION, run={"dry_run": True}, **values)
    setup = prepare(chosen)
    setup.out_dir = out
    return setup


def run(
    setup: DebateSetup,
    console: Any,
    *,
    factory: Callable[[str], Any] | None = None,
    events: list[Event] | None = None,
    replay: list[dict[str, Any]] | None = None,
) -> DebateResult:
    setup.human = console
    listeners = [events.append] if events is not None else []
    return DebateRun(setup, model_factory=factory, listeners=listeners, replay=replay).run()


def person(*, decide: bool = False, speech: Callable[[Ask], str] | None = None) -> Any:
    """A person who answers every ask: a speech by its number, the same decision each time."""

    def answer(ask: Ask) -> Any:
        if ask.kind == "decision":
            return decide
        return speech(ask) if speech else f"Turn {ask.number}: buses first, then the ban."

    return answer


def human_turns(transcript: Transcript) -> list[Any]:
    return [t for t in transcript.turns if t.model == "human"]


# -- what the person sees ------------------------------------------------------------------


def thinking_proposition(request: ChatRequest) -> str:
    """A thinking model on the proposition: its reasoning is its own, never another seat's."""
    if "probing question" in request.messages[-1].content:
        return f"<think>{SECRET} ask about costs</think>Who pays for the roads you defend?"
    speech = "Buses carry more people than cars. Streets grow safer."
    return f"<think>{SECRET} lead with safety</think>{speech}"


def factory_with(opposition: ScriptedModel | None = None) -> Callable[[str], Any]:
    models: dict[str, Any] = {"prop": ScriptedModel([thinking_proposition] * 40, model_id="prop")}
    if opposition is not None:
        models["opp"] = opposition
    return lambda ref: models.get(ref) or EchoModel(model_id=f"echo:{ref}")


def test_a_person_sees_what_a_model_in_the_seat_is_sent_and_nothing_hidden_from_it(
    any_model_name: None,
) -> None:
    question, speech = "Will night workers still reach their jobs?", "Buses need money first."
    console = ScriptedConsole([question, speech, *[person()] * 30])
    roles = {"proposition": "prop", "opposition": "human"}
    result = run(setup_of(roles=roles), console, factory=factory_with())

    # The same debate with a model in the seat, saying what the person said.
    model = ScriptedModel([question, speech], model_id="opp")
    run(setup_of(roles={**roles, "opposition": "opp"}), None, factory=factory_with(model))
    asked, sent = console.asks, model.requests
    assert [a.messages for a in asked[:2]] == [r.messages for r in sent[:2]]
    assert [a.limit for a in asked[:2]] == [LIMITS["poi_question"], LIMITS["speech"]]
    # The speech goes on the Proposition's conversation: its reply, the answer alone.
    assert asked[1].messages[1].role == "assistant"
    assert asked[1].messages[1].content == "Buses carry more people than cars. Streets grow safer."
    # The other side's reasoning reaches no prompt of the person's; it is in the transcript.
    assert all(SECRET not in m.content for a in asked for m in a.messages)
    assert any(SECRET in (t.reasoning or "") for t in result.transcript.turns)
    # The point of information put to the person is the one the proposition asked.
    decision = next(a for a in asked if a.kind == "decision")
    put = next(
        t for t in result.transcript.turns if t.step == "poi_question" and t.role == "proposition"
    )
    assert decision.question == put.text == "Who pays for the roads you defend?"
    assert decision.turn == put.index


def test_a_persons_turn_is_kept_as_typed_flagged_when_over_never_cut_or_cleaned(
    any_model_name: None,
) -> None:
    long = " ".join(["Sure! As an AI, [Your Name] says buses beat cars."] * 18)  # 180 words
    typed = f"\n  {long}\nAnd a last line, half\n"
    console = ScriptedConsole(["Is that fair?", typed, *[person()] * 30])
    events: list[Event] = []
    result = run(setup_of(roles={"opposition": "human"}), console, events=events)
    speech = next(
        t for t in result.transcript.turns if t.role == "opposition" and t.step == "speech"
    )
    assert speech.text == typed.strip()  # no preamble, label or half sentence taken out
    assert (speech.length, speech.limit, speech.cut) == (185, 150, False)
    assert speech.flags == ["over the limit: 185 of 150 words, kept as the speaker's"]
    assert speech.model == "human" and speech.completion_tokens == 0
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert "🔴 Opposition: over the limit: 185 of 150 words, kept as the speaker's" in notices
    assert [a.kind for a in console.asks[:3]] == ["speech", "speech", "decision"]  # asked once
    # A model saying the same is held to the limit: cut, and its preamble removed.
    model = ScriptedModel(["Is that fair?", typed], model_id="m")
    other = run(
        setup_of(roles={"opposition": "m"}),
        None,
        factory=lambda ref: model if ref == "m" else EchoModel(),
    )
    kept = next(t for t in other.transcript.turns if t.role == "opposition" and t.step == "speech")
    assert kept.length is not None and kept.length <= 150 and kept.text != typed.strip()
    # moot check reads the person's turn as theirs: over, said so, no voice rules; not broken.
    from moot.debates.runner import saved_sides
    from moot.engine.audit import check_debate

    saved = result.transcript
    report = check_debate(saved, saved_sides(saved.model_dump(mode="json")))
    mine = next(t for t in report.turns if t.index == speech.index)
    assert mine.status == "theirs" and mine.problems == ()
    assert not report.broken and report.summary()["persons_over"] == 1


def test_a_point_of_information_to_a_person_is_theirs_to_decline_or_accept(tmp_path: Path) -> None:
    out = tmp_path / "declined"
    console = ScriptedConsole([person(decide=False)] * 30)
    events: list[Event] = []
    result = run(setup_of(out, roles={"opposition": "human"}), console, events=events)
    turns = result.transcript.turns
    put = [t for t in turns if t.step == "poi_question" and t.role == "proposition"]
    assert len(put) == 3 and all(t.accepted is False for t in put)
    assert not [t for t in turns if t.step == "poi_answer" and t.role == "opposition"]
    assert "Point of Information 🔵 Proposition → 🔴 Opposition: declined" in [
        e.message for e in events if isinstance(e, Notice)
    ]
    kept = [r for r in read_journal(out / "journal.jsonl") if r["type"] == "kept"]
    assert kept == [
        {"type": "kept", "key": f"decide:poi:{n}:proposition", "value": False} for n in (1, 2, 3)
    ]
    saved = json.loads((out / "transcript.json").read_text())
    assert [
        t["accepted"]
        for t in saved["turns"]
        if t["step"] == "poi_question" and t["role"] == "proposition"
    ] == [False] * 3

    accepting = ScriptedConsole([person(decide=True)] * 30)
    result = run(setup_of(roles={"opposition": "human"}), accepting)
    answers = [
        t for t in result.transcript.turns if t.step == "poi_answer" and t.role == "opposition"
    ]
    assert len(answers) == 3 and all(t.model == "human" for t in answers)
    decided = [i for i, a in enumerate(accepting.asks) if a.kind == "decision"]
    assert all(accepting.asks[i + 1].label == "🔴 Opposition ↩" for i in decided)


def test_a_persons_own_point_of_information_is_typed_like_a_speech() -> None:
    console = ScriptedConsole(["Who pays for the buses, and when, and how much", *[person()] * 30])
    result = run(setup_of(roles={"opposition": "human"}, seed=1), console)  # accepted
    asked = next(
        t for t in result.transcript.turns if t.step == "poi_question" and t.role == "opposition"
    )
    assert asked.text == "Who pays for the buses, and when, and how much"  # no question mark added
    assert asked.accepted is not None  # the proposition's choice: the seeded draw
    assert asked.flags == []  # 10 words: within the limit of 15


def test_a_persons_point_the_draw_declines_is_not_asked_for() -> None:
    console = ScriptedConsole([person()] * 30)
    events: list[Event] = []
    # Seed 5: the Proposition's coin declines the Opposition's point in round 1 only.
    result = run(setup_of(roles={"opposition": "human"}, seed=5), console, events=events)
    first = console.asks[0]
    assert (first.kind, first.label) == ("speech", "🔴 Opposition")
    declined = "Point of Information 🔴 Opposition → 🔵 Proposition: declined"
    assert declined in [e.message for e in events if isinstance(e, Notice)]
    asked = [t for t in result.transcript.turns if t.step == "poi_question"]
    mine = [t for t in asked if t.role == "opposition"]
    assert len(mine) == 2 and all(t.accepted for t in mine)  # rounds 2 and 3
    assert not any("(declined)" in a.label for a in console.asks)


RUBRIC = {
    "proposition_argued_for_motion": True,
    "opposition_argued_against_motion": True,
    "proposition_gave_evidence": False,
    "opposition_gave_evidence": True,
    "key_objections_answered": False,
    "reasoning": "Both sides argued; the proposition gave no figures.",
}
BRIEF = {
    "pro": "Safer streets and cleaner air.",
    "con": "Night workers lose their way to work.",
    "rebuttals": "Buses first, then the ban.",
    "attacks": "Who pays for the buses?",
    "balance": "A ban works once transit is funded.",
}


def test_a_persons_ballot_is_checked_by_the_judges_schema_and_asked_again_in_one_line() -> None:
    console = ScriptedConsole(
        ["{not json", json.dumps({"proposition_argued_for_motion": True}), RUBRIC, RUBRIC, BRIEF]
    )
    result = run(setup_of(roles={"judge": "human"}), console)
    asks = console.asks
    assert [a.kind for a in asks] == ["form"] * 5 and asks[0].schema is not None
    assert asks[0].schema.__name__ == "CompletenessRubric" and asks[-1].schema.__name__ == "Brief"
    assert asks[0].problem is None
    assert asks[1].problem is not None and asks[1].problem.startswith("it is not JSON")
    assert asks[2].problem == "opposition_argued_against_motion: Field required"
    assert asks[2].draft == {"proposition_argued_for_motion": True}
    assert all("\n" not in (a.problem or "") for a in asks)
    judged = [t for t in result.transcript.turns if t.role == "judge"]
    assert [t.data for t in judged] == [RUBRIC, RUBRIC, BRIEF]
    assert result.transcript.result == BRIEF
    assert [f.name for f in form_fields(asks[0].schema)] == list(RUBRIC)


def test_every_format_seats_a_person(any_model_name: None) -> None:
    seats = {
        "oxford": {"roles": {"chair": "human"}},
        "decision": {"roles": {"debater_b": "human"}, "params": {"positions": ("buses", "cars")}},
        "challenge": {"roles": {"challenger": "human"}, "params": {"rounds": 2}},
        "adversarial": {"models": ("a.gguf", "human"), "params": {"rounds": 2}},
    }
    for fmt, values in seats.items():
        console = ScriptedConsole([person(speech=lambda ask: f"{ask.role} says buses first.")] * 40)
        result = run(setup_of(format=fmt, **values), console)
        people = human_turns(result.transcript)
        assert people, fmt
        assert all(t.text == f"{t.role} says buses first." for t in people), fmt
        assert {a.role for a in console.asks} == {t.role for t in people}, fmt
        assert result.transcript.refs[people[0].role] == "human"


# -- Ctrl-C, and `moot resume` ---------------------------------------------------------------


def test_ctrl_c_while_typing_keeps_what_was_said_and_resume_asks_again_for_that_turn(
    tmp_path: Path,
) -> None:
    out = tmp_path / "debate"
    first = ScriptedConsole(["Who pays?", "Buses first.", False, KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        run(setup_of(out, roles={"opposition": "human"}), first)
    interrupted = first.asks[-1]
    setup, records = resume_setup(out)
    again = ScriptedConsole(["Round two: what of the night shift?", *[person()] * 30])
    result = run(setup, again, replay=records)
    # Finished turns and the decision are reused; the person is asked for the turn they were on.
    assert (again.asks[0].kind, again.asks[0].turn, again.asks[0].label) == (
        interrupted.kind,
        interrupted.turn,
        interrupted.label,
    )
    people = human_turns(result.transcript)
    assert [t.text for t in people[:3]] == [
        "Who pays?",
        "Buses first.",
        "Round two: what of the night shift?",
    ]
    put = [
        t for t in result.transcript.turns if t.step == "poi_question" and t.role == "proposition"
    ]
    assert put[0].accepted is False


def test_no_one_to_ask_is_one_line_before_any_model_loads() -> None:
    with pytest.raises(UsageError, match="a person holds the opposition seat"):
        run(setup_of(roles={"opposition": "human"}), None)


def test_human_is_a_reference_of_its_own() -> None:
    check_model_ref("human")
    check_model_ref(" Human ")
    setup = setup_of(roles={"opposition": "Human"})
    assert setup.role_models["opposition"] == "human"
    seat = HumanSeat(ScriptedConsole(["plain text"]))
    request = ChatRequest(messages=())
    assert seat.chat(request).text == "plain text" and seat.model_id == "human"
    with pytest.raises(SeatLeft):
        seat.chat(request)  # the person has no answer left: they left the seat


# -- through `moot run`, its input piped in ------------------------------------------------


def piped(
    home: Path, stdin: str, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`moot ARGS` with STDIN piped in (no terminal): the way a practice script is run."""
    env = {**os.environ, "MOOT_HOME": str(home), "HOME": str(home), "COLUMNS": "1000"}
    return subprocess.run(
        [sys.executable, "-m", "moot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def block(text: str) -> str:
    return f"{text}\n.\n"


def saved(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "transcript.json").read_text(encoding="utf-8")))


OXFORD = ["--dry-run", "--max-rounds", "3", "--seed", "1"]


def oxford_input(n: int = 3) -> tuple[str, list[str]]:
    """An Opposition's turns, round by round: its question, its speech, a declined point."""
    said: list[str] = []
    text = ""
    for rnd in range(1, n + 1):
        question, speech = f"Round {rnd}: who pays?", f"Round {rnd}: buses first.\nThen the ban."
        said += [question, speech]
        text += block(question) + block(speech) + "decline\n"
    said.append("Closing: fund buses, then ban cars.")
    return text + block(said[-1]), said


def test_moot_run_takes_an_opposition_from_piped_input(tmp_path: Path) -> None:
    stdin, said = oxford_input()
    out = tmp_path / "out"
    done = piped(
        tmp_path, stdin, "run", MOTION, *OXFORD, "--role", "opposition=human", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    transcript = saved(out)
    people = [t for t in transcript["turns"] if t["model"] == "human"]
    assert [t["text"] for t in people] == said
    assert (
        transcript["refs"]["opposition"] == "human"
        and transcript["models"]["opposition"]["id"] == "human"
    )
    put = [
        t for t in transcript["turns"] if t["step"] == "poi_question" and t["role"] == "proposition"
    ]
    assert [t["accepted"] for t in put] == [False, False, False]
    # What the seat sees is shown: the record a model there is sent, then the step and limit.
    assert "what 🔴 Opposition sees" in done.stdout
    assert (
        'An Oxford Union debate on the motion "This House Believes That cities should ban cars"'
        in done.stdout
    )
    assert "🔴 Opposition: at most 150 words" in done.stdout
    assert "Point of Information 🔵 Proposition → 🔴 Opposition: accept or decline" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("fmt", "args"),
    [
        (
            "decision",
            ["--positions", "buses", "--positions", "cars", "--role", "debater_a=human", "--yes"],
        ),
        ("challenge", ["--role", "challenger=human", "--rounds", "2"]),
        (
            "adversarial",
            [
                "--model",
                SERVER,
                "--model",
                SERVER,
                "--role",
                "participant_2=human",
                "--rounds",
                "2",
            ],
        ),
    ],
)
def test_every_format_takes_a_person_from_piped_input(
    tmp_path: Path, fmt: str, args: list[str]
) -> None:
    blocks = [f"Block {n} says buses beat cars in town." for n in range(1, 13)]
    out = tmp_path / "out"
    done = piped(
        tmp_path,
        "".join(block(b) for b in blocks),
        "run",
        MOTION,
        "--format",
        fmt,
        "--dry-run",
        "--seed",
        "3",
        "--out",
        str(out),
        *args,
    )
    assert done.returncode == 0, done.stderr
    people = [t for t in saved(out)["turns"] if t["model"] == "human"]
    assert len(people) >= 2
    assert [t["text"] for t in people] == blocks[: len(people)]
    assert " sees" in done.stdout and "Traceback" not in done.stderr


def test_a_judges_ballot_from_piped_input_is_asked_again_when_it_is_not_json(
    tmp_path: Path,
) -> None:
    stdin = (
        block("{not json")
        + block(json.dumps(RUBRIC))
        + block(json.dumps(RUBRIC))
        + block(json.dumps(BRIEF))
    )
    out = tmp_path / "out"
    done = piped(
        tmp_path, stdin, "run", MOTION, *OXFORD, "--role", "judge=human", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    problems = [line for line in done.stdout.splitlines() if line.startswith("not taken:")]
    why = "it is not JSON: Expecting property name enclosed in double quotes (line 1)"
    assert problems == [f"not taken: {why}; give it again"]
    assert saved(out)["result"] == BRIEF


def test_input_that_ends_before_a_turn_stops_the_debate_and_resume_goes_on(tmp_path: Path) -> None:
    stdin, said = oxford_input()
    cut = stdin.index("decline\n")  # the first round's question and speech, then nothing
    out = tmp_path / "out"
    done = piped(
        tmp_path,
        stdin[:cut],
        "run",
        MOTION,
        *OXFORD,
        "--role",
        "opposition=human",
        "--out",
        str(out),
    )
    assert done.returncode == 2
    assert (
        "error: the input ended before Point of Information 🔵 Proposition → 🔴 Opposition"
        in done.stderr
    )
    assert f"moot resume {out}" in done.stderr and "Traceback" not in done.stderr
    again = piped(tmp_path, stdin[cut:], "resume", str(out))
    assert again.returncode == 0, again.stderr
    assert [t["text"] for t in saved(out)["turns"] if t["model"] == "human"] == said


def test_time_limit_without_a_person_is_refused(cli: Cli, tmp_path: Path) -> None:
    done = cli("run", MOTION, "--dry-run", "--time-limit", "5", home=tmp_path)
    assert done.returncode == 2 and "--time-limit applies to a seat a person holds" in done.stderr


@contextmanager
def running(home: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], queue.Queue[str]]]:
    """`moot ARGS` with stdin piped and left open, its output read line by line."""
    env = {
        **os.environ,
        "MOOT_HOME": str(home),
        "HOME": str(home),
        "COLUMNS": "1000",
        "PYTHONUNBUFFERED": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "moot", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=pump, args=(proc, lines), daemon=True).start()
    try:
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def wait_for(lines: queue.Queue[str], text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if text in line:
                return
            if not line:
                break  # the output ended
        except queue.Empty:
            break
    raise AssertionError(f"never printed {text!r}")


def test_a_time_limit_submits_the_turn_as_it_stands_and_says_so(tmp_path: Path) -> None:
    stdin, said = oxford_input()
    out = tmp_path / "out"
    args = (
        "run",
        MOTION,
        *OXFORD,
        "--role",
        "opposition=human",
        "--time-limit",
        "3",
        "--out",
        str(out),
    )
    with running(tmp_path, *args) as (proc, lines):
        assert proc.stdin is not None
        proc.stdin.write("Round 1: who")  # half a line, and no end mark
        proc.stdin.flush()
        wait_for(lines, "time ran out: submitted as it stood")
        rest = stdin[len(block(said[0])) :]
        proc.stdin.write(rest)
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    people = [t for t in saved(out)["turns"] if t["model"] == "human"]
    assert people[0]["text"] == "Round 1: who"
    assert people[0]["flags"] == ["time ran out: submitted as it stood"]
    assert [t["text"] for t in people[1:]] == said[1:]
    assert all(t["flags"] == [] for t in people[1:])


def test_ctrl_c_at_a_persons_turn_and_moot_resume_asks_for_it_again(tmp_path: Path) -> None:
    stdin, said = oxford_input()
    out = tmp_path / "out"
    with running(
        tmp_path, "run", MOTION, *OXFORD, "--role", "opposition=human", "--out", str(out)
    ) as (proc, lines):
        assert proc.stdin is not None
        proc.stdin.write(block(said[0]))
        proc.stdin.flush()
        wait_for(lines, "🔴 Opposition: at most 150 words")  # the speech, asked for
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        shown = "".join(iter_lines(lines))
    assert f"`moot resume {out}` asks you again for the turn you were on" in shown
    journal = read_journal(out / "journal.jsonl")
    assert [r["text"] for r in journal if r["type"] == "turn" and r["model"] == "human"] == [
        said[0]
    ]
    again = piped(tmp_path, stdin[len(block(said[0])) :], "resume", str(out))
    assert again.returncode == 0, again.stderr
    devil = again.stdout.index("\n🟡 Devil's Advocate\n")  # its turn, not the header's row
    assert again.stdout.index("what 🔴 Opposition sees") < devil
    assert [t["text"] for t in saved(out)["turns"] if t["model"] == "human"] == said


def pump(proc: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    """PROC's output into LINES, line by line, then "" once it has ended."""
    for line in proc.stdout or ():
        lines.put(line)
    lines.put("")


def iter_lines(lines: queue.Queue[str]) -> Iterator[str]:
    """The rest of the output, up to its end."""
    while line := lines.get(timeout=30):
        yield line


def test_a_debate_with_a_person_replays_and_is_judged_again(tmp_path: Path) -> None:
    stdin, _ = oxford_input()
    out = tmp_path / "out"
    done = piped(
        tmp_path, stdin, "run", MOTION, *OXFORD, "--role", "opposition=human", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    replayed = piped(tmp_path, "", "replay", str(out / "transcript.json"))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "turns match" in replayed.stdout
    judged = piped(
        tmp_path, "", "judge", str(out / "transcript.json"), "--judge", SERVER, "--dry-run"
    )
    assert judged.returncode == 0, judged.stderr


# -- at a terminal -------------------------------------------------------------------------


def test_at_a_terminal_each_line_counts_the_words_and_a_long_turn_is_kept_by_choice(
    cli: Cli, tmp_path: Path
) -> None:
    terminal, keyboard = os.openpty()
    env = {"COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    try:
        proc = cli.popen(
            "run",
            MOTION,
            *OXFORD,
            "--role",
            "opposition=human",
            "--no-save",
            "--yes",
            home=tmp_path,
            env=env,
            stdin=keyboard,
        )
    finally:
        os.close(keyboard)
    shown: list[str] = []
    declined = "Point of Information 🔵 Proposition → 🔴 Opposition: declined"
    try:
        typed = "Who pays\nfor the buses and the drivers and the depots and the new lanes too?\n"
        os.write(terminal, (typed + ".\nk\nBuses first.\n.\nd\n").encode())
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=pump, args=(proc, lines))
        reader.start()
        deadline = time.monotonic() + 60
        while not any(declined in line for line in shown) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                shown.append(lines.get(timeout=1))
            if shown and not shown[-1]:
                break  # the output ended
        os.kill(proc.pid, signal.SIGINT)  # waiting for the Opposition's next turn
        proc.wait(timeout=30)
        reader.join(timeout=10)
        shown += list(iter_lines(lines))
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        os.close(terminal)
    out = "".join(shown)
    assert "0/15 words ›" in out and "2/15 words ›" in out  # the count before each line
    assert "over the limit: 16 of 15 words" in out
    assert "[k]eep it as it is (it is flagged), [e]dit it or [r]etype it?" in out
    assert "over the limit: 16 of 15 words, kept as the speaker's" in out
    assert "the depots" not in out  # what was typed at the terminal is not printed again
    assert "accept or decline? [a/d]" in out
    assert declined in out
    assert proc.returncode == 130 and "Traceback" not in err


def test_the_guides_practice_script_runs_as_written(tmp_path: Path) -> None:
    guide = (REPO / "docs" / "getting-started.md").read_text("utf-8")
    section = guide.split("\n## Take a seat yourself", 1)[1].split("\n## ", 1)[0]
    command = next(line.strip() for line in section.splitlines() if "< practice.txt" in line)
    first_round = section.split("as its first round does", 1)[1].split(":\n\n", 1)[1]
    first_round = first_round.split("\n\n", 1)[0]
    lines = [line.removeprefix("    ") for line in first_round.splitlines()]
    assert lines[-1] == "decline" and lines.count(".") == 2
    practice = "\n".join(lines * 3) + "\n" + block("Closing: fund the buses, then ban the cars.")
    args = command.removeprefix("moot ").removesuffix(" < practice.txt").split()
    args = [a.strip('"') for a in args]
    motion = "cities should ban cars"
    assert args[:5] == ["run", *motion.split()]
    out = tmp_path / "out"
    done = piped(tmp_path, practice, "run", motion, *args[5:], "--dry-run", "--out", str(out))
    assert done.returncode == 0, done.stderr
    people = [t["text"] for t in saved(out)["turns"] if t["model"] == "human"]
    assert people == [lines[0], lines[2]] * 3 + ["Closing: fund the buses, then ban the cars."]


def test_human_cannot_be_a_registered_name_or_a_re_judge(tmp_path: Path, cli: Cli) -> None:
    model = tmp_path / "m.gguf"
    from gguf_samples import write_gguf

    write_gguf(model)
    added = cli("models", "add", "Human", str(model))
    assert added.returncode == 2 and "the seat a person takes" in added.stderr
    home = tmp_path / "home"
    out = str(tmp_path / "d")
    done = cli("run", "tea beats coffee", "--dry-run", "--out", out, "--quiet", home=home)
    assert done.returncode == 0, done.stderr
    judged = cli("judge", str(tmp_path / "d" / "transcript.json"), "--judge", "human", home=home)
    assert judged.returncode == 2 and "a person cannot re-judge" in judged.stderr
