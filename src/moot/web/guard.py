"""The gate of `moot serve`: every request needs the server's token, a Host header naming
the server (not a name that was made to point at it), and, when it changes anything, the
page's own Origin. What is refused gets 403 and nothing else."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = ("GET", "HEAD")
WILDCARDS = ("0.0.0.0", "::", "")

# Nothing the page loads or calls is anywhere but this server.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def cookie_name(port: int) -> str:
    """Cookies are not kept apart by port: each server's is named by its own."""
    return f"moot-token-{port}"


class Guard:
    """ASGI middleware in front of the whole app."""

    def __init__(self, app: ASGIApp, *, token: str, host: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.cookie = cookie_name(port)
        self.any_ip = host in WILDCARDS  # bound to every address: any address, never a name
        names = {"localhost", "127.0.0.1", "[::1]", host.lower()}
        if ":" in host:
            names.add(f"[{host.lower()}]")
        self.names = frozenset(names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets: the connection is closed unanswered
        headers = headers_of(scope)
        if not self.host_allowed(headers.get("host", "")):
            await refuse(send)
            return
        given = query_token(scope)
        from_cookie = _cookie(headers.get("cookie", ""), self.cookie)
        if not (self.token_valid(given) or self.token_valid(from_cookie)):
            await refuse(send)
            return
        if scope["method"] not in SAFE_METHODS and not self.same_origin(headers):
            await refuse(send)
            return
        if given is not None and scope["method"] == "GET" and scope["path"] == "/":
            await self._welcome(scope, send)  # the token becomes a cookie; the URL loses it
            return
        await self.app(scope, receive, _with_headers(send))

    def token_valid(self, token: str | None) -> bool:
        return token is not None and secrets.compare_digest(token.encode(), self.token.encode())

    def host_allowed(self, host: str) -> bool:
        """The Host header names this server: a loopback name or the bound address, and its
        port. A name that resolves here (DNS rebinding) is refused."""
        name, port = _split_host(host.lower())
        if port is not None and port != str(self.port):
            return False
        if name in self.names:
            return True
        if self.any_ip:
            try:
                ipaddress.ip_address(name.strip("[]"))
                return True
            except ValueError:
                return False
        return False

    def same_origin(self, headers: dict[str, str]) -> bool:
        """A request that changes something comes from the page itself: its Origin is this
        server, as the Host header names it (checked already)."""
        origin = headers.get("origin")
        if origin is None or headers.get("sec-fetch-site", "same-origin") != "same-origin":
            return False
        return origin == f"http://{headers.get('host', '')}"

    async def _welcome(self, scope: Scope, send: Send) -> None:
        params = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        params.pop("token", None)
        location = "/" + (f"?{urlencode(params, doseq=True)}" if params else "")
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode()),
                    (b"set-cookie", cookie.encode()),
                    (b"cache-control", b"no-store"),
                    *HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


async def refuse(send: Send) -> None:
    body = b"forbidden\n"
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v)
                for k, v in message.get("headers", [])
                if not k.lower().startswith(b"access-control-")
            ]
            if not any(k.lower() == b"cache-control" for k, _ in headers):
                headers.append((b"cache-control", b"no-store"))
            message["headers"] = [*headers, *HEADERS]
        await send(message)

    return sending


def headers_of(scope: Scope) -> dict[str, str]:
    """The request's headers by lowercase name; a header given twice is refused by taking
    neither (an empty value never passes a check)."""
    seen: dict[str, str] = {}
    twice: set[str] = set()
    for raw_key, raw_value in scope.get("headers", []):
        key = raw_key.decode("latin-1").lower()
        if key in seen:
            twice.add(key)
        seen[key] = raw_value.decode("latin-1")
    for key in twice & {"host", "origin", "cookie", "sec-fetch-site"}:
        seen[key] = "" if key != "sec-fetch-site" else "cross-site"
    return seen


def query_token(scope: Scope) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values and len(values) == 1 else None


def _cookie(header: str, name: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed cookie header carries no token
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def _split_host(host: str) -> tuple[str, str | None]:
    if host.startswith("["):
        name, _, rest = host.partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return name + "]", port
    name, sep, port = host.partition(":")
    return name, (port if sep else None)
