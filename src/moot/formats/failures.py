"""A turn's failure as a value: a timeout, a backend error or an invalid reply ends that turn,
never the debate. Shared by the formats whose rulebooks say so (challenge, adversarial)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from moot.errors import CallTimeoutError, MootError, StructuredReplyError
from moot.transcript import Turn

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
META_LIMIT = 200


def sanitize(text: str) -> str:
    """Metadata safe to store and print: no control characters, at most 200 characters."""
    return _CONTROL.sub("", text)[:META_LIMIT]


@dataclass(frozen=True)
class Outcome:
    """What one engine call came to: its turn, or why it failed (sanitized metadata)."""

    turn: Turn | None
    error: str | None = None
    timed_out: bool = False


def attempt(call: Callable[[], Turn], schema: type[BaseModel] | None = None) -> Outcome:
    """Run one turn; a timeout, a backend error, empty or repeated output, or a structured
    reply that stayed invalid is that turn's failure, never the end of the debate."""
    try:
        turn = call()
    except CallTimeoutError as exc:
        return Outcome(None, sanitize(f"timeout: {exc.message}"), timed_out=True)
    except StructuredReplyError as exc:
        # Only metadata: the reply itself may hold anything, control characters included.
        return Outcome(None, parse_error(exc, exc.raw, schema or BaseModel))
    except MootError as exc:
        return Outcome(None, sanitize(f"{type(exc).__name__}: {exc.message}"))
    if turn.note and turn.note.startswith("degenerate reply"):
        return Outcome(None, sanitize(turn.note))
    return Outcome(turn)


def parse_error(exc: Exception, raw: str, schema: type[BaseModel]) -> str:
    """`PARSE_ERROR:<type>:<code>`: what failed, never the reply itself (it may be anything)."""
    try:
        schema.model_validate(json.loads(raw))
        code = "unknown"
    except ValueError as err:  # ValidationError is a ValueError too: test it first
        if isinstance(err, ValidationError):
            code = str(err.errors()[0]["type"])
        else:
            code = "json"
    except RecursionError:  # brackets nested past what the parser takes
        code = "json"
    return sanitize(f"PARSE_ERROR:{type(exc).__name__}:{code}")
