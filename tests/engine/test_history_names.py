"""Naming a saved debate: one way in every command (an id, a unique prefix, a folder,
`last`), debates saved with --out in the history, an empty history said in words, and one
id for a debate whichever front end began it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli
from test_history_hostile import one_line_error, save

RUN = ("run", "--dry-run", "--max-rounds", "3", "--quiet")
TEA, CARS = "tea is better than coffee", "cities should ban cars"
WIDE = {"COLUMNS": "1000"}  # a table's cells unfolded


def saved(cli: Cli, home: Path, motion: str, *extra: str) -> None:
    done = cli(*RUN[:1], motion, *RUN[1:], *extra, home=home)
    assert done.returncode == 0, done.stderr


def ids(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "debates").iterdir())


def the_commands(judge: str) -> dict[str, list[str]]:
    """Each command that reads a saved debate, as it is given one (DEBATE stands for it)."""
    return {
        "show": ["history", "show", "DEBATE"],
        "check": ["check", "DEBATE"],
        "replay": ["replay", "DEBATE"],
        "judge": ["judge", "DEBATE", "--judge", judge, "--dry-run"],
    }


# -- one way to name a saved debate ---------------------------------------------------------


def test_every_command_takes_an_id_a_prefix_a_folder_or_last(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    home = tmp_path / "home"
    saved(cli, home, TEA)
    saved(cli, home, CARS)
    # Named as moot names them, a day apart whenever they ran: CARS is the last.
    tea, cars = "20250101-120000-tea-is-better-than", "20250102-120000-cities-should-ban-cars"
    for folder in (home / "debates").iterdir():
        folder.rename(folder.parent / (cars if "cities" in folder.name else tea))
    forms = {
        "id": (tea, TEA),
        "prefix": (tea[: tea.index("-tea") + 4], TEA),
        "folder": (str(home / "debates" / tea), TEA),
        "last": ("last", CARS),  # the most recent
        "transcript": (str(home / "debates" / tea / "transcript.json"), TEA),
    }
    for name, args in the_commands(dry_models[0]).items():
        for form, (ref, motion) in forms.items():
            done = cli(*[ref if a == "DEBATE" else a for a in args], home=home)
            assert done.returncode == 0, (name, form, done.stderr)
            if name == "show":
                assert motion.split()[0] in done.stdout.lower(), (form, done.stdout)
    resumed = cli("resume", "last", home=home)  # found, and refused: it finished
    assert resumed.returncode == 2 and f"{cars} already finished" in resumed.stderr


@pytest.mark.parametrize("command", ["show", "check", "replay", "judge", "resume", "rm"])
def test_every_command_refuses_a_wrong_name_alike(
    tmp_path: Path, cli: Cli, command: str, dry_models: tuple[str, str]
) -> None:
    home = tmp_path / "home"
    args = {
        **the_commands(dry_models[0]),
        "resume": ["resume", "DEBATE"],
        "rm": ["history", "rm", "DEBATE", "--yes"],
    }[command]

    def named(ref: str) -> str:
        done = cli(*[ref if a == "DEBATE" else a for a in args], home=home)
        assert done.returncode == 2, (ref, done.stdout, done.stderr)
        one_line_error(done)
        return done.stderr

    nothing = named("last")
    assert "error: there is no saved debate yet" in nothing and "moot run" in nothing
    first, second = "20250101-000000-tea", "20250101-000000-tea-2"
    save(home, first)
    save(home, second)
    ambiguous = named("20250101")
    assert f"'20250101' names 2 debates: {first}, {second}" in ambiguous
    assert "give more of the id" in ambiguous
    missing = named("nope")
    assert "error: no saved debate 'nope'" in missing and "moot history list" in missing
    assert ids(home) == [first, second]  # nothing was deleted


def test_an_unfinished_debate_has_no_transcript_to_check(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    saved(cli, home, TEA)
    (folder,) = (home / "debates").iterdir()
    (folder / "transcript.json").unlink()
    for args in (("check", "last"), ("replay", folder.name), ("judge", "last", "--judge", "x")):
        done = cli(*args, home=home)
        assert done.returncode == 2, args
        one_line_error(done)
        assert f"{folder.name} did not finish" in done.stderr
        assert f"moot resume {folder.name}" in done.stderr


# -- debates saved with --out --------------------------------------------------------------


def test_an_out_debate_is_listed_found_and_deleted(tmp_path: Path, cli: Cli) -> None:
    home, out = tmp_path / "home", tmp_path / "mine" / "debate"
    saved(cli, home, TEA)
    saved(cli, home, CARS, "--out", str(out))
    listing = cli("history", "list", home=home, env=WIDE)
    assert listing.returncode == 0 and "cities should ban" in listing.stdout
    assert str(out) in listing.stdout  # its folder is shown
    (entry,) = (home / "saved-elsewhere").iterdir()
    ident = entry.name.removesuffix(".json")
    assert ident.endswith("-cities-should-ban-cars")
    assert json.loads(entry.read_text())["path"] == str(out.resolve())
    for ref in (ident, "last", str(out)):
        for args in (("history", "show", ref), ("check", ref), ("replay", ref)):
            done = cli(*args, home=home)
            assert done.returncode == 0, (args, done.stderr)
    gone = cli("history", "rm", ident[:-3], "--yes", home=home)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.strip() == f"deleted {ident}"
    assert not out.exists() and out.parent.is_dir() and not entry.exists()
    assert len(list((home / "debates").iterdir())) == 1  # the other is left


def test_rm_leaves_an_out_folder_that_holds_more_than_moot_wrote(tmp_path: Path, cli: Cli) -> None:
    home, out = tmp_path / "home", tmp_path / "debate"
    saved(cli, home, TEA, "--out", str(out))
    (out / "notes.txt").write_text("mine")
    for args in (("history", "rm", "last", "--yes"), ("history", "rm", "--all", "--yes")):
        done = cli(*args, home=home)
        assert done.returncode != 0, args
        assert "notes.txt, which moot did not write" in done.stderr
        assert (out / "notes.txt").is_file() and (out / "transcript.json").is_file()
    (out / "notes.txt").unlink()
    judged = out / "judged"
    judged.mkdir()
    (judged / "a-judge.json").write_text("{}")  # what `moot judge` writes beside it
    assert cli("history", "rm", "--all", "--yes", home=home).returncode == 0
    assert not out.exists()


def test_an_out_folder_that_is_no_debate_now_is_skipped_and_forgotten(
    tmp_path: Path, cli: Cli
) -> None:
    home = tmp_path / "home"
    emptied, replaced, gone = (tmp_path / name for name in ("emptied", "replaced", "gone"))
    for out in (emptied, replaced, gone):
        saved(cli, home, TEA, "--out", str(out))
    assert len(list((home / "saved-elsewhere").iterdir())) == 3
    for name in ("journal.jsonl", "transcript.json", "debate.md"):
        (emptied / name).unlink()
    (emptied / "notes.txt").write_text("mine")
    for path in replaced.iterdir():
        path.unlink()
    replaced.rmdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    replaced.symlink_to(other)  # not a debate's folder any more
    for path in gone.iterdir():
        path.unlink()
    gone.rmdir()
    listing = cli("history", "list", home=home)
    assert listing.returncode == 0
    assert listing.stdout.startswith("no saved debates yet")
    assert list((home / "saved-elsewhere").iterdir()) == []  # each entry pruned
    refused = cli("history", "rm", str(emptied), "--yes", home=home)
    assert refused.returncode == 2 and (emptied / "notes.txt").is_file()
    assert cli("history", "rm", str(replaced), "--yes", home=home).returncode == 2
    assert replaced.is_symlink() and (other / "keep.txt").is_file()


def test_an_out_debate_inside_the_data_directory_is_not_listed_twice(
    tmp_path: Path, cli: Cli
) -> None:
    home = tmp_path / "home"
    saved(cli, home, TEA, "--out", str(home / "debates" / "mine"))
    assert not (home / "saved-elsewhere").exists()
    listing = cli("history", "list", home=home, env=WIDE)
    assert listing.returncode == 0 and listing.stdout.count("mine") == 1


# -- an empty history ------------------------------------------------------------------------


def test_an_empty_history_says_so_in_one_line(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    for args in (("history", "list"), ("history", "rm", "--all", "--yes")):
        done = cli(*args, home=home)
        assert done.returncode == 0 and done.stderr == ""
        assert done.stdout == 'no saved debates yet: `moot run "a motion"` runs one and saves it\n'


# -- one id, whichever front end began the debate --------------------------------------------


def test_the_page_python_and_the_terminal_name_a_debate_alike(
    tmp_path: Path, cli: Cli, moot_home: Path
) -> None:
    import moot
    from moot.web import forms, runs

    saved(cli, moot_home, CARS)
    from_python = moot.debate(CARS, max_rounds=3, run={"dry_run": True})
    setup = forms.debate_setup({"motion": CARS, "params": {"max_rounds": "3"}}, dry_run=True)
    job = runs.debate_job(setup, pace=0)
    job.work(job)
    names = [*ids(moot_home)]
    assert from_python.folder is not None and job.folder is not None
    assert from_python.folder.name in names and job.folder in names and len(names) == 3
    assert all(name.split("-", 2)[2].startswith("cities-should-ban-cars") for name in names)
