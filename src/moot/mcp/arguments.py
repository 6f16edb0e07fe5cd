"""A tool's arguments, each of the kind its schema says, or a one-line error naming it: an
agent's JSON is input like any other, never turned into another kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from moot.errors import UsageError

Args = Mapping[str, Any]


def text(args: Args, name: str, default: str) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise UsageError(key="mcp.tools.not_a_string", name=name)
    return value


def flag(args: Args, name: str, default: bool) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise UsageError(key="mcp.tools.not_a_flag", name=name)
    return value


def number(
    args: Args,
    name: str,
    default: float,
    *,
    low: float,
    high: float,
    kind: type | tuple[type, ...] = int,
) -> Any:
    value: Any = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise UsageError(key="mcp.tools.not_a_number", name=name)
    if not low <= float(value) <= high:  # type: ignore[arg-type]
        raise UsageError(key="mcp.tools.out_of_range", name=name, value=value, low=low, high=high)
    return value


def texts(value: object) -> TypeGuard[list[str]]:
    """Whether VALUE is a list of strings (not empty)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
