"""`moot mcp --http`: the SDK's streamable-HTTP client lists the tools and follows a dry-run
debate with the printed token (as a bearer token, or in the URL); a request without the
token, with a Host that is not the server, or with a page's Origin elsewhere gets 403."""

from __future__ import annotations

import http.client
import json
import secrets
import signal
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import Popen
from urllib.parse import urlsplit

import anyio
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import Cli, Env
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


@contextmanager
def _serving(cli: Cli, home: Path, *args: str, env: Env | None = None) -> Iterator[str]:
    """`moot mcp --http ARGS` running; the URL it printed, token included."""
    proc: Popen[str] = cli.popen("mcp", "--http", *args, home=home, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("moot mcp: http://127.0.0.1:"), line
        yield line.removeprefix("moot mcp: ")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    said = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 130 and "Traceback" not in said, said


def _status(url: str, token: str) -> int:
    """The status of an `initialize` with TOKEN as the bearer token, at URL (its token
    left out)."""
    bare = url.partition("?")[0]
    return _post(bare, {"Authorization": f"Bearer {token}", "Host": urlsplit(bare).netloc})


def test_a_given_token_is_the_server_s_at_every_start(cli: Cli, moot_home: Path) -> None:
    token = secrets.token_urlsafe(24)
    with _serving(cli, moot_home, "--token", token) as url:
        assert url.endswith(f"/mcp?token={token}")
        assert _status(url, token) == 200
        assert _status(url, token[:-1] + ("A" if token[-1] != "A" else "B")) == 403
    # Started again (from the environment, where other users cannot see it): the same token.
    with _serving(cli, moot_home, env={"MOOT_MCP_TOKEN": token}) as url:
        assert url.endswith(f"?token={token}")
        assert _status(url, token) == 200
        assert _status(url, secrets.token_urlsafe(24)) == 403


def test_a_kept_token_lasts_until_a_new_one_is_made(cli: Cli, moot_home: Path) -> None:
    kept = moot_home / "mcp-token"
    with _serving(cli, moot_home, "--keep-token") as url:
        token = url.partition("?token=")[2]
        assert len(token) >= 24 and _status(url, token) == 200
    assert kept.read_text(encoding="utf-8").strip() == token
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    with _serving(cli, moot_home, "--keep-token") as url:
        assert url.partition("?token=")[2] == token  # a client's configuration still works
        assert _status(url, token) == 200
    with _serving(cli, moot_home, "--new-token") as url:
        fresh = url.partition("?token=")[2]
        assert fresh != token and _status(url, fresh) == 200
        assert _status(url, token) == 403  # the old one guards nothing now
    assert kept.read_text(encoding="utf-8").strip() == fresh
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    kept.chmod(0o644)  # seen by others: refused, not served with
    said = cli("mcp", "--http", "--keep-token", home=moot_home)
    assert said.returncode == 2
    assert "can be read by others (mode 0644)" in said.stderr.splitlines()[0], said.stderr
    assert "--new-token" in said.stderr


@pytest.mark.parametrize(
    ("args", "first"),
    [
        (("--http", "--token", "too-short"), "error: the token is 9 characters: at least 24"),
        (("--http", "--token", "x" * 30 + "/"), "error: the token holds '/'"),
        (("--token", "x" * 30), "error: --token goes with --http"),
        (("--new-token",), "error: --new-token goes with --http"),
        (("--http", "--token", "x" * 30, "--keep-token"), "error: --token and --keep-token"),
    ],
)
def test_a_bad_token_is_refused_before_anything_is_served(
    cli: Cli, moot_home: Path, args: tuple[str, ...], first: str
) -> None:
    said = cli("mcp", *args, home=moot_home)
    assert said.returncode == 2, said.stderr
    assert said.stderr.splitlines()[0].startswith(first), said.stderr
    assert said.stdout == "" and not (moot_home / "mcp-token").exists()
