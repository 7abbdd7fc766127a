"""A ChunkStore in dicts: the same behaviour as WeaviateStore, for unit tests without a server.

Values go through the same conversion as in Weaviate (stitcher.store.schema). One module per
part: MemoryStore (store.py: creation, settings, tenants, writes) mixes the collection's state
(core.py), its reads (reads.py) and what the seed layout needs (seed.py); what the stores of one
"server" share, its collections and leases (server.py); a collection's entities (entities.py);
filters with Weaviate's semantics (filters.py); hybrid search's BM25, cosine and fusions
(scoring.py).
"""

from __future__ import annotations

from stitcher.store.memory.entities import MemoryEntities
from stitcher.store.memory.server import MemoryLeases, MemoryServer
from stitcher.store.memory.store import MemoryStore

# Kept importable from here, where tests have always found it.
from stitcher.store.schema import contains_pattern

__all__ = ["MemoryEntities", "MemoryLeases", "MemoryServer", "MemoryStore", "contains_pattern"]
