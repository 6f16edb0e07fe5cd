"""The debate formats: each a params model and a `run(engine, …)` that reads like its rulebook."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

from moot.errors import UsageError
from moot.formats.base import Format, Parameter, bare

NAMES = ("oxford", "decision", "challenge", "adversarial")


def get_format(name: str) -> Format:
    """The format called NAME, or a one-line error listing the ones there are."""
    if name not in NAMES:
        raise UsageError(
            key="formats.unknown_format", field="format", name=name, names=", ".join(NAMES)
        )
    module = importlib.import_module(f"moot.formats.{name}")
    found: Format = module.FORMAT
    return found


@dataclass(frozen=True)
class SharedParameter:
    """A parameter name and every format that declares it, with its declaration there."""

    name: str
    declared: tuple[tuple[str, Parameter], ...]  # (format name, its declaration), in order

    @property
    def first(self) -> Parameter:
        return self.declared[0][1]

    @property
    def formats(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.declared)

    def groups(self) -> list[tuple[list[str], str]]:
        """The formats that declare it with the same help, and that help."""
        groups: list[tuple[list[str], str]] = []
        for fmt, p in self.declared:
            same = next((g for g in groups if g[1] == p.help), None)
            if same:
                same[0].append(fmt)
            else:
                groups.append(([fmt], p.help))
        return groups

    def help(self) -> str:
        """Each format's help, after the names of the formats that declare it alike:
        "decision, challenge, adversarial: number of rounds"."""
        return ". ".join(f"{', '.join(names)}: {text}" for names, text in self.groups())


def parameters(names: Sequence[str] = NAMES) -> dict[str, SharedParameter]:
    """Every parameter of the formats NAMES, in their order and each format's declaration
    order. A name two formats declare is one option: it must have the same type and option
    in both (a TypeError says which differ)."""
    found: dict[str, list[tuple[str, Parameter]]] = {}
    for name in names:
        for p in get_format(name).parameters:
            found.setdefault(p.name, []).append((name, p))
    for pname, declared in found.items():
        first = declared[0][1]
        for fmt, p in declared[1:]:
            if (bare(p.annotation), p.option) != (bare(first.annotation), first.option):
                raise TypeError(
                    f"parameter {pname!r} of the {fmt} format differs from the "
                    f"{declared[0][0]} format's in its type or option"
                )
    return {pname: SharedParameter(pname, tuple(declared)) for pname, declared in found.items()}


def option_name(name: str) -> str:
    """The command-line option of the parameter NAME (`--continue` for `continue_from`)."""
    shared = parameters().get(name)
    return shared.first.option if shared else "--" + name.replace("_", "-")
