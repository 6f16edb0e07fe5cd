"""The token of `moot mcp --http`: fresh at each start (as `moot serve`'s), the user's own
(`--token`), or one moot keeps in its data directory, readable by its owner only, so that
a client's configuration keeps working when the server starts again (`--keep-token`;
`--new-token` replaces it)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from moot.config import data_dir
from moot.errors import UsageError
from moot.records import files
from moot.web.guard import new_token

LEAST = 24  # characters: a guessable token guards nothing
MOST = 512
KEPT = "mcp-token"  # in moot's data directory
# What goes in a URL's query as it is (RFC 3986's unreserved characters).
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]+")


def kept_path() -> Path:
    return data_dir() / KEPT


def check(token: str) -> str:
    """TOKEN, if it is long enough to guard the server and goes in a URL as it is; else a
    one-line UsageError saying which."""
    if len(token) < LEAST:
        raise UsageError(key="mcp.token.too_short", length=len(token), least=LEAST)
    bad = next((c for c in token if not _UNRESERVED.fullmatch(c)), None)
    if bad is not None or len(token) > MOST:
        raise UsageError(key="mcp.token.bad_characters", bad=bad or token[MOST:][:1])
    return token


def kept(*, renew: bool = False) -> str:
    """The token kept in moot's data directory: made (mode 0600) at the first call, or
    with RENEW, and read back after. A kept file others can read, or that moot did not
    write, is refused: it no longer guards anything."""
    path = kept_path()
    if renew or not os.path.lexists(path):
        files.make_private_dir(path.parent)
        token = new_token()
        files.write_atomic(path, token + "\n")  # 0600, replacing any other
        return token
    text = files.read_text(path, what="the kept token", limit=4096, follow_symlinks=False)
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    if mode & 0o077:
        raise UsageError(key="mcp.token.open_to_others", path=path, mode=f"{mode:04o}")
    try:
        return check(text.strip())
    except UsageError as exc:
        raise UsageError(key="mcp.token.unreadable", path=path, error=exc) from None
