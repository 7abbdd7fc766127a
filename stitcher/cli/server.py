"""`stitcher server install|start|stop|status|backup|restore`: the local Weaviate server."""

from __future__ import annotations

from typing import Annotated

import typer

from stitcher.cli.library import build_local_server_on_first_use, install_server
from stitcher.cli.options import JsonOpt, collection_option, value
from stitcher.cli.output import (
    data_console,
    error_console,
    error_line,
    notice_console,
    print_json,
    shown,
)
from stitcher.errors import ExitStatus

# The library core (stitcher.server, provision, warm, api and render) is imported inside the
# functions that use it: `stitcher --help`, completion and a mistyped flag load none of it
# (tests/test_startup.py).

server_app = typer.Typer(help="The local Weaviate server (used when no --url is given).")


@server_app.command("install")
def server_install() -> None:
    """Build the pinned Weaviate server once (cached; ~8 minutes cold)."""
    typer.echo(str(install_server()))


@server_app.command("start")
def server_start(
    nodes: Annotated[
        int | None,
        value(
            "N",
            "1, or a local cluster of N nodes. Default: as now, else 1.",
            None,
            "--nodes",
            min=1,
        ),
    ] = None,
    timeout: Annotated[float, value("SECONDS", "How long to wait until it is ready.")] = 120,
) -> None:
    """Start the local server (no-op when it is running) and print its URL."""
    from stitcher import server

    build_local_server_on_first_use()
    err = notice_console()
    info = server.start(notice=lambda m: err.print(shown(m)), nodes=nodes, timeout=timeout)
    typer.echo(info.url)
    what = f"{info.node_count}-node cluster, entry node" if info.node_count > 1 else "running"
    err.print(
        f"Weaviate {info.version} {what} (pid {info.pid}, gRPC port {info.grpc_port}, "
        f"data in {info.data_path})"
    )


@server_app.command("stop")
def server_stop() -> None:
    """Stop the local server (every node of a local cluster)."""
    from stitcher import server, warm

    warm.stop_worker()  # its sessions point at this server
    stopped = server.stop()
    notice_console().print("stopped" if stopped else "no local server was running")


@server_app.command("status")
def server_status(as_json: JsonOpt = False) -> None:
    """The local server (version, ports, collections) and the warm search worker."""
    from stitcher import render, server, warm

    state = server.status()
    data = {**state.to_json(), "warm_worker": warm.summary()}
    if as_json:
        print_json(data, indent=2)
    else:
        render.server_status(data_console(), data)
    if state.state in ("stale", "degraded"):
        # A script polling the status must not take a dead server for a healthy one.
        error_console().print(error_line(f"the local server is {state.state}: {state.detail}"))
        raise typer.Exit(ExitStatus.FAILED)


BackupCollectionsOpt = Annotated[
    list[str] | None,
    collection_option("Only this collection (repeatable). Default: all.", panel=None),
]
BackupIdOpt = Annotated[
    str,
    typer.Argument(metavar="ID", help="Backup id: a-z, 0-9, - and _ (e.g. 2026-12-03)."),
]


@server_app.command("backup")
def server_backup(backup_id: BackupIdOpt, collections: BackupCollectionsOpt = None) -> None:
    """Back up collections of the local server to its backups folder.

    Weaviate's filesystem backup: fast, exact. For another server use `stitcher export`.
    """
    from stitcher.api import backup_local

    build_local_server_on_first_use()
    err = notice_console()
    report = backup_local(backup_id, collections, notice=lambda m: err.print(shown(m)))
    typer.echo(report.one_line("created"))


@server_app.command("restore")
def server_restore(backup_id: BackupIdOpt, collections: BackupCollectionsOpt = None) -> None:
    """Restore collections from a backup of the local server (never over an existing one)."""
    from stitcher.api import restore_local

    build_local_server_on_first_use()
    err = notice_console()
    report = restore_local(backup_id, collections, notice=lambda m: err.print(shown(m)))
    typer.echo(report.one_line("restored"))
