"""Every name in one home: a module imports each of moot's names from the module that
defines it, never through another module that only imports it (only a package's
`__init__` gathers names from its modules), and the package root keeps its doors only."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


def modules() -> dict[str, Path]:
    """moot's modules by dotted name."""
    found = {}
    for path in (SRC / "moot").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def top_level(path: Path) -> tuple[set[str], set[str]]:
    """The names PATH defines at its top (functions, classes, assignments) and those it
    imports there, TYPE_CHECKING blocks included."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        body = node.body if isinstance(node, ast.If | ast.Try) else [node]
        for item in body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(item.name)
            elif isinstance(item, ast.Assign | ast.AnnAssign):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                defined |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(item, ast.ImportFrom | ast.Import):
                imported |= {a.asname or a.name.split(".")[0] for a in item.names}
    return defined, imported


def test_every_name_is_imported_from_where_it_is_defined() -> None:
    mods = modules()
    seen: dict[str, tuple[set[str], set[str]]] = {}
    wrong = []
    files = [p for d in ("src", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module in mods):
                continue
            source = mods[node.module]
            if source.name == "__init__.py":
                continue
            defined, imported = seen.setdefault(node.module, top_level(source))
            for alias in node.names:
                name = alias.name
                if name in imported and name not in defined and f"{node.module}.{name}" not in mods:
                    wrong.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: {name} from {node.module}"
                    )
    assert not wrong, "imported through a module that does not define it:\n" + "\n".join(wrong)


def test_the_package_root_keeps_its_doors_only() -> None:
    assert len(list((SRC / "moot").glob("*.py"))) <= 12
