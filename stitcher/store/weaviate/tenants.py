"""The tenants of a multi-tenant collection: listing them, activating and deactivating them, and
adding the store's own when its first ingest creates it.
"""

from __future__ import annotations

import functools
from typing import Any

from stitcher.errors import CollectionMissing, TenantMissing, setting
from stitcher.ids import checked_tenant_name
from stitcher.models import TenantInfo
from stitcher.store.schema import no_tenants, some_names
from stitcher.store.weaviate.core import StoreCore

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.


class Tenants(StoreCore):
    """A collection's tenants (each one a shard of its own, a knowledge base)."""

    def collection_exists(self) -> bool:
        """Whether the collection exists, whatever this store's tenant (`exists` answers for
        the tenant)."""
        return bool(self._call("reading", lambda: self._client.collections.exists(self._name)))

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The tenants of the collection, by name, with their activity status and, for the
        active ones when `count`, their chunks (an inactive tenant is not counted: a read
        would activate it).

        Raises:
            CollectionMissing: The collection does not exist.
            TenancyMismatch: The collection is single-tenant.
        """
        self._require_multi_tenant()
        found = self._call("reading the tenants", self._whole.tenants.get)
        infos = []
        for name in sorted(found):
            status = _status_name(found[name].activity_status)
            chunks = None
            if count and status == "ACTIVE":
                shard = self._whole.with_tenant(name)
                result = self._call_aggregate(
                    "counting", functools.partial(shard.aggregate.over_all, total_count=True)
                )
                chunks = int(result.total_count or 0)
            infos.append(TenantInfo(name, status, chunks))
        return infos

    def _require_multi_tenant(self) -> None:
        if not self._call("reading", lambda: self._client.collections.exists(self._name)):
            raise CollectionMissing(
                f"collection {self._name!r} does not exist; check {setting('collection')}"
            )
        if not self.is_multi_tenant():
            raise no_tenants(self._name)

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Activate a tenant (load it) or deactivate it (unload it from memory, files kept on
        disk); returns its status before. Offloading to cloud storage needs Weaviate's
        offload-s3 module and is not offered.

        Raises:
            TenantMissing: The collection has no such tenant.
        """
        from weaviate.classes.tenants import Tenant, TenantActivityStatus

        tenant = checked_tenant_name(name)
        assert tenant is not None
        self._require_multi_tenant()
        found = self._call("reading the tenants", lambda: self._whole.tenants.get_by_name(tenant))
        if found is None:
            known = [info.name for info in self.tenants(count=False)]
            raise TenantMissing(
                f"collection {self._name!r} has no tenant {tenant!r}; its tenants: "
                f"{some_names(known)}"
            )
        status = TenantActivityStatus.ACTIVE if active else TenantActivityStatus.INACTIVE
        self._call(
            "changing a tenant's activity",
            lambda: self._whole.tenants.update([Tenant(name=tenant, activity_status=status)]),
        )
        return _status_name(found.activity_status)

    def _add_tenant(self) -> None:
        from weaviate.classes.tenants import Tenant

        tenant = self._tenant
        assert tenant is not None
        # Creating a tenant that exists is accepted by the server: two first ingests may race.
        self._call("creating the tenant", lambda: self._whole.tenants.create([Tenant(name=tenant)]))


def _status_name(status: Any) -> str:
    """ "ACTIVE", "INACTIVE", ...: the client's names (its HOT/COLD/FROZEN are old spellings)."""
    name = str(getattr(status, "value", status))
    return {"HOT": "ACTIVE", "COLD": "INACTIVE", "FROZEN": "OFFLOADED"}.get(name, name)
