"""`stitcher ingest`: load files into a collection."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.library import open_stitcher
from stitcher.cli.options import (
    ADVANCED,
    CHUNKING,
    COLLECTION,
    INPUT,
    MODEL,
    OUTPUT,
    CollectionOpt,
    ConsistencyOpt,
    GrpcOpt,
    JsonOpt,
    KeyOpt,
    ModelOpt,
    ReplicationOpt,
    TenantOpt,
    UrlOpt,
    WaitOpt,
)
from stitcher.cli.output import echo_report, error_console, error_line, notice_console, shown
from stitcher.cli.process import process_seconds
from stitcher.config import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, DEFAULT_COLLECTION
from stitcher.errors import ExitStatus, one_line

# The library core (stitcher.ingest, graph and render) is imported inside the functions that use
# it: `stitcher --help`, completion and a mistyped flag load none of it (tests/test_startup.py).


def ingest(
    paths: Annotated[
        list[str],
        typer.Argument(metavar="PATH...", help="Files or folders; - reads paths from stdin."),
    ],
    glob: Annotated[
        str | None,
        typer.Option(
            metavar="GLOB", help="Only files matching it, e.g. '**/*.md'.", rich_help_panel=INPUT
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help="Source name. Default: the folder's name.", rich_help_panel=INPUT
        ),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option(
            "--tag", metavar="TAG", help="Tag every document (repeatable).", rich_help_panel=INPUT
        ),
    ] = None,
    tags_from_dirs: Annotated[
        bool,
        typer.Option(
            "--tags-from-dirs", help="Tag documents with their folder names.", rich_help_panel=INPUT
        ),
    ] = False,
    mentions_from: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Organizations each document mentions.", rich_help_panel=INPUT
        ),
    ] = None,
    chunk_size: Annotated[
        int, typer.Option(metavar="N", help="Characters per chunk.", rich_help_panel=CHUNKING)
    ] = DEFAULT_CHUNK_SIZE,
    chunk_overlap: Annotated[
        int,
        typer.Option(metavar="N", help="Characters neighbours share.", rich_help_panel=CHUNKING),
    ] = DEFAULT_CHUNK_OVERLAP,
    model: ModelOpt = None,
    batch_size: Annotated[
        int, typer.Option(metavar="N", help="Texts per embedding batch.", rich_help_panel=MODEL)
    ] = 32,
    device: Annotated[
        str | None,
        typer.Option(
            metavar="DEVICE",
            help="cpu, cuda or auto (env: STITCHER_DEVICE).",
            rich_help_panel=MODEL,
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            min=1,
            help="Encode processes (env: STITCHER_WORKERS).",
            rich_help_panel=MODEL,
        ),
    ] = None,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    replication_factor: ReplicationOpt = None,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune", help="Delete documents whose files vanished.", rich_help_panel=COLLECTION
        ),
    ] = False,
    max_delete: Annotated[
        str | None,
        typer.Option(
            metavar="N|P%",
            help="Most --prune deletes (default 50%).",
            rich_help_panel=COLLECTION,
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Show what would change; write nothing.", rich_help_panel=OUTPUT
        ),
    ] = False,
    as_json: JsonOpt = False,
    wait: WaitOpt = False,
    reread: Annotated[
        bool,
        typer.Option("--reread", help="Load unchanged files too.", rich_help_panel=ADVANCED),
    ] = False,
    consistency: ConsistencyOpt = "quorum",
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Load files into a collection; safe to re-run."""
    from stitcher import render
    from stitcher.graph import read_mentions_file
    from stitcher.ingest import DeleteLimit, IngestOptions

    options = IngestOptions(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        glob=glob,
        prune=prune,
        dry_run=dry_run,
        tags=tuple(tag or ()),
        tags_from_dirs=tags_from_dirs,
        batch_size=batch_size,
        mentions=read_mentions_file(mentions_from) if mentions_from else None,
        source=source,
        max_delete=DeleteLimit.parse(max_delete) if max_delete is not None else None,
        device=device or "auto",
        workers=workers or 1,
    )
    err = notice_console()
    live = err.is_terminal and not INVOCATION.quiet
    display = render.IngestDisplay(err, shown) if live else render.QuietDisplay(err, shown)
    with (
        open_stitcher(
            url,
            api_key,
            grpc_port,
            collection,
            consistency=consistency,
            replication_factor=replication_factor,
            tenant=tenant,
        ) as s,
        display,
    ):
        summary = s.ingest(
            paths,
            model=model,
            options=options,
            stdin=sys.stdin,
            progress=display,
            wait=wait,
            reread=reread,
        )
    summary.seconds = process_seconds()  # the whole command's, as cron and `time` count it
    for name, message in summary.problems(shown).items():
        error_console().print(
            error_line(message if message.startswith(name) else f"{name}: {message}")
        )
    # Under --quiet a run that went well and changed nothing prints nothing: cron mails nobody.
    idle = not summary.changed and summary.exit_status == ExitStatus.OK
    if not (INVOCATION.quiet and idle) or as_json or dry_run:
        echo_report(summary, as_json)
    if dry_run and not as_json:
        for label, names in (
            ("add", summary.added),
            ("update", summary.updated),
            ("delete", summary.deleted),
        ):
            for name in names:
                typer.echo(f"  would {label}: {one_line(name)}")
        for skipped in summary.skipped:
            typer.echo(
                f"  would skip: {one_line(skipped.source)} ({skipped.kind}: {skipped.reason})"
            )
    if summary.exit_status == ExitStatus.PRUNE_REFUSED and summary.prune_refused is not None:
        raise summary.prune_refused
    raise typer.Exit(summary.exit_status)
