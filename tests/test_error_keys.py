"""Every error moot raises is raised by key, and each key has its words in every language:
the same fields in each, and no words that nothing raises."""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from moot.errors import CallTimeoutError, MootError, Phrase, UsageError
from moot.words import words

SRC = Path(__file__).resolve().parents[1] / "src" / "moot"
PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
LANGUAGES = ("en", "zh")
# Errors whose class says its own words (by key, inside errors.py or its module), or that
# carry other errors (a form's).
SELF_KEYED = {"ContextOverflowError", "CallTimeoutError", "ReasoningOnlyError", "BatchStopped"}
CARRIERS = {"FormErrors"}
_FIELD = re.compile(r"\{(\w+)(?:![rsa])?(?::[^}]*)?\}")


def _family() -> set[str]:
    """The names of MootError and every class of src/moot derived from it."""
    names = {c.__name__ for c in _subclasses(MootError)} | {"MootError"}
    classes = [
        n for f in SRC.rglob("*.py") for n in ast.walk(_tree(f)) if isinstance(n, ast.ClassDef)
    ]
    grown = True
    while grown:
        grown = False
        for c in classes:
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in c.bases}
            if c.name not in names and bases & names:
                names.add(c.name)
                grown = True
    return names


def _subclasses(cls: type) -> set[type]:
    return {s for c in cls.__subclasses__() for s in {c, *_subclasses(c)}}


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _calls() -> list[tuple[str, str, ast.Call]]:
    family = _family()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in family or name == "Phrase":
                found.append((module, name, node))
        for node in ast.walk(_tree(path)):  # `raise error(…)`, ERROR a name that holds a class
            if isinstance(node, ast.Raise) and _in_english(node.exc):
                found.append((module, "?", node.exc))  # type: ignore[arg-type]
    return found


def _in_english(node: ast.expr | None) -> bool:
    """NODE builds an error whose class is not named (a variable's) from words of its own: a
    sentence, or another error's message or hint."""
    if not isinstance(node, ast.Call) or _keyword(node, "key") is not None:
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if name.lstrip("_")[:1].isupper():
        return False  # a class by its name: counted as one of the family, or no MootError
    said = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "hint")]
    return any(
        isinstance(n, ast.Constant | ast.JoinedStr | ast.BinOp)
        or (isinstance(n, ast.Attribute) and n.attr in ("message", "hint", "reason"))
        for n in said
    )


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _unkeyed() -> Counter[str]:
    counts: Counter[str] = Counter()
    for module, name, call in _calls():
        if name in SELF_KEYED | CARRIERS | {"Phrase"} or _keyword(call, "key") is not None:
            continue
        counts[module] += 1
    return counts


def _raised_keys() -> dict[str, list[ast.Call]]:
    keys: dict[str, list[ast.Call]] = {}
    for _module, name, call in _calls():
        node = call.args[0] if name == "Phrase" and call.args else _keyword(call, "key")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            keys.setdefault(node.value, []).append(call)
    family = _family()
    for path in SRC.rglob("*.py"):  # the classes that key themselves: super().__init__(key=…)
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                key = _keyword(node, "key")
                if node.func.attr == "__init__" and isinstance(key, ast.Constant):
                    keys.setdefault(key.value, []).append(node)
            # and the errors whose class a variable holds: `raise error(key=…)`
            if isinstance(node, ast.Raise) and node.exc is not None:
                for call in ast.walk(node.exc):
                    if not isinstance(call, ast.Call):
                        continue
                    key, func = _keyword(call, "key"), call.func
                    named = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                    if named not in family and isinstance(key, ast.Constant):
                        keys.setdefault(key.value, []).append(call)
    return keys


def _entries(language: str) -> dict[str, dict[str, str]]:
    with open(PROMPTS / language / "engine" / "words.toml", "rb") as f:
        table = tomllib.load(f).get("errors", {})
    found: dict[str, dict[str, str]] = {}

    def walk(node: dict[str, object], prefix: str) -> None:
        if isinstance(node.get("message"), str):
            found[prefix] = node  # type: ignore[assignment]
            return
        for name, value in node.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}.{name}" if prefix else name)

    walk(table, "")
    return found


def _fields(text: str) -> set[str]:
    return set(_FIELD.findall(text.replace("{{", "").replace("}}", "")))


def test_every_error_is_raised_by_key():
    unkeyed = _unkeyed()
    assert not unkeyed, f"errors raised without a key (raise X(key=..., **values)): {unkeyed}"


def test_an_error_built_by_a_variable_is_found_unkeyed():
    tree = ast.parse("error = UsageError\nraise error(f'{path} is bad', hint='fix it')")
    assert _in_english(tree.body[1].exc)  # type: ignore[attr-defined]
    keyed = ast.parse("raise error(key='x.y', path=path)")
    assert not _in_english(keyed.body[0].exc)  # type: ignore[attr-defined]
    passed = ast.parse("raise refuse(path, kind, hint=hint)")  # a helper that keys its own
    assert not _in_english(passed.body[0].exc)  # type: ignore[attr-defined]


def test_every_raised_key_has_words_in_every_language():
    raised = _raised_keys()
    assert len(raised) > 250
    for language in LANGUAGES:
        missing = sorted(set(raised) - set(_entries(language)))
        assert not missing, f"keys with no words in {language}: {missing}"


def test_every_entry_is_raised():
    raised = _raised_keys()
    for language in LANGUAGES:
        unused = sorted(set(_entries(language)) - set(raised))
        assert not unused, f"{language} words that nothing raises: {unused}"


def test_each_language_fills_the_same_fields():
    en, zh = _entries("en"), _entries("zh")
    differ = []
    for key, entry in en.items():
        other = zh.get(key, {})
        for part in ("message", "hint"):
            if _fields(entry.get(part, "")) != _fields(other.get(part, "")):
                differ.append((key, part))
            if bool(entry.get(part)) != bool(other.get(part)):
                differ.append((key, f"{part} in one language only"))
    assert not differ


def test_every_raise_gives_its_fields_values():
    en = _entries("en")
    short = []
    for key, calls in _raised_keys().items():
        wanted = _fields(en.get(key, {}).get("message", "")) | _fields(
            en.get(key, {}).get("hint", "")
        )
        for call in calls:
            if any(k.arg is None for k in call.keywords):
                continue  # **values: checked when it is raised
            given = {k.arg for k in call.keywords} | {"path"}  # a RecordError's own path
            if wanted - given:
                short.append((key, sorted(wanted - given)))
    assert not short


def test_an_error_by_key_is_english_as_a_string_and_chinese_by_its_words():
    error = UsageError(key="models.store.no_such_file", file="/tmp/x.gguf")
    assert error.message == "no such file: /tmp/x.gguf"
    assert error.hint == "give the path to a .gguf file"
    # As moot prints it: the message, then the hint on a line of its own.
    assert str(error) == "no such file: /tmp/x.gguf\nhint: give the path to a .gguf file"
    shown = words("zh").error(error)
    assert shown == {"message": "没有这个文件：/tmp/x.gguf", "hint": "请给出一个 .gguf 文件的路径"}
    assert words("en").error(error) == {"message": error.message, "hint": error.hint}


def test_a_part_said_in_words_of_its_own_is_shown_in_the_language():
    error = CallTimeoutError(seconds=2.5)  # no model named: "the model", a Phrase
    assert error.message == "the model did not finish within 2.5 s"
    assert words("zh").error(error)["message"] == "模型没有在2.5秒内完成"
    assert str(Phrase("model.the_model")) == "the model"


def test_a_text_value_is_shown_in_the_language_unless_it_is_verbatim():
    # {why} is a system's words ("Permission denied"), shown translated; a path is not
    error = UsageError(
        key="models.registry.cannot_write_model_registry", path="/x", value="Permission denied"
    )
    assert "权限不足" in words("zh").error(error)["message"]


def test_an_error_raised_in_english_is_still_shown_by_its_sentence():
    error = UsageError("the motion is empty", hint="give a motion or a topic")
    assert words("zh").error(error) == {"message": "辩题是空的", "hint": "请给出辩题或话题"}


def test_a_key_with_no_words_is_refused():
    with pytest.raises(KeyError):
        UsageError(key="no.such.key")


def test_an_error_given_another_hint_shows_it_in_the_language():
    gone = UsageError(key="models.store.no_such_file", file="/tmp/x.gguf")
    again = gone.hinted(Phrase("models.locate.register_again", name="mine"))
    assert again.hint.startswith("register it again: `moot models add mine PATH`")
    assert words("zh").error(again)["hint"].startswith("重新登记：`moot models add mine 文件路径`")
    first = UsageError(key="models.store.no_such_file", file="/tmp/y.gguf")
    failed = MootError(key="cli.history.saved_debate_s_could_not", n_failed=2).hinted(first)
    assert failed.hint == "give the path to a .gguf file"
    assert words("zh").error(failed) == {
        "message": "2场保存的辩论无法删除",
        "hint": "请给出一个 .gguf 文件的路径",
    }


def test_a_pydantic_problem_is_said_by_its_type_or_as_pydantic_said_it():
    from pydantic import BaseModel, Field, ValidationError

    from moot.errors import invalid

    class Settings(BaseModel):
        rounds: int = Field(1, le=8)

    for given, zh in ((9, "应不大于8"), ("x", "应为整数，这段文字读不成整数")):
        try:
            Settings(rounds=given)
        except ValidationError as exc:
            first = exc.errors()[0]
            said = invalid(first, first["msg"].lower())
            assert str(said) == first["msg"].lower()
            assert words("zh").error(said)["message"] == zh
    odd = {"type": "less_than_equal", "ctx": {"le": 8}, "msg": "Input should be small"}
    said = invalid(odd, "input should be small")  # words that would say otherwise: as said
    assert str(said) == words("zh").error(said)["message"] == "input should be small"
