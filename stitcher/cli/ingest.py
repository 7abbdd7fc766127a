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
    JsonOpt,
    ModelOpt,
    ReplicationOpt,
    ServerFlags,
    TenantOpt,
    WaitOpt,
    connecting,
    flag,
    value,
)
from stitcher.cli.output import echo_report, error_console, error_line, notice_console, shown
from stitcher.cli.process import process_seconds
from stitcher.config import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, DEFAULT_COLLECTION
from stitcher.errors import ExitStatus, one_line

# The library core (stitcher.ingest, graph and render) is imported inside the functions that use
# it: `stitcher --help`, completion and a mistyped flag load none of it (tests/test_startup.py).


@connecting
def ingest(
    paths: Annotated[
        list[str],
        typer.Argument(metavar="PATH...", help="Files or folders; - reads paths from stdin."),
    ],
    glob: Annotated[
        str | None, value("GLOB", "Only files matching it, e.g. '**/*.md'.", INPUT)
    ] = None,
    source: Annotated[
        str | None, value("NAME", "Source name. Default: the folder's name.", INPUT)
    ] = None,
    tag: Annotated[
        list[str] | None, value("TAG", "Tag every document (repeatable).", INPUT, "--tag")
    ] = None,
    tags_from_dirs: Annotated[
        bool, flag("--tags-from-dirs", "Tag documents with their folder names.", INPUT)
    ] = False,
    mentions_from: Annotated[
        Path | None, value("FILE", "Organizations each document mentions.", INPUT)
    ] = None,
    chunk_size: Annotated[int, value("N", "Characters per chunk.", CHUNKING)] = DEFAULT_CHUNK_SIZE,
    chunk_overlap: Annotated[
        int, value("N", "Characters neighbours share.", CHUNKING)
    ] = DEFAULT_CHUNK_OVERLAP,
    model: ModelOpt = None,
    batch_size: Annotated[int, value("N", "Texts per embedding batch.", MODEL)] = 32,
    device: Annotated[
        str | None, value("DEVICE", "cpu, cuda or auto (env: STITCHER_DEVICE).", MODEL)
    ] = None,
    workers: Annotated[
        int | None, value("N", "Encode processes (env: STITCHER_WORKERS).", MODEL, min=1)
    ] = None,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    replication_factor: ReplicationOpt = None,
    prune: Annotated[
        bool, flag("--prune", "Delete documents whose files vanished.", COLLECTION)
    ] = False,
    max_delete: Annotated[
        str | None, value("N|P%", "Most --prune deletes (default 50%).", COLLECTION)
    ] = None,
    dry_run: Annotated[
        bool, flag("--dry-run", "Show what would change; write nothing.", OUTPUT)
    ] = False,
    as_json: JsonOpt = False,
    wait: WaitOpt = False,
    reread: Annotated[bool, flag("--reread", "Load unchanged files too.", ADVANCED)] = False,
    consistency: ConsistencyOpt = "quorum",
    *,
    server: ServerFlags,
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
            server,
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
