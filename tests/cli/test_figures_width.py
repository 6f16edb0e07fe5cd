"""The commands that compare models (tournament, calibrate, judge, history show --full) at 80
and 200 columns: each model is shown by its short label, whole on one line, never cut to
`…` nor broken mid-word; a header is never cut; the records keep the full reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli

MOTIONS = "cats are better than dogs\nthis house would ban homework\n"
LABELS = ("Qwen2.5-0.5B-Instruct-Q4_K_M", "SmolLM2-135M-Instruct-Q8_0-with-a-long-name")
LABELLED = Path(__file__).parents[2] / "examples" / "labelled" / "debates.jsonl"


def deep(tmp_path: Path) -> Path:
    """A folder whose path is longer than 80 columns."""
    return tmp_path / "a-folder-with-a-rather-long-name" / "and-another-below-it-to-pass-80" / "d"


@pytest.fixture
def long_models(tmp_path: Path) -> list[str]:
    """Two small GGUF files, no weights, at paths longer than 80 columns."""
    from gguf_samples import write_gguf

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    paths = [write_gguf(deep(tmp_path) / f"{n}.gguf", chat_template=template) for n in LABELS]
    assert all(len(str(p)) > 80 for p in paths)
    return [str(p) for p in paths]


def lines(shown: str) -> list[str]:
    return shown.splitlines()


def whole_on_a_line(shown: str, text: str) -> bool:
    return any(text in line for line in lines(shown))


def check_narrow(shown: str, refs: list[str], *, headers: tuple[str, ...] = ()) -> None:
    """At 80 columns: nothing cut, every label and header whole on a line, no full path but
    where a line runs past the edge rather than break it (a saved path)."""
    assert "…" not in shown, shown
    for label in LABELS:
        assert whole_on_a_line(shown, label), shown
    for header in headers:
        assert whole_on_a_line(shown, header), (header, shown)
    for ref in refs:  # a model is shown by its label, never by its full path
        assert ref not in shown, shown
    long = [line for line in lines(shown) if len(line) > 80]
    assert all(line.startswith("saved: ") for line in long), long


def row_of(shown: str, label: str) -> str:
    """The one line of a table's row that names LABEL."""
    (row,) = [line for line in lines(shown) if label in line and not line.startswith("saved")]
    return row


def tournament(cli: Cli, tmp_path: Path, refs: list[str], columns: int) -> tuple[str, Path]:
    (tmp_path / "m.txt").write_text(MOTIONS)
    out = tmp_path / f"t{columns}"
    args = ["--motions", str(tmp_path / "m.txt"), "--max-rounds", "3", "--seed", "4"]
    done = cli(
        "tournament", *(a for ref in refs for a in ("--model", ref)), "--dry-run", *args,
        "--bootstrap", "10", "--controls", "1", "--out", str(out),
        home=tmp_path / "home", env={"COLUMNS": str(columns)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, out


TOURNAMENT_HEADERS = ("strength", "95% interval", "length-ctl", "turns", "within limit")


def test_a_tournament_report_at_80_columns_lists_the_labels_above_whole_tables(
    cli: Cli, tmp_path: Path, long_models: list[str]
) -> None:
    shown, out = tournament(cli, tmp_path, long_models, 80)
    judges = ("consistency", "flagged", "failed", "position", "verbosity")
    check_narrow(shown, long_models, headers=(*TOURNAMENT_HEADERS, *judges))
    # Each label once, on its own line after its key (the rank), before the first table.
    assert f"1  {LABELS[0]}" in lines(shown) or f"1  {LABELS[1]}" in lines(shown), shown
    legend = [line for line in lines(shown) if line.endswith(LABELS)]
    assert [line.split()[0] for line in legend[-2:]] == ["1", "2"], shown
    ranked = next(i for i, line in enumerate(lines(shown)) if "Tournament (oxford" in line)
    assert all(lines(shown).index(line) < ranked for line in legend[-2:])
    # The per-debate lines keep each id whole on one line.
    plan = json.loads((out / "tournament.json").read_text(encoding="utf-8"))
    for debate in plan["debates"]:
        assert whole_on_a_line(shown, f"✓ {debate['id']}:"), shown
    # The records keep each model's full reference.
    rated = json.loads((out / "ratings.json").read_text(encoding="utf-8"))
    assert sorted(m["model"] for m in rated["models"]) == sorted(long_models)


def test_a_tournament_report_at_200_columns_names_each_model_in_its_row(
    cli: Cli, tmp_path: Path, long_models: list[str]
) -> None:
    shown, _ = tournament(cli, tmp_path, long_models, 200)
    assert "…" not in shown and all(ref not in shown for ref in long_models)
    assert all(len(line) <= 200 for line in lines(shown) if not line.startswith("saved: "))
    for label in LABELS:  # a row each in the ranking, the rule-keeping and the judges
        rows = [line for line in lines(shown) if label in line]
        assert sum(row.startswith("│") for row in rows) == 2, rows
        assert any("%" in row and not row.startswith("│") for row in rows), rows
        ranking = next(row for row in rows if row.startswith("│"))
        assert "[" in ranking and "]" in ranking  # its interval, on the same line
    header = next(line for line in lines(shown) if "strength" in line)
    assert "model" in header and "95% interval" in header and "length-ctl" in header


def calibrate(cli: Cli, tmp_path: Path, refs: list[str], columns: int, *args: str) -> str:
    judges = [a for ref in refs for a in ("--judge", ref)]
    out = deep(tmp_path).parent / f"calibration-{columns}-{len(args)}"
    done = cli(
        "calibrate", *judges, *args, "--dry-run", "--out", str(out),
        home=tmp_path / "home", env={"COLUMNS": str(columns)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("columns", [80, 200])
def test_calibrate_names_each_judge_by_its_label_whole(
    cli: Cli, tmp_path: Path, long_models: list[str], columns: int
) -> None:
    (tmp_path / "m.txt").write_text(MOTIONS)
    motions = ("--motions", str(tmp_path / "m.txt"), "--max-rounds", "3", "--controls", "1")
    shown = calibrate(cli, tmp_path, long_models, columns, *motions, "--quiet")
    if columns == 80:
        check_narrow(shown, long_models, headers=("right (95 % interval)",))
    for label in LABELS:  # a table each, under the judge's label on a line of its own
        assert f"judge {label}" in lines(shown), shown
    saved = next(line for line in lines(shown) if line.startswith("saved: "))
    assert saved.endswith("calibration.json") and len(saved) > 80


@pytest.mark.parametrize("columns", [80, 200])
def test_calibrate_on_a_labelled_set_keeps_judges_and_saved_path_whole(
    cli: Cli, tmp_path: Path, long_models: list[str], columns: int
) -> None:
    shown = calibrate(cli, tmp_path, long_models, columns, "--labelled", str(LABELLED), "--quiet")
    saved = next(line for line in lines(shown) if line.startswith("saved: "))
    assert saved.endswith("labelled.json") and len(saved) > 80  # one line, whole
    if columns == 80:
        check_narrow(shown, long_models, headers=("accuracy", "position bias", "coverage"))
        assert [line.split()[0] for line in lines(shown) if line.endswith(LABELS)] == ["1", "2"]
    else:
        for label in LABELS:
            assert any("0% (0–14)" in line for line in lines(shown) if label in line), shown
        by_group = next(line for line in lines(shown) if "kind or language" in line)
        assert all(label in by_group for label in LABELS)  # a column a judge, headed whole


@pytest.mark.parametrize("columns", [80, 200])
def test_judge_names_each_judge_by_its_label_and_the_transcript_whole(
    cli: Cli, tmp_path: Path, long_models: list[str], columns: int
) -> None:
    home, debate = tmp_path / "home", deep(tmp_path).parent / "debate"
    run = ["--dry-run", "--max-rounds", "3", "--quiet", "--out", str(debate)]
    assert cli("run", "cats are better than dogs", *run, home=home).returncode == 0
    judges = [a for ref in long_models for a in ("--judge", ref)]
    done = cli("judge", str(debate), *judges, "--dry-run", home=home,
               env={"COLUMNS": str(columns)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    assert whole_on_a_line(shown, str(debate / "transcript.json")), shown
    if columns == 80:
        heading = next(line for line in lines(shown) if "transcript.json" in line)
        narrow = shown.replace(heading, "")  # the transcript's path runs past the edge
        check_narrow(narrow, long_models, headers=("agreement", "same verdict", "answered"))
    else:
        for label in LABELS:
            assert "100%" in row_of(shown, label) and "2/2" in row_of(shown, label)


def test_history_show_full_names_each_speaker_by_label_and_export_in_full(
    cli: Cli, tmp_path: Path, long_models: list[str]
) -> None:
    home = tmp_path / "home"
    seats = ["--role", f"proposition={long_models[0]}", "--role", f"opposition={long_models[1]}"]
    run = ["--dry-run", "--max-rounds", "3", "--quiet", *seats]
    assert cli("run", "cats are better than dogs", *run, home=home).returncode == 0
    for columns in (80, 200):
        shown = cli("history", "show", "--full", "last", home=home,
                    env={"COLUMNS": str(columns)}).stdout  # fmt: skip
        assert "…" not in shown and all(ref not in shown for ref in long_models)
        for label in LABELS:
            assert any(line.startswith(f"{label} · ") for line in lines(shown)), shown
    exported = cli("history", "export", "last", home=home).stdout
    assert all(ref in exported for ref in long_models)  # the document keeps them whole
