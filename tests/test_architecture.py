"""The package's layers, read from the source: no import loops, no upward imports.

The import graph is built with ``ast`` from every module under ``src/treelens``,
deferred imports inside functions included and ``if TYPE_CHECKING:`` blocks left
out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import treelens

PACKAGE = Path(treelens.__file__).resolve().parent

#: Bottom to top.  A module may import from its own subpackage and from lower
#: layers; packages that share a layer do not import each other.
LAYERS: list[set[str]] = [
    {"_exceptions", "_version", "_types"},
    {"_core"},
    {"_adapters"},
    {"_importance"},
    {"_explain", "_counterfactual"},
    {"_plots"},
    {"_io"},
    {"_report"},
    {"_cli"},
    {"dask"},
    {"__init__", "__main__"},
]

#: The longest function allowed anywhere in the package, in lines.
MAX_FUNCTION_LINES = 150


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _targets(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]
) -> set[str]:
    """The treelens modules an import statement loads."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name.split(".")[0] == "treelens"}
    if node.level == 0:
        base = node.module or ""
        if base.split(".")[0] != "treelens":
            return set()
    else:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    out = {base}
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        if candidate in known:
            out.add(candidate)
    return out


def _graph() -> dict[str, set[str]]:
    files = sorted(PACKAGE.rglob("*.py"))
    names = {_module_name(p): p for p in files}
    known = set(names)
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _targets(name, _is_package(path), node, known)
        graph[name] = {e for e in edges if e in known and e != name}
    return graph


def _layer(module: str) -> tuple[int, str]:
    parts = module.split(".")
    top = "__init__" if len(parts) == 1 else parts[1]
    for index, layer in enumerate(LAYERS):
        if top in layer:
            return index, top
    raise AssertionError(f"module {module} is in no layer; add it to LAYERS")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return out


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def test_every_module_is_in_a_layer():
    for module in _graph():
        _layer(module)


def test_no_import_loop():
    graph = _graph()
    # A module importing its own package's __init__ is how Python loads it
    # anyway; only loops between distinct modules count.
    assert _cycles(graph) == []


def test_imports_only_go_down():
    wrong = []
    for module, edges in _graph().items():
        level, top = _layer(module)
        for target in edges:
            if target in _parents(module) and target != "treelens":
                continue  # a subpackage's own __init__
            t_level, t_top = _layer(target)
            if t_top == top:
                continue
            if t_level >= level:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_nothing_imports_the_facade():
    offenders = [
        module
        for module, edges in _graph().items()
        if module not in ("treelens", "treelens.__main__") and "treelens" in edges
    ]
    assert offenders == []


def test_no_function_is_too_long():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{_module_name(path)}.{node.name}: {lines} lines")
    assert long == []


def test_no_code_path_is_chosen_by_a_function_name():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(
                    isinstance(s, ast.Attribute) and s.attr == "__name__" for s in sides
                ) and any(isinstance(s, ast.Constant) for s in sides):
                    offenders.append(f"{_module_name(path)}:{node.lineno}")
    assert offenders == []


def test_every_module_is_type_checked():
    # mypy runs in `make check`; no module may opt out of its errors.
    import tomllib

    pyproject = PACKAGE.parent.parent / "pyproject.toml"
    mypy = tomllib.loads(pyproject.read_text())["tool"]["mypy"]
    assert not mypy.get("ignore_errors", False)
    ignored = [
        override["module"]
        for override in mypy.get("overrides", [])
        if override.get("ignore_errors")
    ]
    assert ignored == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ._core._forest import Forest", {"treelens._core._forest"}),
        ("from .. import _exceptions", {"treelens", "treelens._exceptions"}),
        ("import treelens", {"treelens"}),
        ("import numpy", set()),
    ],
)
def test_import_resolution(source, expected):
    node = ast.parse(source).body[0]
    known = {"treelens._core._forest", "treelens._exceptions"}
    module = "treelens._io._files" if source.startswith("from ..") else "treelens.dask"
    assert _targets(module, False, node, known) == expected


def test_a_loop_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
