"""The CLI's commands run in-process on stores a test gives, instead of on a server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from stitcher.api import Stitcher
from stitcher.cli.library import commands_open
from stitcher.store.base import ChunkStore


@contextmanager
def cli_on_stores(
    open_store: Callable[[str, str | None], ChunkStore], query_embedder: Any
) -> Iterator[None]:
    """Every `stitcher` command run in this process meanwhile (`stitcher.cli.main([...])`) opens
    its collection as `open_store(collection, tenant)` and embeds its queries with
    `query_embedder` (an Embedder whose `name` is the model the collection was stored with),
    instead of connecting to a server: the CLI's own logic (options, filters, output) tested on
    the in-memory store. Searches run in-process, never in the warm worker.
    """

    def opened(collection: str, tenant: str | None) -> Stitcher:
        store = open_store(collection, tenant)
        return Stitcher(
            collection=collection, tenant=tenant, store=store, query_embedder=query_embedder
        )

    with commands_open(opened):
        yield
