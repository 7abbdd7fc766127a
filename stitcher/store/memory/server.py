"""What the in-memory stores of one "server" share: its collections, tenants and leases."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from stitcher.errors import FaultKind
from stitcher.models import CollectionSettings


class HeldStore(Protocol):
    """What a server asks of the stores it holds."""

    def exists(self) -> bool: ...


# The stores are the server's type parameter, not an import: a store module builds its server,
# so the server module naming the store's class would tie the two into a circle.
StoreT = TypeVar("StoreT", bound=HeldStore)


class MemoryLeases:
    """The leases of one in-memory server: records by id, created only when none exists."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        # The lease's renewal thread writes while its holder reads.
        self._lock = threading.Lock()

    def ensure(self) -> None:
        """Nothing to prepare in memory."""

    def read(self, lease_id: str) -> dict[str, Any] | None:
        """A copy of the record, or None."""
        with self._lock:
            record = self._records.get(lease_id)
            return None if record is None else dict(record)

    def create(self, lease_id: str, record: Mapping[str, Any]) -> bool:
        """Store a copy of `record`; False when one with this id exists."""
        with self._lock:
            if lease_id in self._records:
                return False
            self._records[lease_id] = dict(record)
            return True

    def records_of(self, collection: str) -> list[dict[str, Any]]:
        """Copies of every record of `collection`."""
        with self._lock:
            return [dict(r) for r in self._records.values() if r.get("collection") == collection]

    def update(self, lease_id: str, changes: Mapping[str, Any]) -> None:
        """Change some values of the record (KeyError when there is none, as Weaviate fails)."""
        with self._lock:
            self._records[lease_id].update(changes)

    def delete(self, lease_id: str) -> None:
        """Remove the record if there is one."""
        with self._lock:
            self._records.pop(lease_id, None)

    def fault_kind(self, error: BaseException) -> FaultKind | None:
        """None: dicts raise nothing that retrying would mend."""
        return None


class MemoryServer(Generic[StoreT]):
    """What the in-memory stores of one "server" share, as stores on one Weaviate do: which
    collections exist, and the leases."""

    def __init__(self) -> None:
        self.collections: dict[str, StoreT] = {}
        self.leases = MemoryLeases()
        #: Multi-tenant collections: their tenants' stores by name, the settings they share,
        #: and each tenant's activity status ("ACTIVE" or "INACTIVE") by (collection, tenant).
        self.tenants: dict[str, dict[str, StoreT]] = {}
        self.tenant_settings: dict[str, CollectionSettings] = {}
        self.status: dict[tuple[str, str], str] = {}

    def multi_tenant(self, name: str) -> bool | None:
        """Whether collection `name` is multi-tenant; None when it does not exist."""
        if name in self.tenants:
            return True
        store = self.collections.get(name)
        return False if store is not None and store.exists() else None
