"""A debate over MCP on a real tiny model: started by the SDK's client, followed in short
waits with progress, read back with its verdict, saved as `moot run` saves one."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from conftest import real_model_path
from mcp_client import served

pytestmark = pytest.mark.real

MODEL = "smollm2-135m"


def test_a_challenge_debate_on_a_real_model_over_mcp(moot_home: Path) -> None:
    real = real_model_path(MODEL)
    link = moot_home / "models" / MODEL / real.name
    link.parent.mkdir(parents=True)
    link.symlink_to(real)

    async def main() -> tuple[str, dict, dict]:
        async with served(moot_home) as client:
            models = await client.ok("list_models")
            assert MODEL in [m["id"] for m in models["models"] if m["ready"]]
            started = await client.ok(
                "start_debate",
                motion="Should a small team rewrite its billing service in Rust?",
                format="challenge",
                model=MODEL,
                rounds=1,
                max_tokens=24,
                call_timeout_s=900,  # a loaded CPU: a judge's verdict is not cut off
                seed=11,
            )
            state = await client.until_over(started["id"], step=5.0)
            got = await client.ok("get_debate", id=started["id"])
            assert client.progress
            return started["id"], state, got

    debate_id, state, got = anyio.run(main)
    assert state["state"] == "finished", state
    assert state["last_speech"]["model"] == MODEL  # the model itself, not a stand-in
    result = got["outcome"]["result"]
    # The judge's verdict, or the failure the rulebook records in its place.
    assert result["verdict"] is not None or [f["role"] for f in result["failures"]] == ["judge"]
    assert "Rust" in got["markdown"] and got["document"]
    saved = json.loads((moot_home / "debates" / debate_id / "transcript.json").read_text())
    assert {t["model"] for t in saved["turns"]} == {MODEL}
    assert len(saved["turns"]) >= 2 and all(t["text"].strip() for t in saved["turns"])
