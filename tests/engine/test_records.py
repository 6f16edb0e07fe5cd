"""moot's records (moot.records): the journal is typed records, one a line; the transcript and
the journal's header carry the schema's version; what does not validate is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, Cli
from moot.records.journal import read_records
from moot.records.transcript import (
    JOURNAL,
    SCHEMA_VERSION,
    DebateRecord,
    ScoreRecord,
    StopRecord,
    TurnRecord,
)

ARGS = ["--max-rounds", "3", "--max-tokens", "24", "--seed", "5", "--dry-run", "--quiet"]


@pytest.fixture
def saved(tmp_path: Path, cli: Cli) -> Path:
    """A dry-run Oxford debate saved by `moot run`: its folder."""
    out = tmp_path / "debate"
    proc = cli("run", "cats are better than dogs", *ARGS, "--out", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_journal_and_the_transcript_carry_the_schema(saved: Path) -> None:
    lines = (saved / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert list(header)[:2] == ["type", "schema"] and header["schema"] == SCHEMA_VERSION
    assert all(list(json.loads(line))[0] == "type" for line in lines)  # each says what it is
    transcript = json.loads((saved / "transcript.json").read_text(encoding="utf-8"))
    assert transcript["schema"] == SCHEMA_VERSION and "schema_version" not in transcript


def test_a_transcript_dumped_from_python_names_its_schema_as_the_file_does(saved: Path) -> None:
    from moot.records.transcript import Transcript

    text = (saved / "transcript.json").read_text(encoding="utf-8")
    transcript = Transcript.model_validate_json(text)
    for dumped in (json.loads(transcript.model_dump_json()), transcript.model_dump()):
        assert dumped["schema"] == SCHEMA_VERSION and "schema_version" not in dumped


def test_the_journal_reads_back_as_typed_records(saved: Path) -> None:
    records = read_records(saved / "journal.jsonl")
    assert isinstance(records[0], DebateRecord) and records[0].format == "oxford"
    kinds = {type(r) for r in records[1:]}
    assert kinds == {TurnRecord, ScoreRecord, StopRecord}
    lines = (saved / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    assert [JOURNAL.validate_json(line) for line in lines] == records
    transcript = json.loads((saved / "transcript.json").read_text(encoding="utf-8"))
    turns = [r.turn().model_dump(mode="json") for r in records if isinstance(r, TurnRecord)]
    assert turns == transcript["turns"]
    scores = {str(r.round): r.record() for r in records if isinstance(r, ScoreRecord)}
    assert scores == transcript["scores"]


def _one_line(proc: object, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr  # type: ignore[attr-defined]
    lines = proc.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint: ")
    assert all(needle in lines[0] for needle in needles), lines


def test_a_record_of_no_type_moot_knows_is_named(saved: Path, tmp_path: Path, cli: Cli) -> None:
    journal = saved / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()[:4]
    lines.insert(2, json.dumps({"type": "applause", "loud": True}))
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (saved / "transcript.json").unlink()
    proc = cli("resume", str(saved), home=tmp_path)
    _one_line(proc, f"{journal}: line 3: type: 'applause' is not a record moot knows")


@pytest.mark.parametrize("where", ["journal", "transcript"])
def test_records_of_a_newer_schema_are_refused(
    saved: Path, tmp_path: Path, cli: Cli, where: str
) -> None:
    newer = SCHEMA_VERSION + 1
    if where == "journal":
        journal = saved / "journal.jsonl"
        lines = journal.read_text(encoding="utf-8").splitlines()[:4]
        lines[0] = json.dumps({**json.loads(lines[0]), "schema": newer})
        journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
        (saved / "transcript.json").unlink()
        proc = cli("resume", str(saved), home=tmp_path)
    else:
        path = saved / "transcript.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "schema": newer}))
        proc = cli("replay", str(path), home=tmp_path)
    _one_line(proc, f"holds records of schema {newer}, newer than this moot's")


def test_a_schema_that_is_not_a_number_is_named(saved: Path, tmp_path: Path, cli: Cli) -> None:
    path = saved / "transcript.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "schema": "one"}))
    _one_line(cli("check", str(path), home=tmp_path), "schema: expected an integer")


# -- the published schema ---------------------------------------------------------------------

V0 = REPO / "tests" / "fixtures" / "records-v0"


def _printed(cli: Cli, tmp_path: Path, what: str) -> dict[str, object]:
    proc = cli("schema", what, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert isinstance(schema, dict)
    return schema


def _saved_records(saved: Path) -> tuple[list[Path], list[Path]]:
    """Transcripts and journals: the fixtures of the first form, and one written now."""
    transcripts = [*V0.glob("*/finished/transcript.json"), saved / "transcript.json"]
    journals = [*V0.glob("*/*/journal.jsonl"), saved / "journal.jsonl"]
    assert len(transcripts) == 5 and len(journals) == 7
    return transcripts, journals


def test_the_printed_schemas_describe_the_records(saved: Path, tmp_path: Path, cli: Cli) -> None:
    transcript, journal = _printed(cli, tmp_path, "transcript"), _printed(cli, tmp_path, "journal")
    assert (
        transcript["$schema"]
        == journal["$schema"]
        == ("https://json-schema.org/draft/2020-12/schema")
    )
    properties = transcript["properties"]
    assert isinstance(properties, dict) and properties["schema"]["default"] == SCHEMA_VERSION
    assert {"format", "motion", "seed", "models", "moot_version"} <= set(transcript["required"])  # type: ignore[arg-type]
    discriminator = journal["discriminator"]
    assert isinstance(discriminator, dict) and discriminator["propertyName"] == "type"
    assert set(discriminator["mapping"]) == {"debate", "turn", "score", "stop", "kept"}
    # Every record of every saved debate is one of them, of the first form or of today's.
    transcripts, journals = _saved_records(saved)
    for path in journals:
        for line in path.read_text(encoding="utf-8").splitlines():
            JOURNAL.validate_json(line, strict=True)


def test_the_saved_records_validate_against_the_printed_schemas(
    saved: Path, tmp_path: Path, cli: Cli
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    transcript = jsonschema.Draft202012Validator(_printed(cli, tmp_path, "transcript"))
    journal = jsonschema.Draft202012Validator(_printed(cli, tmp_path, "journal"))
    transcripts, journals = _saved_records(saved)
    for path in transcripts:
        transcript.validate(json.loads(path.read_text(encoding="utf-8")))
    for path in journals:
        for line in path.read_text(encoding="utf-8").splitlines():
            journal.validate(json.loads(line))
    # What moot refuses, the schema refuses too.
    assert not journal.is_valid({"type": "applause"})
    assert not journal.is_valid({"type": "turn", "index": 0})
    assert not transcript.is_valid({"format": "oxford", "motion": "m", "seed": 1, "models": {}})


def test_moot_schema_of_no_such_record_is_one_line(tmp_path: Path, cli: Cli) -> None:
    _one_line(cli("schema", "debate", home=tmp_path), "no schema 'debate'")


def test_the_pages_events_are_the_debates_events_as_json(tmp_path: Path) -> None:
    """What moot.Debate yields, the page is sent as its JSON: each event reads back from it
    as itself (a finished turn: the fields of it the page shows, which read back as a turn)."""
    import moot
    from moot.events import EVENTS, TurnFinished
    from moot.web import wire

    debate = moot.Debate("cats are better than dogs", seed=3, save=False, run={"dry_run": True})
    kinds = set()
    for event in debate:
        sent = json.loads(json.dumps(wire.event(event)))
        assert sent["type"] == event.type
        kinds.add(event.type)
        back = EVENTS.validate_python(sent)
        if isinstance(event, TurnFinished):
            assert isinstance(back, TurnFinished) and back.label == event.label
            assert back.turn.text == event.turn.text and back.turn.index == event.turn.index
        else:
            assert back == event
    assert {"turn_started", "token", "turn_finished", "score", "stop"} <= kinds


# -- the events a listener gets are the records the journal writes ------------------------------


@pytest.fixture
def heard(
    tmp_path: Path, moot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[object], list[object]]:
    """A dry-run Oxford debate run from Python: its folder, the events its listener got, and
    the very objects the engine handed its journal."""
    import moot
    from moot.records.journal import Journal

    written: list[object] = []
    append = Journal.append

    def spy(self: Journal, record: object) -> None:
        written.append(record)
        append(self, record)  # type: ignore[arg-type]

    monkeypatch.setattr(Journal, "append", spy)
    events: list[object] = []
    out = tmp_path / "heard"
    run = {"dry_run": True, "max_tokens": 24}
    moot.debate(
        "cats are better than dogs", seed=5, max_rounds=3, run=run, out=out, on_event=events.append
    )
    return out, events, written


def test_a_listeners_score_and_stop_are_the_records_the_journal_wrote(
    heard: tuple[Path, list[object], list[object]],
) -> None:
    from moot.events import Scored, Stopped

    _, events, written = heard
    records = [r for r in written if isinstance(r, ScoreRecord | StopRecord)]
    assert {type(r) for r in records} == {ScoreRecord, StopRecord}
    for record in records:  # the same object, not a copy saying the same
        assert any(event is record for event in events), record
    # The names listeners have always used name them.
    assert Scored is ScoreRecord and Stopped is StopRecord
    scores = [e for e in events if isinstance(e, Scored)]
    assert scores and all(s.threshold == 7.5 and s.reasoning for s in scores)
    assert [e.reason for e in events if isinstance(e, Stopped)] == ["hard_cap"]


def test_every_journaled_line_is_an_event_a_listener_got(
    heard: tuple[Path, list[object], list[object]],
) -> None:
    """Read back from the file, each turn, score and stop line equals what was heard."""
    from moot.events import TurnFinished

    folder, events, _ = heard
    records = read_records(folder / "journal.jsonl")
    finished = [TurnRecord.of(e.turn) for e in events if isinstance(e, TurnFinished)]
    told = [e for e in events if isinstance(e, ScoreRecord | StopRecord)]
    assert [r for r in records if isinstance(r, TurnRecord)] == finished
    assert [r for r in records if isinstance(r, ScoreRecord | StopRecord)] == told
    assert len(finished) > 8 and len(told) == 3  # two rounds scored, then the stop


def test_the_printed_events_schema_describes_the_pages_events(
    heard: tuple[Path, list[object], list[object]], tmp_path: Path, cli: Cli
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from moot.events import EVENTS
    from moot.web import wire

    printed = _printed(cli, tmp_path, "events")
    assert printed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    discriminator = printed["discriminator"]
    assert isinstance(discriminator, dict) and discriminator["propertyName"] == "type"
    kinds = {"turn_started", "token", "turn_finished", "score", "notice", "stop"}
    assert set(discriminator["mapping"]) == kinds
    validator = jsonschema.Draft202012Validator(printed)
    folder, events, _ = heard
    seen = set()
    for event in events:
        for language in ("en", "zh"):
            sent = json.loads(json.dumps(wire.event(event, language)))  # type: ignore[arg-type]
            validator.validate(sent)
            seen.add(sent["type"])
    assert seen >= kinds - {"notice"}
    validator.validate({"type": "notice", "level": "warn", "message": "m"})
    # A score or a stop line of any journal, of the first form or of today's, is an event.
    _, journals = _saved_records(folder)
    for path in journals:
        for line in path.read_text(encoding="utf-8").splitlines():
            if json.loads(line)["type"] in ("score", "stop"):
                validator.validate(json.loads(line))
                assert EVENTS.validate_json(line) == JOURNAL.validate_json(line)
    # What the page could not read, the schema refuses.
    assert not validator.is_valid({"type": "scored", "round": 1, "score": 1.0})
    assert not validator.is_valid({"type": "turn_finished", "label": "x", "turn": {"index": 0}})
