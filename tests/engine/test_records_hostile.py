"""The files moot reads back (a transcript to replay, a journal to resume, a transcript to
--continue) may come from anywhere: each is read bounded, as a regular file, and checked
strictly; whatever is wrong is one line naming the file and the field, exit 2."""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, Result
from gguf_samples import write_gguf
from moot import __version__
from moot.debates.runner import DebateRun, resume_setup
from moot.debates.settings import DebateSettings, prepare
from moot.errors import CallTimeoutError, MootError, RecordError, UsageError
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import ScriptedModel
from moot.records import files
from moot.records.journal import Journal, load, read_journal

MOTION = "cities should ban cars"
Record = dict[str, Any]


def one_line_error(done: Result, *needles: str) -> str:
    """The error of a refused command: exit 2, one `error:` line (and its hint), no
    traceback, no validation dump; it says each of NEEDLES."""
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: "), done.stderr
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), done.stderr
    for banned in ("Traceback", "unexpected", "validation error", "pydantic", "Input should"):
        assert banned not in done.stderr
    for needle in needles:
        assert needle in lines[0], done.stderr
    return lines[0]


def participants(root: Path) -> list[str]:
    """`--model A --model B` naming two small valid GGUF files (no weights): what a dry run
    of the adversarial format can resolve."""
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    args = []
    for name in ("a", "b"):
        path = root / "models" / f"{name}.gguf"
        if not path.exists():
            write_gguf(path, name=name, chat_template=template)
        args += ["--model", str(path)]
    return args


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Debates moot saved (scripted models): an Oxford one, an adversarial one."""
    root = tmp_path_factory.mktemp("saved")
    cli, home = Cli(), root / "home"
    runs = {
        "oxford": ["--max-rounds", "3"],
        "adversarial": ["--format", "adversarial", *participants(root)],
    }
    folders = {}
    for name, args in runs.items():
        out = root / name
        done = cli(
            "run",
            MOTION,
            "--dry-run",
            "--seed",
            "5",
            "--quiet",
            "--out",
            str(out),
            *args,
            home=home,
        )
        assert done.returncode == 0, done.stderr
        folders[name] = out
    return folders


def crafted(saved: Path, tmp_path: Path, change: Callable[[Record], object]) -> Path:
    """A copy of SAVED's transcript.json, changed."""
    data = json.loads((saved / "transcript.json").read_text())
    change(data)
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(data))
    return path


def interrupted(saved: Path, tmp_path: Path, keep: int = 6) -> Path:
    """A copy of SAVED's folder as a crash leaves it: its journal's first KEEP lines, no
    transcript or document."""
    folder = tmp_path / "cut"
    folder.mkdir()
    lines = (saved / "journal.jsonl").read_text().splitlines(keepends=True)
    (folder / "journal.jsonl").write_text("".join(lines[:keep]))
    return folder


def set_header(folder: Path, change: Callable[[Record], object]) -> None:
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines()
    header = json.loads(lines[0])
    change(header)
    journal.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


def put(path: list[str | int], value: object) -> Callable[[Record], None]:
    def change(data: Record) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def drop(key: str) -> Callable[[Record], None]:
    return lambda data: data.pop(key)


# -- sizes and kinds of file ---------------------------------------------------------------


def sparse(path: Path, size: int) -> Path:
    """A file of SIZE bytes (of NULs) that takes no room on disk."""
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


def test_replay_refuses_a_file_over_the_record_limit(tmp_path: Path, cli: Cli) -> None:
    big = sparse(tmp_path / "transcript.json", files.RECORD_LIMIT + 1)
    one_line_error(cli("replay", str(big), home=tmp_path / "home"), "limit")


def test_replay_refuses_a_device(tmp_path: Path, cli: Cli) -> None:
    one_line_error(cli("replay", "/dev/zero", home=tmp_path / "home"), "not a regular file")


# A FIFO with no writer would block a plain read forever: a process of its own, timed.
def test_replay_refuses_a_fifo_without_waiting(tmp_path: Path, cli: Cli) -> None:
    fifo = tmp_path / "transcript.json"
    os.mkfifo(fifo)
    done = cli.subprocess("replay", str(fifo), home=tmp_path / "home", timeout=60)
    one_line_error(done, "not a regular file")


def test_continue_refuses_a_fifo_and_a_file_over_the_limit(tmp_path: Path, cli: Cli) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    big = sparse(tmp_path / "big.json", files.RECORD_LIMIT + 1)
    args = ["run", "what is 2+2", "--format", "adversarial", *participants(tmp_path)]
    for path, needle in [(fifo, "not a regular file"), (big, "limit")]:
        done = cli.subprocess(
            *args,
            "--dry-run",
            "--no-save",
            "--continue",
            str(path),
            home=tmp_path / "home",
            timeout=60,
        )
        one_line_error(done, "--continue", needle)


def test_resume_refuses_a_journal_over_the_limit(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "cut"
    folder.mkdir()
    sparse(folder / "journal.jsonl", files.RECORD_LIMIT + 1)
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "limit")


def test_resume_refuses_a_fifo_journal_without_waiting(tmp_path: Path) -> None:
    folder = tmp_path / "cut"
    folder.mkdir()
    os.mkfifo(folder / "journal.jsonl")
    with pytest.raises(UsageError, match="not a regular file"):
        resume_setup(folder)


# -- a transcript to replay ----------------------------------------------------------------


def test_a_saved_transcript_replays(saved: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    done = cli("replay", str(saved["oxford"] / "transcript.json"), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "turns match" in done.stdout


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (put(["turns", 3, "text"], 5), "turns.3.text: expected a string"),
        (put(["turns", 0, "index"], "0"), "turns.0.index: expected an integer"),
        (put(["turns"], {}), "turns: expected a list"),
        (put(["seed"], "7"), "seed: expected an integer"),
        (put(["seed"], -1), "seed: "),
        (put(["seed"], 2**40), "seed: "),
        (put(["language"], "fr"), "language: "),
        (put(["motion"], None), "motion: expected a string"),
        (put(["motion"], "m " * 5000), "motion: string should have at most 8000 characters"),
        (put(["format"], [1]), "format: expected a string"),
        (put(["format"], "chess"), "format: unknown format 'chess'"),
        (put(["params"], []), "params: expected an object"),
        (put(["params", "dry_run"], "yes"), "params.dry_run: expected true or false"),
        (put(["params", "dry_run"], 1), "params.dry_run: expected true or false"),
        (lambda data: data["params"].pop("dry_run"), "params.dry_run: missing"),
        (put(["params", "n_ctx"], "4096"), "params.n_ctx: expected an integer"),
        (put(["params", "n_ctx"], 10**9), "params.n_ctx: "),
        (put(["params", "max_rounds"], "3"), "params.max_rounds: expected an integer"),
        (put(["params", "max_rounds"], 99), "params.max_rounds: "),
        (put(["params", "surprise"], 1), "params.surprise: not a field moot knows"),
        (put(["sampling", "judge"], 50.0), "sampling.judge: "),
        (put(["refs", "judge"], 7), "refs.judge: expected a string"),
        (put(["stop_reason"], "bored"), "stop_reason: "),
        (put(["moot_version"], 5), "moot_version: 5 is not a version"),
        (put(["moot_version"], "banana"), "moot_version: 'banana' is not a version"),
        (drop("moot_version"), "moot_version: missing"),
    ],
)
def test_replay_refuses_a_crafted_transcript_naming_the_field(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, change: Callable[[Record], object], says: str
) -> None:
    path = crafted(saved["oxford"], tmp_path, change)
    first = one_line_error(cli("replay", str(path), home=tmp_path / "home"), says)
    assert first.startswith(f"error: {path}")


def test_replay_refuses_json_that_is_not_a_transcript(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(cli("replay", str(deep), home=home), "nested too deeply")
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    one_line_error(cli("replay", str(listed), home=home), "not a moot transcript")


def test_replay_refuses_a_transcript_nested_deep_inside(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    def deep(data: Record) -> None:
        data["turns"][0]["data"] = json.loads('{"a": ' * 300 + "1" + "}" * 300)

    path = crafted(saved["oxford"], tmp_path, deep)
    one_line_error(cli("replay", str(path), home=tmp_path / "home"), "nested too deeply")


def test_replay_refuses_a_transcript_of_a_newer_moot(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    # A newer moot may have added fields: its own error comes first, before any field's.
    path = crafted(saved["oxford"], tmp_path, put(["moot_version"], "99.0"))
    data = json.loads(path.read_text())
    data["turns"][0]["text"] = {"in": "a new shape"}
    path.write_text(json.dumps(data))
    done = cli("replay", str(path), home=tmp_path / "home")
    first = one_line_error(done, "written by moot 99.0", f"newer than this moot ({__version__})")
    assert "turns" not in first
    assert "upgrade" in done.stderr


@pytest.mark.parametrize("version", [__version__, "0.0.1", "0.1", "0.1.0rc1", "0.1.0+local"])
def test_replay_reads_a_transcript_of_this_moot_or_an_older_one(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, version: str
) -> None:
    path = crafted(saved["oxford"], tmp_path, put(["moot_version"], version))
    done = cli("replay", str(path), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr


# What the params of a saved review quote into its prompts is held to what a run would
# have read into them: a replay or a resume refuses more before any turn, never failing
# every participant mid-run.
@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            put(["params", "earlier"], [{"question": "q", "answer": "w " * 5000}]),
            "params.earlier.0.answer: string should have at most 8192 characters",
        ),
        (
            put(["params", "earlier"], [{"question": "q" * 4001, "answer": "a"}]),
            "params.earlier.0.question: string should have at most 4000 characters",
        ),
        (
            put(["params", "evidence"], [{"name": "e.md", "text": "w " * 40_000}]),
            "params.evidence.0.text: string should have at most 65536 characters",
        ),
        (
            put(["params", "evidence"], [{"name": "e" * 5000, "text": "w"}]),
            "params.evidence.0.name: string should have at most 4096 characters",
        ),
    ],
)
def test_replay_and_resume_refuse_review_params_past_what_a_run_reads(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, change: Callable[[Record], object], says: str
) -> None:
    path = crafted(saved["adversarial"], tmp_path, change)
    one_line_error(cli("replay", str(path), home=tmp_path / "home"), str(path), says)
    folder = interrupted(saved["adversarial"], tmp_path, keep=3)
    set_header(folder, lambda header: change(header))
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "journal.jsonl", says)


def test_params_that_are_not_an_object_never_switch_to_real_models(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    # No model is installed in this home: a replay that fell back to real models would ask
    # for one to be pulled.
    for change in (put(["params"], []), put(["params", "dry_run"], "yes")):
        path = crafted(saved["oxford"], tmp_path, change)
        first = one_line_error(cli("replay", str(path), home=tmp_path / "home"), "params")
        assert "not installed" not in first


# -- an interrupted debate to resume -------------------------------------------------------


def test_an_interrupted_debate_resumes(saved: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    done = cli("resume", str(folder), "--quiet", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    whole = json.loads((saved["oxford"] / "transcript.json").read_text())
    assert json.loads((folder / "transcript.json").read_text())["turns"] == whole["turns"]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (put(["params", "dry_run"], "yes"), "params.dry_run: expected true or false"),
        (put(["params"], []), "params: expected an object"),
        (put(["seed"], "5"), "seed: expected an integer"),
        (put(["moot_version"], "99.0"), "written by moot 99.0"),
        (drop("moot_version"), "moot_version: missing"),
        (drop("motion"), "motion: missing"),
        (put(["motion"], "m " * 5000), "motion: string should have at most 8000 characters"),
    ],
)
def test_resume_refuses_a_crafted_header_naming_the_field(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, change: Callable[[Record], object], says: str
) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    set_header(folder, change)
    first = one_line_error(cli("resume", str(folder), home=tmp_path / "home"), says)
    assert "journal.jsonl" in first
    assert not (folder / "transcript.json").exists()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("this is not json", "line 3 is not JSON"),
        ("[1, 2]", "line 3: expected an object"),
        ('{"no": "type"}', "line 3: type: expected a string"),
        ('{"type": "turn", "index": 2}', "line 3: round: missing"),
        ("[" * 100_000 + "]" * 100_000, "line 3 is nested too deeply"),
        ('{"type": "score", "round": "2"}', "line 3: round: expected an integer"),
        ('{"type": "kept", "value": 1}', "line 3: key: missing"),
    ],
)
def test_a_damaged_line_inside_the_journal_is_named(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, line: str, says: str
) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines()
    lines.insert(2, line)
    journal.write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError) as raised:
        resume_setup(folder)
    assert raised.value.message.startswith(f"{journal}: {says}")
    assert "\n" not in raised.value.message
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "line 3")


def test_a_turn_record_of_the_wrong_type_is_named(saved: dict[str, Path], tmp_path: Path) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines()
    turn = json.loads(lines[2])
    turn["text"] = ["not", "text"]
    lines[2] = json.dumps(turn)
    journal.write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError, match=r"line 3: text: expected a string"):
        read_journal(journal)


def test_a_torn_last_line_is_run_again_and_the_journal_stays_whole(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    folder = interrupted(saved["oxford"], tmp_path, keep=7)
    journal = folder / "journal.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data[: len(data) - 40])  # the last turn cut short by a crash
    assert len(read_journal(journal)) == 6

    done = cli("resume", str(folder), "--quiet", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    whole = json.loads((saved["oxford"] / "transcript.json").read_text())
    assert json.loads((folder / "transcript.json").read_text())["turns"] == whole["turns"]
    # The torn line is gone, not glued to the next record: every line is a record, the
    # records of the debate that was never interrupted.
    kinds = [json.loads(line)["type"] for line in journal.read_text().splitlines()]
    uncut = (saved["oxford"] / "journal.jsonl").read_text().splitlines()
    assert kinds == [json.loads(line)["type"] for line in uncut]


def test_a_whole_last_record_without_its_newline_is_kept(
    saved: dict[str, Path], tmp_path: Path
) -> None:
    folder = interrupted(saved["oxford"], tmp_path, keep=7)
    journal = folder / "journal.jsonl"
    journal.write_bytes(journal.read_bytes().rstrip(b"\n"))
    assert len(read_journal(journal)) == 7
    Journal(journal).close()  # opened to append: the record gets its newline
    assert journal.read_bytes().endswith(b"}\n")
    assert len(read_journal(journal)) == 7


def test_a_line_torn_inside_a_character_is_still_just_torn(tmp_path: Path, cli: Cli) -> None:
    out, home = tmp_path / "zh", tmp_path / "home"
    done = cli(
        "run",
        "城市应当禁止汽车",
        "--dry-run",
        "--max-rounds",
        "3",
        "--quiet",
        "--out",
        str(out),
        home=home,
    )
    assert done.returncode == 0, done.stderr
    (out / "transcript.json").unlink()
    (out / "debate.md").unlink()
    journal = out / "journal.jsonl"
    lines = journal.read_bytes().split(b"\n")
    torn = lines[6]
    cut = next(i for i in range(len(torn) - 1, 0, -1) if torn[i] >= 0xC0)  # a character's start
    journal.write_bytes(b"\n".join(lines[:6]) + b"\n" + torn[: cut + 1])
    assert len(read_journal(journal)) == 6
    setup, records = resume_setup(out)
    result = DebateRun(setup, replay=records).run()
    assert result.transcript.turns[5].text == json.loads(lines[6])["text"]  # the torn turn
    assert len(read_journal(journal)) == len(lines) - 1  # the whole journal, nothing glued


def test_resume_refuses_a_symlinked_journal(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    elsewhere = interrupted(saved["oxford"], tmp_path) / "journal.jsonl"
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "journal.jsonl").symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "symlink")
    assert elsewhere.read_bytes() == before
    assert not (folder / "transcript.json").exists()


def test_resume_refuses_a_symlinked_transcript(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    (folder / "transcript.json").symlink_to(tmp_path / "nowhere.json")
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "transcript.json", "symlink")
    with pytest.raises(UsageError, match="symlink"):
        resume_setup(folder)


def test_the_journal_is_never_written_through_a_symlink_or_into_a_fifo(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("mine\n")
    (tmp_path / "link.jsonl").symlink_to(target)
    with pytest.raises(OSError, match="symbolic links"):
        Journal(tmp_path / "link.jsonl")
    assert target.read_text() == "mine\n"

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that a writer would not block
    try:
        with pytest.raises(UsageError, match="not a regular file"):
            Journal(fifo)
    finally:
        os.close(reader)


# -- a transcript to --continue -------------------------------------------------------------


def continue_with(path: Path, cli: Cli, home: Path) -> Result:
    args = ["what is 2+2", "--format", "adversarial", *participants(home.parent)]
    return cli(
        "run", *args, "--dry-run", "--no-save", "--quiet", "--continue", str(path), home=home
    )


def test_continue_reads_a_saved_adversarial_transcript(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    done = continue_with(saved["adversarial"] / "transcript.json", cli, tmp_path / "home")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (put(["result"], 5), "result: expected an object"),
        (put(["result", "final_answer"], 42), "result.final_answer: expected a string"),
        (put(["result", "session"], {}), "result.session: expected a list"),
        (put(["result", "session"], [{"question": "q", "answer": 1}]), "result.session.0.answer"),
        (put(["result", "session"], [{"question": "q"}]), "result.session.0.answer: missing"),
        (put(["motion"], 3), "motion: expected a string"),
        (put(["moot_version"], "99.0"), "written by moot 99.0"),
        (drop("moot_version"), "moot_version: missing"),
    ],
)
def test_continue_refuses_a_crafted_transcript_naming_the_field(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, change: Callable[[Record], object], says: str
) -> None:
    path = crafted(saved["adversarial"], tmp_path, change)
    first = one_line_error(continue_with(path, cli, tmp_path / "home"), "--continue", says)
    assert str(path) in first


# Round 1's prompt quotes each earlier question and final answer whole: one past what the
# context budget counts for it (a motion's length; one synthesis, in words and in bytes) is
# refused before any model loads, never a failure of every participant mid-run.
@pytest.mark.parametrize(
    ("change", "says"),
    [
        (put(["result", "final_answer"], "word " * 2_000_000), "2,000,000 words (字), over"),
        (put(["result", "final_answer"], "word " * 251), "251 words (字), over the limit"),
        (put(["result", "final_answer"], "答" * 251), "251 words (字), over the limit"),
        (put(["result", "final_answer"], "yes" + " " * 9000), "9,003 bytes, over the limit"),
        (put(["motion"], "q" * 4001), "motion: 4,001 characters, over the limit"),
        (
            put(["result", "session"], [{"question": "q", "answer": "w " * 251}]),
            "result.session.0.answer: 251 words",
        ),
        (
            put(["result", "session"], [{"question": "q " * 2001, "answer": "a"}]),
            "result.session.0.question: 4,002 characters",
        ),
    ],
)
def test_continue_refuses_an_earlier_answer_or_question_past_the_prompts_room(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, change: Callable[[Record], object], says: str
) -> None:
    path = crafted(saved["adversarial"], tmp_path, change)
    first = one_line_error(continue_with(path, cli, tmp_path / "home"), "--continue", says)
    assert str(path) in first
    field = says.partition(":")[0] if ":" in says else "result.final_answer"
    assert f"{path}: {field}" in first


def test_continue_takes_an_earlier_answer_at_the_synthesis_limit(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    def at_the_limit(data: Record) -> None:
        data["motion"] = "q" * 4000
        data["result"]["final_answer"] = "word " * 250
        # Only the last 3 are quoted: an older one is never shown, so it is not held to it.
        data["result"]["session"] = [{"question": "old", "answer": "long " * 1000}] + [
            {"question": "q", "answer": "答" * 250}
        ] * 2

    path = crafted(saved["adversarial"], tmp_path, at_the_limit)
    done = continue_with(path, cli, tmp_path / "home")
    assert done.returncode == 0, done.stderr


def test_continue_refuses_json_nested_too_deeply(tmp_path: Path, cli: Cli) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "adversarial", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    one_line_error(continue_with(deep, cli, tmp_path / "home"), "--continue", "nested too deeply")


# -- what a failure mid-debate says ----------------------------------------------------------


def failing_model(exc: BaseException) -> Callable[[str], ScriptedModel]:
    def reply(request: ChatRequest) -> str:
        raise exc

    return lambda ref: ScriptedModel([reply], model_id=f"failing:{ref}")


def oxford(out: Path | None) -> DebateRun:
    setup = prepare(DebateSettings(motion=MOTION, seed=3), out_dir=out)
    return DebateRun(setup, model_factory=failing_model(OSError(errno.ENOSPC, "No space left")))


def test_a_failed_write_in_an_unsaved_debate_says_nothing_was_saved() -> None:
    with pytest.raises(MootError) as raised:
        oxford(None).run()
    said = f"{raised.value.message} {raised.value.hint}"
    assert "None" not in said
    assert "nothing was saved" in raised.value.hint
    assert "No space left" in raised.value.message


def test_a_failed_write_in_a_saved_debate_says_where_its_turns_are(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(MootError) as raised:
        oxford(out).run()
    assert f"{out / 'journal.jsonl'}" in raised.value.hint
    assert f"moot resume {out}" in raised.value.hint


def test_a_call_timeout_is_not_reported_as_a_failed_write(tmp_path: Path) -> None:
    setup = prepare(DebateSettings(motion=MOTION, seed=3), out_dir=tmp_path / "out")
    timeout = CallTimeoutError(seconds=1, model="slow")
    with pytest.raises(CallTimeoutError):
        DebateRun(setup, model_factory=failing_model(timeout)).run()


# -- records that do not validate, through every command that reads them ------------------

HUGE = "9" * 5000  # past Python's own limit on the digits of an integer it converts


def with_huge(text: str) -> str:
    """TEXT (JSON) with each "HUGE" string an integer of thousands of digits instead."""
    return text.replace('"HUGE"', HUGE)


# (what is changed in a turn's record, what the error says of it)
BAD_TURNS: dict[str, tuple[Callable[[Record], object], str]] = {
    "an index that skips": (put(["index"], 7), "index: 7 where turn 2"),
    "an index below zero": (put(["index"], -1), "index: -1 where turn 2"),
    "an integer of thousands of digits": (put(["index"], "HUGE"), "index: an integer of 5000"),
    "tokens of thousands of digits": (
        put(["prompt_tokens"], "HUGE"),
        "prompt_tokens: an integer of 5000 digits",
    ),
    "a field of the wrong type": (put(["text"], 5), "text: expected a string"),
    "a missing key": (drop("role"), "role: missing"),
}


def journal_with(saved: Path, tmp_path: Path, change: Callable[[Record], object]) -> Path:
    """An interrupted copy of SAVED whose third line (its third turn) is changed."""
    folder = interrupted(saved, tmp_path)
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines()
    turn = json.loads(lines[3])
    change(turn)
    lines[3] = with_huge(json.dumps(turn))
    journal.write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("case", list(BAD_TURNS))
def test_resume_and_history_show_refuse_a_journal_turn_that_does_not_validate(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, case: str
) -> None:
    change, says = BAD_TURNS[case]
    folder = journal_with(saved["oxford"], tmp_path, change)
    journal = folder / "journal.jsonl"
    home = tmp_path / "home"
    for command in (("resume", str(folder)), ("history", "show", str(folder))):
        first = one_line_error(cli(*command, home=home), f"{journal}: line 4: ", says)
        assert "report it" not in first
    assert not (folder / "transcript.json").exists()  # nothing was run
    with pytest.raises(RecordError) as raised:
        resume_setup(folder)
    assert (raised.value.path, raised.value.where) == (str(journal), "line 4")


def test_a_journal_turn_written_twice_is_refused(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([*lines[:4], lines[3], *lines[4:]]) + "\n")
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "line 5: index: 2")


def test_a_journal_header_of_thousands_of_digits_is_named(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    folder = interrupted(saved["oxford"], tmp_path)
    set_header(folder, put(["seed"], "HUGE"))
    journal = folder / "journal.jsonl"
    journal.write_text(with_huge(journal.read_text()))
    one_line_error(cli("resume", str(folder), home=tmp_path / "home"), "line 1: seed: an integer")


def transcript_with(saved: Path, tmp_path: Path, change: Callable[[Record], object]) -> Path:
    """A copy of SAVED's folder whose transcript's third turn is changed."""
    folder = tmp_path / "copy"
    shutil.copytree(saved, folder)
    path = folder / "transcript.json"
    data = json.loads(path.read_text())
    change(data["turns"][2])
    path.write_text(with_huge(json.dumps(data)))
    return path


@pytest.mark.parametrize("case", list(BAD_TURNS))
def test_replay_check_judge_and_history_show_refuse_a_transcript_turn_that_does_not_validate(
    saved: dict[str, Path], tmp_path: Path, cli: Cli, case: str
) -> None:
    change, says = BAD_TURNS[case]
    path = transcript_with(saved["oxford"], tmp_path, change)
    home = tmp_path / "home"
    for command in (
        ("replay", str(path)),
        ("check", str(path)),
        ("judge", str(path), "--judge", "smollm2-135m", "--dry-run"),
        ("history", "show", str(path.parent)),
    ):
        first = one_line_error(cli(*command, home=home), f"{path}: turns.2.", says)
        assert "report it" not in first, command
    assert not (path.parent / "judged").exists()
    with pytest.raises(RecordError) as raised:
        load(path)
    assert raised.value.path == str(path) and raised.value.where.startswith("turns.2.")


def test_history_list_names_a_record_that_does_not_validate_and_lists_the_rest(
    saved: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    home = tmp_path / "home"
    debates = home / "debates"
    debates.mkdir(parents=True)
    shutil.copytree(saved["oxford"], debates / "20250101-000000-good")
    path = transcript_with(saved["oxford"], tmp_path, put(["seed"], "HUGE"))
    shutil.copytree(path.parent, debates / "20250101-000001-bad")
    listed = cli("history", "list", home=home, env={"COLUMNS": "300"})
    assert listed.returncode == 0, listed.stderr
    assert "unreadable" in listed.stdout and "finished" in listed.stdout
    assert "turns.2.seed: an integer of 5000 digits" in listed.stderr
    assert "unexpected" not in listed.stderr
