"""`stitcher doctor` and `stitcher model export`: checking the set-up, preparing the model."""

from __future__ import annotations

from typing import Annotated

import typer

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.options import (
    CHUNKING,
    JsonOpt,
    ModelOpt,
    ServerFlags,
    collection_option,
    connecting,
    tenant_option,
    value,
)
from stitcher.cli.output import data_console, print_json, shown
from stitcher.config import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, connection_settings

# The library core (stitcher.doctor, api and render) is imported inside the functions that use it:
# `stitcher --help`, completion and a mistyped flag load none of it (tests/test_startup.py).

model_app = typer.Typer(help="Embedding models.")


@model_app.command("export")
def model_export(model: ModelOpt = None) -> None:
    """Export the model to ONNX so searches start without torch."""
    from stitcher.api import export_model

    for path in export_model(model):
        typer.echo(str(path))


@connecting
def doctor(
    collection: Annotated[str | None, collection_option("Check only this collection.")] = None,
    tenant: Annotated[
        str | None, tenant_option("Also check this tenant (env: STITCHER_TENANT).")
    ] = None,
    model: ModelOpt = None,
    chunk_size: Annotated[
        int, value("N", "Chunk size ingest uses.", CHUNKING)
    ] = DEFAULT_CHUNK_SIZE,
    chunk_overlap: Annotated[
        int, value("N", "Chunk overlap ingest uses.", CHUNKING)
    ] = DEFAULT_CHUNK_OVERLAP,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Check the setup, one line each with the fix; changes nothing.

    Go, the server binary, the model, the server, key file, disk and collections. Exit 1 when a
    check fails.
    """
    from stitcher import doctor as checks
    from stitcher import render

    options = checks.DoctorOptions(
        connection=connection_settings(
            server.url, server.api_key, server.grpc_port, profile=INVOCATION.profile
        ),
        model=model,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        collection=collection,
        tenant=tenant,
    )
    found = [check.spelled(shown) for check in checks.run_checks(options)]
    if as_json:
        print_json([c.to_json() for c in found])
    else:
        render.doctor_report(data_console(), found)
    raise typer.Exit(checks.exit_status(found))
