"""The command line's contract for input it cannot take: one line naming what is wrong, a
hint, exit 2, and nothing done. "report it" is only for moot's own bugs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli


def refused(proc: object, needle: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)  # type: ignore[attr-defined]
    lines = proc.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 2, lines
    assert lines[0].startswith("error:") and needle in lines[0], lines
    assert lines[1].startswith("hint:")
    assert "error: unexpected" not in lines[0] and "Traceback" not in proc.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "x", "--bogus"], "no such option: --bogus"),
        (["tournament", "--yes"], "no such option: --yes"),
        (["history", "list", "--all"], "no such option: --all"),
        (["run", "x", "extra"], "unexpected extra argument"),
        (["run", "x", "--max-tokens", "abc"], "'--max-tokens'"),
        (["run", "x", "--seed", "1.5"], "'--seed'"),
        (["run", "x", "--max-rounds"], "--max-rounds"),
        (["models", "nosuchcommand"], "nosuchcommand"),
    ],
)
def test_a_usage_mistake_is_a_usage_error(tmp_path: Path, cli: Cli, args: list[str], needle: str):
    refused(cli(*args, home=tmp_path), needle)


def test_moot_alone_shows_its_help_and_the_exit_codes(tmp_path: Path, cli: Cli) -> None:
    bare = cli(home=tmp_path)
    assert bare.returncode == 0 and "Commands" in bare.stdout and not bare.stderr
    helped = cli("--help", home=tmp_path)
    assert "Exit status: 0 done; 1" in " ".join(helped.stdout.split())
    assert "130 interrupted" in " ".join(helped.stdout.split())


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--seed", "1", "--seed", "2"], "--seed is given twice"),
        (["--format", "oxford", "--format=decision"], "--format is given twice"),
        (["--quiet", "--no-quiet"], "--quiet and --no-quiet are both given"),
        (["-y", "--yes"], "-y and --yes are both given"),
    ],
)
def test_an_option_given_twice_is_refused(tmp_path: Path, cli: Cli, args: list[str], needle: str):
    refused(cli("run", "tea is good", "--dry-run", *args, home=tmp_path), needle)
    assert not (tmp_path / "debates").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--temperature", "devil=0.1", "--temperature", "devil=0.9"], "--temperature devil="),
        (["--temperature", "devil=0.1", "--temperature", " Devil =0.9"], "--temperature devil="),
        (["--role", "opposition=A.gguf", "--role", "opposition=B.gguf"], "--role opposition="),
    ],
)
def test_a_role_given_twice_in_one_option_is_refused(
    tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    """A repeatable ROLE=VALUE option binds each role once: the first value is not lost to
    the last one."""
    proc = cli("run", "cats are better than dogs", "--dry-run", "--yes", *args, home=tmp_path)
    refused(proc, f"{needle} is given twice")
    assert proc.stderr.splitlines()[1] == f"hint: give one {needle}…"
    assert not (tmp_path / "debates").exists()


def test_repeatable_options_may_repeat(tmp_path: Path, cli: Cli) -> None:
    args = ["--format", "decision", "--positions", "tea", "--positions", "coffee", "--yes"]
    done = cli("run", "tea or coffee", "--dry-run", "--no-save", *args, home=tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--effort", "low"], "--effort does not apply to the oxford format"),
        (["--rounds", "2"], "--rounds does not apply to the oxford format"),
        (["--positions", "a"], "--positions does not apply to the oxford format"),
        (["--continue", "t.json"], "--continue does not apply to the oxford format"),
        (["--format", "challenge", "--min-score", "8"], "--min-score does not apply to the chall"),
        (["--format", "decision", "--max-rounds", "4"], "--max-rounds does not apply to the deci"),
    ],
)
def test_an_option_the_format_does_not_read_is_refused(
    tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    refused(cli("run", "tea is good", "--dry-run", *args, home=tmp_path), needle)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", ""], "model reference is empty"),
        (["--model", "nosuchmodel"], "nosuchmodel"),
        (["--role", "judge=nosuchmodel"], "nosuchmodel"),
        (["--model", "http://127.0.0.1:99999/v1"], "not a server URL"),
        (["--model", "http:///v1"], "not a server URL"),
        (["--n-ctx", "-1"], "--n-ctx"),
        (["--gpu-layers", str(10**20)], "--gpu-layers"),
        (["--call-timeout", "nan"], "--call-timeout"),
        (["--call-timeout", "inf"], "--call-timeout"),
        (["--max-tokens", "-1"], "--max-tokens"),
        (["--seed", "-1"], "--seed -1"),
        (["--seed", str(2**32)], "--seed"),
        (["--temperature", "judge=nan"], "--temperature judge=nan"),
        (["--lang", "fr"], "--lang"),
    ],
)
def test_a_dry_run_checks_the_whole_set_up_before_anything_runs(
    tmp_path: Path, cli: Cli, args: list[str], needle: str
) -> None:
    proc = cli("run", "tea is good", "--dry-run", *args, home=tmp_path)
    refused(proc, needle)
    assert proc.stdout == ""  # not one line of a debate
    assert not (tmp_path / "debates").exists()


def test_a_dry_run_names_a_file_that_is_no_model(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "notes.gguf").write_text("root:x:0:0:root:/root:/bin/bash\n")
    proc = cli("run", "tea is good", "--dry-run", "--model", str(tmp_path / "notes.gguf"))
    assert proc.returncode in (1, 2) and "not a GGUF" in proc.stderr
    assert proc.stdout == ""


def test_a_dry_run_takes_models_that_are_there(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    roles = ["--model", dry_models[0], "--role", f"judge={dry_models[1]}"]
    done = cli("run", "tea is good", "--dry-run", "--no-save", "--max-rounds", "3", *roles)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("motion", ["-", "\u200b\u200b", "?!", "x" * 4001])
def test_a_motion_without_words_is_refused(tmp_path: Path, cli: Cli, motion: str) -> None:
    proc = cli("run", motion, "--dry-run", home=tmp_path)
    refused(proc, "the motion")
    assert not (tmp_path / "debates").exists()


def test_an_argument_that_is_not_utf8_is_refused(tmp_path: Path, cli: Cli) -> None:
    motion = b"tea \xff is good".decode("utf-8", "surrogateescape")  # how Python sees such bytes
    refused(cli("run", motion, "--dry-run", home=tmp_path), "not valid UTF-8")


def test_an_error_line_shows_untrusted_text_as_text(tmp_path: Path, cli: Cli) -> None:
    ref = "\x1b]0;owned\x07\x1b[2J[link=file:///etc/passwd]x[/link]"
    proc = cli("run", "tea is good", "--dry-run", "--model", ref, home=tmp_path)
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "[link=file:/etc/passwd]x[/link]" in proc.stderr  # shown (as a path), not obeyed


def test_repeatable_options_have_a_bound(tmp_path: Path, cli: Cli) -> None:
    scope = [arg for i in range(40) for arg in ("--out-of-scope", f"topic {i}")]
    args = ["--format", "decision", "--positions", "tea", "--positions", "coffee", *scope]
    refused(cli("run", "tea or coffee", "--dry-run", *args, home=tmp_path), "at most 32 items")
    long = ["--format", "decision", "--positions", "tea", "--positions", "x" * 501]
    refused(cli("run", "tea or coffee", "--dry-run", *long, home=tmp_path), "--positions")


def test_the_data_folder_is_absolute_and_a_relative_xdg_home_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.config import data_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MOOT_HOME", "rel")
    assert data_dir() == tmp_path / "rel"
    monkeypatch.delenv("MOOT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/share")
    assert data_dir() == tmp_path / "home" / ".local" / "share" / "moot"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "moot"


def test_a_dry_run_tournament_checks_its_models_too(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    motions = tmp_path / "m.txt"
    motions.write_text("cats are better than dogs\n")
    args = ["tournament", "--dry-run", "--motions", str(motions), "--max-rounds", "3"]
    proc = cli(*args, "--model", dry_models[0], "--model", "nosuchmodel", home=tmp_path)
    refused(proc, "nosuchmodel")
    assert not (tmp_path / "tournaments").exists()
    out = tmp_path / "t"
    done = cli(*args, "--model", dry_models[0], "--model", dry_models[1], "--out", str(out))
    assert done.returncode == 0, done.stderr


def test_a_models_folder_that_links_to_nothing_is_named_as_such(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(tmp_path / "gone")
    refused(cli("models", "add", "mine", str(tmp_path / "x.gguf"), home=home), "a link to nothing")


def test_a_reference_with_colons_is_shown_as_written(tmp_path: Path, cli: Cli) -> None:
    """`:a:` in a model reference is no emoji code: the error shows what the user typed."""
    done = cli("run", "cities ban cars", "--model", "ollama:a:b:c", "--dry-run", home=tmp_path)
    assert done.returncode == 2 and "'ollama:a:b:c'" in done.stderr, done.stderr
