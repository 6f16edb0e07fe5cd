"""A saved debate read whole: every speech in its document, `moot history show --full`, and
`moot history export` as Markdown or as one self-contained HTML page."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import Cli

REPO = Path(__file__).resolve().parents[2]
OLD = REPO / "tests" / "fixtures" / "records-v0"


def _run(cli: Cli, home: Path, motion: str, *more: str) -> Path:
    proc = cli("run", motion, "--dry-run", "--max-rounds", "3", "--quiet", *more, home=home)
    assert proc.returncode == 0, proc.stderr
    (folder,) = (home / "debates").iterdir()
    return folder


def _turns(folder: Path) -> list[dict[str, object]]:
    turns = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))["turns"]
    assert isinstance(turns, list) and len(turns) > 5
    return turns


def test_the_saved_document_keeps_its_brief_and_then_every_speech_in_order(
    tmp_path: Path, cli: Cli
) -> None:
    folder = _run(cli, tmp_path, "cats are better than dogs")
    document = (folder / "debate.md").read_text(encoding="utf-8")
    assert document.startswith("# 📋 Debate Brief")
    brief, _, speeches = document.partition("## Every speech")
    assert "Balanced Assessment" in brief and speeches
    turns = _turns(folder)
    headings = re.findall(r"^### (\d+)\. (.+)$", speeches, flags=re.M)
    assert [int(n) for n, _ in headings] == list(range(1, len(turns) + 1))
    assert headings[0][1] == "Proposition" and headings[1][1] == "Opposition"
    at = 0
    for turn in turns:  # each speech's detail line and text, in the transcript's order
        detail = f"*{turn['model']} · step: "
        at = speeches.index(detail, at)
        said = str(turn["text"]).strip()[:40] if turn.get("data") is None else "- "
        at = speeches.index(said, at)  # a structured reply: its fields, one a line
    assert "round 1" in speeches and "round 3" in speeches
    # A judge's structured reply reads as its fields, not as JSON.
    assert '{"' not in speeches and "- Reasoning: " in speeches
    # `moot history show` still shows the brief alone.
    shown = cli("history", "show", "last", home=tmp_path)
    assert "Balanced Assessment" in shown.stdout and "Every speech" not in shown.stdout


def test_show_full_prints_every_speech_after_the_brief(tmp_path: Path, cli: Cli) -> None:
    folder = _run(cli, tmp_path, "cats are better than dogs")
    hidden = "a speech nobody reads in the brief"
    data = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    data["turns"][-2]["text"] = hidden
    (folder / "transcript.json").write_text(json.dumps(data), encoding="utf-8")
    plain = cli("history", "show", "last", home=tmp_path)
    full = cli("history", "show", "last", "--full", home=tmp_path)
    assert plain.returncode == 0 and full.returncode == 0, full.stderr
    assert hidden not in plain.stdout
    assert hidden in full.stdout and "Every speech" in full.stdout
    assert full.stdout.index("Balanced Assessment") < full.stdout.index("Every speech")
    assert full.stdout.count("step: ") == len(data["turns"])


def test_an_old_debate_shows_and_exports_every_speech(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "old"
    shutil.copytree(OLD / "oxford" / "finished", folder)
    turns = _turns(folder)
    full = cli("history", "show", str(folder), "--full", home=tmp_path)
    assert full.returncode == 0, full.stderr
    assert full.stdout.count("step: ") == len(turns)
    page = cli("history", "export", str(folder), "--html", home=tmp_path)
    assert page.returncode == 0, page.stderr
    assert page.stdout.count('<section class="speech"') == len(turns)


def test_the_html_export_is_one_escaped_self_contained_page(tmp_path: Path, cli: Cli) -> None:
    folder = _run(cli, tmp_path, "cats are better than dogs")
    data = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    data["turns"][0]["text"] = 'Cats win. <script>alert("x")</script> <img src=x onerror=y>'
    (folder / "transcript.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "debate.html"
    proc = cli("history", "export", "last", "--html", "-o", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and '<html lang="en">' in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "<script" not in page and "<img" not in page and "onerror=y>" not in page
    # Nothing from outside: no link, no URL, no outside stylesheet, script or font.
    assert not re.search(r"<link|<script|@import|url\(|https?://|<[^>]*\bsrc=", page, flags=re.I)
    assert page.count('<section class="speech"') == len(data["turns"])
    assert "Balanced Assessment" in page
    again = cli("history", "export", "last", "--html", "-o", str(out), home=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr
    assert "Traceback" not in again.stderr and len(again.stderr.strip().splitlines()) == 2


def test_a_chinese_debate_exports_in_chinese(tmp_path: Path, cli: Cli) -> None:
    _run(cli, tmp_path, "本院认为猫比狗好", "--lang", "zh")
    page = cli("history", "export", "last", "--html", home=tmp_path)
    assert page.returncode == 0, page.stderr
    assert '<html lang="zh">' in page.stdout and "<h2>全部发言</h2>" in page.stdout
    assert "<h3>1. 正方</h3>" in page.stdout and "环节：" in page.stdout
    assert "Every speech" not in page.stdout and "step: " not in page.stdout
    markdown = cli("history", "export", "last", home=tmp_path)
    assert "## 全部发言" in markdown.stdout and "第 1 轮" in markdown.stdout


@pytest.mark.parametrize("where", ["missing/debate.html"])
def test_an_export_to_a_folder_that_is_not_there_is_one_line(
    tmp_path: Path, cli: Cli, where: str
) -> None:
    _run(cli, tmp_path, "cats are better than dogs")
    proc = cli("history", "export", "last", "-o", str(tmp_path / where), home=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: could not write")
    assert "Traceback" not in proc.stderr
