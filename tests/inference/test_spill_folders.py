"""A process's spill folder outlives it only until the next one loads a model: a process
killed mid-debate (no chance to remove the folder of its speakers' KV snapshots) lets go of
the folder's lock as it dies, and the next pool to load a model here removes the folder. A
live process's folder is never taken, whatever its pid."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from moot import config
from moot.inference import pool as pools
from moot.inference.protocol import ResolvedModel
from moot.inference.spill import LOCK, sweep
from test_one_at_a_time import resolver

# A process that spills as a pool does (into its own held folder in moot's cache), says
# where, and waits to be killed.
SPILLER = """
import time
from moot import config
from moot.inference.spill import SpillFolder
folder = SpillFolder(config.cache_dir() / "kv")
(folder.path / "proposition.kv").write_bytes(b"k" * 4096)
print(folder.path, flush=True)
time.sleep(300)
"""


def spiller(home: Path) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "MOOT_HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", SPILLER], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def stand_in(resolved: ResolvedModel, **options: Any) -> object:
    """A loaded model, as far as the pool can tell: nothing of llama.cpp is needed here."""
    return object()


def test_a_killed_processs_spill_folder_goes_with_the_next_load_and_a_live_ones_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("MOOT_HOME", str(home))
    monkeypatch.setattr(pools, "LlamaCppModel", stand_in)
    root = config.cache_dir() / "kv"
    killed, gone = spiller(home)
    alive, kept = spiller(home)
    try:
        assert gone.parent == kept.parent == root and gone != kept
        assert (gone / "proposition.kv").stat().st_size == 4096
        assert sweep(root) == []  # both processes alive: neither folder is taken
        old = root / "moot-kv-before-locks"  # a folder spilled to before folders were held
        old.mkdir()
        (old / "x.kv").write_bytes(b"k")
        killed.kill()  # SIGKILL: it removes nothing, its lock is let go by the kernel
        killed.wait()
        assert gone.is_dir() and Path(f"{gone}{LOCK}").exists()  # left behind

        pool = pools.ModelPool(resolve=resolver(tmp_path))
        assert gone.is_dir()  # nothing is touched before a model loads
        pool.get("a")
        assert not gone.exists() and not Path(f"{gone}{LOCK}").exists()
        assert not old.exists()
        assert (kept / "proposition.kv").stat().st_size == 4096  # its process is alive
        # This process's own folder is held as long as the pool: a sweep here keeps it.
        mine = pool._spill_to()
        assert mine.is_dir() and mine.parent == root and sweep(root) == []
        pool.close()
        assert not mine.exists() and not Path(f"{mine}{LOCK}").exists()
        assert kept.is_dir()
    finally:
        alive.kill()
        alive.wait()
    assert sweep(root) == [kept]  # killed in its turn: nobody holds it now
    assert list(root.iterdir()) == []
