"""`moot schema`: the JSON Schema of moot's records and events, for other tools that read them."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from moot.cli.root import app
from moot.errors import UsageError
from moot.events import SCHEMAS, json_schema


@app.command()
def schema(
    record: Annotated[str, typer.Argument(help="transcript, journal or events.", metavar="RECORD")],
) -> None:
    """Print the JSON Schema of a saved transcript.json, of a line of a journal.jsonl, or of
    an event of a running debate (what the web page's server-sent events carry).

    What validates against it, moot reads back (resume, replay, check, judge; the events:
    moot.events.EVENTS); see docs/records.md."""
    if record not in SCHEMAS:
        raise UsageError(key="cli.schema.no_schema", record=record)
    print(json.dumps(json_schema(record), indent=2, ensure_ascii=False))
