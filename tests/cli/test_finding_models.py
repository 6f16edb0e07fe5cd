"""Finding a model and naming it: `moot models list --installed`, the list at a narrow
terminal, a mistyped name answered with the closest one, and a word before a debate whose
model the catalog says was not made for its language. Through the real command line, in a
private moot home, with nothing installed but what a test lays down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import moot
from conftest import Cli
from gguf_samples import write_gguf
from moot.events import Event, Notice
from moot.models import catalog, integrity
from moot.models.catalog import HfSource
from store_layouts import ollama_model

MOTION = "Cities should ban cars"
CHINESE = "本院认为城市应该禁止汽车"
LONG = "my-own-model-with-a-name-far-longer-than-any-column-could-hold"


@pytest.fixture(autouse=True)
def private(moot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private moot home, hub cache and HOME (where Ollama's store would be)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for var in ("HF_HUB_CACHE", "OLLAMA_MODELS", "LLAMA_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


def _added(cli: Cli, name: str, path: Path) -> None:
    added = cli("models", "add", name, str(write_gguf(path, arch="qwen2")))
    assert added.returncode == 0, added.stderr


def _installed(model_id: str, tmp_path: Path) -> Path:
    """A small stand-in for catalog model MODEL_ID, in the hub cache at its pinned commit with
    the stamp a verified pull leaves."""
    card = catalog.get_card(model_id)
    (source,) = card.sources
    assert isinstance(source, HfSource)
    hub = tmp_path / "hf-home" / "hub" / f"models--{source.repo.replace('/', '--')}"
    path = write_gguf(hub / "snapshots" / source.revision / source.files[0], arch="qwen2")
    integrity.write_stamp(path, card.sha256[0])
    return path


# -- moot models list --installed ------------------------------------------------------------


def test_list_installed_shows_only_the_models_that_can_debate_now(cli: Cli, tmp_path: Path) -> None:
    nothing = cli("models", "list", "--installed", env={"COLUMNS": "200"})
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == (
        "no model here can debate yet; `moot models pull smollm2-135m` fetches the default\n"
    )
    assert json.loads(cli("models", "list", "--installed", "--json").stdout)["models"] == []

    _installed("qwen2.5-0.5b", tmp_path)
    _added(cli, "mine", tmp_path / "mine.gguf")
    _added(cli, "gone", tmp_path / "gone.gguf")
    (tmp_path / "gone.gguf").unlink()  # registered, its file gone: it cannot debate
    ollama_model(tmp_path / "home" / ".ollama" / "models", "talker", data=b"not a model")
    listed = cli("models", "list", "--installed", env={"COLUMNS": "200"})
    assert listed.returncode == 0, listed.stderr
    shown = [ln.split()[1] for ln in listed.stdout.splitlines() if ln.startswith("│")]
    assert shown == ["qwen2.5-0.5b", "mine"], listed.stdout
    rows = json.loads(cli("models", "list", "--installed", "--json").stdout)["models"]
    assert [r["id"] for r in rows] == ["qwen2.5-0.5b", "mine"]
    assert all(r["installed"] and r["usable"] for r in rows)
    # Without it, the catalog and the models that cannot debate are listed as before.
    every = {r["id"] for r in json.loads(cli("models", "list", "--json").stdout)["models"]}
    assert {"smollm2-135m", "gone", "ollama:talker:latest", "mine"} <= every
    assert [e.id for e in moot.models.list(installed=True)] == ["qwen2.5-0.5b", "mine"]


# -- the list at 80 columns and at 200 ------------------------------------------------------

HEADERS = ("status", "where", "size")


def _ids_whole(shown: str, ids: list[str]) -> None:
    """Each of IDS whole on one line of SHOWN, at its start (after the table's edge)."""
    for model_id in ids:
        assert any(ln.lstrip(" │").startswith(f"{model_id} ") or ln.strip() == model_id
                   for ln in shown.splitlines()), (model_id, shown)  # fmt: skip


def test_the_list_at_80_columns_keeps_every_header_and_every_id_whole(
    cli: Cli, tmp_path: Path
) -> None:
    catalog_ids = [r["id"] for r in json.loads(cli("models", "list", "--json").stdout)["models"]]
    listed = cli("models", "list", env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert all(len(ln) <= 80 for ln in lines), listed.stdout
    assert "…" not in listed.stdout  # nothing is cut short
    header = next(ln for ln in lines if " status " in ln)
    assert header.split() == ["id", "status", "where", "size", "model"], header
    _ids_whole(listed.stdout, catalog_ids)
    # What each model is stays in the table: name, quantisation, context, licence.
    assert "SmolLM2-135M-Instruct" in listed.stdout and "apache-2.0" in listed.stdout
    assert "8,192 ctx" in listed.stdout and "thinks: switchable" in listed.stdout


@pytest.mark.parametrize("columns", [80, 200])
def test_an_id_too_long_for_a_column_beside_the_others_stays_whole(
    cli: Cli, tmp_path: Path, columns: int
) -> None:
    _added(cli, LONG, tmp_path / "long.gguf")
    ollama_model(tmp_path / "home" / ".ollama" / "models", "x" * 50, namespace="some-org")
    ids = [r["id"] for r in json.loads(cli("models", "list", "--json").stdout)["models"]]
    assert max(len(i) for i in ids) > 70  # no table at 80 columns has room beside it
    listed = cli("models", "list", env={"COLUMNS": str(columns)})
    assert listed.returncode == 0, listed.stderr
    assert "…" not in listed.stdout
    assert all(len(ln) <= columns for ln in listed.stdout.splitlines()), listed.stdout
    _ids_whole(listed.stdout, ids)
    # What each model is, and where, is still said: below its id at 80, in its row at 200.
    for said in ("registered", "Ollama", "not installed", "apache-2.0", "8,192"):
        assert said in listed.stdout, said
    if columns == 200:
        assert any(f" {LONG} " in ln and "registered" in ln for ln in listed.stdout.splitlines())


def test_the_list_at_200_columns_shows_a_column_each(cli: Cli, tmp_path: Path) -> None:
    _added(cli, LONG, tmp_path / "long.gguf")
    listed = cli("models", "list", env={"COLUMNS": "200"})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    header = next(ln for ln in lines if " status " in ln)
    columns = ["id", "status", "where", "size", "arch", "quant", "context", "thinks", "licence"]
    assert [w for w in header.split() if w != "┃"] == [*columns, "name"], header
    assert "…" not in listed.stdout and all(len(ln) <= 200 for ln in lines)
    assert any(f" {LONG} " in ln for ln in lines), listed.stdout
    assert any(" smollm2-135m (default) " in ln for ln in lines)


# -- did you mean … ? -------------------------------------------------------------------------

DID_YOU_MEAN = "hint: did you mean {}? "


@pytest.mark.parametrize(
    ("args", "near"),
    [
        (["models", "info", "smollm2-135"], "smollm2-135m"),
        (["models", "verify", "gemma3-27m"], "gemma3-270m"),
        (["models", "rm", "qwen3-8bb", "--yes"], "qwen3-8b"),
        (["models", "pull", "Qwen3-8B"], "qwen3-8b"),
        (["run", MOTION, "--dry-run", "--no-save", "--model", "smollm-135m"], "smollm2-135m"),
        (["run", MOTION, "--dry-run", "--no-save", "--role", "judge=qwen2.5-05b"], "qwen2.5-0.5b"),
        (
            ["tournament", "--model", "gemma3-27m", "--model", "smollm2-135m", "--dry-run"],
            "gemma3-270m",
        ),
    ],  # fmt: skip
)
def test_a_mistyped_model_is_answered_with_the_closest_name(
    cli: Cli, tmp_path: Path, args: list[str], near: str
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text(MOTION + "\n")
    extra = ["--motions", str(motions)] if args[0] == "tournament" else []
    refused = cli(*args, *extra)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith("error: unknown model "), refused.stderr
    assert DID_YOU_MEAN.format(near) in refused.stderr, refused.stderr
    assert "moot models list" in refused.stderr  # the hint it had is kept after it


def test_the_closest_name_may_be_a_registered_one_or_another_tools(
    cli: Cli, tmp_path: Path, private: Path
) -> None:
    _added(cli, "my-debater", tmp_path / "mine.gguf")
    ollama_model(private / ".ollama" / "models", "qwen3", "8b", data=write_gguf(
        tmp_path / "q.gguf", arch="qwen3").read_bytes())  # fmt: skip
    mine = cli("run", MOTION, "--dry-run", "--no-save", "--model", "my-debatr")
    assert DID_YOU_MEAN.format("my-debater") in mine.stderr, mine.stderr
    typed = cli("models", "info", "qwen3:8b")  # the store's prefix left out
    assert DID_YOU_MEAN.format("ollama:qwen3:8b") in typed.stderr, typed.stderr
    tag = cli("models", "info", "ollama:qwen3:8bb")  # in the store, a tag mistyped
    assert tag.returncode == 2 and "is not in Ollama's store" in tag.stderr
    assert DID_YOU_MEAN.format("ollama:qwen3:8b") in tag.stderr, tag.stderr


def test_no_name_is_offered_when_none_is_close(cli: Cli) -> None:
    refused = cli("models", "info", "nosuch")
    assert refused.returncode == 2
    assert refused.stderr == (
        "error: unknown model 'nosuch'\nhint: `moot models list` shows the models moot "
        "knows; a .gguf path or hf:OWNER/REPO/FILE.gguf works too\n"
    )


def test_a_chinese_debate_offers_the_closest_name_in_chinese(cli: Cli) -> None:
    refused = cli("run", CHINESE, "--dry-run", "--no-save", "--model", "smollm-135m")
    assert refused.returncode == 2
    assert refused.stderr == (
        "错误： 未知模型 'smollm-135m'\n提示： 是不是要用 smollm2-135m？`moot models list` "
        "列出 moot 知道的模型；也可以用 .gguf 路径或 hf:OWNER/REPO/FILE.gguf\n"
    ), refused.stderr


# -- a model not made for the debate's language ---------------------------------------------

SMOLLM_NOTICE = "smollm2-135m 并非为中文辩论打造（目录中它的语言：英文）；{} 支持中文"


def _notices(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if "并非为中文辩论打造" in ln]


def test_a_chinese_motion_on_an_english_model_is_told_before_the_debate(cli: Cli) -> None:
    done = cli("run", CHINESE, "--dry-run", "--no-save", env={"COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    notice = SMOLLM_NOTICE.format("gemma3-270m")  # the smallest that speaks it
    assert _notices(done.stdout) == [notice], done.stdout
    first_turn = done.stdout.index("第1轮")
    assert done.stdout.index(notice) < first_turn  # before the debate, which goes on
    quiet = cli("run", CHINESE, "--dry-run", "--no-save", "--quiet", env={"COLUMNS": "400"})
    assert _notices(quiet.stdout) == [notice], quiet.stdout


def test_an_installed_model_that_speaks_it_is_the_one_named(cli: Cli, tmp_path: Path) -> None:
    _installed("qwen2.5-0.5b", tmp_path)
    done = cli("run", CHINESE, "--dry-run", "--no-save", env={"COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    assert _notices(done.stdout) == [SMOLLM_NOTICE.format("qwen2.5-0.5b")]
    # On a model made for Chinese, or one the catalog does not hold, nothing is said.
    own = str(write_gguf(tmp_path / "own.gguf", arch="qwen2"))
    for model in ("qwen2.5-0.5b", own):
        quiet = cli("run", CHINESE, "--dry-run", "--no-save", "--model", model)
        assert quiet.returncode == 0 and not _notices(quiet.stdout), quiet.stdout + quiet.stderr


def test_an_english_motion_on_the_default_model_is_told_nothing(cli: Cli) -> None:
    done = cli("run", MOTION, "--dry-run", "--no-save", env={"COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    assert "not made for" not in done.stdout


def test_the_notice_is_an_event_of_the_python_api(moot_home: Path) -> None:
    events: list[Event] = []
    moot.debate(CHINESE, run={"dry_run": True}, save=False, on_event=events.append)
    notices = [e.message for e in events if isinstance(e, Notice)]
    said = [n for n in notices if "并非为中文辩论打造" in n]
    assert said == [SMOLLM_NOTICE.format("gemma3-270m")], notices
    english: list[Event] = []
    moot.debate(CHINESE, run={"dry_run": True}, save=False, lang="en", on_event=english.append)
    assert not any(isinstance(e, Notice) and "not made for" in e.message for e in english)
