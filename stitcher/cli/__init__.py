"""The `stitcher` command: parse flags, call the library, render. No logic of its own.

Exit codes (one place: `main`; the values are stitcher.errors.ExitStatus): 0 success, 1 error,
2 usage error (bad flags, empty query, ambiguous name, a source name taken by another folder),
3 ingest finished but some inputs could not be read, 4 --prune refused to delete (nothing
deleted), 5 another writer holds the collection, 130 interrupted.

User text (file and collection names, queries, error messages) is never parsed as rich markup:
both consoles are created with markup off, and styled lines are built from `Text` pieces.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from contextlib import ExitStack
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import typer

from stitcher.cli.entities import entities_app
from stitcher.cli.help import HELP_OPTION_NAMES, StitcherGroup, setting_flags
from stitcher.cli.invocation import INVOCATION
from stitcher.cli.library import build_local_server_on_first_use, install_server, open_stitcher
from stitcher.cli.options import (
    ADVANCED,
    CHUNKING,
    COLLECTION,
    FILTERS,
    INPUT,
    MODEL,
    OUTPUT,
    QUERY,
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
from stitcher.cli.output import (
    data_console,
    echo_report,
    error_console,
    error_line,
    notice_console,
    print_json,
    shown,
)
from stitcher.cli.process import InterruptWatch, process_seconds, quiet_third_parties
from stitcher.config import (
    DEFAULT_ALPHA,
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_COLLECTION,
    DEFAULT_MAX_EXTEND,
    connection_settings,
    load_settings,
)
from stitcher.errors import (
    ExitStatus,
    StitcherError,
    UsageError,
    one_line,
)

# The library core (stitcher.api and what it stands on, render, doctor, server, transfer, ...)
# and rich are imported inside the commands that use them: loading all of it takes about 0.3 s,
# which `stitcher --help`, completion and a mistyped flag should not pay (tests/test_startup.py).

app = typer.Typer(
    help="Load documents into Weaviate and search them so every hit comes back as whole sentences.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=StitcherGroup,
    context_settings={"help_option_names": HELP_OPTION_NAMES},
)
server_app = typer.Typer(help="The local Weaviate server (used when no --url is given).")
model_app = typer.Typer(help="Embedding models.")
app.add_typer(server_app, name="server")
app.add_typer(entities_app, name="entities")
app.add_typer(model_app, name="model")


# --- global options: --version, --quiet, --verbose ------------------------------------------


def _version_callback(value: bool) -> None:
    if not value:
        return
    for name, number in versions().items():
        typer.echo(f"{name} {number}")
    raise typer.Exit(ExitStatus.OK)


def versions() -> dict[str, str]:
    """stitcher's, the Weaviate client's and the local server's versions (no heavy imports)."""
    # importlib.metadata brings email and zipfile along (~20 ms) that `stitcher --help` needs not
    from importlib.metadata import PackageNotFoundError, version

    from stitcher import server

    found: dict[str, str] = {}
    for name in ("stitcher", "weaviate-client"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    state = server.status()
    if state.state == "running" and state.info is not None:
        found["weaviate-server"] = f"{state.version} (local, {state.info.url})"
    else:
        found["weaviate-server"] = f"not running (local server {state.state})"
    return found


# --- configuration: --profile, stitcher.toml, `config show` -----------------------------------


#: Command options whose defaults come from the environment and stitcher.toml (flags still win).
_CONFIGURABLE_OPTIONS = ("collection", "tenant", "model", "alpha", "limit", "device", "workers")

config_app = typer.Typer(help="Configuration: stitcher.toml profiles and where values come from.")
app.add_typer(config_app, name="config")


@app.callback()
def _root(
    ctx: typer.Context,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="Profile of stitcher.toml to use (env: STITCHER_PROFILE). Default: the file's "
            "default_profile.",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_version_callback,
            is_eager=True,
            help="Print the versions of stitcher, weaviate-client and the local server.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="No notices or progress on stderr; errors still show."),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="Also show other packages' warnings (pypdf, torch, ...)."),
    ] = False,
) -> None:
    """Load documents into Weaviate and search them so every hit comes back as whole sentences."""
    INVOCATION.command = ctx.command
    INVOCATION.quiet = quiet
    INVOCATION.verbose = verbose
    quiet_third_parties(verbose)
    INVOCATION.profile = profile
    settings = load_settings(profile)  # a broken file fails every command the same way (exit 2)
    # click's default_map: values here replace an option's default, but not a flag given.
    ctx.default_map = _defaults_for(ctx.command, settings.overridden())


@cache
def _flags_of_settings() -> dict[str, str]:
    """The long flag of each setting the library names, over every command of the app."""
    return setting_flags(typer.main.get_command(app))


def _defaults_for(command: object, values: dict[str, object]) -> dict[str, object]:
    """click default_map for `command` and its subcommands: the configurable options they have."""
    defaults: dict[str, object] = {}
    for name, sub in (getattr(command, "commands", None) or {}).items():
        if getattr(sub, "commands", None):
            defaults[name] = _defaults_for(sub, values)
            continue
        params = {getattr(p, "name", None) for p in getattr(sub, "params", ())}
        wanted = {
            key: values[key] for key in _CONFIGURABLE_OPTIONS if key in params & values.keys()
        }
        if wanted:
            defaults[name] = wanted
    return defaults


@config_app.command("show")
def config_show(as_json: JsonOpt = False) -> None:
    """The effective settings and where each comes from (flag, environment, file, default)."""
    data = load_settings(INVOCATION.profile).to_json()
    if as_json:
        print_json(data, indent=2)
        return
    # Plain aligned lines: greppable, and a value is never taken for rich markup.
    known = ", ".join(data["profiles"]) or "none"
    typer.echo(f"profile     {data['profile'] or '(none)'}   (profiles: {known})")
    for path in data["files"] or ["(no stitcher.toml found)"]:
        typer.echo(f"file        {path}")
    for key, item in data["settings"].items():
        value = "(local server)" if key == "url" and item["value"] is None else item["value"]
        shown = "-" if value is None else value
        typer.echo(f"{key:<11} {shown!s:<40} {item['source']}")


# --- server ---------------------------------------------------------------------------------


@server_app.command("install")
def server_install() -> None:
    """Build the pinned Weaviate server once (cached; ~8 minutes cold)."""
    typer.echo(str(install_server()))


@server_app.command("start")
def server_start(
    nodes: Annotated[
        int | None,
        typer.Option(
            "--nodes",
            metavar="N",
            min=1,
            help="1, or a local cluster of N nodes. Default: as now, else 1.",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option(metavar="SECONDS", help="How long to wait until it is ready.")
    ] = 120,
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
    typer.Option(
        "--collection",
        "-c",
        metavar="NAME",
        help="Only this collection (repeatable). Default: all.",
    ),
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


# --- model ----------------------------------------------------------------------------------


@model_app.command("export")
def model_export(model: ModelOpt = None) -> None:
    """Export the model to ONNX so searches start without torch."""
    from stitcher.api import export_model

    for path in export_model(model):
        typer.echo(str(path))


# --- ingest ---------------------------------------------------------------------------------


@app.command()
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


# --- search ---------------------------------------------------------------------------------


WhereOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        "-w",
        metavar="FILTER",
        help="field=value, field>=v, ...: all must hold (repeatable).",
        rich_help_panel=FILTERS,
    ),
]


@app.command()
def search(
    query: Annotated[
        str | None,
        typer.Argument(metavar="QUERY", help="What to look for. None: the latest documents."),
    ] = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", "-k", metavar="N", help="Passages to return.", rich_help_panel=QUERY
        ),
    ] = 5,
    alpha: Annotated[
        float | None,
        typer.Option(
            metavar="0..1",
            help=f"Vector weight (0: keyword only). Default: {DEFAULT_ALPHA}.",
            rich_help_panel=QUERY,
        ),
    ] = None,
    fusion: Annotated[
        str,
        typer.Option(
            metavar="KIND", help="relative (scores) or ranked (ranks).", rich_help_panel=QUERY
        ),
    ] = "relative",
    no_stitch: Annotated[
        bool, typer.Option("--no-stitch", help="Return the raw chunks.", rich_help_panel=QUERY)
    ] = False,
    max_extend: Annotated[
        int,
        typer.Option(
            metavar="N", help="Characters stitching may add per side.", rich_help_panel=QUERY
        ),
    ] = DEFAULT_MAX_EXTEND,
    where: WhereOpt = None,
    where_any: Annotated[
        list[str] | None,
        typer.Option(
            "--where-any",
            metavar="FILTER",
            help="Filter; one must hold (repeatable).",
            rich_help_panel=FILTERS,
        ),
    ] = None,
    latest: Annotated[
        bool,
        typer.Option(
            "--latest", help="Newest documents first, no ranking.", rich_help_panel=FILTERS
        ),
    ] = False,
    doc: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Only this document (fuzzy title or path).",
            rich_help_panel=FILTERS,
        ),
    ] = None,
    org: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Only chunks mentioning this organization.",
            rich_help_panel=FILTERS,
        ),
    ] = None,
    sql: Annotated[
        str | None,
        typer.Option(
            metavar="SQL", help="Documents selected by SQL (with --db).", rich_help_panel=FILTERS
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="SQLite file for --sql (read-only).", rich_help_panel=FILTERS
        ),
    ] = None,
    join: Annotated[
        str,
        typer.Option(
            metavar="FIELD", help="Field the --sql values match.", rich_help_panel=FILTERS
        ),
    ] = "title",
    model: ModelOpt = None,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    as_json: JsonOpt = False,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Show how each score was made.", rich_help_panel=OUTPUT),
    ] = False,
    queries: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="One query per line (- stdin); JSON Lines.", rich_help_panel=OUTPUT
        ),
    ] = None,
    warm: Annotated[
        bool | None,
        typer.Option(
            "--warm/--no-warm",
            help="Use the warm search worker. Default: at a terminal.",
            show_default=False,
            rich_help_panel=ADVANCED,
        ),
    ] = None,
    consistency: ConsistencyOpt = "quorum",
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Hybrid search; every hit comes back as whole sentences."""
    from stitcher.request import SearchRequest, SqlJoin
    from stitcher.where import parse_where

    if query is not None and not query.strip():
        raise UsageError("the query is empty (omit it, or use --latest, to list the latest)")
    if (sql is None) != (db is None):
        raise UsageError("--sql and --db go together")
    request = SearchRequest(
        query=query,
        limit=limit,
        alpha=alpha,
        fusion=fusion,
        where=parse_where(where or (), where_any or ()) or None,
        latest=latest,
        doc=doc,
        org=org,
        sql=SqlJoin(sql=sql, db=str(db), join=join) if sql is not None else None,
        model=model,
        stitch=not no_stitch,
        max_extend=max_extend,
        explain=explain,
    )
    request.validate()
    warm_request = None
    if queries is None and sql is None and not INVOCATION.verbose:  # --verbose: warnings are live
        warm_request = _warm_request(
            warm,
            {
                "connection": (url, api_key, grpc_port),
                "collection": collection,
                "tenant": tenant,
                "consistency": consistency,
                "search": request.to_wire(),
                "as_json": as_json,
            },
        )
        if warm_request is not None:
            answered = _ask_warm_worker(warm_request, explain)
            if answered == "served":
                return
            if answered == "declined":  # a live worker left this one to us: start no other
                warm_request = None
    with open_stitcher(
        url, api_key, grpc_port, collection, consistency=consistency, tenant=tenant
    ) as s:
        if queries is not None:
            with ExitStack() as stack:
                lines = (
                    sys.stdin
                    if str(queries) == "-"
                    else stack.enter_context(queries.open(encoding="utf-8"))
                )
                for line in lines:
                    if line.strip():
                        result = s.run(request.ranking(line.strip())).spelled(shown)
                        print_json(result.to_json(explain))
            return
        result = s.run(request).spelled(shown)
    if as_json:
        print_json(result.to_json(explain))
    else:
        from stitcher import render  # rich's panels: not loaded for --json and --queries

        render.search_results(data_console(), result, explain=explain)
    if warm_request is not None:
        _start_warm_worker(warm_request)


def _warm_request(flag: bool | None, request: dict[str, Any]) -> dict[str, Any] | None:
    """The worker's request for this search, or None when the worker is not to be used."""
    from stitcher import warm

    settings = load_settings(INVOCATION.profile)
    mode = {True: "always", False: "never", None: settings.value("warm")}[flag]
    if not warm.wanted(mode, stdin_tty=sys.stdin.isatty(), stdout_tty=sys.stdout.isatty()):
        return None
    try:
        return warm.search_request(
            request, profile=INVOCATION.profile, idle=settings.value("warm_idle")
        )
    except Exception:  # whatever it is, the in-process search meets it and reports it as usual
        return None


def _ask_warm_worker(request: dict[str, Any], explain: bool) -> str:
    """ "served": the worker's result is printed. Otherwise nothing is printed and the search
    runs in-process: "absent" (no worker, or a stale one that is exiting) or "declined" (a live
    worker met an error, a timeout or a local server that is down)."""
    from stitcher import warm

    try:
        answer = warm.search(request)
    except Exception:  # a worker's malfunction is never the user's error: search in-process
        return "absent"
    if answer is None or answer.get("status") == "stale":
        return "absent"
    if answer.get("status") != "ok":
        return "declined"
    err = notice_console()
    for message in answer.get("notices", ()):
        err.print(shown(message))
    if "json" in answer:
        typer.echo(_spelled_json(answer["json"]) if explain else answer["json"])
    else:
        from stitcher import render

        result = warm.result_from_data(answer["result"]).spelled(shown)
        render.search_results(data_console(), result, explain=explain)
    return "served"


def _spelled_json(text: str) -> str:
    """The worker's `--json --explain` line with the settings its alpha_reason names spelled as
    flags (the worker does not know them; the round trip keeps every other byte as it was)."""
    data = json.loads(text)
    if "alpha_reason" not in data:
        return text
    data["alpha_reason"] = shown(data["alpha_reason"])
    return json.dumps(data, ensure_ascii=False)


def _start_warm_worker(request: dict[str, Any]) -> None:
    from stitcher import warm

    try:
        warm.start_worker(request, idle=request["idle"])
    except OSError as error:  # the search itself succeeded; the next one just runs in-process
        notice_console().print(f"warning: no warm search worker: {error}")


@app.command()
def fields(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Fields that --where can filter on, with types and example values."""
    from stitcher import render

    with open_stitcher(url, api_key, grpc_port, collection, tenant=tenant) as s:
        found = s.fields()
    if as_json:
        rows = [{"name": f.name, "type": f.kind, "examples": list(f.examples)} for f in found]
        print_json(rows)
    else:
        render.fields_table(data_console(), found)


@app.command()
def stats(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    as_json: JsonOpt = False,
    documents: Annotated[
        bool,
        typer.Option("--documents", help="Also each document's chunks.", rich_help_panel=OUTPUT),
    ] = False,
    consistency: ConsistencyOpt = "quorum",
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Documents and chunks of a collection, per source.

    --documents adds each document's chunks, --verbose the shards and their nodes.
    """
    from stitcher import render

    with open_stitcher(
        url, api_key, grpc_port, collection, consistency=consistency, tenant=tenant
    ) as s:
        data = s.stats()
    if as_json:
        print_json(data)
    else:
        render.stats_table(data_console(), data, documents=documents, shards=INVOCATION.verbose)


@app.command()
def adopt(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    root: Annotated[
        Path | None,
        typer.Option(metavar="FOLDER", help="Folder the seed ingested from (ids as ingest's)."),
    ] = None,
    model: ModelOpt = None,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Take over a collection built the seed's way, keeping its vectors.

    Converts it in place (LangChain, parent_id chain) so that `stitcher ingest` can update it.
    """
    with open_stitcher(url, api_key, grpc_port, collection) as s:
        report = s.adopt(root=str(root) if root else None, model=model, wait=wait)
    echo_report(report, as_json)


# --- collections ----------------------------------------------------------------------------


@app.command()
def drop(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Really delete it.")] = False,
    all_tenants: Annotated[
        bool,
        typer.Option("--all-tenants", help="Drop a multi-tenant collection, every tenant."),
    ] = False,
    wait: WaitOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Delete a collection or one tenant of it (needs --yes)."""
    what = collection if tenant is None else f"tenant {tenant} of {collection}"
    if not yes:
        raise UsageError(f"this deletes every object in {what!r}; add --yes to confirm")
    if tenant is not None and all_tenants:
        raise UsageError("--tenant drops one tenant, --all-tenants all of them: give one")
    from stitcher import warm

    with open_stitcher(url, api_key, grpc_port, collection, tenant=tenant) as s:
        existed = s.drop(wait=wait, all_tenants=all_tenants)
    warm.stop_worker()  # no session stays open on a collection that is gone
    notice_console().print(f"dropped {what}" if existed else f"{what} did not exist")


# --- tenants: many knowledge bases in one collection ----------------------------------------

tenants_app = typer.Typer(help="Tenants of a multi-tenant collection: list, (de)activate.")
app.add_typer(tenants_app, name="tenants")


@tenants_app.callback(invoke_without_command=True)
def tenants_list(
    ctx: typer.Context,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """List the tenants: name, status, chunks (not counted for inactive ones)."""
    if ctx.invoked_subcommand is not None:
        return
    from stitcher import render

    with open_stitcher(url, api_key, grpc_port, collection) as s:
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
def tenants_deactivate(
    name: TenantNameArg,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Unload a tenant from the server's memory (its files stay on disk).

    The next search or ingest of it activates it again by itself.
    """
    with open_stitcher(url, api_key, grpc_port, collection) as s:
        before = s.set_tenant_active(name, False)
    notice_console().print(f"tenant {name} of {s.collection}: {before} -> INACTIVE")


@tenants_app.command("activate")
def tenants_activate(
    name: TenantNameArg,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Load an inactive tenant again (ahead of its first search)."""
    with open_stitcher(url, api_key, grpc_port, collection) as s:
        before = s.set_tenant_active(name, True)
    notice_console().print(f"tenant {name} of {s.collection}: {before} -> ACTIVE")


# --- export / import: moving a collection with its vectors -----------------------------------


@app.command("export")
def export_command(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="JSON Lines file (.gz: gzip; -: stdout).")
    ],
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    wait: WaitOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Write a collection (or one tenant) with its vectors to a file.

    Vectors and settings included; `stitcher import` reads it.
    """
    with open_stitcher(url, api_key, grpc_port, collection, tenant=tenant) as s:
        report = s.export_to(file, stdout=sys.stdout, wait=wait)
    notice_console().print(report.one_line())


@app.command("import")
def import_command(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="A file written by `stitcher export`.")
    ],
    # Not named `collection`: a profile's collection must not redirect an import silently.
    into: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "-c",
            metavar="NAME",
            help="Import under this name. Default: the file's.",
            rich_help_panel=COLLECTION,
        ),
    ] = None,
    # Not `tenant` either, for the same reason: only the flag names the tenant imported into.
    into_tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant", metavar="NAME", help="Import as this tenant.", rich_help_panel=COLLECTION
        ),
    ] = None,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Create a collection from an export file, vectors included.

    No embedding; safe to re-run (objects already there are skipped). Counts and content hash
    are checked at the end.
    """
    from stitcher.transfer import read_header

    name = into or read_header(file).collection
    with open_stitcher(url, api_key, grpc_port, name, tenant=into_tenant) as s:
        report = s.import_from(file, wait=wait)
    echo_report(report, as_json)


# --- doctor ---------------------------------------------------------------------------------


@app.command()
def doctor(
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "-c",
            metavar="NAME",
            help="Check only this collection.",
            rich_help_panel=COLLECTION,
        ),
    ] = None,
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            metavar="NAME",
            help="Also check this tenant (env: STITCHER_TENANT).",
            show_default=False,
            rich_help_panel=COLLECTION,
        ),
    ] = None,
    model: ModelOpt = None,
    chunk_size: Annotated[
        int, typer.Option(metavar="N", help="Chunk size ingest uses.", rich_help_panel=CHUNKING)
    ] = DEFAULT_CHUNK_SIZE,
    chunk_overlap: Annotated[
        int,
        typer.Option(metavar="N", help="Chunk overlap ingest uses.", rich_help_panel=CHUNKING),
    ] = DEFAULT_CHUNK_OVERLAP,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Check the setup, one line each with the fix; changes nothing.

    Go, the server binary, the model, the server, key file, disk and collections. Exit 1 when a
    check fails.
    """
    from stitcher import doctor as checks
    from stitcher import render

    options = checks.DoctorOptions(
        connection=connection_settings(url, api_key, grpc_port, profile=INVOCATION.profile),
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


# --- error handling: the one place that turns failures into exit codes -------------------------


def _one_line_summaries(*groups: typer.Typer) -> None:
    """Each command's summary in a command list: its docstring's first paragraph on one line.

    typer's command lists keep the docstring's own line breaks in rich mode (its check of the
    markup mode is the wrong way round), so a two-line summary showed as a cut-off sentence.
    """
    for group in groups:
        for info in group.registered_commands:
            text = info.help or inspect.getdoc(info.callback) or ""
            info.short_help = info.short_help or " ".join(text.split("\n\n")[0].split())


_one_line_summaries(app, server_app, model_app, config_app, entities_app, tenants_app)


_SIGINT = InterruptWatch()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `stitcher` script: run the command, return its exit status.

    The app runs with click's standalone mode off, so that errors come back here instead of being
    printed by click; the price is that click then *returns* the code of `typer.Exit(n)` (and of
    Ctrl-C, as 130) instead of exiting. Whatever way a command ends — return value, typer.Exit,
    SystemExit, an exception — ends up as the int returned here, which the script passes to
    sys.exit.
    """
    show_traceback = os.environ.get("STITCHER_TRACEBACK") == "1"
    _SIGINT.install()
    try:
        status = _run(argv, show_traceback)
    finally:
        _SIGINT.uninstall()
    if _SIGINT.seen and status != ExitStatus.OK:
        # Ctrl-C (or cron's SIGINT) can land inside a library that turns KeyboardInterrupt into
        # its own error (pydantic building a validator reports a SchemaError): whatever failure
        # follows an interrupt is the interrupt.
        if status != ExitStatus.INTERRUPTED:
            error_console().print("interrupted")
        return int(ExitStatus.INTERRUPTED)
    return status


def _run(argv: list[str] | None, show_traceback: bool) -> int:
    try:
        outcome = app(args=argv, prog_name="stitcher", standalone_mode=False)
    except SystemExit as done:
        outcome = done.code
    except typer.Exit as done:  # click returns these itself; kept so none can slip through
        outcome = done.exit_code
    except StitcherError as error:
        if show_traceback:
            raise
        error_console().print(error_line(_scrub(error.worded(_flags_of_settings()))))
        return int(error.exit_status)
    except KeyboardInterrupt:  # outside click's own handler (which turns it into 130)
        outcome = ExitStatus.INTERRUPTED
    except Exception as error:  # a usage error from typer/click, or a bug
        code = _click_exit_code(error)
        if code is not None:
            return code
        if show_traceback:
            raise
        detail = _first_line(_scrub(str(error)))
        error_console().print(error_line(f"unexpected {type(error).__name__}: {detail}"))
        error_console().print("Run again with STITCHER_TRACEBACK=1 for the traceback.")
        return int(ExitStatus.FAILED)
    status = _exit_status(outcome)
    if status == ExitStatus.INTERRUPTED:
        error_console().print("interrupted")
    return status


def _exit_status(outcome: object) -> int:
    """The process exit status for what the app returned or exited with, as sys.exit would
    make it: None is success, an int is itself, anything else is printed and is a failure."""
    if outcome is None:
        return int(ExitStatus.OK)
    if isinstance(outcome, int):  # ExitStatus and bool included
        return int(outcome)
    error_console().print(str(outcome))
    return int(ExitStatus.FAILED)


def _click_exit_code(error: Exception) -> int | None:
    """Typer vendors click: print its usage errors the way click would, without importing it."""
    show = getattr(error, "show", None)
    exit_code = getattr(error, "exit_code", None)
    if callable(show) and isinstance(exit_code, int):
        show()
        return exit_code
    if type(error).__name__ == "Abort":  # click's answer to EOF on a prompt, or Ctrl-C
        error_console().print("interrupted")
        return int(ExitStatus.INTERRUPTED)
    return None


def _first_line(message: str) -> str:
    """An unexpected error's first line: library messages can run to pages (server responses,
    nested causes); STITCHER_TRACEBACK=1 shows all of it."""
    lines = message.strip().splitlines()
    return lines[0] + " …" if len(lines) > 1 else message.strip()


def _scrub(message: str) -> str:
    """Never echo an API key, whatever a library put into its message."""
    for name in ("WEAVIATE_API_KEY",):
        secret = os.environ.get(name)
        if secret:
            message = message.replace(secret, "***")
    return message
