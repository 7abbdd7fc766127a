"""The server's bookkeeping beside a collection: the source registry (which folder each source is
ingested from), the writers' leases, and the list of the server's collections.
"""

from __future__ import annotations

import datetime as dt
import socket
from typing import Any

from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS, SOURCES_COLLECTION, bookkeeping_uuid
from stitcher.store.weaviate.core import StoreCore
from stitcher.store.weaviate.leases import WeaviateLeases
from stitcher.store.weaviate.schema import (
    MAX_RESULTS,
    ensure_bookkeeping_collection,
    ensure_text_property,
    has_property,
)

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.


class Registry(StoreCore):
    """The collection's registered sources, and the server's leases and collections."""

    def collection_names(self) -> list[str]:
        """The server's collections, sorted, stitcher's bookkeeping ones left out."""
        names = self._call(
            "listing collections", lambda: self._client.collections.list_all(simple=True)
        )
        return sorted(set(names) - BOOKKEEPING_COLLECTIONS)

    def leases(self) -> WeaviateLeases:
        """The server's leases, in its `StitcherLease` collection."""
        return WeaviateLeases(self._client)

    def source_roots(self) -> dict[str, str]:
        """The folder each source of this collection was registered from, by source name."""
        from weaviate.classes.query import Filter

        if not self._client.collections.exists(SOURCES_COLLECTION):
            return {}
        registry = self._client.collections.use(SOURCES_COLLECTION)
        where = Filter.by_property("collection").equal(self._name)
        if self._tenant is not None:
            if not has_property(registry, "tenant"):
                return {}  # no tenant ever registered a source on this server
            where = where & Filter.by_property("tenant").equal(self._tenant)
        result = registry.query.fetch_objects(
            filters=where,
            limit=MAX_RESULTS,
            return_properties=["source", "root"],
        )
        return {str(o.properties["source"]): str(o.properties["root"]) for o in result.objects}

    def register_source(self, name: str, root: str) -> None:
        """Record (or move) source `name` of this collection to the folder `root`."""
        ensure_bookkeeping_collection(
            self._client,
            SOURCES_COLLECTION,
            "stitcher: the folder each source of a collection is ingested from",
            {
                "collection": "text",
                "source": "text",
                "root": "text",
                "host": "text",
                "registered_at": "date",
            },
        )
        registry = self._client.collections.use(SOURCES_COLLECTION)
        properties: dict[str, Any] = {
            "collection": self._name,
            "source": name,
            "root": root,
            "host": socket.gethostname(),
            "registered_at": dt.datetime.now(dt.timezone.utc),
        }
        object_id = bookkeeping_uuid(self._name, name)
        if self._tenant is not None:
            # Each tenant registers its sources apart: two knowledge bases may both have a
            # source "docs", from different folders.
            ensure_text_property(registry, "tenant")
            properties["tenant"] = self._tenant
            object_id = bookkeeping_uuid(self._name, name, "tenant", self._tenant)
        if registry.data.exists(object_id):
            registry.data.replace(uuid=object_id, properties=properties)
        else:
            registry.data.insert(properties=properties, uuid=object_id)

    def forget_sources(self) -> None:
        """Remove this collection's sources from the registry (the collection was dropped)."""
        from weaviate.classes.query import Filter

        if not self._client.collections.exists(SOURCES_COLLECTION):
            return
        registry = self._client.collections.use(SOURCES_COLLECTION)
        # The whole collection: every entry of it, its tenants' included.
        where = Filter.by_property("collection").equal(self._name)
        if self._tenant is not None:
            if not has_property(registry, "tenant"):
                return
            where = where & Filter.by_property("tenant").equal(self._tenant)
        registry.data.delete_many(where=where)
