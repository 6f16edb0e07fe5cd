"""`moot serve`'s server: a socket bound before anything is printed (the URL names the port
it got), the app behind its guard, uvicorn serving it until Ctrl-C."""

from __future__ import annotations

import errno
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import quote

from moot.errors import UsageError
from moot.web.guard import new_token

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class Server:
    """A bound socket and what it serves; `run` serves until interrupted."""

    sock: socket.socket
    host: str
    port: int
    token: str
    dry_run: bool
    pace: float
    parallel: int = 1  # debates a tournament started from the page plays at once
    batch: bool = False  # ... decoded in one batch a step (`moot tournament --batch`)

    @classmethod
    def bind(
        cls,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        dry_run: bool = False,
        pace: float = 0.01,
        parallel: int = 1,
        batch: bool = False,
    ) -> Server:
        """Bind HOST:PORT (0: a free port); a port in use or an address not of this machine
        is a UsageError naming it."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise UsageError(
                key="web.server.host_not_address_this_machine", host=host, strerror=exc.strerror
            ) from None
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(128)
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                raise UsageError(key="web.server.port_use", port=port) from None
            if exc.errno == errno.EACCES:
                raise UsageError(key="web.server.port_needs_privileges_bind", port=port) from None
            raise UsageError(
                key="web.server.cannot_serve_on", host=host, port=port, value=exc.strerror or exc
            ) from None
        bound_port = sock.getsockname()[1]
        return cls(sock, host, bound_port, new_token(), dry_run, pace, parallel, batch)

    @property
    def url(self) -> str:
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.port}/?token={quote(self.token)}"

    def run(self) -> None:
        """Serve until Ctrl-C; running debates are stopped then (their journals keep every
        finished turn, so each can be resumed)."""
        import uvicorn

        from moot.web.app import build

        app, _ = build(
            token=self.token,
            host=self.host,
            port=self.port,
            dry_run=self.dry_run,
            pace=self.pace,
            parallel=self.parallel,
            batch=self.batch,
        )
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=3,
            server_header=False,
            date_header=False,
        )
        uvicorn.Server(config).run(sockets=[self.sock])
