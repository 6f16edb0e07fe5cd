"""`moot mcp --http`: the same tools over streamable HTTP, on loopback only, behind the
checks `moot serve` makes: the server's token, a Host header naming this server (never a
name made to point at it), and no Origin but its own (a page elsewhere cannot call it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moot.web.guard import Guard, Receive, Scope, Send, headers_of, query_token, refuse
from moot.web.server import Server

HOST = "127.0.0.1"  # never another address: an agent's tools stay on this machine
PATH = "/mcp"


class Gate:
    """ASGI middleware in front of the MCP app: a request without the token (as a bearer
    token, or `?token=` in the URL), with a Host that is not this server, or with an
    Origin that is not this server, gets 403 and nothing else."""

    def __init__(self, app: Any, *, token: str, port: int) -> None:
        self.app = app
        self.guard = Guard(app, token=token, host=HOST, port=port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets: the connection is closed unanswered
        headers = headers_of(scope)
        host = headers.get("host", "")
        scheme, _, bearer = headers.get("authorization", "").partition(" ")
        token = bearer.strip() if scheme.lower() == "bearer" else query_token(scope)
        origin = headers.get("origin")
        if (
            not self.guard.host_allowed(host)
            or not self.guard.token_valid(token)
            or (origin is not None and origin != f"http://{host}")
        ):
            await refuse(send)
            return
        await self.app(scope, receive, send)


@dataclass
class Bound:
    """A loopback socket bound before anything is printed, and its token."""

    server: Server

    @classmethod
    def bind(cls, port: int = 0, token: str | None = None) -> Bound:
        """Bind 127.0.0.1:PORT (0: a free port), guarded by TOKEN (None: a fresh one); a
        port in use is a UsageError naming it."""
        server = Server.bind(host=HOST, port=port)
        if token is not None:
            server.token = token
        return cls(server)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server.port}{PATH}"

    @property
    def token(self) -> str:
        return self.server.token

    def run(self, mcp: Any) -> None:
        """Serve MCP (the SDK's server) until Ctrl-C."""
        import uvicorn

        app = mcp.streamable_http_app(streamable_http_path=PATH, host=HOST)
        config = uvicorn.Config(
            Gate(app, token=self.token, port=self.server.port),
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=3,
            server_header=False,
            date_header=False,
        )
        uvicorn.Server(config).run(sockets=[self.server.sock])
