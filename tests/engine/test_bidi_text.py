"""Bidirectional controls (embeddings, overrides, isolates, the marks LRM, RLM and ALM) in a
motion, a model's reply, a model id or a saved debate reach the terminal escaped, as the other
control characters do: raw, they reorder the text the user reads around them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from conftest import Cli
from store_layouts import lmstudio_model

# Every bidirectional control Unicode defines outside the letters themselves.
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# What a reader sees: "cars ban" where "nab srac" is written, and an isolate left open.
HOSTILE = "tea \u202enab srac\u202c and \u2067coffee"


def assert_escaped(output: str) -> None:
    for char in BIDI:
        assert char not in output, f"U+{ord(char):04X} reached the terminal"
    assert "\\u202enab srac\\u202c" in output and "\\u2067coffee" in output


def test_printable_escapes_each_bidirectional_control() -> None:
    from moot.render import printable

    shown = printable(f"a{BIDI}b")
    assert shown == "a" + "".join(f"\\u{ord(c):04x}" for c in BIDI) + "b"
    assert printable("שלום עולם, مرحبا") == "שלום עולם, مرحبا"  # right-to-left text stays


def test_the_live_view_shows_a_motion_and_a_reply_escaped(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    done = cli(
        "run", HOSTILE, "--dry-run", "--max-rounds", "3", "--out", str(out),
        home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_escaped(done.stdout + done.stderr)
    saved = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    assert saved["motion"].endswith(HOSTILE)  # the file keeps the exact text


def test_the_live_view_shows_a_streamed_reply_escaped() -> None:
    from moot.events import Token
    from moot.render import LiveView

    screen = io.StringIO()
    view = LiveView(Console(file=screen, width=80, color_system=None))
    view(Token("proposition", HOSTILE))
    assert_escaped(screen.getvalue())


def test_history_list_and_show_show_a_saved_debate_escaped(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    ran = cli("run", HOSTILE, "--dry-run", "--max-rounds", "3", "--quiet", home=home)
    assert ran.returncode == 0, ran.stderr
    listed = cli("history", "list", home=home, env={"COLUMNS": "400"})
    assert listed.returncode == 0, listed.stderr
    assert_escaped(listed.stdout)
    (folder,) = (home / "debates").iterdir()
    shown = cli("history", "show", folder.name, home=home)
    assert shown.returncode == 0, shown.stderr
    assert_escaped(shown.stdout)
    (folder / "debate.md").unlink()
    (folder / "transcript.json").unlink()  # shown from its journal now, a reply's text too
    lines = (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    turn = json.loads(lines[1])
    lines[1] = json.dumps({**turn, "text": HOSTILE})
    (folder / "journal.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    journal = cli("history", "show", folder.name, home=home)
    assert journal.returncode == 0, journal.stderr
    assert_escaped(journal.stdout)


def test_models_list_shows_a_model_id_escaped(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    lmstudio_model(home / ".lmstudio" / "models", "\u202enab srac\u202c", "\u2067coffee", "m.gguf")
    listed = cli("models", "list", home=home, env={"COLUMNS": "400"})
    assert listed.returncode == 0, listed.stderr
    assert_escaped(listed.stdout)


def test_an_error_shows_a_path_escaped(tmp_path: Path, cli: Cli) -> None:
    missing = tmp_path / HOSTILE / "transcript.json"
    done = cli("replay", str(missing), home=tmp_path / "home")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ")
    assert_escaped(done.stderr)


def test_the_live_view_shows_a_model_id_escaped(tmp_path: Path, cli: Cli) -> None:
    from gguf_samples import write_gguf

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    models = tmp_path / "models"
    hostile = write_gguf(models / "x\u202enab srac\u202c.gguf", chat_template=template)
    plain = write_gguf(models / "\u2067coffee.gguf", chat_template=template)
    done = cli(
        "run", "Is tea better than coffee?", "--format", "adversarial", "--model", str(hostile),
        "--model", str(plain), "--rounds", "1", "--dry-run", "--yes", "--no-save",
        home=tmp_path / "home", env={"COLUMNS": "400"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_escaped(done.stdout + done.stderr)
