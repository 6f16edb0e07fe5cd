"""GBNF grammars built from pydantic schemas, for replies that must be valid JSON."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from pydantic import BaseModel

from moot.errors import MootError
from moot.inference.decoding import range_rule
from moot.inference.protocol import reply_json_schema

# JSON forbids raw control characters in strings; llama-cpp-python's rule allows them.
_JSON_CHAR = (
    r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" '
    r"[0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])"
)


@lru_cache(maxsize=64)
def schema_to_gbnf(schema: type[BaseModel]) -> str:
    """A GBNF grammar for JSON replies valid against `schema`; MootError if it cannot be built."""
    try:
        converter = _converter_class()(
            prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
        )
        resolved = converter.resolve_refs(reply_json_schema(schema), "stdin")
        converter.visit(resolved, "")
        return str(converter.format_grammar())
    except Exception as exc:  # the converter asserts on schemas it does not know
        raise MootError(
            f"cannot build a grammar for {schema.__name__}: {exc}",
            hint="simplify the schema (plain objects, strings, numbers, enums, lists)",
        ) from exc


@cache
def _converter_class() -> type:
    from llama_cpp import llama_grammar as lg

    class Converter(lg.SchemaConverter):
        """llama-cpp-python's converter, plus number ranges and JSON-strict strings."""

        def visit(self, schema: dict[str, Any], name: str) -> str:
            if schema.get("type") in ("number", "integer") and (rule := range_rule(schema)):
                rule_name = name + "-" if name in lg.RESERVED_NAMES else name or "root"
                return str(self._add_rule(rule_name, rule))
            return str(super().visit(schema, name))

        def _add_primitive(self, name: str, rule: Any) -> str:
            if name == "char":
                rule = lg.BuiltinRule(_JSON_CHAR, [])
            return str(super()._add_primitive(name, rule))

    return Converter
