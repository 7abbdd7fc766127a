"""`stitcher export` and `stitcher import`: a collection moved with its vectors, through a file."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from stitcher.cli.library import open_stitcher
from stitcher.cli.options import (
    CollectionOpt,
    JsonOpt,
    ServerFlags,
    TenantOpt,
    WaitOpt,
    collection_option,
    connecting,
    tenant_option,
)
from stitcher.cli.output import echo_report, notice_console
from stitcher.config import DEFAULT_COLLECTION

# The library core (stitcher.transfer) is imported inside the functions that use it: `stitcher
# --help`, completion and a mistyped flag load none of it (tests/test_startup.py).


@connecting
def export_command(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="JSON Lines file (.gz: gzip; -: stdout).")
    ],
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    wait: WaitOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Write a collection (or one tenant) with its vectors to a file.

    Vectors and settings included; `stitcher import` reads it.
    """
    with open_stitcher(server, collection, tenant=tenant) as s:
        report = s.export_to(file, stdout=sys.stdout, wait=wait)
    notice_console().print(report.one_line())


@connecting
def import_command(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="A file written by `stitcher export`.")
    ],
    # Not named `collection`: a profile's collection must not redirect an import silently.
    into: Annotated[
        str | None, collection_option("Import under this name. Default: the file's.")
    ] = None,
    # Not `tenant` either, for the same reason: only the flag names the tenant imported into.
    into_tenant: Annotated[str | None, tenant_option("Import as this tenant.")] = None,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Create a collection from an export file, vectors included.

    No embedding; safe to re-run (objects already there are skipped). Counts and content hash
    are checked at the end.
    """
    from stitcher.transfer import read_header

    name = into or read_header(file).collection
    with open_stitcher(server, name, tenant=into_tenant) as s:
        report = s.import_from(file, wait=wait)
    echo_report(report, as_json)
