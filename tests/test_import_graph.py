"""The package's imports form layers that only point down: no module imports one that imports it
back, however many steps around and wherever the import statement stands.

The graph is read from the source (ast), so imports inside functions count: they run as soon as
the function does, and hiding a cycle in one is what this test is for. Imports under
`if TYPE_CHECKING:` never run and are left out. Cycles are looked for twice: between modules,
and between the package's top-level parts (`stitcher.store`, `stitcher.graph`, `stitcher.api`,
...), where `store/ -> graph/ -> store/` is a cycle even when no single module closes it.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import stitcher

Graph = dict[str, set[str]]


def package_modules(package: str, root: Path) -> dict[str, Path]:
    """Every module of the package in folder `root`, with its source file (nothing imported)."""
    found = {package: root / "__init__.py"}
    for info in pkgutil.iter_modules([str(root)], prefix=package + "."):
        folder = root / info.name.rpartition(".")[2]
        if info.ispkg:
            found.update(package_modules(info.name, folder))
        else:
            found[info.name] = folder.with_suffix(".py")
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def _import_statements(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run: module level, in functions and classes, not TYPE_CHECKING."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for other in node.orelse:
                yield from _import_statements(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _import_statements(node)


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement loads (`from a import b` may load module a.b)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join([*base, node.module] if node.module else base)
    else:
        origin = node.module or ""
    return [origin] + [f"{origin}.{alias.name}" for alias in node.names]


def import_graph(modules: Mapping[str, Path]) -> Graph:
    """module -> the modules of the same package it imports."""
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _import_statements(tree):
            names = _imported(node, name, is_package)
            if isinstance(node, ast.ImportFrom):
                # `from pkg import sub` loads module pkg.sub; `from mod import name` loads mod.
                origin, *members = names
                submodules = [member for member in members if member in modules]
                names = submodules + ([origin] if len(submodules) < len(members) else [])
            for target in names:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def part_graph(graph: Graph, package: str) -> Graph:
    """The graph between the package's top-level parts (`pkg.store.memory` -> `pkg.store`)."""

    def part(module: str) -> str:
        return ".".join(module.split(".")[:2]) if module != package else package

    parts: Graph = {part(module): set() for module in graph}
    for module, targets in graph.items():
        parts[part(module)].update(part(t) for t in targets if part(t) != part(module))
    return parts


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle as a path that ends where it starts, or None (depth-first search)."""
    state: dict[str, str] = {}  # "open" while on the current path, then "done"
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def cycles_message(graph: Graph, package: str) -> str | None:
    """What is wrong with the package's imports, or None when its layers only point down."""
    for kind, checked in (("modules", graph), ("parts", part_graph(graph, package))):
        cycle = find_cycle(checked)
        if cycle:
            return f"import cycle between {kind}: {' -> '.join(cycle)}"
    return None


STITCHER_ROOT = Path(stitcher.__file__).parent
MODULES = package_modules("stitcher", STITCHER_ROOT)


def test_the_graph_covers_every_module_python_finds() -> None:
    walked = {info.name for info in pkgutil.walk_packages(stitcher.__path__, prefix="stitcher.")}
    assert set(MODULES) == walked | {"stitcher"}


# `python -m stitcher` runs the CLI when imported; it is in the graph all the same.
@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith(".__main__")))
def test_every_module_imports(module: str) -> None:
    assert importlib.import_module(module).__name__ == module


def test_stitcher_has_no_import_cycle() -> None:
    graph = import_graph(MODULES)
    # The graph is real: the facade reaches the store through the session.
    assert "stitcher.session" in graph["stitcher.api"]
    assert "stitcher.store.weaviate" in graph["stitcher.session"]
    assert cycles_message(graph, "stitcher") is None


#: Test doubles and test kits: the product never imports them.
TEST_ONLY = {"stitcher.store.memory", "stitcher.testing"}


def test_no_product_module_imports_a_test_double() -> None:
    graph = import_graph(MODULES)
    assert set(graph) >= TEST_ONLY  # the names above are still modules
    importers = {
        module: sorted(targets & TEST_ONLY)
        for module, targets in graph.items()
        if targets & TEST_ONLY and module not in TEST_ONLY
    }
    assert importers == {}


def _write_package(root: Path, files: Mapping[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "pkg"


def test_a_cycle_hidden_in_a_function_is_found_and_named(tmp_path: Path) -> None:
    root = _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": """
                def helper():
                    from pkg.high import top  # the upward import that closes the cycle

                    return top
            """,
            "pkg/high.py": "from pkg import low\n\ntop = 1\n",
            "pkg/typed.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from pkg.high import top  # never runs: not an edge
            """,
        },
    )
    modules = package_modules("pkg", root)
    assert set(modules) == {"pkg", "pkg.low", "pkg.high", "pkg.typed"}
    graph = import_graph(modules)
    assert graph["pkg.typed"] == set()
    assert cycles_message(graph, "pkg") == (
        "import cycle between modules: pkg.high -> pkg.low -> pkg.high"
    )


def test_a_cycle_between_subpackages_is_found_though_no_module_closes_it(
    tmp_path: Path,
) -> None:
    root = _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/store/__init__.py": "",
            "pkg/store/memory.py": "from ..graph.paths import MENTIONS\n",
            "pkg/store/schema.py": "PATTERN = '*'\n",
            "pkg/graph/__init__.py": "",
            "pkg/graph/paths.py": "MENTIONS = 'mentions'\n",
            "pkg/graph/filters.py": "from pkg.store import schema\n",
        },
    )
    graph = import_graph(package_modules("pkg", root))
    assert find_cycle(graph) is None
    assert cycles_message(graph, "pkg") == (
        "import cycle between parts: pkg.graph -> pkg.store -> pkg.graph"
    )
