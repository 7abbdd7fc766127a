"""Options that many commands share, declared once, and the help panels that group options.

Help texts are one short line: the details live in docs/cli.md. Value options carry a metavar
(PATH, N, NAME) that says what to write; flags show none (stitcher.cli.help).
"""

from __future__ import annotations

from typing import Annotated

import typer

# Panels of a command's help, in the order they appear (typer shows them in first-use order).
INPUT = "Input"
CHUNKING = "Chunking"
QUERY = "Query"
FILTERS = "Filters"
MODEL = "Model"
COLLECTION = "Collection"
SERVER = "Server"
OUTPUT = "Output"
ADVANCED = "Advanced"

UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        metavar="URL",
        help="Remote Weaviate URL (env: WEAVIATE_URL).",
        rich_help_panel=SERVER,
    ),
]
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        metavar="KEY",
        help="API key for --url (env: WEAVIATE_API_KEY).",
        show_default=False,
        rich_help_panel=SERVER,
    ),
]
GrpcOpt = Annotated[
    int | None,
    typer.Option(
        "--grpc-port",
        metavar="PORT",
        help="gRPC port of --url (env: WEAVIATE_GRPC_PORT).",
        rich_help_panel=SERVER,
    ),
]
CollectionOpt = Annotated[
    str,
    typer.Option(
        "--collection", "-c", metavar="NAME", help="Collection to use.", rich_help_panel=COLLECTION
    ),
]
TenantOpt = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        metavar="NAME",
        help="Tenant (env: STITCHER_TENANT).",
        show_default=False,
        rich_help_panel=COLLECTION,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout.", rich_help_panel=OUTPUT)
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="NAME",
        help="Embedding model. Default: all-MiniLM-L6-v2.",
        rich_help_panel=MODEL,
    ),
]
ConsistencyOpt = Annotated[
    str,
    typer.Option(
        "--consistency",
        metavar="LEVEL",
        help="Replicas to answer: one, quorum (default), all.",
        show_default=False,
        case_sensitive=False,
        rich_help_panel=SERVER,
    ),
]
ReplicationOpt = Annotated[
    int | None,
    typer.Option(
        "--replication-factor",
        metavar="N",
        min=1,
        help="Copies of a new collection (1; cluster: 3).",
        rich_help_panel=COLLECTION,
    ),
]
WaitOpt = Annotated[
    bool,
    typer.Option(
        "--wait", help="Wait for a running writer instead of exiting.", rich_help_panel=ADVANCED
    ),
]
