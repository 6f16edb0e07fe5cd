"""Saved debates and the data folder against hostile input: folders moot did not make,
files that are not moot's, symlinks, FIFOs, huge files, corrupt records, escape sequences."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import Cli
from moot import history
from moot.errors import UsageError
from moot.records import files

RUN = ("run", "tea is better than coffee", "--dry-run", "--max-rounds", "3", "--quiet")
SECRET = "the secret in a file of someone else's"
as_root = os.geteuid() == 0


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def save(
    home: Path,
    name: str,
    *,
    motion: str = "tea is better than coffee",
    fmt: str = "oxford",
    text: str = "a fine speech",
    document: str | None = "# Debate Brief\n\nthe brief\n",
    finished: bool = True,
) -> Path:
    """A debate folder as moot writes one: journal, and when finished transcript and document."""
    from moot.records.transcript import ModelInfo, Transcript, Turn

    folder = home / "debates" / name
    folder.mkdir(parents=True)
    turn = Turn(
        index=0, round=1, role="proposition", step="opening", model="m", temperature=0.7,
        text=text,
    )  # fmt: skip
    record = Transcript(
        format=fmt, motion=motion, language="en", seed=1, models={"proposition": ModelInfo(id="m")}
    ).model_dump(mode="json", exclude={"turns", "scores", "result"})
    records = [{"type": "debate", **record}, {"type": "turn", **turn.model_dump(mode="json")}]
    (folder / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if finished:
        whole = {**record, "turns": [turn.model_dump(mode="json")]}
        (folder / "transcript.json").write_text(json.dumps(whole))
        if document is not None:
            name = "decision.md" if fmt == "decision" else "debate.md"
            (folder / name).write_text(document)
    return folder


def one_line_error(result: object) -> None:
    stderr = result.stderr  # type: ignore[attr-defined]
    lines = stderr.splitlines()
    assert lines and lines[0].startswith("error: "), stderr
    assert len(lines) <= 2 and all(not line.startswith("hint") for line in lines[:1]), stderr
    assert "unexpected" not in stderr and "Traceback" not in stderr


# -- --out: moot sets the mode only of folders it makes ------------------------------------


@pytest.mark.parametrize("given", [0o755, 0o1777, 0o555])
def test_an_existing_out_folder_keeps_its_mode(tmp_path: Path, cli: Cli, given: int) -> None:
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(given)
    try:
        done = cli(*RUN, "--out", str(out), home=tmp_path / "home")
        assert mode(out) == given
        if given == 0o555 and not as_root:
            assert done.returncode == 2 and "cannot write to" in done.stderr
            assert "free some space" not in done.stderr
        else:
            assert done.returncode == 0, done.stderr
            assert (out / "transcript.json").is_file()
    finally:
        out.chmod(0o755)


def test_an_out_symlink_leaves_its_target_s_mode(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "target"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    (tmp_path / "link").symlink_to(target)
    done = cli(*RUN, "--out", str(tmp_path / "link"), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert mode(target) == 0o755 and (target / "transcript.json").is_file()


def test_out_empty_is_refused_and_the_working_folder_untouched(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o755)
    monkeypatch.chdir(work)
    done = cli(*RUN, "--out", "", home=tmp_path / "home")
    assert done.returncode == 2
    one_line_error(done)
    assert "--out" in done.stderr
    assert mode(work) == 0o755 and list(work.iterdir()) == []


def test_out_expands_the_home_folder(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    done = cli(*RUN, "--out", "~/saved", home=home)
    assert done.returncode == 0, done.stderr
    assert (home / "saved" / "transcript.json").is_file()
    assert list(work.iterdir()) == []  # no folder named `~`


def test_out_a_file_says_so(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    done = cli(*RUN, "--out", str(target), home=tmp_path / "home")
    assert done.returncode == 2
    one_line_error(done)
    assert f"--out {target} is a file, not a folder" in done.stderr
    assert "free some space" not in done.stderr
    assert target.read_text() == "mine"


def test_an_out_folder_with_other_files_is_used_and_they_stay(
    tmp_path: Path, moot_home: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    claimed = history.claim(out, motion="x")
    assert not claimed.created and (out / "journal.jsonl").is_file()
    claimed.release()
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    # A folder with a finished debate in it is taken, even when its journal is gone.
    (out / "transcript.json").write_text("{}")
    with pytest.raises(UsageError, match="already holds a debate"):
        history.claim(out, motion="x")
    assert not (out / "journal.jsonl").exists()


def test_new_out_folders_are_private_and_existing_parents_keep_their_mode(
    tmp_path: Path, moot_home: Path
) -> None:
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(0o755)
    out = parent / "a" / "b"
    claimed = history.claim(out, motion="x")
    assert claimed.created
    assert mode(parent) == 0o755
    assert mode(parent / "a") == 0o700 and mode(out) == 0o700


def test_make_private_dir_makes_private_folders_and_leaves_existing_ones(tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    existing.mkdir()
    existing.chmod(0o751)
    assert files.make_private_dir(existing) == existing
    assert mode(existing) == 0o751
    made = files.make_private_dir(existing / "x" / "y")
    assert mode(existing) == 0o751
    assert mode(existing / "x") == 0o700 and mode(made) == 0o700
    (tmp_path / "f").write_text("")
    with pytest.raises(FileExistsError):
        files.make_private_dir(tmp_path / "f")


def test_an_existing_debates_folder_keeps_its_mode(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    (home / "debates").mkdir(parents=True)
    (home / "debates").chmod(0o750)
    done = cli(*RUN, home=home)
    assert done.returncode == 0, done.stderr
    assert mode(home / "debates") == 0o750
    (saved,) = (home / "debates").iterdir()
    assert mode(saved) == 0o700


# -- a data folder that cannot be used -----------------------------------------------------


def test_a_data_folder_that_is_a_file_is_named_with_the_fix(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    env = {"HOME": str(tmp_path)}
    for args in (RUN, ("history", "list"), ("history", "show", "x")):
        done = cli(*args, env={**env, "MOOT_HOME": str(home)})
        assert done.returncode == 2, (args, done.stderr)
        one_line_error(done)
        assert f"moot's data folder {home} is not a folder" in done.stderr
        assert "MOOT_HOME" in done.stderr and "None" not in done.stderr + done.stdout
    # The debates folder a file: the same.
    home.unlink()
    home.mkdir()
    (home / "debates").write_text("")
    for args in (RUN, ("history", "list")):
        done = cli(*args, home=home)
        assert done.returncode == 2 and "MOOT_HOME" in done.stderr, done.stderr
        assert f"{home / 'debates'} is not a folder" in done.stderr
    # A folder on the way to it a file: that one is named.
    for args in (RUN, ("history", "list")):
        done = cli(*args, env={"HOME": str(tmp_path), "MOOT_HOME": str(home / "debates" / "x")})
        assert done.returncode == 2 and "MOOT_HOME" in done.stderr, done.stderr
        assert f"{home / 'debates'} is not a folder" in done.stderr


@pytest.mark.skipif(as_root, reason="root writes to any folder")
def test_a_data_folder_without_permission_is_named_with_the_fix(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    try:
        done = cli(*RUN, home=home)
        assert done.returncode == 2
        one_line_error(done)
        assert str(home) in done.stderr and "MOOT_HOME" in done.stderr
        assert "None" not in done.stderr + done.stdout
        home.chmod(0o000)
        listed = cli("history", "list", home=home)
        assert listed.returncode == 2 and "MOOT_HOME" in listed.stderr
        one_line_error(listed)
    finally:
        home.chmod(0o700)


def test_a_data_folder_moot_may_not_use_is_named_with_the_fix(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a user without permission sees (simulated: these tests may run as root)."""
    home = tmp_path / "home"
    home.mkdir()

    def refused(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(history, "make_private_dir", refused)
    done = cli(*RUN, home=home)
    assert done.returncode == 2
    one_line_error(done)
    assert f"cannot write to moot's data folder {home}: Permission denied" in done.stderr
    assert "MOOT_HOME" in done.stderr and "None" not in done.stderr + done.stdout
    monkeypatch.setattr(history.os, "scandir", refused)
    listed = cli("history", "list", home=home)
    assert listed.returncode == 2
    one_line_error(listed)
    assert f"cannot read moot's data folder {home}" in listed.stderr
    assert "MOOT_HOME" in listed.stderr


# -- a debate folder is read only as moot wrote it ------------------------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_text(SECRET)
    return path


def test_a_folder_that_holds_no_debate_is_refused(tmp_path: Path, cli: Cli, secret: Path) -> None:
    folder = tmp_path / "any"
    folder.mkdir()
    (folder / "debate.md").symlink_to(secret)
    for args in (("show", str(folder)), ("rm", str(folder), "--yes")):
        done = cli("history", *args, home=tmp_path / "home")
        assert done.returncode == 2
        one_line_error(done)
        assert SECRET not in done.stdout
        assert "not a saved debate" in done.stderr
    assert (folder / "debate.md").is_symlink()


def test_a_symlinked_document_is_not_followed(tmp_path: Path, cli: Cli, secret: Path) -> None:
    folder = save(tmp_path / "home", "20250101-000000-tea", document=None)
    (folder / "debate.md").symlink_to(secret)
    for ref in (str(folder), folder.name):
        done = cli("history", "show", ref, home=tmp_path / "home")
        assert done.returncode == 2
        one_line_error(done)
        assert SECRET not in done.stdout and "symlink" in done.stderr


def test_a_symlinked_journal_or_transcript_is_not_followed(
    tmp_path: Path, cli: Cli, secret: Path
) -> None:
    elsewhere = save(tmp_path / "elsewhere", "20250101-000000-tea", finished=False)
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "journal.jsonl").symlink_to(elsewhere / "journal.jsonl")
    for args in (("history", "show", str(folder)), ("resume", str(folder))):
        done = cli(*args, home=tmp_path / "home")
        assert done.returncode == 2, (args, done.stderr)
        one_line_error(done)
        assert "symlink" in done.stderr and "a fine speech" not in done.stdout
    assert not (elsewhere / "transcript.json").exists()  # nothing was resumed there
    other = tmp_path / "other"
    other.mkdir()
    (other / "transcript.json").symlink_to(secret)
    done = cli("history", "show", str(other), home=tmp_path / "home")
    assert done.returncode == 2 and SECRET not in done.stdout + done.stderr


def test_a_huge_document_is_refused_with_the_limit(tmp_path: Path, cli: Cli) -> None:
    folder = save(tmp_path / "home", "20250101-000000-tea", document=None)
    with open(folder / "debate.md", "wb") as fh:
        fh.truncate(200 * files.MIB)  # sparse: costs no disk
    # A process of its own: were the file read, rendering it would take the test's time.
    done = cli.subprocess("history", "show", folder.name, home=tmp_path / "home", timeout=60)
    assert done.returncode == 2
    one_line_error(done)
    assert f"{files.RECORD_LIMIT:,}" in done.stderr


def test_a_fifo_document_does_not_hang(tmp_path: Path, cli: Cli) -> None:
    folder = save(tmp_path / "home", "20250101-000000-tea", document=None)
    os.mkfifo(folder / "debate.md")
    done = cli.subprocess("history", "show", folder.name, home=tmp_path / "home", timeout=60)
    assert done.returncode == 2
    one_line_error(done)
    assert "not a regular file" in done.stderr


def test_show_prints_the_format_s_document_not_any_markdown(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    oxford = save(home, "20250101-000000-tea", document="# Debate Brief\n\nTHE BRIEF\n")
    (oxford / "a-notes.md").write_text("NOT THE DOCUMENT")
    decision = save(home, "20250101-000001-cars", fmt="decision", document="# THE DECISION\n")
    (decision / "debate.md").write_text("NOT THE DOCUMENT")
    shown = cli("history", "show", oxford.name, home=home)
    assert shown.returncode == 0 and "THE BRIEF" in shown.stdout
    assert "NOT THE DOCUMENT" not in shown.stdout
    shown = cli("history", "show", decision.name, home=home)
    assert shown.returncode == 0 and "THE DECISION" in shown.stdout
    assert "NOT THE DOCUMENT" not in shown.stdout


def test_show_of_a_real_decision_prints_its_document(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    done = cli(
        "run",
        "cars in cities",
        "--format",
        "decision",
        "--positions",
        "ban cars",
        "--positions",
        "keep cars",
        "--yes",
        "--dry-run",
        "--quiet",
        "--out",
        str(out),
        home=tmp_path / "home",
    )
    assert done.returncode == 0, done.stderr
    (out / "aaa.md").write_text("NOT THE DOCUMENT")
    shown = cli("history", "show", str(out), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    assert "NOT THE DOCUMENT" not in shown.stdout and "cars" in shown.stdout


def test_a_journal_turn_with_a_line_separator_is_shown_whole(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    save(home, "20250101-000000-tea", text="before\u2028after\x85end", finished=False)
    folder = home / "debates" / "20250101-000000-tea"
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines(keepends=False)
    raw = [json.loads(line) for line in lines]
    journal.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in raw))
    shown = cli("history", "show", folder.name, home=home)
    assert shown.returncode == 0, shown.stderr
    assert "after" in shown.stdout and "end" in shown.stdout


# -- rm ------------------------------------------------------------------------------------


def test_rm_an_id_with_all_is_refused(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    kept = [save(home, n) for n in ("20250101-000000-a", "20250101-000001-b")]
    done = cli("history", "rm", kept[0].name, "--all", home=home)
    assert done.returncode == 2
    one_line_error(done)
    assert all(folder.is_dir() for folder in kept) and len(kept) == 2


def test_rm_all_asks_and_without_a_terminal_refuses(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    kept = save(home, "20250101-000000-a")
    done = cli("history", "rm", "--all", home=home)
    assert done.returncode == 2
    one_line_error(done)
    assert "--yes" in done.stderr and kept.is_dir()
    done = cli("history", "rm", kept.name, home=home)
    assert done.returncode == 2 and "--yes" in done.stderr and kept.is_dir()
    done = cli("history", "rm", "--all", "-y", home=home)
    assert done.returncode == 0 and "deleted 1 debate" in done.stdout
    assert not kept.exists()


def test_rm_at_the_end_of_input_refuses(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.cli import history as cli_history

    home = tmp_path / "home"
    kept = save(home, "20250101-000000-a")
    monkeypatch.setattr(cli_history, "_can_ask", lambda: True)  # a terminal, at EOF
    done = cli("history", "rm", "--all", home=home)
    assert done.returncode == 2
    one_line_error(done)
    assert "--yes" in done.stderr and kept.is_dir()
    monkeypatch.setattr(cli_history.typer, "confirm", lambda question: False)
    done = cli("history", "rm", "--all", home=home)
    assert done.returncode == 130 and kept.is_dir()  # declined, as `moot models rm`
    monkeypatch.setattr(cli_history.typer, "confirm", lambda question: True)
    done = cli("history", "rm", kept.name, home=home)
    assert done.returncode == 0 and not kept.exists()


def test_rm_all_leaves_symlinks_and_what_they_point_to(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    mine = save(home, "20250101-000000-a")
    elsewhere = save(tmp_path / "elsewhere", "20250101-000000-b")
    (home / "debates" / "20250101-000001-link").symlink_to(elsewhere)
    (mine / "outside").symlink_to(elsewhere)  # a symlink inside a debate is not followed
    listed = cli("history", "list", env={"COLUMNS": "300"}, home=home)
    assert listed.returncode == 0 and "20250101-000001-link" not in listed.stdout
    done = cli("history", "rm", "--all", "--yes", home=home)
    assert done.returncode == 0, done.stderr
    assert "deleted 1 debate" in done.stdout and not mine.exists()
    assert (elsewhere / "transcript.json").is_file()
    assert (home / "debates" / "20250101-000001-link").is_symlink()
    gone = cli("history", "rm", "20250101-000001-link", "--yes", home=home)
    assert gone.returncode == 2 and (elsewhere / "transcript.json").is_file()


def test_rm_all_deletes_the_others_when_one_cannot_be_and_names_it(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    first, stuck, last = (save(home, f"20250101-00000{i}-{n}") for i, n in enumerate("abc"))
    real_rmtree = history.shutil.rmtree

    def rmtree(path: Path) -> None:
        if Path(path) == stuck:
            raise PermissionError(13, "Permission denied")
        real_rmtree(path)

    monkeypatch.setattr(history.shutil, "rmtree", rmtree)
    done = cli("history", "rm", "--all", "--yes", home=home)
    assert done.returncode == 1, done.stderr
    assert "deleted 2 debate(s)" in done.stdout
    assert not first.exists() and not last.exists() and stuck.is_dir()
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("failed: could not delete") and stuck.name in lines[0]
    assert lines[1] == "error: 1 saved debate(s) could not be deleted"
    assert lines[2] == "hint: check its permissions" and len(lines) == 3


def test_rm_refuses_a_folder_outside_the_data_folder_before_asking(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.cli import history as cli_history

    home = tmp_path / "home"
    outside = save(tmp_path / "elsewhere", "20250101-000000-b")
    asked: list[str] = []
    monkeypatch.setattr(cli_history, "_can_ask", lambda: True)
    monkeypatch.setattr(cli_history.typer, "confirm", lambda q: asked.append(q) or True)
    done = cli("history", "rm", str(outside), home=home)
    assert done.returncode == 2 and outside.is_dir() and asked == []
    one_line_error(done)
    assert "not in moot's data directory" in done.stderr


# -- ids -----------------------------------------------------------------------------------


def test_an_exact_id_wins_over_a_longer_one(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    save(home, "20250101-000000-tea", text="FIRST")
    save(home, "20250101-000000-tea-2", text="SECOND", document=None)
    shown = cli("history", "show", "20250101-000000-tea", home=home)
    assert shown.returncode == 0, shown.stderr
    assert "the brief" in shown.stdout
    ambiguous = cli("history", "show", "20250101-000000-t", home=home)
    assert ambiguous.returncode == 2 and "names 2 debates" in ambiguous.stderr


def test_an_empty_id_is_refused(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    only = save(home, "20250101-000000-tea")
    monkeypatch.chdir(tmp_path)
    for args in (("history", "show", ""), ("history", "rm", "", "--yes"), ("resume", "")):
        done = cli(*args, home=home)
        assert done.returncode == 2, args
        one_line_error(done)
    assert only.is_dir()


# -- corrupt debates -----------------------------------------------------------------------

CORRUPT = {
    "bad json": ("transcript.json", b'{"format": "oxford", '),
    "a list": ("transcript.json", b"[1, 2, 3]"),
    "turns a number": ("transcript.json", b'{"format": "oxford", "motion": "m", "turns": 5}'),
    "motion a list": ("transcript.json", b'{"format": "oxford", "motion": [1], "turns": []}'),
    "turns of numbers": ("transcript.json", b'{"motion": "m", "turns": [1, 2]}'),
    "not utf-8": ("transcript.json", b'{"motion": "\xff\xfe"}'),
    "journal garbage": ("journal.jsonl", b"garbage\n" + b'{"type": "turn"}\n'),
    "journal of lists": ("journal.jsonl", b'{"type": "debate", "motion": "m"}\n[1]\n'),
    "journal header wrong": ("journal.jsonl", b'{"type": "debate", "format": {"a": 1}}\n'),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_one_corrupt_debate_does_not_hide_the_others(tmp_path: Path, cli: Cli, case: str) -> None:
    home = tmp_path / "home"
    good = save(home, "20250101-000000-tea", motion="tea is better than coffee")
    name, content = CORRUPT[case]
    broken = home / "debates" / "20250101-000001-broken"
    broken.mkdir()
    (broken / name).write_bytes(content)
    listed = cli("history", "list", env={"COLUMNS": "300"}, home=home)
    assert listed.returncode == 0, listed.stderr
    assert "tea is better than coffee" in listed.stdout
    row = next(line for line in listed.stdout.splitlines() if broken.name in line)
    assert "unreadable" in row
    assert "warning:" in listed.stderr and str(broken / name) in listed.stderr
    assert "unexpected" not in listed.stderr
    # Found by a prefix all the same; the broken one is named, and can be deleted.
    assert cli("history", "show", "20250101-000000", home=home).returncode == 0
    shown = cli("history", "show", "20250101-000001", home=home)
    assert shown.returncode == 2
    one_line_error(shown)
    resumed = cli("resume", broken.name, home=home)
    assert resumed.returncode == 2
    one_line_error(resumed)
    assert cli("history", "rm", "20250101-000001", "--yes", home=home).returncode == 0
    assert not broken.exists() and good.is_dir()


def test_an_interrupted_debate_with_a_torn_last_line_is_listed(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    folder = save(home, "20250101-000000-tea", finished=False)
    with open(folder / "journal.jsonl", "a") as fh:
        fh.write('{"type": "turn", "te')  # a crash mid-write
    listed = cli("history", "list", env={"COLUMNS": "300"}, home=home)
    assert listed.returncode == 0 and "interrupted" in listed.stdout and listed.stderr == ""
    shown = cli("history", "show", folder.name, home=home)
    assert shown.returncode == 0 and "a fine speech" in shown.stdout


# -- what moot prints of saved debates is text, never terminal commands --------------------

HOSTILE = "\x1b[2J \x1b]0;title\x07 [link=file:///etc/passwd]x[/link] [blink]"


def assert_shown_as_text(stdout: str) -> None:
    assert "\x1b" not in stdout and "\x07" not in stdout and "]8;" not in stdout
    assert "[link=file:///etc/passwd]x[/link]" in stdout and "[blink]" in stdout
    assert "\\x1b[2J" in stdout and "\\x07" in stdout


def test_saved_text_is_shown_never_obeyed(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    env = {"COLUMNS": "400"}
    finished = save(
        home,
        "20250101-000000-\x1b[2J\x1b]0;title\x07[blink]",
        motion=HOSTILE,
        fmt="oxford [blink]",
        document=None,
    )
    (finished / "debate.md").write_text(f"# Debate Brief\n\n{HOSTILE}\n")
    interrupted = save(home, "20250101-000001-b", text=HOSTILE, motion=HOSTILE, finished=False)
    listed = cli("history", "list", env=env, home=home)
    assert listed.returncode == 0, listed.stderr
    assert_shown_as_text(listed.stdout)
    assert "oxford [blink]" in listed.stdout
    # The journal of an interrupted debate, and the document of one with a known format.
    shown = cli("history", "show", interrupted.name, env=env, home=home)
    assert shown.returncode == 0, shown.stderr
    assert_shown_as_text(shown.stdout)
    doc = save(home, "20250101-000002-c", document=f"# Debate Brief\n\n{HOSTILE}\n")
    shown = cli("history", "show", doc.name, env=env, home=home)
    assert shown.returncode == 0, shown.stderr
    assert_shown_as_text(shown.stdout)
    # A folder name with escape sequences in it.
    shown = cli("history", "show", "20250101-000000", env=env, home=home)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    gone = cli("history", "rm", "20250101-000000", "--yes", env=env, home=home)
    assert gone.returncode == 0 and "\x1b" not in gone.stdout and "\x07" not in gone.stdout
    assert "deleted 20250101-000000-\\x1b[2J" in gone.stdout and not finished.exists()


def test_on_a_terminal_saved_text_sets_no_title_and_links_nothing(tmp_path: Path, cli: Cli) -> None:
    """With colours on, moot's own styles are the only escape sequences: no OSC (title,
    hyperlink), no BEL, no clear-screen."""
    home = tmp_path / "home"
    terminal = {"COLUMNS": "400", "FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"}
    document = f"# Brief\n\n[click](file:///etc/passwd)\n\n{HOSTILE}\n"
    doc = save(home, "20250101-000000-a", motion=HOSTILE, document=document)
    journal = save(home, "20250101-000001-b", text=HOSTILE, finished=False)
    runs = [
        cli("history", "list", env=terminal, home=home),
        cli("history", "show", doc.name, env=terminal, home=home),
        cli("history", "show", journal.name, env=terminal, home=home),
    ]
    assert "\x1b[" in runs[0].stdout  # styled: a terminal
    assert "click" in runs[1].stdout and "a fine speech" not in runs[1].stdout
    for done in runs:
        assert done.returncode == 0, done.stderr
        assert "\x1b]" not in done.stdout and "\x07" not in done.stdout
        assert "\x1b[2J" not in done.stdout and "\\x1b[2J" in done.stdout
