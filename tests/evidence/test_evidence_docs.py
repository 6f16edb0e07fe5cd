"""The evidence page's example runs as written, on the tests' documents, and prints what
the page says it prints."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "evidence.md"


def test_the_example_on_the_evidence_page_prints_what_the_page_shows(
    documents: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    text = PAGE.read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    shown = re.search(r"prints the passages that match, best first, then\n\n```\n(.*?)```", text,
                      re.DOTALL)  # fmt: skip
    assert example and shown
    shutil.copytree(documents, tmp_path / "board-papers")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example.group(1), str(PAGE), "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[board-pack.pdf p.2 ¶2] The board approved a hedging")
    assert lines[-3:] == shown.group(1).splitlines()
    assert sorted(p.name for p in (tmp_path / "debate" / "evidence").iterdir()) == [
        "index", "paragraphs"
    ]  # fmt: skip
