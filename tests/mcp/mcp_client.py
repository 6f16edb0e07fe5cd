"""`moot mcp` as an MCP client meets it: the server started as its own process over stdio,
driven by the SDK's own client; what the server wrote on stderr kept for the test."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

OVER = ("finished", "stopped", "failed")


@dataclass
class Called:
    """One tool call's answer: whether it is an error, its text, its data."""

    error: bool
    text: str
    data: dict[str, Any]


@dataclass
class Client:
    session: ClientSession
    progress: list[tuple[float, str | None]] = field(default_factory=list)

    async def call(self, tool: str, **args: Any) -> Called:
        async def heard(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append((progress, message))

        result = await self.session.call_tool(tool, args, progress_callback=heard)
        text = "".join(getattr(c, "text", "") for c in result.content)
        return Called(bool(result.is_error), text, result.structured_content or {})

    async def ok(self, tool: str, **args: Any) -> dict[str, Any]:
        called = await self.call(tool, **args)
        assert not called.error, called.text
        assert json.loads(called.text) == called.data if tool != "get_debate" else True
        return called.data

    async def until_over(self, debate_id: str, *, step: float = 1.0, limit: int = 600) -> dict:
        """wait_debate in short calls, as a client with a short tool timeout does."""
        for _ in range(limit):
            state = await self.ok("wait_debate", id=debate_id, seconds=step)
            if state["state"] in OVER:
                return state
        raise AssertionError(f"debate {debate_id} did not end: {state}")


@asynccontextmanager
async def served(home: Path, *args: str, errlog: Path | None = None) -> AsyncIterator[Client]:
    """`moot mcp ARGS` with HOME as its moot home, and a client session on it."""
    env = {**os.environ, "MOOT_HOME": str(home), "HOME": str(home)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "moot", "mcp", *args], env=env
    )
    log = errlog or home.parent / "mcp-stderr.txt"
    with open(log, "a", encoding="utf-8") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield Client(session)
