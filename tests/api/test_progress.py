"""`progress=True`: a long call from Python says on stderr how far it is; by default it
prints nothing at all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import moot

DRY = {"dry_run": True}


def test_a_debate_prints_nothing_by_default(
    moot_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moot.debate("tea is better than coffee", max_rounds=3, run=DRY, save=False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_progress_prints_a_line_on_stderr_as_each_turn_ends(
    moot_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[object] = []
    result = moot.debate(
        "tea is better than coffee",
        max_rounds=3,
        run=DRY,
        save=False,
        progress=True,
        on_event=seen.append,
    )
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == len(result.turns) > 5
    assert lines[0].startswith("moot: 1. 🔵 Proposition · ") and " tokens · " in lines[0]
    assert [int(re.match(r"moot: (\d+)\.", line)[1]) for line in lines] == [  # type: ignore[index]
        t.index + 1 for t in result.turns
    ]
    assert seen  # the caller's own listener is still told every event


def test_progress_is_in_the_debates_language(
    moot_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moot.debate("本院认为茶比咖啡好", max_rounds=3, run=DRY, save=False, progress=True)
    err = capsys.readouterr().err
    assert "正方" in err and "秒" in err and "Proposition" not in err


def test_a_tournament_prints_a_line_as_each_debate_ends_only_when_asked(
    moot_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gguf_samples import write_gguf

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    alpha, beta, gamma = (
        str(write_gguf(tmp_path / f"{n}.gguf", name=n, chat_template=template))
        for n in ("alpha", "beta", "gamma")
    )
    common = {"judges": [gamma], "seed": 4, "max_rounds": 3, "run": DRY, "bootstrap": 0}
    moot.tournament([alpha, beta], ["cats are better than dogs"], **common)  # type: ignore[arg-type]
    assert capsys.readouterr().err == ""
    done = moot.tournament(
        [alpha, beta],
        ["cats are better than dogs"],
        out=tmp_path / "t2",
        progress=True,
        **common,  # type: ignore[arg-type]
    )
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == done.report.debates_decided == 2
    assert lines[0].startswith("moot: 1. ") and " vs " in lines[0]
    assert lines[1].startswith("moot: 2. ")
