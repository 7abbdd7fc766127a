"""The collections stitcher keeps on a server for itself. Constants only, so that even the
server's status (stitcher.server) can leave them out without importing anything heavy."""

from __future__ import annotations

#: Collection holding one lease object per locked collection (stitcher.locks).
LEASE_COLLECTION = "StitcherLease"
#: Where each source of each collection is registered (stitcher.ingest checks it).
SOURCES_COLLECTION = "StitcherSources"
#: The documents being written: a record per document whose chunks are not all confirmed yet
#: (stitcher.store.weaviate.pending).
PENDING_COLLECTION = "StitcherPending"
#: Never listed among the user's collections.
BOOKKEEPING_COLLECTIONS = frozenset({LEASE_COLLECTION, SOURCES_COLLECTION, PENDING_COLLECTION})
