"""The `stitcher` command: parse flags, call the library, render. No logic of its own.

Exit codes (one place: `main`; the values are stitcher.errors.ExitStatus): 0 success, 1 error,
2 usage error (bad flags, empty query, ambiguous name, a source name taken by another folder),
3 ingest finished but some inputs could not be read, 4 --prune refused to delete (nothing
deleted), 5 another writer holds the collection, 130 interrupted.

User text (file and collection names, queries, error messages) is never parsed as rich markup:
both consoles are created with markup off, and styled lines are built from `Text` pieces.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stitcher.cli_entities import entities_app
from stitcher.config import (
    DEFAULT_ALPHA,
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_COLLECTION,
    DEFAULT_MAX_EXTEND,
)
from stitcher.errors import ExitStatus, StitcherError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from stitcher.api import Stitcher

app = typer.Typer(
    help="Load documents into Weaviate and search them so every hit comes back as whole sentences.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
server_app = typer.Typer(help="The local Weaviate server (the default when no --url is given).")
model_app = typer.Typer(help="Embedding models.")
app.add_typer(server_app, name="server")
app.add_typer(entities_app, name="entities")
app.add_typer(model_app, name="model")

# Shared options: every command that talks to Weaviate takes the same three.
UrlOpt = Annotated[
    str | None,
    typer.Option("--url", help="Weaviate URL [env: WEAVIATE_URL]. Default: the local server."),
]
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key", help="API key for --url [env: WEAVIATE_API_KEY].", show_default=False
    ),
]
GrpcOpt = Annotated[
    int | None, typer.Option("--grpc-port", help="gRPC port of --url [env: WEAVIATE_GRPC_PORT].")
]
CollectionOpt = Annotated[str, typer.Option("--collection", "-c", help="Collection to use.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout (for scripts).")]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", help="sentence-transformers model name or path. Default: all-MiniLM-L6-v2."
    ),
]


def _out() -> Console:
    from rich.console import Console

    return Console(soft_wrap=False, highlight=False, markup=False)


def _err() -> Console:
    from rich.console import Console

    # soft_wrap: an error or notice stays one line however long the path in it (cron mail, grep)
    return Console(stderr=True, highlight=False, markup=False, soft_wrap=True)


def _error_line(message: str) -> Text:
    """`error: message` with only the label styled: the message is shown exactly as it is."""
    from rich.text import Text

    return Text.assemble(("error:", "red"), " ", message)


ConsistencyOpt = Annotated[
    str,
    typer.Option(
        "--consistency",
        help="Replicas that must answer each read, write and delete: one, quorum or all.",
        case_sensitive=False,
    ),
]
ReplicationOpt = Annotated[
    int | None,
    typer.Option(
        "--replication-factor",
        min=1,
        help="Replicas of a new collection (default: 1 on one node, 3 on a cluster); must "
        "match an existing collection's.",
    ),
]


@contextmanager
def _stitcher(
    url: str | None,
    api_key: str | None,
    grpc_port: int | None,
    collection: str,
    *,
    consistency: str = "quorum",
    replication_factor: int | None = None,
) -> Iterator[Stitcher]:
    from stitcher.api import Stitcher

    err = _err()
    with Stitcher(
        url,
        api_key,
        collection,
        grpc_port=grpc_port,
        notice=lambda m: err.print(m),
        replication_factor=replication_factor,
        consistency=consistency,
    ) as s:
        yield s


# --- server ---------------------------------------------------------------------------------


@server_app.command("install")
def server_install() -> None:
    """Build the pinned Weaviate server once with `go install` (cached; ~8 minutes cold)."""
    from stitcher.provision import ensure_binary

    err = _err()
    path = ensure_binary(progress=lambda line: err.print(line, markup=False, highlight=False))
    typer.echo(str(path))


@server_app.command("start")
def server_start(
    nodes: Annotated[
        int | None,
        typer.Option(
            "--nodes",
            min=1,
            help="Nodes: 1, or a local replicated cluster (e.g. 3) on loopback ports. "
            "Default: what this home already runs, else 1.",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds to wait for readiness (a cluster: all nodes + leader).")
    ] = 120,
) -> None:
    """Start the local server (no-op when it is running) and print its URL."""
    from stitcher import server

    err = _err()
    info = server.start(notice=lambda m: err.print(m), nodes=nodes, timeout=timeout)
    typer.echo(info.url)
    what = f"{info.node_count}-node cluster, entry node" if info.node_count > 1 else "running"
    err.print(
        f"Weaviate {info.version} {what} (pid {info.pid}, gRPC port {info.grpc_port}, "
        f"data in {info.data_path})"
    )


@server_app.command("stop")
def server_stop() -> None:
    """Stop the local server (every node of a local cluster)."""
    from stitcher import server

    stopped = server.stop()
    _err().print("stopped" if stopped else "no local server was running")


@server_app.command("status")
def server_status(as_json: JsonOpt = False) -> None:
    """Version, ports, data path, collections and object counts of the local server."""
    from stitcher import render, server

    state = server.status()
    data = state.to_json()
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        render.server_status(_out(), data)
    if state.state in ("stale", "degraded"):
        # A script polling the status must not take a dead server for a healthy one.
        _err().print(_error_line(f"the local server is {state.state}: {state.detail}"))
        raise typer.Exit(ExitStatus.FAILED)


# --- model ----------------------------------------------------------------------------------


@model_app.command("export")
def model_export(model: ModelOpt = None) -> None:
    """Export the model to ONNX so searches start without torch (ingest does this too)."""
    from stitcher.api import export_model

    typer.echo(str(export_model(model)))


# --- ingest ---------------------------------------------------------------------------------


@app.command()
def ingest(
    paths: Annotated[
        list[str], typer.Argument(help="Files or directories; - reads paths from stdin.")
    ],
    collection: CollectionOpt = DEFAULT_COLLECTION,
    glob: Annotated[
        str | None, typer.Option(help="Only files matching this glob, e.g. '**/*.md'.")
    ] = None,
    chunk_size: Annotated[int, typer.Option(help="Characters per chunk.")] = DEFAULT_CHUNK_SIZE,
    chunk_overlap: Annotated[
        int, typer.Option(help="Characters shared by neighbouring chunks.")
    ] = DEFAULT_CHUNK_OVERLAP,
    model: ModelOpt = None,
    batch_size: Annotated[int, typer.Option(help="Texts per embedding batch.")] = 32,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Add this tag to every document (repeatable)."),
    ] = None,
    mentions_from: Annotated[
        Path | None,
        typer.Option(help="File mapping documents to the organizations they mention."),
    ] = None,
    tags_from_dirs: Annotated[
        bool, typer.Option(help="Tag documents with their folder names.")
    ] = False,
    prune: Annotated[
        bool,
        typer.Option(help="Delete stored documents whose files vanished from the given folders."),
    ] = False,
    max_delete: Annotated[
        str | None,
        typer.Option(
            help="What --prune may delete per source: N documents or P% of its stored ones "
            "(default 50%); beyond it nothing is deleted (exit 4)."
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            help="Name of the source (document ids start with it; --prune stays within it). "
            "Default: the folder's name."
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Show what would change; write nothing.")] = False,
    wait: Annotated[
        bool,
        typer.Option(help="Wait for a running ingest into the same collection instead of exiting."),
    ] = False,
    as_json: JsonOpt = False,
    replication_factor: ReplicationOpt = None,
    consistency: ConsistencyOpt = "quorum",
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Load documents (250/50 chunks, deterministic ids, parent_id chain); safe to re-run."""
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
    )
    err = _err()
    display = render.IngestDisplay(err) if err.is_terminal else render.QuietDisplay(err)
    with (
        _stitcher(
            url,
            api_key,
            grpc_port,
            collection,
            consistency=consistency,
            replication_factor=replication_factor,
        ) as s,
        display,
    ):
        summary = s.ingest(
            paths, model=model, options=options, stdin=sys.stdin, progress=display, wait=wait
        )
    for name, message in {**summary.unreadable, **summary.failed}.items():
        err.print(_error_line(message if message.startswith(name) else f"{name}: {message}"))
    if as_json:
        typer.echo(json.dumps(summary.to_json(), ensure_ascii=False))
    else:
        typer.echo(summary.one_line())
        if dry_run:
            for label, names in (
                ("add", summary.added),
                ("update", summary.updated),
                ("delete", summary.deleted),
            ):
                for name in names:
                    typer.echo(f"  would {label}: {name}")
    if summary.exit_code == 4 and summary.prune_refused is not None:
        raise summary.prune_refused
    raise typer.Exit(summary.exit_code)


# --- search ---------------------------------------------------------------------------------


WhereOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        "-w",
        help="Filter, all must hold (repeatable): field=value, field!=v, field>=v, field<v, "
        "field~text, tags=a,b (any of). See `stitcher fields`.",
    ),
]


@app.command()
def search(
    query: Annotated[
        str | None,
        typer.Argument(help="What to look for. Omit it to list the latest documents."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", help="Passages to return.")] = 5,
    alpha: Annotated[
        float,
        typer.Option(help="Weight of the vector side: 1 = vector only, 0 = keyword (BM25) only."),
    ] = DEFAULT_ALPHA,
    fusion: Annotated[
        str, typer.Option(help="relative (score fusion) or ranked (rank fusion).")
    ] = "relative",
    where: WhereOpt = None,
    where_any: Annotated[
        list[str] | None,
        typer.Option("--where-any", help="Filter, at least one must hold (repeatable)."),
    ] = None,
    latest: Annotated[
        bool, typer.Option(help="Newest matching documents by date instead of ranking.")
    ] = False,
    doc: Annotated[
        str | None, typer.Option(help="Only this document (fuzzy match on title or path).")
    ] = None,
    org: Annotated[
        str | None,
        typer.Option(help="Only chunks mentioning this organization (fuzzy name or alias)."),
    ] = None,
    sql: Annotated[
        str | None, typer.Option(help="SQL whose first column selects documents (with --db).")
    ] = None,
    db: Annotated[
        Path | None, typer.Option(help="SQLite file for --sql (opened read-only).")
    ] = None,
    join: Annotated[str, typer.Option(help="Field that the --sql values must equal.")] = "title",
    collection: CollectionOpt = DEFAULT_COLLECTION,
    as_json: JsonOpt = False,
    no_stitch: Annotated[bool, typer.Option("--no-stitch", help="Return the raw chunks.")] = False,
    max_extend: Annotated[
        int, typer.Option(help="Characters stitching may add on each side.")
    ] = DEFAULT_MAX_EXTEND,
    queries: Annotated[
        Path | None,
        typer.Option(help="Run one query per line of this file (- for stdin); prints JSON Lines."),
    ] = None,
    explain: Annotated[
        bool, typer.Option(help="Show how the keyword and vector sides made each score.")
    ] = False,
    model: ModelOpt = None,
    consistency: ConsistencyOpt = "quorum",
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Hybrid (BM25 + vector) search; every hit is stitched into whole sentences."""
    from stitcher import render
    from stitcher.api import SqlJoin
    from stitcher.errors import UsageError
    from stitcher.search import SearchOptions
    from stitcher.where import parse_where

    if query is not None and not query.strip():
        raise UsageError("the query is empty (omit it, or use --latest, to list the latest)")
    if (sql is None) != (db is None):
        raise UsageError("--sql and --db go together")
    options = SearchOptions(
        limit=limit,
        alpha=alpha,
        fusion=fusion,
        stitch=not no_stitch,
        max_extend=max_extend,
        where=parse_where(where or (), where_any or ()) or None,
    )
    options.validate()
    sql_join = SqlJoin(sql=sql, db=str(db), join=join) if sql is not None else None
    with _stitcher(url, api_key, grpc_port, collection, consistency=consistency) as s:
        if queries is not None:
            lines = sys.stdin if str(queries) == "-" else queries.open(encoding="utf-8")
            for line in lines:
                if line.strip():
                    result = s.search_result(
                        line.strip(), options=options, model=model, doc=doc, sql=sql_join, org=org
                    )
                    typer.echo(json.dumps(result.to_json(explain), ensure_ascii=False, default=str))
            return
        result = s.search_result(
            query, options=options, model=model, latest=latest, doc=doc, sql=sql_join, org=org
        )
    if as_json:
        typer.echo(json.dumps(result.to_json(explain), ensure_ascii=False, default=str))
    else:
        render.search_results(_out(), result, explain=explain)


@app.command()
def fields(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Fields that --where can filter on, with their types and example values."""
    from stitcher import render

    with _stitcher(url, api_key, grpc_port, collection) as s:
        found = s.fields()
    if as_json:
        rows = [{"name": f.name, "type": f.kind, "examples": list(f.examples)} for f in found]
        typer.echo(json.dumps(rows, ensure_ascii=False))
    else:
        render.fields_table(_out(), found)


@app.command()
def stats(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    as_json: JsonOpt = False,
    consistency: ConsistencyOpt = "quorum",
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Documents, chunks, per-source counts, replication factor and each shard's nodes."""
    from stitcher import render

    with _stitcher(url, api_key, grpc_port, collection, consistency=consistency) as s:
        data = s.stats()
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False))
    else:
        render.stats_table(_out(), data)


@app.command()
def adopt(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    root: Annotated[
        Path | None,
        typer.Option(help="Folder the seed ingested from: doc ids then match `stitcher ingest`."),
    ] = None,
    model: ModelOpt = None,
    wait: Annotated[
        bool, typer.Option(help="Wait for a running ingest instead of exiting.")
    ] = False,
    as_json: JsonOpt = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Convert a collection built the seed's way (LangChain, parent_id chain) in place,
    keeping its vectors, so `stitcher ingest` can take it over."""
    with _stitcher(url, api_key, grpc_port, collection) as s:
        report = s.adopt(root=str(root) if root else None, model=model, wait=wait)
    if as_json:
        typer.echo(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        typer.echo(report.one_line())


# --- collections ----------------------------------------------------------------------------


@app.command()
def drop(
    collection: CollectionOpt = DEFAULT_COLLECTION,
    yes: Annotated[bool, typer.Option("--yes", help="Really delete it.")] = False,
    wait: Annotated[
        bool, typer.Option(help="Wait for a running writer (ingest, ...) instead of exiting.")
    ] = False,
    url: UrlOpt = None,
    api_key: KeyOpt = None,
    grpc_port: GrpcOpt = None,
) -> None:
    """Delete a whole collection (asks for --yes)."""
    from stitcher.errors import UsageError

    if not yes:
        raise UsageError(f"this deletes every object in {collection!r}; add --yes to confirm")
    with _stitcher(url, api_key, grpc_port, collection) as s:
        existed = s.drop(wait=wait)
    _err().print(f"dropped {collection}" if existed else f"{collection} did not exist")


# --- error handling: the one place that turns failures into exit codes -------------------------


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `stitcher` script: run the command, return its exit status.

    The app runs with click's standalone mode off, so that errors come back here instead of being
    printed by click; the price is that click then *returns* the code of `typer.Exit(n)` (and of
    Ctrl-C, as 130) instead of exiting. Whatever way a command ends — return value, typer.Exit,
    SystemExit, an exception — ends up as the int returned here, which the script passes to
    sys.exit.
    """
    show_traceback = os.environ.get("STITCHER_TRACEBACK") == "1"
    try:
        outcome = app(args=argv, prog_name="stitcher", standalone_mode=False)
    except SystemExit as done:
        outcome = done.code
    except typer.Exit as done:  # click returns these itself; kept so none can slip through
        outcome = done.exit_code
    except StitcherError as error:
        if show_traceback:
            raise
        _err().print(_error_line(_scrub(str(error))))
        return int(error.exit_code)
    except KeyboardInterrupt:  # outside click's own handler (which turns it into 130)
        outcome = ExitStatus.INTERRUPTED
    except Exception as error:  # a usage error from typer/click, or a bug
        code = _click_exit_code(error)
        if code is not None:
            return code
        if show_traceback:
            raise
        detail = _first_line(_scrub(str(error)))
        _err().print(_error_line(f"unexpected {type(error).__name__}: {detail}"))
        _err().print("Run again with STITCHER_TRACEBACK=1 for the traceback.")
        return int(ExitStatus.FAILED)
    status = _exit_status(outcome)
    if status == ExitStatus.INTERRUPTED:
        _err().print("interrupted")
    return status


def _exit_status(outcome: object) -> int:
    """The process exit status for what the app returned or exited with, as sys.exit would
    make it: None is success, an int is itself, anything else is printed and is a failure."""
    if outcome is None:
        return int(ExitStatus.OK)
    if isinstance(outcome, int):  # ExitStatus and bool included
        return int(outcome)
    _err().print(str(outcome))
    return int(ExitStatus.FAILED)


def _click_exit_code(error: Exception) -> int | None:
    """Typer vendors click: print its usage errors the way click would, without importing it."""
    show = getattr(error, "show", None)
    exit_code = getattr(error, "exit_code", None)
    if callable(show) and isinstance(exit_code, int):
        show()
        return exit_code
    if type(error).__name__ == "Abort":  # click's answer to EOF on a prompt, or Ctrl-C
        _err().print("interrupted")
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
