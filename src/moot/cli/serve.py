"""`moot serve`: the web app on this machine; its URL, with its token, printed on one line."""

from __future__ import annotations

import sys
import threading
import webbrowser
from typing import Annotated

import typer

from moot.cli.options import Batch, DryRun
from moot.cli.root import app, err
from moot.config import MAX_PARALLEL
from moot.render import safe


@app.command()
def serve(
    host: Annotated[
        str,
        typer.Option(
            help="Address to serve on. Anything but loopback lets other machines reach the "
            "page (the token still guards it)."
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Port to serve on (default: a free one)."),
    ] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL; do not open a browser.")
    ] = False,
    dry_run: DryRun = False,
    pace: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="With --dry-run: seconds between the scripted speakers' words (default: 0.01).",
        ),
    ] = None,
    parallel: Annotated[
        int,
        typer.Option(
            help=f"Debates a tournament started from the page plays at once (1–{MAX_PARALLEL}),"
            " as `moot tournament --parallel`. A debate started on its own still waits for "
            "its models.",
            metavar="N",
        ),
    ] = 1,
    batch: Batch = False,
) -> None:
    """Start, watch and browse debates in a browser, served from this machine."""
    from moot.errors import UsageError
    from moot.tournaments.parallel import check_batch, check_parallel
    from moot.web.runs import PACE
    from moot.web.server import Server, is_loopback

    check_parallel(parallel)
    check_batch(batch, parallel)
    if pace is not None and not dry_run:
        raise UsageError(key="cli.serve.pace_applies_only_dry_run")
    server = Server.bind(
        host=host,
        port=port or 0,
        dry_run=dry_run,
        pace=PACE if pace is None else pace,
        parallel=parallel,
        batch=batch,
    )
    if not is_loopback(host):
        err.print(
            f"[yellow]warning:[/] serving on {safe(host)}: other machines that reach it and "
            "have the URL's token can start debates here",
            highlight=False,
        )
    print(f"moot serve: {server.url}", flush=True)
    err.print(
        "[dim]Ctrl-C stops the server; a debate it stops keeps its finished turns "
        "(resume it from the history).[/]",
        highlight=False,
    )
    if dry_run:
        err.print("[dim]dry run: every debate uses scripted models[/]", highlight=False)
    if not no_browser:
        # A text-mode browser would take the terminal: the page opens beside the server.
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    try:
        server.run()
    finally:
        sys.stdout.flush()
