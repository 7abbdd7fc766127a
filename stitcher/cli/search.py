"""`stitcher search`: one hybrid search (or one per line of --queries), through the warm worker
when there is one."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.library import open_stitcher
from stitcher.cli.options import (
    ADVANCED,
    FILTERS,
    OUTPUT,
    QUERY,
    CollectionOpt,
    ConsistencyOpt,
    JsonOpt,
    ModelOpt,
    ServerFlags,
    TenantOpt,
    connecting,
    flag,
    value,
)
from stitcher.cli.output import data_console, print_json, shown
from stitcher.cli.warm_client import ask_warm_worker, start_warm_worker, worker_request
from stitcher.config import DEFAULT_COLLECTION, DEFAULT_MAX_EXTEND
from stitcher.errors import UsageError

# The library core (stitcher.request, where and render) is imported inside the functions that
# use it: `stitcher --help`, completion and a mistyped flag load none of it
# (tests/test_startup.py).

WhereOpt = Annotated[
    list[str] | None,
    value(
        "FILTER",
        "field=value, field>=v, ...: all must hold (repeatable).",
        FILTERS,
        "--where",
        "-w",
    ),
]


@connecting
def search(
    query: Annotated[
        str | None,
        typer.Argument(metavar="QUERY", help="What to look for. None: the latest documents."),
    ] = None,
    limit: Annotated[int, value("N", "Passages to return.", QUERY, "--limit", "-k")] = 5,
    alpha: Annotated[
        float | None,
        value("0..1", "Vector weight (0: keyword only). Default: per query, see --explain.", QUERY),
    ] = None,
    fusion: Annotated[
        str, value("KIND", "relative (scores) or ranked (ranks).", QUERY)
    ] = "relative",
    no_stitch: Annotated[bool, flag("--no-stitch", "Return the raw chunks.", QUERY)] = False,
    max_extend: Annotated[
        int, value("N", "Characters stitching may add per side.", QUERY)
    ] = DEFAULT_MAX_EXTEND,
    where: WhereOpt = None,
    where_any: Annotated[
        list[str] | None,
        value("FILTER", "Filter; one must hold (repeatable).", FILTERS, "--where-any"),
    ] = None,
    latest: Annotated[
        bool, flag("--latest", "Newest documents first, no ranking.", FILTERS)
    ] = False,
    doc: Annotated[
        str | None, value("NAME", "Only this document (fuzzy title or path).", FILTERS)
    ] = None,
    org: Annotated[
        str | None, value("NAME", "Only chunks mentioning this organization.", FILTERS)
    ] = None,
    sql: Annotated[
        str | None, value("SQL", "Documents selected by SQL (with --db).", FILTERS)
    ] = None,
    db: Annotated[Path | None, value("FILE", "SQLite file for --sql (read-only).", FILTERS)] = None,
    join: Annotated[str, value("FIELD", "Field the --sql values match.", FILTERS)] = "title",
    model: ModelOpt = None,
    collection: CollectionOpt = DEFAULT_COLLECTION,
    tenant: TenantOpt = None,
    as_json: JsonOpt = False,
    explain: Annotated[bool, flag("--explain", "Show how each score was made.", OUTPUT)] = False,
    queries: Annotated[
        Path | None, value("FILE", "One query per line (- stdin); JSON Lines.", OUTPUT)
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
    *,
    server: ServerFlags,
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
        warm_request = worker_request(
            warm,
            {
                "connection": (server.url, server.api_key, server.grpc_port),
                "collection": collection,
                "tenant": tenant,
                "consistency": consistency,
                "search": request.to_wire(),
                "as_json": as_json,
            },
        )
        if warm_request is not None:
            answered = ask_warm_worker(warm_request, explain)
            if answered == "served":
                return
            if answered == "declined":  # a live worker left this one to us: start no other
                warm_request = None
    with open_stitcher(server, collection, consistency=consistency, tenant=tenant) as s:
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
        start_warm_worker(warm_request)
