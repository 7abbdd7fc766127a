"""Every error stitcher raises on purpose is a class of stitcher.errors, and one table gives the
exit status both of a raised error and of a run that ended with several problems."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import stitcher
from stitcher import errors
from stitcher.errors import (
    ExitStatus,
    InputsUnreadable,
    LockHeld,
    PruneRefused,
    StitcherError,
    UsageError,
    WriteFailed,
    exit_status_of_problems,
)

#: The modules that defined errors of their own before they all moved to stitcher.errors; they
#: still export them under the old names.
FORMER_HOMES = {
    "stitcher.faults": ["ServerFault", "ServerLost", "SchemaChanged", "RequestRefused"],
    "stitcher.sql": ["SqlError"],
    "stitcher.transfer": ["ExportFileInvalid"],
    "stitcher.loaders": ["EmptyDocument"],
    "stitcher.graph.resolve": ["AmbiguousEntity", "UnknownEntity"],
    "stitcher.store.schema": ["MetadataConflict"],
    "stitcher.request": ["WireError"],
}


def _all_subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _all_subclasses(sub)
    return found


def test_every_error_class_lives_in_errors_and_old_imports_still_work() -> None:
    for module, names in FORMER_HOMES.items():
        loaded = importlib.import_module(module)
        for name in names:
            assert getattr(loaded, name).__module__ == "stitcher.errors", (module, name)
    strays = {
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _all_subclasses(StitcherError)
        if cls.__module__.startswith("stitcher.") and cls.__module__ != "stitcher.errors"
    }
    assert not strays


def exception_classes_outside(root: Path, home: str) -> list[str]:
    """Each public class in the package at `root` (except its module `home`) whose base is an
    exception, as 'path: Name': a base named like one (…Error, …Exception) or defined in
    `home`. A private class (`_Fallback`) is a module's own signal, never seen outside it."""
    defined_at_home = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).as_posix()
        if relative == home:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = [ast.unparse(base).rpartition(".")[2] for base in node.bases]
            if any(b.endswith(("Error", "Exception")) or b in defined_at_home for b in bases):
                found.append(f"{relative}: {node.name}")
    return found


def test_no_module_but_errors_defines_an_exception_class() -> None:
    root = Path(stitcher.__file__).parent
    assert exception_classes_outside(root, "stitcher/errors.py") == []


def test_an_exception_class_elsewhere_is_named(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "errors.py").write_text("class Refused(Exception):\n    pass\n")
    (package / "other.py").write_text(
        "class Conflict(ValueError):\n    pass\n\n\n"
        "class Later(UsageError):\n    pass\n\n\n"
        "class _Signal(Exception):\n    pass\n\n\n"
        "class Plain:\n    pass\n"
    )
    assert exception_classes_outside(package, "pkg/errors.py") == [
        "pkg/other.py: Conflict",
        "pkg/other.py: Later",
    ]


@pytest.mark.parametrize(
    ("problems", "status"),
    [
        ([], ExitStatus.OK),
        ([InputsUnreadable], ExitStatus.UNREADABLE),
        ([InputsUnreadable, PruneRefused], ExitStatus.PRUNE_REFUSED),
        ([PruneRefused, InputsUnreadable, WriteFailed], ExitStatus.FAILED),
        ([LockHeld], ExitStatus.BUSY),
    ],
)
def test_a_run_with_several_problems_exits_with_the_most_serious(
    problems: list[type[StitcherError]], status: ExitStatus
) -> None:
    assert exit_status_of_problems(problems) == status


def test_a_raised_error_and_a_finished_run_read_the_same_table() -> None:
    for kind in (LockHeld, PruneRefused, UsageError, InputsUnreadable, WriteFailed):
        assert kind("x").exit_status == exit_status_of_problems([kind])
