"""The words moot itself shows in a debate's language, from the packs' `engine/words.toml`.

A turn records its flags and notes in English: they are its stable keys (`moot check` and
older transcripts read them so). A debate in another language shows each through that
language's `[flags]` table, whose keys are the recorded English forms with `{fields}` for
the parts that vary (a limit, a language's name, a quoted sentence): the field's value is
shown translated in turn where the tables know it, else as it was recorded; a field the
shown form writes `{name!s}` is shown as recorded (an identifier: a format's name, a model's
id).

An error (a `MootError`) is raised by key: `[errors.<key>]` in each language's table holds
its message and hint, `{fields}` filled from the error's values, and `error` shows it in
this language. A value that is a `Phrase` or an error is shown by its own key; a text value
is shown through `shown` unless the field is written `{name!s}` or `{name!r}` (an
identifier, a path); numbers are shown as they are. The `[errors]` table's English-sentence
keys are read as `[flags]` are, for the English that is no key's: a text value of an error
(a hint passed on, a system's or a parser's reason, click's messages) and an error recorded
as its English (a failed seat's reason in a transcript, a tournament's event).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from typing import Any

from moot.errors import MootError, Phrase, entry
from moot.prompts import ENGINE, LANGUAGES, builtin_root

FILE = "words.toml"
_FIELD = re.compile(r"\{(\w+)\}")
_CONVERTED = re.compile(r"\{(\w+)(![rs])?(:[^}]*)?\}")  # a field of an error's words
_VERBATIM = re.compile(r"\{(\w+)!s\}")  # a field shown as recorded, never translated
_SEPARATOR = "; "  # what joins several flags of one turn in a document's header
_PATH = re.compile(r"[a-z_]+(?:\.[a-z0-9_]+)*")  # a reply's field: `agreements.0.point`
# A flag is a line; a saved file may hold anything. Past these lengths a text is shown as
# recorded: matching patterns of several fields against it would take time without bound.
_LONGEST_FLAG = 600
_LONGEST_TEXT = 8000


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    shown: str
    weight: int  # literal characters: the most specific pattern is tried first
    verbatim: frozenset[str]  # the fields shown as recorded


def _compile(recorded: str, shown: str) -> _Pattern:
    parts, pos = [], 0
    for m in _FIELD.finditer(recorded):
        parts.append(re.escape(recorded[pos : m.start()]))
        parts.append(f"(?P<{m.group(1)}>.+?)")
        pos = m.end()
    parts.append(re.escape(recorded[pos:]))
    literal = len(_FIELD.sub("", recorded))
    verbatim = frozenset(_VERBATIM.findall(shown))
    return _Pattern(re.compile("".join(parts), re.DOTALL), shown, literal, verbatim)


@functools.cache
def _table(language: str) -> dict[str, Any]:
    path = builtin_root() / language / ENGINE / FILE
    with open(path, "rb") as f:
        return tomllib.load(f)


class Words:
    """One language's words: `say` a message of moot's own, `shown` a recorded flag."""

    def __init__(self, language: str) -> None:
        self.language = language
        table = _table(self.language)
        self._say: dict[str, str] = {**_table("en")["say"], **table.get("say", {})}
        self._terms: dict[str, str] = table.get("terms", {})
        self._fields: dict[str, str] = table.get("fields", {})
        names: dict[str, Any] = table.get("names", {})
        self._names = [_compile(k, v) for k, v in names.items() if isinstance(v, str)]
        # `[names.<format>]`: what a format's own rulebook calls a seat or step the others
        # name alike (the Oxford judge is the Completeness Judge, 完整性裁判).
        self._own_names: dict[str, dict[str, str]] = {
            fmt: own for fmt, own in names.items() if isinstance(own, dict)
        }
        self._errors: dict[str, Any] = table.get("errors", {})
        sentences = {k: v for k, v in self._errors.items() if isinstance(v, str)}
        recorded = {**table.get("flags", {}), **sentences}
        patterns = [_compile(k, v) for k, v in recorded.items()]
        self._patterns = sorted(patterns, key=lambda p: -p.weight)

    def knows(self, key: str) -> bool:
        """Whether KEY is a message of moot's own (a label may be one, or a user's text)."""
        return key in self._say

    def say(self, key: str, **values: Any) -> str:
        """Message KEY of moot's own, its fields filled with VALUES."""
        return self._say[key].format(**values)

    def error(self, error: MootError | Phrase) -> dict[str, str]:
        """ERROR's message and hint in this language (its English where the table lacks it)."""
        near = error.near if isinstance(error, MootError) else None
        if isinstance(error, MootError) and not error.key:
            hint = error.hint.removeprefix(f"did you mean {near}? ") if near else error.hint
            said = {"message": self.shown(error.message), "hint": self.shown(hint)}
        else:
            found = entry(self._errors, error.key) or entry(
                _table("en").get("errors", {}), error.key
            )
            if found is None:
                raise KeyError(f"no error {error.key!r} in the {self.language} words")
            said = {
                part: self._fill(found.get(part, ""), error.values) for part in ("message", "hint")
            }
        by = error.hint_of if isinstance(error, MootError) else None
        if by is not None:  # another hint, in words of its own
            said["hint"] = self.error(by)["message" if isinstance(by, Phrase) else "hint"]
        if near:
            said["hint"] = self.say("did_you_mean", model=near, hint=said["hint"]).strip()
        return said

    def _fill(self, text: str, values: dict[str, object]) -> str:
        shown: dict[str, object] = {}
        for m in _CONVERTED.finditer(text):
            name, verbatim = m.group(1), m.group(2)
            value = values[name]
            if isinstance(value, (MootError, Phrase)):
                value = self.error(value)["message"]
            elif isinstance(value, str) and not verbatim:
                value = self.shown(value)
            shown[name] = value
        return text.format(**shown)

    def name(self, identifier: str, fmt: str = "") -> str:
        """A role's or step's identifier as this language names it in format FMT (itself
        when unknown)."""
        own = self._own_names.get(fmt, {})
        if identifier in own:
            return own[identifier]
        for pattern in self._names:
            m = pattern.regex.fullmatch(identifier)
            if m:
                return pattern.shown.format(**m.groupdict())
        return identifier

    def field(self, name: str) -> str:
        """A structured reply's field as this language names it; one it has no name for
        reads as words (`key_reasoning`: "Key reasoning")."""
        return self._fields.get(name) or name.replace("_", " ").capitalize()

    def shown(self, recorded: str) -> str:
        """A flag, note, problem or error as recorded (English) shown in this language."""
        if self.language == "en" or not recorded or len(recorded) > _LONGEST_TEXT:
            return recorded
        return self._shown(recorded, depth=0)

    def _shown(self, text: str, *, depth: int) -> str:
        if text in self._terms:
            return self._terms[text]
        if depth > 4:  # a value nested in a value nested in …: shown as recorded
            return text
        for pattern in self._patterns if len(text) <= _LONGEST_FLAG else ():
            m = pattern.regex.fullmatch(text)
            if m:
                values = {
                    k: v if k in pattern.verbatim else self._shown(v, depth=depth + 1)
                    for k, v in m.groupdict().items()
                }
                return pattern.shown.format(**values)
        if _PATH.fullmatch(text) and text.split(".")[0] in self._fields:
            return ".".join(self._fields.get(part, part) for part in text.split("."))
        if _SEPARATOR in text:
            parts = [self._shown(part, depth=depth + 1) for part in text.split(_SEPARATOR)]
            return self._say["and"].join(parts)
        return text


def words(language: str) -> Words:
    """LANGUAGE's words (English's for a language moot has no pack for)."""
    return _words(language if language in LANGUAGES else "en")


@functools.cache
def _words(language: str) -> Words:
    return Words(language)
