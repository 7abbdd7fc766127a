"""Options that many commands share, declared once, and the help panels that group options.

Help texts are one short line: the details live in docs/cli.md. Value options carry a metavar
(PATH, N, NAME) that says what to write; flags show none (stitcher.cli.help).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

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


def flag(name: str, help: str, panel: str | None = None) -> Any:
    """A flag (`--prune`): it takes no value, so its help shows none."""
    return typer.Option(name, help=help, rich_help_panel=panel)


def value(metavar: str, help: str, panel: str | None = None, *names: str, **more: Any) -> Any:
    """An option that takes a value: `metavar` says what to write (N, NAME, FILE); `names` where
    the parameter's own name is not the flag (`--limit`, `-k`); `more` as typer.Option takes it."""
    return typer.Option(*names, metavar=metavar, help=help, rich_help_panel=panel, **more)


def collection_option(help: str = "Collection to use.", panel: str | None = COLLECTION) -> Any:
    """`--collection`/`-c NAME`, whatever a command uses the collection for."""
    return value("NAME", help, panel, "--collection", "-c")


def tenant_option(help: str = "Tenant (env: STITCHER_TENANT).") -> Any:
    """`--tenant NAME`, whatever a command uses the tenant for."""
    return value("NAME", help, COLLECTION, "--tenant", show_default=False)


UrlOpt = Annotated[
    str | None,
    value("URL", "Remote Weaviate URL (env: WEAVIATE_URL).", SERVER, "--url"),
]
KeyOpt = Annotated[
    str | None,
    value(
        "KEY", "API key for --url (env: WEAVIATE_API_KEY).", SERVER, "--api-key", show_default=False
    ),
]
GrpcOpt = Annotated[
    int | None,
    value("PORT", "gRPC port of --url (env: WEAVIATE_GRPC_PORT).", SERVER, "--grpc-port"),
]
CollectionOpt = Annotated[str, collection_option()]
TenantOpt = Annotated[str | None, tenant_option()]
JsonOpt = Annotated[bool, flag("--json", "Print JSON on stdout.", OUTPUT)]
ModelOpt = Annotated[
    str | None,
    value("NAME", "Embedding model. Default: all-MiniLM-L6-v2.", MODEL, "--model"),
]
ConsistencyOpt = Annotated[
    str,
    value(
        "LEVEL",
        "Replicas to answer: one, quorum (default), all.",
        SERVER,
        "--consistency",
        show_default=False,
        case_sensitive=False,
    ),
]
ReplicationOpt = Annotated[
    int | None,
    value(
        "N",
        "Copies of a new collection (1; cluster: 3).",
        COLLECTION,
        "--replication-factor",
        min=1,
    ),
]
WaitOpt = Annotated[
    bool,
    flag("--wait", "Wait for a running writer instead of exiting.", ADVANCED),
]


@dataclass(frozen=True)
class ServerFlags:
    """The server a command talks to, as --url, --api-key and --grpc-port gave it (None: the
    profile's or the environment's value, else the local server)."""

    url: str | None = None
    api_key: str | None = None
    grpc_port: int | None = None


_SERVER_OPTIONS = {"url": UrlOpt, "api_key": KeyOpt, "grpc_port": GrpcOpt}


def connecting(command: Callable[..., None]) -> Callable[..., None]:
    """`command`, which takes `server: ServerFlags`, as typer sees a command whose last options
    are --url, --api-key and --grpc-port: declared here once, handed to the command as one."""
    signature = inspect.signature(command, eval_str=True)
    kept = [p for p in signature.parameters.values() if p.name != "server"]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option)
        for name, option in _SERVER_OPTIONS.items()
    ]

    @functools.wraps(command)
    def with_server(
        *args: Any,
        url: str | None = None,
        api_key: str | None = None,
        grpc_port: int | None = None,
        **kwargs: Any,
    ) -> None:
        command(*args, server=ServerFlags(url, api_key, grpc_port), **kwargs)

    # typer reads a command's options from its signature, and its annotations for the rest
    parameters = [*kept, *added]
    with_server.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    with_server.__annotations__ = {p.name: p.annotation for p in parameters}
    return with_server
