"""One collection held in dicts (MemoryStore): chunks, settings, tenants, sources, and what the
seed layout needs, behaving as WeaviateStore does; filters and scoring are in modules of their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stitcher.errors import (
    CollectionMissing,
    MetadataConflict,
    SettingsMismatch,
    TenancyMismatch,
    TenantMissing,
    UsageError,
    setting,
)
from stitcher.models import (
    ChunkRecord,
    CollectionSettings,
    PendingDocument,
    SeedObject,
    StoredDocument,
    TenantInfo,
    WriteFailure,
)
from stitcher.store.base import ChunkStore, Layout
from stitcher.store.memory.entities import MemoryEntities
from stitcher.store.memory.reads import MemoryReads
from stitcher.store.memory.seed import MemorySeedLayout
from stitcher.store.memory.server import MemoryLeases, MemoryServer
from stitcher.store.schema import (
    no_tenants,
    plan_properties,
    record_to_properties,
    some_names,
    tenancy_mismatch,
)


class MemoryStore(MemoryReads, MemorySeedLayout):
    """One collection held in memory. Not thread-safe, like the Weaviate batch writer.

    Stores given the same `server` see each other's collections and leases; without one, a
    store is alone on a server of its own.
    """

    _server: MemoryServer[MemoryStore]

    def exists(self) -> bool:
        """Whether `create` was called (single-tenant: or the name is a multi-tenant
        collection, which `settings` then refuses, as on Weaviate)."""
        if self._tenant is None:
            return self._created or self._name in self._server.tenants
        self._check_tenancy()
        return self._created

    def collection_exists(self) -> bool:
        """Whether the collection exists, whatever this store's tenant."""
        return self._created or self._server.multi_tenant(self._name) is not None

    def is_multi_tenant(self) -> bool:
        """Whether the (existing) collection is multi-tenant."""
        return bool(self._server.multi_tenant(self._name))

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The tenants of the collection with their status and, when active, chunk counts."""
        if self._server.multi_tenant(self._name) is None:
            raise CollectionMissing(f"collection {self._name!r} does not exist")
        if not self._server.multi_tenant(self._name):
            raise no_tenants(self._name)
        infos = []
        for name, store in sorted(self._server.tenants[self._name].items()):
            status = self._server.status[(self._name, name)]
            chunks = len(store._objects) if count and status == "ACTIVE" else None
            infos.append(TenantInfo(name, status, chunks))
        return infos

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Mark a tenant active or inactive; returns its status before."""
        tenants = self._server.tenants.get(self._name, {})
        if name not in tenants:
            raise TenantMissing(
                f"collection {self._name!r} has no tenant {name!r}; its tenants: "
                f"{some_names(sorted(tenants))}"
            )
        before = self._server.status[(self._name, name)]
        self._server.status[(self._name, name)] = "ACTIVE" if active else "INACTIVE"
        return before

    def _check_tenancy(self) -> None:
        multi_tenant = self._server.multi_tenant(self._name)
        if multi_tenant is not None:
            refusal = tenancy_mismatch(self._name, self._tenant, multi_tenant)
            if refusal is not None:
                raise refusal

    def drop(self, *, all_tenants: bool = False) -> bool:
        """Forget the collection, its chunks and sources; False when it did not exist. Entities
        stay, as in Weaviate, where they are collections of their own. A tenant store forgets
        its tenant only; a multi-tenant collection goes as a whole only with `all_tenants`."""
        if self._tenant is not None:
            if not self.exists():
                return False
            self._server.tenants[self._name].pop(self._tenant, None)
            self._server.status.pop((self._name, self._tenant), None)
            self._forget()
            return True
        if self._name in self._server.tenants:
            tenants = self._server.tenants[self._name]
            if not all_tenants:
                held = len(tenants)
                raise TenancyMismatch(
                    f"collection {self._name!r} is multi-tenant and holds {held} tenant"
                    f"{'s' if held != 1 else ''}: drop one with {setting('tenant', 'NAME')}, or "
                    f"the collection with all of them with {setting('all_tenants', True)}"
                )
            for name, store in list(tenants.items()):
                self._server.status.pop((self._name, name), None)
                store._forget()
            del self._server.tenants[self._name]
            self._server.tenant_settings.pop(self._name, None)
            return True
        return self._forget()

    def _forget(self) -> bool:
        existed = self._created
        self._created = False
        self._server.collections.pop(self._name, None)
        self._settings = None
        self._objects.clear()
        self._extras.clear()
        self._dimension = None
        self._source_roots.clear()
        self._seed.clear()
        self._markers.clear()
        self._pending.clear()
        return existed

    def layout(self) -> Layout:
        """ "stitcher" when settings were recorded, "seed" when `load_seed` filled it."""
        self._require()
        if self._settings is not None:
            return "stitcher"
        return "seed" if self._seed else "unknown"

    def entities(self) -> MemoryEntities:
        """The entities loaded for this collection (`MemoryEntities.load`)."""
        return self._entities

    def create(self, settings: CollectionSettings) -> None:
        """Create the (empty) collection and record `settings`; a tenant store creates its
        tenant, and the collection (multi-tenant) if it is new."""
        if self._tenant is not None:
            self._check_tenancy()
            shared = self._server.tenant_settings.get(self._name)
            if shared is None:
                shared = replace(settings, multi_tenant=True)
                self._server.tenant_settings[self._name] = shared
            elif settings.differences(shared):
                raise SettingsMismatch(
                    f"collection {self._name!r} was built with other settings: "
                    + "; ".join(settings.differences(shared))
                )
            self._server.tenants.setdefault(self._name, {})[self._tenant] = self
            self._server.status[(self._name, self._tenant)] = "ACTIVE"
            self._created = True
            self._settings = shared
            self._dimension = shared.dimension
            return
        self._created = True
        self._server.collections[self._name] = self
        self._settings = settings
        self._dimension = settings.dimension

    def collection_names(self) -> list[str]:
        """The collections created on this store's server and not dropped, sorted."""
        single = {name for name, store in self._server.collections.items() if store.exists()}
        return sorted(single | set(self._server.tenants))

    def leases(self) -> MemoryLeases:
        """The leases of this store's server."""
        return self._server.leases

    def check_replication(self) -> None:
        """Nothing to refuse: the in-memory store keeps one copy and is asked for no factor."""

    def replication(self) -> dict[str, Any]:
        """One copy, on no node."""
        self._require()
        return {"replication_factor": 1, "consistency": "QUORUM", "shards": {}}

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        """Always {}: the in-memory store keeps `mentions` as text and links none."""
        return {}

    def settings(self) -> CollectionSettings | None:
        """The settings given to `create`."""
        self._check_tenancy()
        self._require()
        return self._settings

    def count(self) -> int:
        """Number of chunk objects."""
        self._wake()
        return len(self._objects)

    def documents(self) -> dict[str, StoredDocument]:
        """Every document, keyed by doc_id."""
        hashes: dict[str, set[str]] = {}
        counts: Counter[str] = Counter()
        sources: dict[str, str] = {}
        rules: dict[str, set[str]] = {}
        for properties, _vector in self._objects.values():
            doc_id = properties["doc_id"]
            hashes.setdefault(doc_id, set()).add(properties["doc_hash"])
            counts[doc_id] += 1
            sources[doc_id] = properties["source"]
            rules.setdefault(doc_id, set()).add(properties.get("rules") or "")
        return {
            doc_id: StoredDocument(
                doc_id,
                frozenset(found),
                counts[doc_id],
                sources[doc_id],
                frozenset(rules[doc_id]),
                complete=doc_id not in self._pending,
            )
            for doc_id, found in hashes.items()
        }

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        """Record these document versions as incomplete."""
        self._require()
        for doc in documents:
            self._pending[doc.doc_id] = doc.chunk_count

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        """These documents are complete (or gone)."""
        for doc_id in doc_ids:
            self._pending.pop(doc_id, None)

    def source_roots(self) -> dict[str, str]:
        """The folder each source was registered from, by source name."""
        return dict(self._source_roots)

    def register_source(self, name: str, root: str) -> None:
        """Record (or move) source `name` to the folder `root`."""
        self._source_roots[name] = root

    def vectors_by_chunk_hash(
        self, doc_id: str, chunk_hashes: Iterable[str]
    ) -> dict[str, list[float]]:
        """Stored vectors of this document's chunks (any version) whose hash is in the set."""
        wanted = set(chunk_hashes)
        return {
            properties["chunk_hash"]: list(vector)
            for properties, vector in self._objects.values()
            if properties["doc_id"] == doc_id and properties["chunk_hash"] in wanted
        }

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[list[float]]
    ) -> list[WriteFailure]:
        """Insert or replace records; a wrong vector length or metadata type fails that record."""
        self._require()
        if len(records) != len(vectors):
            raise UsageError(f"write: {len(records)} records but {len(vectors)} vectors")
        failures: list[WriteFailure] = []
        for record, vector in zip(records, vectors, strict=True):
            try:
                values, new = plan_properties(record, self._extras)
            except MetadataConflict as exc:
                failures.append(WriteFailure(record.id, record.doc_id, str(exc)))
                continue
            if self._dimension is None:
                self._dimension = len(vector)
            if len(vector) != self._dimension:
                failures.append(
                    WriteFailure(
                        record.id,
                        record.doc_id,
                        f"vector has length {len(vector)}, the collection {self._dimension}",
                    )
                )
                continue
            for extra in new:
                self._extras[extra.name] = extra
            properties = record_to_properties(record, values)
            self._objects[record.id] = (properties, [float(x) for x in vector])
        return failures

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        """Delete the document's chunks except those of version `keep_doc_hash`."""
        doomed = [
            object_id
            for object_id, (properties, _vector) in self._objects.items()
            if properties["doc_id"] == doc_id and properties["doc_hash"] != keep_doc_hash
        ]
        for object_id in doomed:
            del self._objects[object_id]
        if keep_doc_hash is None:
            self.finish_documents([doc_id])  # the whole document is gone
        return len(doomed)

    # -- seed layout, markers, siblings (issue 14): what adopt and seed search need ----------

    def load_seed(self, objects: Iterable[SeedObject]) -> None:
        """Make this a collection in the seed's layout holding `objects` (as LangChain's
        WeaviateVectorStore stores them: `text`, `source`, `parent_id`, other metadata, vector),
        so adopt and seed search run without a server."""
        self._created = True
        self._server.collections[self._name] = self
        for obj in objects:
            self._seed[obj.id] = obj

    def sibling(self, name: str) -> MemoryStore:
        """The store of collection `name` on this store's server. Every call for one name gives
        the same store, as every handle of one Weaviate collection sees the same data (it lists
        among `collection_names` only once created)."""
        canonical = name[:1].upper() + name[1:]
        known = self._server.collections
        return known.setdefault(canonical, MemoryStore(canonical, self._server))


if TYPE_CHECKING:
    # mypy checks here that the in-memory store keeps every capability of the protocol.
    _memory_is_a_chunk_store: type[ChunkStore] = MemoryStore
