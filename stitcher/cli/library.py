"""How a command reaches the library: a Stitcher opened with this run's profile, its notices on
stderr, and the local server built on first use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.options import ServerFlags
from stitcher.cli.output import error_console, notice_console, shown

# The library core (stitcher.api and what it stands on, render, provision) is imported inside the
# functions that use it: `stitcher --help` loads none of it (tests/test_startup.py).

if TYPE_CHECKING:
    from stitcher.api import Stitcher

#: Opens a command's collection (its name, its tenant) instead of connecting to a server.
Opener = Callable[[str, str | None], "Stitcher"]

_openers: list[Opener] = []


@contextmanager
def commands_open(opener: Opener) -> Iterator[None]:
    """Every command run in this process meanwhile (through `main`) opens its collection as
    `opener(collection, tenant)` instead of connecting to a server, and searches in-process.

    For tests (stitcher.testing.cli_on_stores): the CLI's logic on the in-memory store. A
    function to call, not a setting, so that no environment or configuration reaches it.
    """
    _openers.append(opener)
    try:
        yield
    finally:
        _openers.remove(opener)


def opened_in_process() -> bool:
    """Whether commands open their collections through `commands_open` now."""
    return bool(_openers)


@contextmanager
def open_stitcher(
    server: ServerFlags,
    collection: str,
    *,
    consistency: str = "quorum",
    replication_factor: int | None = None,
    tenant: str | None = None,
) -> Iterator[Stitcher]:
    if _openers:
        with _openers[-1](collection, tenant) as given:
            yield given
        return
    from stitcher.api import Stitcher

    err = notice_console()
    with Stitcher(
        server.url,
        server.api_key,
        collection,
        grpc_port=server.grpc_port,
        notice=lambda m: err.print(shown(m)),
        profile=INVOCATION.profile,
        replication_factor=replication_factor,
        consistency=consistency,
        tenant=tenant,
    ) as s:
        if s.connection.url is None:
            build_local_server_on_first_use()
        yield s


def install_server() -> Path:
    """`go install` the pinned Weaviate (a no-op when it is cached), showing its progress."""
    from stitcher import render
    from stitcher.provision import ensure_binary

    err = notice_console()
    # Go's own output goes to the log file the display names; a failure shows its last lines
    # (on the error console: --quiet never hides why an install failed).
    live = err.is_terminal and not INVOCATION.quiet
    display = render.InstallDisplay(err, error_console(), live=live)
    with display:
        return ensure_binary(events=display)


def build_local_server_on_first_use() -> None:
    """A command that will start the local server builds it first when it is not built yet
    (minutes, with `server install`'s progress) instead of failing with "run server install"."""
    from stitcher.provision import binary_path

    if not binary_path().is_file():
        install_server()
