"""ChunkStore on a Weaviate collection (weaviate-client v4, gRPC for data, REST for schema).

Layout (see stitcher.store.schema): explicit properties, never auto-schema; one named vector
"default" with self-provided vectors (LangChain's WeaviateVectorStore(text_key="text") reads and
searches the collection as is); the CollectionSettings as JSON in the collection description.
BM25 runs on `text_seg`, the client-side segmented keyword text, so Chinese words match inside
compounds on any server.

`WeaviateStore` is one class made of focused parts, each a module of this package:
core (the client's handles, retries, existence), tenants, replication, collection (creating it,
its settings and properties), listing (whole-collection listings checked against the replicas),
writes, reads (fetches and the hybrid search), registry (sources, leases, the server's
collections) and layouts (the seed's layout, markers, siblings). Beside them: schema (the
properties and the bookkeeping collections), scores (fusion and explain_score), seed (the seed's
layout), leases (writer leases), pending (incomplete documents) and filters (the `--where` tree
as the client's Filter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stitcher.errors import TenancyMismatch, setting
from stitcher.store.base import ChunkStore
from stitcher.store.weaviate.entities import EntityStore
from stitcher.store.weaviate.layouts import Layouts
from stitcher.store.weaviate.reads import Reads
from stitcher.store.weaviate.registry import Registry
from stitcher.store.weaviate.writes import Writes


class WeaviateStore(Layouts, Reads, Writes, Registry):
    """One Weaviate collection of chunks, or one tenant of a multi-tenant collection.

    Args:
        client: A connected `weaviate.WeaviateClient`.
        collection_name: The collection; Weaviate upper-cases its first letter.
        batch_size: Objects per batch request, at most. Ingest writes a group of 256 chunks
            at a time (8 embedding batches of 32), so the default sends each group as one
            request: fewer requests were faster in bench/scale.py (BENCHMARKS.md, issue 13).
            Not more: a request of 500 objects of 768 dimensions and their texts is ~3 MB, under
            the 4 MB a default gRPC server accepts.
        retry_policy: How requests that failed transiently (connection lost, UNAVAILABLE, 5xx,
            timeouts) and objects refused for such reasons are retried; others never are.
        retry_delays: Older spelling: the longest waits of the policy, one retry per entry.
        replication_factor: Replicas of a collection this store creates; None: 1 on a single
            node, min(3, nodes) on a cluster. Refused when it exceeds the nodes, and when an
            existing collection has another factor.
        consistency: "one", "quorum" or "all" replicas for every read, write and delete
            (searches, neighbour fetches, the unchanged-document check included).
        listing_patience: Seconds a whole-collection listing (documents, records_with_vectors)
            retries while it disagrees with the replicas' count before it raises
            ListingIncomplete (see `listed_whole`).
        tenant: The tenant (knowledge base) of a multi-tenant collection this store reads and
            writes; None for a single-tenant collection. Mixing is refused (TenancyMismatch).
            The first `create` of a tenant makes the collection multi-tenant if it is new.
    """

    def entities(self) -> EntityStore:
        """The entity collections (organizations, people) that belong to this collection."""
        return EntityStore(self._client, self._name, self._tenant)

    def drop(self, *, all_tenants: bool = False) -> bool:
        """Delete the collection and forget its registered sources; False when it did not exist.

        A tenant store deletes its tenant only (its chunks and sources; the collection and the
        other tenants stay). A multi-tenant collection as a whole is deleted only with
        `all_tenants`.

        Raises:
            TenancyMismatch: A multi-tenant collection without `all_tenants`, or a tenant
                store on a single-tenant collection.
        """
        if self._tenant is not None:
            if not self.exists():
                return False
            tenant = self._tenant
            self._call("removing the tenant", lambda: self._whole.tenants.remove([tenant]))
            self._known_to_exist = False
            self.forget_sources()
            self._pending.forget_all()
            return True
        if not self.exists():
            return False
        if not all_tenants and self.is_multi_tenant():
            held = len(self._call("reading the tenants", self._whole.tenants.get))
            raise TenancyMismatch(
                f"collection {self._name!r} is multi-tenant and holds {held} tenant"
                f"{'s' if held != 1 else ''}: drop one with {setting('tenant', 'NAME')}, or the "
                f"collection with all of them with {setting('all_tenants', True)}"
            )
        self._client.collections.delete(self._name)
        self._known_to_exist = False
        self._vectors = None  # a collection made again under the name may hold them otherwise
        self.forget_sources()
        self._pending.forget_all()
        return True

    def sibling(self, name: str) -> WeaviateStore:
        """The store of collection `name` on the same server, with this one's settings."""
        return WeaviateStore(
            self._client,
            name,
            batch_size=self._batch_size,
            retry_policy=self._retry_policy,
            replication_factor=self._replication_factor,
            consistency=self._consistency,
            listing_patience=self._listing_patience,
        )


if TYPE_CHECKING:
    # mypy checks here that the parts together keep every capability of the protocol.
    _weaviate_is_a_chunk_store: type[ChunkStore] = WeaviateStore
