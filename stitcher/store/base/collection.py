"""What a collection is (`SettingsAndLayout`: settings, layout, sources, replication) and the
tenants of a multi-tenant one (`TenantAware`)."""

from __future__ import annotations

from typing import Any, Protocol

from stitcher.models import CollectionSettings, TenantInfo
from stitcher.store.base.common import Layout


class SettingsAndLayout(Protocol):
    """What the collection is: its recorded settings and layout, where its sources come from, its
    replication, and the other collections on its server."""

    def create(self, settings: CollectionSettings) -> None:
        """Create the collection with stitcher's schema and record `settings` on it; its vectors
        are held as `settings.vectors` says (stitcher.store.vectors), for good: writes and
        searches read the layout from the recorded settings."""
        ...

    def settings(self) -> CollectionSettings | None:
        """The settings recorded on the collection, or None when it has none (foreign layout)."""
        ...

    def layout(self) -> Layout:
        """Which layout the collection has (CollectionMissing when it does not exist)."""
        ...

    def check_replication(self) -> None:
        """Refuse a requested replication factor before anything is written: UsageError when a
        new collection's factor exceeds the servers, SettingsMismatch when an existing
        collection has another."""
        ...

    def replication(self) -> dict[str, Any]:
        """How the collection is replicated: "replication_factor", "consistency" and "shards"
        (the nodes holding each shard), for `stitcher stats`."""
        ...

    def source_roots(self) -> dict[str, str]:
        """The folder each source of the collection was first ingested from, by source name."""
        ...

    def register_source(self, name: str, root: str) -> None:
        """Record (or move) source `name` to the folder `root`."""
        ...

    def collection_names(self) -> list[str]:
        """The names of the collections on the same server, this one's included when it exists,
        sorted; stitcher's bookkeeping collections left out (for "did you mean" messages)."""
        ...


class TenantAware(Protocol):
    """The tenants of a multi-tenant collection."""

    def collection_exists(self) -> bool:
        """Whether the collection itself exists, whatever the tenant (a tenant store's
        `exists` answers for its tenant)."""
        ...

    def is_multi_tenant(self) -> bool:
        """Whether the existing collection is multi-tenant."""
        ...

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The collection's tenants by name: status, and chunks of the active ones when `count`
        (TenancyMismatch on a single-tenant collection)."""
        ...

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Activate or deactivate tenant `name` of the collection; returns its status before."""
        ...
