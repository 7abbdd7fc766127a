"""The collections stitcher keeps on a server for itself, and the ids of their objects. Nothing
heavy, so that even the server's status (stitcher.server) can leave them out, and the locks
name their leases without the store."""

from __future__ import annotations

import json
import uuid

#: Collection holding one lease object per locked collection (stitcher.locks).
LEASE_COLLECTION = "StitcherLease"
#: Where each source of each collection is registered (stitcher.ingest checks it).
SOURCES_COLLECTION = "StitcherSources"
#: The documents being written: a record per document whose chunks are not all confirmed yet
#: (stitcher.store.weaviate.pending).
PENDING_COLLECTION = "StitcherPending"
#: Never listed among the user's collections.
BOOKKEEPING_COLLECTIONS = frozenset({LEASE_COLLECTION, SOURCES_COLLECTION, PENDING_COLLECTION})

_BOOKKEEPING_NAMESPACE = uuid.UUID("0d5c8a0e-2f4b-5a71-8e3c-6b9f1d2a7c44")


def bookkeeping_uuid(*key: str) -> str:
    """Deterministic object id of a bookkeeping object (a lease, a source) for `key`."""
    return str(uuid.uuid5(_BOOKKEEPING_NAMESPACE, json.dumps(list(key))))
