"""The wheel carries the catalog and prompt packs; `import moot` stays light."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import real_model_path

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.insert(4, "--no-isolation")  # the backend is here: no need to fetch it
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [built] = out.glob("moot-*.whl")
    return built


def test_wheel_ships_catalog_and_every_prompt(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "moot/_data/catalog.toml" in names
    assert "moot/models/store.py" in names and "moot/models/gguf_check.py" in names
    assert "moot/py.typed" in names  # type checkers read the hints of an installed moot
    prompts = [
        p.relative_to(REPO / "prompts") for p in (REPO / "prompts").rglob("*") if p.is_file()
    ]
    assert prompts, "the repository has no prompt files"
    missing = [str(p) for p in prompts if f"moot/_data/prompts/{p.as_posix()}" not in names]
    assert not missing
    shipped = zipfile.ZipFile(wheel).read("moot/_data/catalog.toml")
    assert shipped == (REPO / "models" / "catalog.toml").read_bytes()


PROBE = """
import json, sys
import moot, moot.models.store, moot.models.catalog, moot.models.gguf_check
from moot.errors import ModelNotFoundError
heavy = ("llama_cpp", "huggingface_hub")
before = sorted(m for m in heavy if m in sys.modules)
moot.models.store.resolve("smollm2-135m")
try:
    moot.models.store.resolve("hf:acme/none-GGUF/none.gguf")  # looks in the hub cache, by path
except ModelNotFoundError:
    pass
after = sorted(m for m in heavy if m in sys.modules)
print(json.dumps({"import": before, "resolve": after}))
"""


@pytest.mark.real
def test_import_and_resolve_stay_light(moot_home: Path) -> None:
    # Start-up time matters: neither llama.cpp nor huggingface_hub at import, nor to
    # resolve a model installed from a wheel.
    real = real_model_path("smollm2-135m")
    link = moot_home / "models" / "smollm2-135m" / real.name
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == {"import": [], "resolve": []}
