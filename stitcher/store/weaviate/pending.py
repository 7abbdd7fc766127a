"""Which documents of a Weaviate collection are incomplete: a record per document whose chunks
are not all confirmed written, in the server's `StitcherPending` collection.

The record is created before the first chunk of a document version is sent and deleted only
after every chunk of it was confirmed and its old version deleted: deleting it is the last
write of a document. A run killed in between leaves the record, so the listing reports the
document incomplete and the next ingest writes it again instead of skipping it as unchanged.

A document without a record reads as complete: collections written before this registry
existed have none, and their documents were complete by the only check there was then (every
chunk of one version stored, which ingest still checks).
"""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stitcher.bookkeeping import PENDING_COLLECTION, bookkeeping_uuid
from stitcher.store.weaviate.schema import MAX_RESULTS, ensure_bookkeeping_collection

# weaviate is imported inside the functions that use it: importing the client costs about a
# second, which the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate

    from stitcher.models import PendingDocument

_KINDS = {
    "collection": "text",
    "tenant": "text",
    "doc_id": "text",
    "doc_hash": "text",
    "chunks": "int",
    "host": "text",
    "started_at": "date",
}


class WeaviatePending:
    """The incomplete documents of one collection (or tenant of it) on one server."""

    def __init__(self, client: weaviate.WeaviateClient, collection: str, tenant: str | None):
        self._client = client
        self._collection = collection
        self._tenant = tenant or ""
        self._ready = False

    def begin(self, documents: Sequence[PendingDocument]) -> None:
        """Record `documents` as being written (one request for all of them)."""
        from weaviate.classes.data import DataObject

        if not documents:
            return
        if not self._ready:
            ensure_bookkeeping_collection(
                self._client,
                PENDING_COLLECTION,
                "stitcher: documents whose chunks are not all written yet",
                _KINDS,
            )
            self._ready = True
        now = dt.datetime.now(dt.timezone.utc)
        host = socket.gethostname()
        objects = [
            DataObject(
                uuid=self._id(doc.doc_id),
                properties={
                    "collection": self._collection,
                    "tenant": self._tenant,
                    "doc_id": doc.doc_id,
                    "doc_hash": doc.doc_hash,
                    "chunks": doc.chunk_count,
                    "host": host,
                    "started_at": now,
                },
            )
            for doc in documents
        ]
        result = self._records().data.insert_many(objects)
        if result.errors:
            first = next(iter(result.errors.values()))
            raise RuntimeError(f"could not record documents as being written: {first.message}")

    def finish(self, doc_ids: Sequence[str]) -> None:
        """`doc_ids` are complete (or gone): forget their records (one request)."""
        from weaviate.classes.config import ConsistencyLevel
        from weaviate.classes.query import Filter

        if not doc_ids or not self._exists():
            return
        ids = [self._id(doc_id) for doc_id in doc_ids]
        where = Filter.by_id().contains_any(ids)
        # Listings read one node's index: a record deleted on a quorum only can still show
        # through the third node for a moment, and its document would be rebuilt for nothing.
        # Every replica when all are up; a quorum when one is down (it cannot be read then).
        try:
            records = self._records().with_consistency_level(ConsistencyLevel.ALL)
            records.data.delete_many(where=where)
        except Exception:
            self._records().data.delete_many(where=where)

    def incomplete(self) -> dict[str, int]:
        """The incomplete documents: doc_id -> the number of chunks its version has."""
        from weaviate.classes.query import Filter

        if not self._exists():
            return {}
        # Filtered by tenant here, not by the server: "" (no tenant) is not a value to filter on.
        result = self._records().query.fetch_objects(
            filters=Filter.by_property("collection").equal(self._collection),
            limit=MAX_RESULTS,
            return_properties=["tenant", "doc_id", "chunks"],
        )
        return {
            str(o.properties["doc_id"]): int(o.properties.get("chunks") or 0)
            for o in result.objects
            if str(o.properties.get("tenant") or "") == self._tenant
        }

    def forget_all(self) -> None:
        """Forget every record of the collection (or of the tenant): it was dropped."""
        from weaviate.classes.query import Filter

        if not self._exists():
            return
        where = Filter.by_property("collection").equal(self._collection)
        if self._tenant:
            where = where & Filter.by_property("tenant").equal(self._tenant)
        self._records().data.delete_many(where=where)

    def _id(self, doc_id: str) -> str:
        return bookkeeping_uuid("pending", self._collection, self._tenant, doc_id)

    def _exists(self) -> bool:
        return self._ready or bool(self._client.collections.exists(PENDING_COLLECTION))

    def _records(self) -> Any:
        return self._client.collections.use(PENDING_COLLECTION)
