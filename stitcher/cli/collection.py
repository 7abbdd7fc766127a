"""What a collection holds and its tenants: `fields`, `stats`, `adopt`, `drop`, `tenants`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.library import open_stitcher
from stitcher.cli.options import (
    OUTPUT,
    CollectionOpt,
    ConsistencyOpt,
    JsonOpt,
    ModelOpt,
    ServerFlags,
    TenantOpt,
    WaitOpt,
    connecting,
    flag,
    value,
)
from stitcher.cli.output import data_console, echo_report, notice_console, print_json
from stitcher.config import DEFAULT_COLLECTION
from stitcher.errors import UsageError

# The library core (stitcher.warm and render) is imported inside the functions that use it:
# `stitcher --help`, completion and a mistyped flag load none of it (tests/test_startup.py).


@connecting
def fields(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Fields that --where can filter on, with types and example values."""
    from stitcher import render

    with open_stitcher(server, collection, tenant=tenant) as s:
        found = s.fields()
    if as_json:
        rows = [{"name": f.name, "type": f.kind, "examples": list(f.examples)} for f in found]
        print_json(rows)
    else:
        render.fields_table(data_console(), found)


@connecting
def stats(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    as_json: JsonOpt = False,
    documents: Annotated[bool, flag("--documents", "Also each document's chunks.", OUTPUT)] = False,
    consistency: ConsistencyOpt = "quorum",
    *,
    server: ServerFlags,
) -> None:
    """Documents and chunks of a collection, per source.

    --documents adds each document's chunks, --verbose the shards and their nodes.
    """
    from stitcher import render

    with open_stitcher(server, collection, consistency=consistency, tenant=tenant) as s:
        data = s.stats()
    if as_json:
        print_json(data)
    else:
        render.stats_table(data_console(), data, documents=documents, shards=INVOCATION.verbose)


@connecting
def adopt(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    root: Annotated[
        Path | None, value("FOLDER", "Folder the seed ingested from (ids as ingest's).")
    ] = None,
    model: ModelOpt = None,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Take over a collection built the seed's way, keeping its vectors.

    Converts it in place (LangChain, parent_id chain) so that `stitcher ingest` can update it.
    """
    with open_stitcher(server, collection) as s:
        report = s.adopt(root=str(root) if root else None, model=model, wait=wait)
    echo_report(report, as_json)


@connecting
def drop(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    yes: Annotated[bool, flag("--yes", "Really delete it.")] = False,
    all_tenants: Annotated[
        bool, flag("--all-tenants", "Drop a multi-tenant collection, every tenant.")
    ] = False,
    wait: WaitOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Delete a collection or one tenant of it (needs --yes)."""
    what = collection if tenant is None else f"tenant {tenant} of {collection}"
    if not yes:
        raise UsageError(f"this deletes every object in {what!r}; add --yes to confirm")
    if tenant is not None and all_tenants:
        raise UsageError("--tenant drops one tenant, --all-tenants all of them: give one")
    from stitcher import warm

    with open_stitcher(server, collection, tenant=tenant) as s:
        existed = s.drop(wait=wait, all_tenants=all_tenants)
    warm.stop_worker()  # no session stays open on a collection that is gone
    notice_console().print(f"dropped {what}" if existed else f"{what} did not exist")


# --- tenants: many knowledge bases in one collection ----------------------------------------

tenants_app = typer.Typer(help="Tenants of a multi-tenant collection: list, (de)activate.")


@tenants_app.callback(invoke_without_command=True)
@connecting
def tenants_list(
    ctx: typer.Context,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """List the tenants: name, status, chunks (not counted for inactive ones)."""
    if ctx.invoked_subcommand is not None:
        return
    from stitcher import render

    with open_stitcher(server, collection) as s:
        found = s.tenants()
    if as_json:
        rows = [{"name": t.name, "status": t.status, "chunks": t.chunks} for t in found]
        print_json(rows)
    else:
        render.tenants_table(data_console(), found)


TenantNameArg = Annotated[
    str, typer.Argument(metavar="TENANT", help="The tenant.", show_default=False)
]


@tenants_app.command("deactivate")
@connecting
def tenants_deactivate(
    name: TenantNameArg,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    *,
    server: ServerFlags,
) -> None:
    """Unload a tenant from the server's memory (its files stay on disk).

    The next search or ingest of it activates it again by itself.
    """
    with open_stitcher(server, collection) as s:
        before = s.set_tenant_active(name, False)
    notice_console().print(f"tenant {name} of {s.collection}: {before} -> INACTIVE")


@tenants_app.command("activate")
@connecting
def tenants_activate(
    name: TenantNameArg,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    *,
    server: ServerFlags,
) -> None:
    """Load an inactive tenant again (ahead of its first search)."""
    with open_stitcher(server, collection) as s:
        before = s.set_tenant_active(name, True)
    notice_console().print(f"tenant {name} of {s.collection}: {before} -> ACTIVE")
