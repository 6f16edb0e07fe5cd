"""The motions file the repository ships for tournaments: the command docs/tournaments.md
opens with, run as written (a dry run), takes every motion in it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import REPO, Cli

EXAMPLE = REPO / "examples" / "motions.txt"


def documented_command() -> list[str]:
    """The first `moot tournament …` command of the Tournaments page, as its words."""
    page = (REPO / "docs" / "tournaments.md").read_text(encoding="utf-8")
    line = next(ln.strip() for ln in page.splitlines() if ln.startswith("    moot tournament "))
    return shlex.split(line)


def test_the_documented_tournament_takes_the_example_motions(cli: Cli, tmp_path: Path) -> None:
    words = documented_command()
    assert words[words.index("--motions") + 1] == "examples/motions.txt"
    out = tmp_path / "t"
    done = cli.subprocess(
        *words[1:], "--dry-run", "--quiet", "--out", str(out),
        home=tmp_path / "home", cwd=REPO, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    given = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    plan = json.loads((out / "tournament.json").read_text(encoding="utf-8"))
    assert [m["text"] for m in plan["motions"]] == given
    # Two or more in each language: a tournament's controls can be made in both.
    languages = [m["language"] for m in plan["motions"]]
    assert languages.count("en") >= 2 and languages.count("zh") >= 2
    assert (out / "ratings.json").is_file()
