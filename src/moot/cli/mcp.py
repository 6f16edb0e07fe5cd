"""`moot mcp`: the debates as tools of an MCP client (an agent, a chat app), over stdio or
over streamable HTTP on loopback."""

from __future__ import annotations

from typing import Annotated

import typer

from moot.cli.root import app, err
from moot.config import MAX_PARALLEL


@app.command("mcp")
def mcp_command(
    parallel: Annotated[
        int,
        typer.Option(
            min=1,
            max=MAX_PARALLEL,
            help="Debates run at once; never two on the same model. The others wait their turn.",
            metavar="N",
        ),
    ] = 1,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Let a debate use a model on a server (an http(s):// URL). Without it only "
            "models on this machine debate, so a client cannot send a motion elsewhere.",
        ),
    ] = False,
    pace: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Seconds between a dry run's scripted words (0: as fast as they come).",
        ),
    ] = 0.0,
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help="Serve over streamable HTTP on 127.0.0.1 instead of stdio, behind a token "
            "printed with the URL (as `moot serve`'s).",
        ),
    ] = False,
    port: Annotated[
        int | None,
        typer.Option(
            min=1, max=65535, help="With --http: the port to serve on (default: a free one)."
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="MOOT_MCP_TOKEN",
            help="With --http: this token instead of a fresh one, so that a client's "
            "configuration keeps working across restarts (at least 24 characters: letters, "
            "digits, - _ . ~). Also read from $MOOT_MCP_TOKEN, which other users cannot see.",
            show_envvar=False,
        ),
    ] = None,
    keep_token: Annotated[
        bool,
        typer.Option(
            "--keep-token",
            help="With --http: the token moot keeps in its data directory (mcp-token, "
            "readable by you only), made at the first start and the same at every start.",
        ),
    ] = False,
    new_token: Annotated[
        bool,
        typer.Option(
            "--new-token",
            help="With --http: a fresh token replaces the one moot keeps (as --keep-token "
            "then), for when the old one was seen by someone else.",
        ),
    ] = False,
) -> None:
    """Serve moot's debates to an MCP client over standard input and output: start, wait
    for, read, stop and resume debates, list models, judge again, rank models in a
    tournament. Debates are saved as `moot run` saves them and go on when the client leaves.
    See docs/mcp.md."""
    from moot.errors import UsageError
    from moot.mcp.desk import Desk
    from moot.mcp.server import serve

    if port is not None and not http:
        raise UsageError(key="cli.mcp.port_needs_http", field="port")
    given = [o for o, on in (("--token", token), ("--keep-token", keep_token),
                             ("--new-token", new_token)) if on]  # fmt: skip
    if given and not http:
        raise UsageError(key="cli.mcp.token_needs_http", given=given[0], field=given[0][2:])
    if token is not None and (keep_token or new_token):
        raise UsageError(key="cli.mcp.token_twice", field="token")
    bound = None
    if http:
        from moot.mcp import token as tokens
        from moot.mcp.http import Bound

        if token is not None:
            chosen: str | None = tokens.check(token)
        elif keep_token or new_token:
            chosen = tokens.kept(renew=new_token)
        else:
            chosen = None
        bound = Bound.bind(port or 0, chosen)
        print(f"moot mcp: {bound.url}?token={bound.token}", flush=True)
        err.print(
            f"[dim]clients send the token as the header `Authorization: Bearer {bound.token}`"
            " (or keep it in the URL); Ctrl-C stops the server, and a debate it stops keeps "
            "its finished turns (resume_debate goes on from them).[/]",
            highlight=False,
        )
    else:
        err.print("[dim]moot mcp: serving on stdio[/]", highlight=False)
    serve(Desk(parallel=parallel, pace=pace), allow_remote=allow_remote, http=bound)
