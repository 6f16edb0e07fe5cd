"""`moot schema`: the JSON Schema of moot's records, for other tools that read them."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from moot.cli.root import app
from moot.errors import UsageError
from moot.records import SCHEMAS, json_schema


@app.command()
def schema(
    record: Annotated[str, typer.Argument(help="transcript or journal.", metavar="RECORD")],
) -> None:
    """Print the JSON Schema of a saved transcript.json, or of a line of a journal.jsonl.

    What validates against it, moot reads back (resume, replay, check, judge); see
    docs/records.md."""
    if record not in SCHEMAS:
        raise UsageError(
            f"no schema {record!r}", hint="moot schema transcript, or moot schema journal"
        )
    print(json.dumps(json_schema(record), indent=2, ensure_ascii=False))
