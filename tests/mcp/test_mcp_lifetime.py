"""How long a debate started over MCP lives: it goes on when the client disconnects (over
HTTP: a session closed while the debate runs, another session finds it finished), and
when the server process itself is killed mid-debate, a later `moot mcp` lists it as
interrupted and resume_debate finishes it as the uninterrupted debate would have ended;
while it ran, another server listed it as running elsewhere and would not resume it."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from subprocess import Popen

import anyio
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import Cli
from mcp import ClientSession
from mcp_client import served
from test_mcp import MOTION, journal, no_traceback, turns_of


def _turns(home: Path, debate_id: str) -> int:
    path = home / "debates" / debate_id / "journal.jsonl"
    return len(turns_of(journal(home, debate_id))) if path.is_file() else 0


def _start(home: Path, cli: Cli, *, after: int) -> tuple[Popen[str], str]:
    """`moot mcp` started by hand and asked for a slow dry-run debate; the server and the
    debate's id, once AFTER turns are in its journal."""
    from mcp_types import LATEST_PROTOCOL_VERSION

    proc = cli.popen("mcp", "--pace", "0.05", home=home, stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "start_debate",
            "arguments": {"motion": MOTION, "dry_run": True, "seed": 7}}},
    ):  # fmt: skip
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
    debate_id = answers[1]["result"]["structuredContent"]["id"]
    deadline = time.monotonic() + 120
    while _turns(home, debate_id) < after and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the server ended before it was killed"
    return proc, debate_id


def test_a_debate_whose_server_was_killed_is_resumed_by_a_later_one(
    moot_home: Path, cli: Cli
) -> None:
    first, debate_id = _start(moot_home, cli, after=2)
    folder = moot_home / "debates" / debate_id

    async def main() -> tuple[int, list[str]]:
        try:
            async with served(moot_home) as other:  # a second client's server, meanwhile
                listed = (await other.ok("list_debates"))["debates"]
                assert [(d["id"], d["state"]) for d in listed] == [(debate_id, "running elsewhere")]
                refused = await other.call("resume_debate", id=debate_id)
                assert refused.error and "running in another moot mcp" in refused.text
                first.send_signal(signal.SIGKILL)  # no handler runs: the process is gone
                first.wait(timeout=30)
                kept = _turns(moot_home, debate_id)
                said = [t["text"] for t in turns_of(journal(moot_home, debate_id))]
                assert kept >= 2 and not (folder / "transcript.json").exists()
                listed = (await other.ok("list_debates"))["debates"]
                assert [(d["id"], d["state"]) for d in listed] == [(debate_id, "interrupted")]
                assert listed[0]["turns"] == kept
                resumed = await other.ok("resume_debate", id=debate_id)
                assert resumed["id"] == debate_id
                state = await other.until_over(debate_id, step=0.5)
                assert state["state"] == "finished", state
                assert state["turns"] > kept
                listed = (await other.ok("list_debates"))["debates"]
                assert listed[0]["state"] == "finished"
                return kept, said
        finally:
            first.kill()
            first.wait(timeout=30)

    kept, said_before = anyio.run(main)
    assert first.returncode == -signal.SIGKILL
    saved = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    # The turns said before the kill are kept verbatim, and the debate ends as it would have.
    assert [t["text"] for t in saved["turns"][:kept]] == said_before
    whole = cli("run", MOTION, "--dry-run", "--seed", "7", "-y", "--quiet", home=moot_home)
    assert whole.returncode == 0, whole.stderr
    last = sorted(p for p in (moot_home / "debates").iterdir() if p.name != debate_id)[-1]
    uninterrupted = json.loads((last / "transcript.json").read_text(encoding="utf-8"))
    assert [t["text"] for t in saved["turns"]] == [t["text"] for t in uninterrupted["turns"]]
    no_traceback(moot_home)


def test_a_debate_goes_on_when_an_http_client_disconnects(moot_home: Path, cli: Cli) -> None:
    proc = cli.popen("mcp", "--http", "--pace", "0.02", home=moot_home)
    try:
        assert proc.stdout is not None
        url, _, token = proc.stdout.readline().strip().removeprefix("moot mcp: ").partition("?")
        headers = {"Authorization": f"Bearer {token.removeprefix('token=')}"}

        async def session(work):  # type: ignore[no-untyped-def]
            async with create_mcp_http_client(headers=headers) as client:
                async with streamable_http_client(url, http_client=client) as (read, write):
                    async with ClientSession(read, write) as s:
                        await s.initialize()
                        return await work(s)

        async def start(s: ClientSession) -> str:
            called = await s.call_tool("start_debate", {"motion": MOTION, "dry_run": True})
            return (called.structured_content or {})["id"]

        async def follow(s: ClientSession) -> dict:
            for _ in range(600):
                called = await s.call_tool("wait_debate", {"id": debate_id, "seconds": 1})
                state = called.structured_content or {}
                if state["state"] not in ("queued", "running"):
                    return state
            raise AssertionError(state)

        debate_id = anyio.run(session, start)
        # The client has gone (its session closed) while the debate runs.
        assert not (moot_home / "debates" / debate_id / "transcript.json").exists()
        state = anyio.run(session, follow)  # another client, later
        assert state["state"] == "finished", state
        assert (moot_home / "debates" / debate_id / "transcript.json").is_file()
    finally:
        proc.send_signal(signal.SIGTERM)  # as a service manager ends it: as Ctrl-C does
        proc.wait(timeout=30)
    said = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 130 and "Traceback" not in said, said
