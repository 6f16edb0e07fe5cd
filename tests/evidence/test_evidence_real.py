"""A real tiny model's debate given documents: the real CLI, the document set, a ledger."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.real

# Where the real models are installed (as the suite's own conftest finds them).
REAL_HOME = Path(
    os.environ.get("MOOT_HOME")
    or Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "moot"
)


def test_a_real_debate_given_documents_records_its_ledger(
    cli: Any, documents: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    proc = cli.subprocess(
        "run", "Northwind Logistics should hedge its diesel purchases",
        "--format", "decision", "--positions", "hedge", "--positions", "wait",
        "--rounds", "0", "--yes", "--max-tokens", "48", "--seed", "3", "--call-timeout", "1800",
        "--evidence", str(documents), "--out", str(out), "--quiet",
        env={"MOOT_HOME": str(REAL_HOME)}, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    record = saved["evidence"]
    assert {"board-pack.pdf", "review.docx", "notes/memo.md"} <= set(record["files"])
    ledgers = [t["evidence"] for t in saved["turns"] if "evidence" in t]
    assert ledgers and any(e["shown"] for e in ledgers)
    for ledger in ledgers:
        assert set(ledger["shown"]) <= set(record["passages"])
        for c in ledger["citations"]:
            assert c["check"] in ("ok", "unknown_id", "quote_not_found")
            assert (c["id"] is None) == (c["check"] == "unknown_id")
    # Nothing of the documents is kept but the passages used (no --keep-sources): no cache.
    assert not (out / "evidence").exists()
    seats = record["summary"]["seats"]
    assert sum(t["cited"] for t in seats.values()) == sum(len(e["citations"]) for e in ledgers)
    assert "## Sources" in (out / "decision.md").read_text(encoding="utf-8")
