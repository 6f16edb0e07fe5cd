"""Reading, indexing, retrieval and checking open no connection and load no model library:
run in a fresh interpreter under an audit hook that records every connection and lookup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HOOK = r"""
import json, os, sys
seen = []
def hook(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.bind", "urllib.Request"):
        seen.append(f"{event}: {args[1] if event == 'socket.connect' else args[0]}")
sys.addaudithook(hook)
from pathlib import Path
from moot.evidence import open_library
folder, cache = Path(sys.argv[1]), Path(sys.argv[2])
library = open_library([folder], cache=cache)
again = open_library([folder], cache=cache)
found = again.search("diesel hedging 客流", budget=400)
checked = again.check('"approved a hedging programme" [board-pack.pdf p.2 ¶2]')
print(json.dumps({
    "seen": seen,
    "passages": len(library),
    "found": [p.id for p in found],
    "checked": [r.check.value for r in checked],
    "modules": sorted(m for m in ("llama_cpp", "huggingface_hub", "httpx", "markitdown")
                      if m in sys.modules),
}))
"""


def test_reading_indexing_and_retrieval_open_no_connection(documents: Path, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    proc = subprocess.run(
        [sys.executable, "-c", HOOK, str(documents), str(tmp_path / "cache")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == ""  # nothing said on the terminal: no warning, no progress bar
    report = json.loads(proc.stdout)
    assert report["seen"] == []
    assert report["modules"] == []
    assert report["passages"] > 20
    assert "board-pack.pdf p.2 ¶2" in report["found"]
    assert report["checked"] == ["ok"]
