"""`moot mcp --http`: the SDK's streamable-HTTP client lists the tools and follows a dry-run
debate with the printed token (as a bearer token, or in the URL); a request without the
token, with a Host that is not the server, or with a page's Origin elsewhere gets 403."""

from __future__ import annotations

import http.client
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen
from urllib.parse import urlsplit

import anyio
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import Cli
from mcp import ClientSession
from test_mcp import TOOLS

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@pytest.fixture
def server(moot_home: Path, cli: Cli) -> Iterator[tuple[str, str]]:
    """`moot mcp --http`: the URL it printed (without its token), and the token."""
    proc: Popen[str] = cli.popen("mcp", "--http", "--pace", "0.001", home=moot_home)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("moot mcp: http://127.0.0.1:"), line
        url, _, token = line.removeprefix("moot mcp: ").partition("?token=")
        assert urlsplit(url).path == "/mcp" and len(token) >= 24
        yield url, token
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        proc.wait(timeout=30)
    said = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 130 and "Traceback" not in said, said


async def _session_tools(url: str, headers: dict[str, str]) -> tuple[set[str], dict]:
    """The tools listed, and a dry-run debate followed to its end, over HTTP."""
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = {t.name for t in (await session.list_tools()).tools}
                started = await session.call_tool(
                    "start_debate", {"motion": "cities should ban cars", "dry_run": True}
                )
                assert not started.is_error, started.content
                debate_id = (started.structured_content or {})["id"]
                told: list[float] = []

                async def heard(progress: float, total: float | None, message: str | None) -> None:
                    told.append(progress)

                for _ in range(300):
                    waited = await session.call_tool(
                        "wait_debate", {"id": debate_id, "seconds": 1}, progress_callback=heard
                    )
                    state = waited.structured_content or {}
                    if state.get("state") not in ("queued", "running"):
                        break
                assert told, "no progress notification over HTTP"
                return listed, state


def test_the_sdk_s_http_client_lists_the_tools_with_the_token(
    server: tuple[str, str], moot_home: Path
) -> None:
    url, token = server
    listed, state = anyio.run(_session_tools, url, {"Authorization": f"Bearer {token}"})
    assert listed == TOOLS
    assert state["state"] == "finished", state
    assert (moot_home / "debates" / state["id"] / "transcript.json").is_file()
    # The token kept in the URL, as printed, does as well.
    listed, _ = anyio.run(_session_tools, f"{url}?token={token}", {})
    assert listed == TOOLS


def _post(url: str, headers: dict[str, str]) -> int:
    """The status of an `initialize` POSTed to URL with HEADERS (Host included)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    body = json.dumps(INITIALIZE)
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    }
    try:
        conn.request("POST", parts.path + (f"?{parts.query}" if parts.query else ""), body, sent)
        return conn.getresponse().status
    finally:
        conn.close()


def test_without_the_token_or_from_elsewhere_is_refused(server: tuple[str, str]) -> None:
    url, token = server
    host = urlsplit(url).netloc
    bearer = {"Authorization": f"Bearer {token}", "Host": host}
    assert _post(url, bearer) == 200
    assert _post(url, {**bearer, "Origin": f"http://{host}"}) == 200  # its own origin
    assert _post(url, {"Host": host}) == 403  # no token
    assert _post(url, {"Host": host, "Authorization": "Bearer wrong"}) == 403
    assert _post(url, {**bearer, "Authorization": f"Basic {token}"}) == 403
    port = urlsplit(url).port
    for foreign in (f"evil.example:{port}", f"127.0.0.1:{port + 1}", f"127.0.0.1.nip.io:{port}"):
        assert _post(url, {**bearer, "Host": foreign}) == 403, foreign  # DNS rebinding
    for origin in ("http://evil.example", "null", f"https://{host}"):
        assert _post(url, {**bearer, "Origin": origin}) == 403, origin  # a page elsewhere
    assert _post(f"{url}?token={token}", {"Host": host}) == 200
    assert _post(f"{url}?token=wrong", {"Host": host}) == 403


def test_a_port_goes_with_http(cli: Cli, moot_home: Path) -> None:
    said = cli("mcp", "--port", "8123", home=moot_home)
    assert said.returncode == 2
    assert said.stderr.splitlines()[0] == "error: --port goes with --http"
