"""The state of one in-memory collection and what every part of MemoryStore needs of it:
its name and tenant, whether it exists, and its records."""

from __future__ import annotations

from typing import Any

from stitcher.errors import CollectionMissing, TenantMissing, setting
from stitcher.ids import checked_tenant_name
from stitcher.models import ChunkRecord, CollectionSettings, SeedObject
from stitcher.store.base import scope_of
from stitcher.store.memory.entities import MemoryEntities
from stitcher.store.memory.server import MemoryServer
from stitcher.store.schema import ExtraProperty, properties_to_record


class MemoryCore:
    """One collection's data in dicts; MemoryStore adds the capabilities on top."""

    def __init__(
        self, name: str, server: MemoryServer[Any] | None = None, tenant: str | None = None
    ) -> None:
        self._tenant = checked_tenant_name(tenant)
        self._name = name[:1].upper() + name[1:]
        # Its stores are MemoryStores (store.py, which re-declares the type it can name).
        self._server: MemoryServer[Any] = MemoryServer() if server is None else server
        self._settings: CollectionSettings | None = None
        self._created = False
        self._objects: dict[str, tuple[dict[str, Any], list[float]]] = {}
        self._extras: dict[str, ExtraProperty] = {}
        self._dimension: int | None = None
        self._source_roots: dict[str, str] = {}
        self._seed: dict[str, SeedObject] = {}  # a seed-layout collection's objects (load_seed)
        self._markers: dict[str, dict[str, Any]] = {}
        #: Documents being written (begin_documents), doc_id -> their version's chunk count.
        self._pending: dict[str, int] = {}
        self._entities = MemoryEntities(self._name)

    @property
    def name(self) -> str:
        """The collection's name, first letter upper-cased as Weaviate does."""
        return self._name

    @property
    def tenant(self) -> str | None:
        """The tenant this store is bound to (None: a single-tenant collection)."""
        return self._tenant

    @property
    def scope(self) -> str:
        """What this store holds, for messages: "'Docs'" or "tenant 'kb1' of 'Docs'"."""
        return scope_of(self._name, self._tenant)

    def _wake(self) -> None:
        """A read of an inactive tenant activates it, as Weaviate's auto_tenant_activation."""
        if self._tenant is not None and self._created:
            self._server.status[(self._name, self._tenant)] = "ACTIVE"

    def _require(self) -> None:
        self._wake()
        if not self._created and self._tenant is not None:
            raise TenantMissing(
                f"collection {self._name!r} has no tenant {self._tenant!r}; run `stitcher "
                f"ingest` with it to create it, or check {setting('tenant')}"
            )
        if not self._created:
            raise CollectionMissing(
                f"collection {self._name!r} does not exist; run `stitcher ingest` to create it"
            )

    def _record(self, object_id: str) -> ChunkRecord:
        return properties_to_record(object_id, self._objects[object_id][0], self._extras)
