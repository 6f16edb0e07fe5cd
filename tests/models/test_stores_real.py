"""Real debates on the real SmolLM2 file, found where Ollama and LM Studio would keep it: linked
into a private HOME laid out as each tool lays out its store, never copied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli, real_model_path
from moot.models.catalog import load_catalog
from store_layouts import lmstudio_model, ollama_model

pytestmark = pytest.mark.real

# The shortest real debate of every seat on the one model: a challenge of one round.
SHORT = ["--format", "challenge", "--rounds", "1", "--max-tokens", "48", "--seed", "7"]


@pytest.fixture
def layouts(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A HOME whose Ollama store and LM Studio folder hold SmolLM2 (linked), and the files."""
    home = tmp_path / "home"
    real = real_model_path("smollm2-135m")
    sha = load_catalog().cards["smollm2-135m"].expected_sha256(0)
    assert sha is not None
    blob = home / ".ollama" / "models" / "blobs" / f"sha256-{sha}"
    ollama_model(home / ".ollama" / "models", "smollm2", "135m", source=real)
    lmstudio = lmstudio_model(home / ".lmstudio" / "models", "HuggingFaceTB", "SmolLM2-GGUF",
                              real.name, source=real)  # fmt: skip
    return home, {"ollama:smollm2:135m": blob, "lmstudio:HuggingFaceTB/SmolLM2-GGUF": lmstudio}


@pytest.mark.parametrize("ref", ["ollama:smollm2:135m", "lmstudio:HuggingFaceTB/SmolLM2-GGUF"])
def test_a_real_debate_from_each_store(
    layouts: tuple[Path, dict[str, Path]], tmp_path: Path, cli: Cli, ref: str
) -> None:
    home, files = layouts
    real = real_model_path("smollm2-135m")
    before = (real.stat().st_size, real.stat().st_mtime_ns)
    out = tmp_path / "out"
    env = {"OLLAMA_MODELS": None, "LLAMA_CACHE": None, "XDG_CACHE_HOME": None,
           "HF_HOME": str(tmp_path / "hf")}  # fmt: skip
    listed = cli.subprocess("models", "list", "--json", home=home, env=env)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout)["models"] if r["id"] == ref)
    assert row["usable"] and row["architecture"] == "llama" and row["path"] == str(files[ref])
    proc = cli.subprocess("run", "should we rewrite the billing service in Rust?", "--model", ref,
                          "--out", str(out), *SHORT, home=home, env=env, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    assert {m["id"] for m in data["models"].values()} == {ref}
    # An Ollama blob is checked against the sha256 it is named by; an LM Studio file has none.
    named = files[ref].name.removeprefix("sha256-") if ref.startswith("ollama:") else None
    assert data["models"]["judge"]["sha256"] == named
    speeches = [t for t in data["turns"] if t["data"] is None]
    assert speeches and all(t["completion_tokens"] > 0 and t["text"] for t in speeches)
    assert (real.stat().st_size, real.stat().st_mtime_ns) == before  # used in place, untouched
