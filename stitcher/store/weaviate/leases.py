"""The writer leases of one server, stored in Weaviate (the cluster-wide half of stitcher.locks)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from stitcher.bookkeeping import LEASE_COLLECTION
from stitcher.errors import FaultKind
from stitcher.store.weaviate.faults import kind_of_client_error
from stitcher.store.weaviate.schema import (
    MAX_RESULTS,
    ensure_bookkeeping_collection,
    ensure_text_property,
)

#: Pauses (seconds) while a lease that refused an insert is looked for again: ~5 s in all.
LEASE_VISIBILITY_DELAYS = (0.25, 0.5, 1.0, 1.5, 2.0)

# weaviate is imported inside the functions that use it: importing the client costs about a
# second, which the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate


class WeaviateLeases:
    """The leases of one server: objects of its `StitcherLease` collection (see stitcher.locks).

    Create-only as far as Weaviate allows: `data.insert` is refused (422) for an id that exists.
    """

    #: The record's values and how Weaviate stores them.
    KINDS: ClassVar[dict[str, str]] = {
        "collection": "text",
        "tenant": "text",
        "source": "text",
        "host": "text",
        "pid": "int",
        "command": "text",
        "token": "text",
        "acquired_at": "date",
        "expires_at": "date",
    }

    #: Values a lease collection made by an older stitcher lacks (added on first use).
    ADDED_LATER: ClassVar[tuple[str, ...]] = ("tenant", "source")

    def __init__(self, client: weaviate.WeaviateClient) -> None:
        self._client = client
        self._ready = False

    def ensure(self) -> None:
        """Create the lease collection unless it exists (once per board), with every value a
        lease records: a server that never auto-adds properties refuses others."""
        if self._ready:
            return
        if self._client.collections.exists(LEASE_COLLECTION):
            leases = self._leases()
            for name in self.ADDED_LATER:
                ensure_text_property(leases, name)
        else:
            ensure_bookkeeping_collection(
                self._client,
                LEASE_COLLECTION,
                "stitcher: who is writing which collection (a lease per collection, tenant or "
                "source)",
                self.KINDS,
            )
        self._ready = True

    def records_of(self, collection: str) -> list[dict[str, Any]]:
        """Every lease record of `collection` (its tenants' and sources' too)."""
        from weaviate.classes.query import Filter

        if not self._client.collections.exists(LEASE_COLLECTION):
            return []
        result = self._leases().query.fetch_objects(
            filters=Filter.by_property("collection").equal(collection), limit=MAX_RESULTS
        )
        return [dict(o.properties) for o in result.objects]

    def read(self, lease_id: str) -> dict[str, Any] | None:
        """The lease object's properties, or None."""
        found = self._leases().query.fetch_object_by_id(lease_id)
        return None if found is None else dict(found.properties)

    def create(self, lease_id: str, record: Mapping[str, Any]) -> bool:
        """Insert the lease object; False when one with this id exists already."""
        from weaviate.exceptions import UnexpectedStatusCodeError

        try:
            self._leases().data.insert(uuid=lease_id, properties=dict(record))
        except UnexpectedStatusCodeError as error:
            if error.status_code == 422 and self._visible_soon(lease_id):
                return False
            raise
        return True

    def _visible_soon(self, lease_id: str) -> bool:
        """Whether the lease that made an insert fail shows up within a few seconds.

        A node that was down and is catching up (async replication) reads from its own index:
        the object its peers hold may reach it a moment after they refused the insert.
        """
        for delay in LEASE_VISIBILITY_DELAYS:
            if self.read(lease_id) is not None:
                return True
            time.sleep(delay)
        return self.read(lease_id) is not None

    def update(self, lease_id: str, changes: Mapping[str, Any]) -> None:
        """Change some properties of the lease object."""
        self._leases().data.update(uuid=lease_id, properties=dict(changes))

    def delete(self, lease_id: str) -> None:
        """Delete the lease object (nothing happens when it is gone)."""
        self._leases().data.delete_by_id(lease_id)

    def fault_kind(self, error: BaseException) -> FaultKind | None:
        """What an error of the client was (stitcher.store.weaviate.faults)."""
        return kind_of_client_error(error)

    def _leases(self) -> Any:
        return self._client.collections.use(LEASE_COLLECTION)
