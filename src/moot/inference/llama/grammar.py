"""GBNF grammars built from pydantic schemas, for replies that must be valid JSON."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from pydantic import BaseModel

from moot.errors import MootError
from moot.inference.decoding import range_rule
from moot.inference.protocol import is_prose, reply_json_schema

# JSON forbids raw control characters in strings; llama-cpp-python's rule allows them.
_JSON_CHAR = (
    r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" '
    r"[0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])"
)
# Prose (a reason, a trade-off, a dissent) opens on a letter (or a non-ASCII character,
# as Chinese does) and holds no JSON brackets: a tiny model that "closes" the object from
# inside a string (`"] },  {  }"`) or counts (`"1,2,4,8"`) is kept to words instead.
_PROSE_FIRST = r"[^\x00-\x40\x5B-\x60\x7B-\x7F]"
_PROSE_CHAR = _JSON_CHAR.replace(r"\x00-\x1F]", r"\x00-\x1F\x5B\x5D\x7B\x7D]", 1)


@lru_cache(maxsize=64)
def schema_to_gbnf(schema: type[BaseModel], prose: int | None = None) -> str:
    """A GBNF grammar for JSON replies valid against `schema` (each prose field at most PROSE
    characters, where given); MootError if it cannot be built."""
    try:
        converter = _converter_class()(
            prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
        )
        resolved = converter.resolve_refs(reply_json_schema(schema, prose), "stdin")
        converter.visit(resolved, "")
        return str(converter.format_grammar())
    except Exception as exc:  # the converter asserts on schemas it does not know
        raise MootError(
            key="inference.llama.grammar.cannot_build_grammar", name=schema.__name__, exc=exc
        ) from exc


def free_prose(schema: dict[str, Any]) -> bool:
    """Whether SCHEMA is prose held to nothing but its length (no enum, pattern or format)."""
    return is_prose(schema) and not {"enum", "const", "pattern", "format"} & schema.keys()


@cache
def _converter_class() -> type:
    from llama_cpp import llama_grammar as lg

    class Converter(lg.SchemaConverter):
        """llama-cpp-python's converter, plus number ranges and JSON-strict strings."""

        def visit(self, schema: dict[str, Any], name: str) -> str:
            rule_name = name + "-" if name in lg.RESERVED_NAMES else name or "root"
            if schema.get("type") in ("number", "integer") and (rule := range_rule(schema)):
                return str(self._add_rule(rule_name, rule))
            if free_prose(schema):
                return str(self._add_rule(rule_name, self._prose(schema)))
            return str(super().visit(schema, name))

        def _prose(self, schema: dict[str, Any]) -> str:
            first = self._add_rule("prose-first", _PROSE_FIRST)
            char = self._add_rule("prose-char", _PROSE_CHAR)
            least = max(int(schema.get("minLength", 1)) - 1, 0)
            rest = lg._build_repetition(char, least, int(schema["maxLength"]) - 1)
            return rf'"\"" {first} {rest} "\"" space'

        def _add_primitive(self, name: str, rule: Any) -> str:
            if name == "char":
                rule = lg.BuiltinRule(_JSON_CHAR, [])
            return str(super()._add_primitive(name, rule))

    return Converter
