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
    bound = None
    if http:
        from moot.mcp.http import Bound

        bound = Bound.bind(port or 0)
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
