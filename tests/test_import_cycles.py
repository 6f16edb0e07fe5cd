"""The benchmarks import one another without a circle, as the package does (import-linter's
contracts in pyproject.toml hold moot itself): a module that needs another's helpers finds
them in a module below both."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def imports(path: Path, names: set[str]) -> set[str]:
    """The modules of NAMES that PATH imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found & names


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another round a circle (Tarjan's components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == node:
                    break
            if len(group) > 1 or node in graph[node]:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_circles_finds_a_circle_and_only_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_benchmark_imports_round_a_circle() -> None:
    modules = {p.stem: p for p in BENCHMARKS.glob("*.py")}
    graph = {name: imports(path, set(modules)) - {name} for name, path in modules.items()}
    assert "bench_rates" in graph["bench_floor"]  # the graph is read: a known import is in it
    assert circles(graph) == []
