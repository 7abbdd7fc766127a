"""The storage seam: everything ingest and search need from a collection of chunks.

`ChunkStore` is the union of small protocols, one per capability and one module each: the
chunks themselves (`CoreChunks`, core.py), the collection's settings and layout and its tenants
(collection.py), leases (leases.py), entities (entities.py), and what the seed layout needs
(seed.py); common.py holds what they share. `StoreServer` (server.py) is the server-level seam
(its collections, version, backups). `WeaviateStore` (stitcher.store.weaviate) is the real
thing; `MemoryStore` holds the same data in dicts for fast unit tests. Both pass the contract in
stitcher.testing (run by tests/test_store_contract.py), capability by capability.
"""

from __future__ import annotations

from typing import Protocol

from stitcher.store.base.collection import SettingsAndLayout, TenantAware
from stitcher.store.base.common import FUSIONS, Layout, check_fusion, scope_of
from stitcher.store.base.core import CoreChunks
from stitcher.store.base.entities import EntityCollections, EntityLinking
from stitcher.store.base.leases import LeaseBoard, LeaseKeeping
from stitcher.store.base.seed import SeedLayoutAccess
from stitcher.store.base.server import BackupOutcome, StoreServer

__all__ = [
    "FUSIONS",
    "BackupOutcome",
    "ChunkStore",
    "CoreChunks",
    "EntityCollections",
    "EntityLinking",
    "Layout",
    "LeaseBoard",
    "LeaseKeeping",
    "SeedLayoutAccess",
    "SettingsAndLayout",
    "StoreServer",
    "TenantAware",
    "check_fusion",
    "scope_of",
]


class ChunkStore(
    CoreChunks,
    SettingsAndLayout,
    TenantAware,
    LeaseKeeping,
    EntityLinking,
    SeedLayoutAccess,
    Protocol,
):
    """One collection of chunks on a server, with every capability above: what `Session`, ingest
    and search are typed to. A store that lacks a capability implements only its protocol."""
