"""Every error stitcher raises on purpose is a class of stitcher.errors, and one table gives the
exit status both of a raised error and of a run that ended with several problems."""

from __future__ import annotations

import importlib

import pytest

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
