"""`moot models …` through the real command line, in a private moot home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli, real_model_path
from gguf_samples import write_gguf
from moot.models import catalog, integrity
from moot.models.catalog import HfSource


@pytest.fixture(autouse=True)
def environment(moot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command runs in a private moot home, with a private hub cache."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps tables at 80 columns when not on a terminal


@pytest.fixture
def home(moot_home: Path) -> Path:
    """A private moot home where the installed SmolLM2 is linked in (not copied)."""
    real = real_model_path("smollm2-135m")
    link = moot_home / "models" / "smollm2-135m" / real.name
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    return moot_home


@pytest.mark.real
@pytest.mark.usefixtures("home")
def test_list_verify_info(cli: Cli) -> None:
    listed = cli("models", "list")
    assert listed.returncode == 0, listed.stderr
    assert "smollm2-135m (default)" in listed.stdout and "not verified yet" in listed.stdout

    verified = cli("models", "verify")
    assert verified.returncode == 0, verified.stderr
    assert "smollm2-135m" in verified.stdout and "ok" in verified.stdout

    rows = json.loads(cli("models", "list", "--json").stdout)["models"]
    smol = next(r for r in rows if r["id"] == "smollm2-135m")
    assert smol["installed"] and smol["verified"] is True and smol["is_default"]
    gemma = next(r for r in rows if r["id"] == "gemma3-270m")
    assert not gemma["installed"]  # not linked into this home
    assert "verified" in cli("models", "list").stdout

    info = cli("models", "info", "smollm2-135m")
    assert info.returncode == 0, info.stderr
    assert "llama" in info.stdout and "present" in info.stdout
    details = json.loads(cli("models", "info", "smollm2-135m", "--json").stdout)
    assert details["architecture"] == "llama" and details["chat_template"] is True
    assert details["chat_format"] == "template" and details["quantisation"] == "Q4_1"


@pytest.mark.real
@pytest.mark.usefixtures("home")
def test_pull_of_an_installed_model_needs_no_network(cli: Cli) -> None:
    pulled = cli("models", "pull", "smollm2-135m", "--endpoint", "http://127.0.0.1:9")
    assert pulled.returncode == 0, pulled.stderr
    assert "ready: smollm2-135m" in pulled.stdout


def test_missing_model_exits_2_with_the_pull_command(cli: Cli) -> None:
    missing = cli("models", "info", "qwen2.5-0.5b")
    assert missing.returncode == 2
    assert "not installed" in missing.stderr
    assert "moot models pull qwen2.5-0.5b" in missing.stderr
    unknown = cli("models", "info", "no-such-model")
    assert unknown.returncode == 2 and "moot models list" in unknown.stderr


@pytest.mark.real
def test_rm_deletes_the_home_copy_only(home: Path, cli: Cli) -> None:
    real = real_model_path("smollm2-135m")
    removed = cli("models", "rm", "smollm2-135m", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert "deleted" in removed.stdout
    assert real.is_file()  # the link went, the installed model stays
    assert not (home / "models" / "smollm2-135m").exists()
    rows = json.loads(cli("models", "list", "--json").stdout)["models"]
    assert not next(r for r in rows if r["id"] == "smollm2-135m")["installed"]


def test_add_a_local_file(tmp_path: Path, cli: Cli) -> None:
    path = write_gguf(tmp_path / "mine.gguf", arch="llama")  # no template, ambiguous arch
    refused = cli("models", "add", "mine", str(path))
    assert refused.returncode == 2  # the file needs a --chat-format: bad input
    assert "--chat-format" in refused.stderr
    added = cli("models", "add", "mine", str(path), "--chat-format", "chatml")
    assert added.returncode == 0, added.stderr
    details = json.loads(cli("models", "info", "mine", "--json").stdout)
    assert details["chat_format"] == "chatml" and details["path"] == str(path)
    assert cli("models", "add", "smollm2-135m", str(path)).returncode == 2  # a catalog id
    forgot = cli("models", "rm", "mine", "--yes")
    assert forgot.returncode == 0 and "forgot mine" in forgot.stdout
    assert path.is_file()


def test_list_says_what_each_header_says(tmp_path: Path, cli: Cli) -> None:
    path = write_gguf(tmp_path / "mine.gguf", arch="qwen2", file_type=7, context_length=32768)
    assert cli("models", "add", "mine", str(path)).returncode == 0
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "hf-home" / "hub" / "models--acme--x-GGUF" / "snapshots" / commit
    write_gguf(snapshot / "x-q4.gguf", arch="gemma3")
    write_gguf(snapshot / "mmproj-x-f16.gguf", arch="clip")  # a vision model's projector
    write_gguf(snapshot / "embed.gguf", arch="nomic-bert")
    # As huggingface_hub leaves a download: `main` is the commit refs/main names.
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(commit, encoding="utf-8")
    rows = {r["id"]: r for r in json.loads(cli("models", "list", "--json").stdout)["models"]}
    mine = rows["mine"]
    assert (mine["architecture"], mine["quantisation"], mine["context_length"]) == (
        "qwen2",
        "Q8_0",
        32768,
    )
    assert mine["loadable"] is True and mine["usable"] and mine["path"] == str(path)
    assert rows["hf:acme/x-GGUF/x-q4.gguf"]["architecture"] == "gemma3"
    assert "hf:acme/x-GGUF/mmproj-x-f16.gguf" not in rows
    embed = rows["hf:acme/x-GGUF/embed.gguf"]
    assert not embed["usable"] and "embedding model" in embed["reason"]
    table = cli("models", "list").stdout
    line = next(ln for ln in table.splitlines() if "mine" in ln)
    assert "registered" in line and "qwen2" in line and "Q8_0" in line and "32,768" in line
    refused = cli("models", "info", "hf:acme/x-GGUF/mmproj-x-f16.gguf")
    assert refused.returncode == 2 and "vision projector" in refused.stderr


def test_store_references_are_named_in_the_help(cli: Cli) -> None:
    shown = cli("models", "info", "--help")
    assert shown.returncode == 0
    for form in ("ollama:NAME[:TAG]", "lmstudio:PUBLISHER/MODEL[/FILE]", "llamacpp:FILE"):
        assert form in shown.stdout, shown.stdout


def _row(table: str, model_id: str) -> str:
    return next(ln for ln in table.splitlines() if f" {model_id} " in ln)


def test_list_says_which_models_think(cli: Cli) -> None:
    listed = cli("models", "list")
    assert listed.returncode == 0, listed.stderr
    header = next(ln for ln in listed.stdout.splitlines() if " licence " in ln)
    assert " thinks " in header
    assert "switchable" in _row(listed.stdout, "qwen3-0.6b")
    assert "always" in _row(listed.stdout, "deepseek-r1-1.5b")
    gemma = _row(listed.stdout, "gemma3-1b")
    assert "switchable" not in gemma and "always" not in gemma and " no " in gemma
    # Not installed: the catalog's quantisation and context stand in for the header's.
    assert "Q8_0" in _row(listed.stdout, "qwen3-1.7b") and "32,768" in gemma
    rows = {r["id"]: r for r in json.loads(cli("models", "list", "--json").stdout)["models"]}
    assert rows["qwen3-8b"]["thinks"] == "switchable" and rows["llama3.2-3b"]["thinks"] == "no"
    assert rows["deepseek-r1-1.5b"]["thinks"] == "always"
    assert not rows["qwen3-8b"]["installed"] and rows["qwen3-8b"]["licence"] == "apache-2.0"


def _installed(model_id: str, hub: Path, **header: object) -> Path:
    """A small stand-in for MODEL_ID's file, laid in the hub cache at its pinned commit with
    the stamp a pull that verified it leaves (its weights are not needed to read its card)."""
    card = catalog.get_card(model_id)
    (source,) = card.sources
    assert isinstance(source, HfSource)
    folder = hub / f"models--{source.repo.replace('/', '--')}" / "snapshots" / source.revision
    path = write_gguf(folder / source.files[0], **header)
    integrity.write_stamp(path, card.sha256[0])
    return path


def test_info_says_whether_a_model_thinks(tmp_path: Path, cli: Cli) -> None:
    _installed("qwen3-0.6b", tmp_path / "hf-home" / "hub", arch="qwen3", file_type=7)
    shown = cli("models", "info", "qwen3-0.6b")
    assert shown.returncode == 0, shown.stderr
    line = next(ln for ln in shown.stdout.splitlines() if ln.split()[:1] == ["thinks"])
    assert line.split() == ["thinks", "switchable"]
    details = json.loads(cli("models", "info", "qwen3-0.6b", "--json").stdout)
    assert details["thinks"] == "switchable" and details["licence"] == "apache-2.0"
    assert details["architecture"] == "qwen3" and details["languages"] == ["en", "zh"]
    assert "switchable" in _row(cli("models", "list").stdout, "qwen3-0.6b")

    # A file of the user's own is not in the catalog: whether it thinks is not known.
    mine = write_gguf(tmp_path / "mine.gguf", arch="qwen3")
    assert cli("models", "add", "mine", str(mine)).returncode == 0
    assert json.loads(cli("models", "info", "mine", "--json").stdout)["thinks"] is None
    assert "unknown (not a catalog model)" in cli("models", "info", "mine").stdout
    rows = {r["id"]: r for r in json.loads(cli("models", "list", "--json").stdout)["models"]}
    assert rows["mine"]["thinks"] is None and rows["qwen3-0.6b"]["installed"]


def test_verify_reports_every_registered_model_whose_file_is_gone_or_no_file(
    tmp_path: Path, moot_home: Path, cli: Cli
) -> None:
    """Verifying everything names every registered model: one whose file is gone, or is
    no file any more, fails on a line of its own that says how to fix it; the others are
    still checked."""
    for name in ("kept", "vic", "dir"):
        path = write_gguf(tmp_path / f"{name}.gguf", arch="qwen2")
        assert cli("models", "add", name, str(path), home=moot_home).returncode == 0
    (tmp_path / "vic.gguf").unlink()
    (tmp_path / "dir.gguf").unlink()
    (tmp_path / "dir.gguf").mkdir()
    proc = cli("models", "verify", home=moot_home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr
    assert "no models installed" not in proc.stdout
    assert "ok" in _row(proc.stdout, "kept")
    lines = proc.stderr.strip().splitlines()
    assert [ln.split()[:2] for ln in lines[:-2]] == [["failed:", "dir:"], ["failed:", "vic:"]]
    vic, folder = lines[1], lines[0]
    assert "is gone" in vic and "moot models add vic" in vic and "moot models rm vic" in vic
    assert "is a folder" in folder and "moot models add dir" in folder
    assert lines[-2].startswith("error: 2 model(s) failed verification: ")
    assert lines[-1].startswith("hint:")
    # The list says so too: a registered model whose file is gone cannot debate.
    listed = json.loads(cli("models", "list", "--json", home=moot_home).stdout)["models"]
    rows = {r["id"]: r for r in listed}
    assert not rows["vic"]["usable"] and "is gone" in rows["vic"]["reason"]
    assert "unusable" in _row(cli("models", "list", home=moot_home).stdout, "vic")
    # With the one whose file is gone left alone, it still fails.
    assert cli("models", "rm", "kept", "--yes", home=moot_home).returncode == 0
    assert cli("models", "rm", "dir", "--yes", home=moot_home).returncode == 0
    alone = cli("models", "verify", home=moot_home)
    assert alone.returncode == 1 and "vic" in alone.stderr
    assert "no models installed" not in alone.stdout
