"""The data directory's config.toml: a user's defaults for `moot run` and `moot.debate`,
which the command line and the keywords override; a bad file is one line naming it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import moot
from conftest import Cli


def _write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _saved(folder: Path) -> dict[str, object]:
    data = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _last(home: Path) -> dict[str, object]:
    (folder,) = (home / "debates").iterdir()
    return _saved(folder)


def test_moot_run_takes_its_defaults_from_the_config_file(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    home = tmp_path / "home"
    _write(home, f'model = "{a}"\nlang = "zh"\nmax_tokens = 40\n[roles]\nopposition = "{b}"\n')
    proc = cli("run", "cats are better than dogs", "--dry-run", "--max-rounds", "3", home=home)
    assert proc.returncode == 0, proc.stderr
    saved = _last(home)
    assert saved["language"] == "zh"
    refs = saved["refs"]
    assert isinstance(refs, dict)
    assert refs["proposition"] == a and refs["opposition"] == b and refs["judge"] == a


def test_the_command_line_overrides_the_config_file(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    home = tmp_path / "home"
    _write(home, f'model = "{a}"\nlang = "zh"\n[roles]\nopposition = "{a}"\n')
    args = ("run", "cats are better than dogs", "--dry-run", "--max-rounds", "3", "--quiet")
    proc = cli(*args, "--model", b, "--lang", "auto", home=home)
    assert proc.returncode == 0, proc.stderr
    saved = _last(home)
    assert saved["language"] == "en"  # --lang auto, given, is not the file's zh
    refs = saved["refs"]
    assert isinstance(refs, dict) and set(refs.values()) == {b}  # --model: every seat


def test_a_role_the_format_lacks_is_left_to_the_formats_that_have_it(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    home = tmp_path / "home"
    _write(home, f'model = "{a}"\n[roles]\nopposition = "{b}"\nchallenger = "{b}"\n')
    proc = cli(
        "run", "Should we rewrite it in Rust?", "--format", "challenge", "--dry-run", "--quiet",
        home=home,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    refs = _last(home)["refs"]
    assert isinstance(refs, dict) and refs["challenger"] == b and refs["proposer"] == a


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("model = [", "is not TOML"),
        ('modle = "x"', "unknown key 'modle'"),
        ("max_tokens = 0", "max_tokens = 0 is not allowed"),
        ('lang = "fr"', "lang = 'fr' is not allowed"),
        ("[roles]\nopposition = 3", "roles.opposition = 3 is not allowed"),
    ],
)
def test_a_bad_config_file_is_one_line_naming_it_and_exit_2(
    tmp_path: Path, cli: Cli, text: str, said: str
) -> None:
    home = tmp_path / "home"
    path = _write(home, text)
    for args in (("run", "cats are better than dogs", "--dry-run"), ("config", "show")):
        proc = cli(*args, home=home)
        assert proc.returncode == 2, proc.stdout
        first, hint = proc.stderr.strip().splitlines()
        assert first.startswith(f"error: {path}") and said in first, first
        assert hint.startswith("hint:") and "Traceback" not in proc.stderr


def test_config_path_and_show_find_the_file(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    where = cli("config", "path", home=home)
    assert where.returncode == 0 and where.stdout.strip() == str(home / "config.toml")
    none = cli("config", "show", home=home)
    assert none.returncode == 0 and "no config file" in none.stdout
    assert 'model = "smollm2-135m"' in none.stdout  # an example to copy
    _write(home, 'max_tokens = 64\n[roles]\njudge = "gemma3-270m"\n')
    shown = cli("config", "show", home=home)
    assert shown.returncode == 0, shown.stderr
    assert "max_tokens = 64" in shown.stdout and 'roles.judge = "gemma3-270m"' in shown.stdout


@pytest.mark.parametrize("columns", [80, 200])
def test_config_show_prints_toml_that_parses_as_copied_from_the_terminal(
    tmp_path: Path, cli: Cli, columns: int
) -> None:
    # A home whose path is wider than the terminal, and a model reference wider still.
    home = tmp_path / "a-data-directory-with-a-rather-long-name" / "and-another-below-it" / "moot"
    env = {"COLUMNS": str(columns)}
    example = cli("config", "show", home=home, env=env)
    assert example.returncode == 0, example.stderr
    assert len(str(home / "config.toml")) > 80
    parsed = tomllib.loads(example.stdout)  # the whole output, as a user would copy it
    assert parsed == {
        "model": "smollm2-135m", "lang": "auto", "max_tokens": 200,
        "roles": {"opposition": "gemma3-270m"},
    }  # fmt: skip
    assert all(len(line) <= 80 for line in example.stdout.splitlines()[1:])  # all but the path
    long_ref = "hf:some-organisation/" + "a-model-with-a-very-long-name-" * 3 + "GGUF/model.gguf"
    _write(home, f'max_tokens = 64\n[roles]\njudge = "{long_ref}"\n')
    shown = cli("config", "show", home=home, env=env)
    assert shown.returncode == 0, shown.stderr
    assert tomllib.loads(shown.stdout) == {"max_tokens": 64, "roles": {"judge": long_ref}}


def test_the_python_api_reads_the_config_file_and_its_keywords_override_it(
    moot_home: Path, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    _write(moot_home, f'model = "{a}"\nlang = "zh"\nmax_tokens = 40\n')
    result = moot.debate("cats are better than dogs", max_rounds=3, run={"dry_run": True})
    assert result.transcript.language == "zh"
    assert set(result.transcript.refs.values()) == {a}
    given = moot.debate(
        "cats are better than dogs", model=b, lang="en", max_rounds=3, run={"dry_run": True}
    )
    assert given.transcript.language == "en" and set(given.transcript.refs.values()) == {b}
    assert moot.Debate("tea", run={"dry_run": True}).setup.run.max_tokens == 40
    capped = moot.Debate("tea", run={"dry_run": True, "max_tokens": 9})
    assert capped.setup.run.max_tokens == 9
    _write(moot_home, "max_tokens = -1\n")
    with pytest.raises(moot.UsageError, match="config.toml: max_tokens = -1"):
        moot.debate("cats are better than dogs", run={"dry_run": True})
