"""The contract every `ChunkStore` keeps, as a pytest test class any store can run.

`TenantContract` is the same for stores bound to tenants of one multi-tenant collection (its
`open_store(tenant)` fixture opens stores on one server and one fresh collection).

Subclass `ChunkStoreContract` in a test module and give it a `store` fixture that yields a fresh
store of an unused, not yet created collection (and cleans up after)::

    class TestMyStore(ChunkStoreContract):
        @pytest.fixture
        def store(self) -> Iterator[ChunkStore]:
            yield MyStore(f"Contract_{uuid.uuid4().hex[:12]}")

`ChunkStoreContract` is the union of one contract per capability of the protocol
(`CoreChunksContract`, `SettingsAndLayoutContract`, `TenantAwareContract`,
`LeaseKeepingContract`, `EntityLinkingContract`, `SeedLayoutContract`): a store that implements
only some capabilities subclasses only their contracts.

tests/test_store_contract.py runs it for `MemoryStore` and for `WeaviateStore` on a real server,
so the in-memory store can stand in for Weaviate wherever tests need no server. Vectors are tiny
(4 dimensions). Needs pytest (a test dependency), which nothing else in stitcher imports.

One module per capability, as stitcher.store.base: core.py, collection.py, tenants.py (with
`TenantContract`), leases.py, entities.py, seed.py; kit.py holds the helpers they share, cases.py
the filter and graph data, commands.py `cli_on_stores`.
"""

from __future__ import annotations

from stitcher.testing.cases import (
    CST,
    EST,
    FILTER_CASES,
    FILTER_DOCS,
    GRAPH_CASES,
    GRAPH_DOCS,
    GRAPH_ENTITIES,
    WEIRD,
    C,
)
from stitcher.testing.collection import SettingsAndLayoutContract
from stitcher.testing.commands import cli_on_stores
from stitcher.testing.core import CoreChunksContract
from stitcher.testing.entities import EntityLinkingContract
from stitcher.testing.kit import (
    SETTINGS,
    chunk_id,
    filtered,
    make_records,
    one_chunk,
    vectors_for,
    write_ok,
)
from stitcher.testing.leases import LeaseKeepingContract
from stitcher.testing.seed import SeedLayoutContract
from stitcher.testing.tenants import OpenStore, TenantAwareContract, TenantContract

__all__ = [
    "CST",
    "EST",
    "FILTER_CASES",
    "FILTER_DOCS",
    "GRAPH_CASES",
    "GRAPH_DOCS",
    "GRAPH_ENTITIES",
    "SETTINGS",
    "WEIRD",
    "C",
    "ChunkStoreContract",
    "CoreChunksContract",
    "EntityLinkingContract",
    "LeaseKeepingContract",
    "OpenStore",
    "SeedLayoutContract",
    "SettingsAndLayoutContract",
    "TenantAwareContract",
    "TenantContract",
    "chunk_id",
    "cli_on_stores",
    "filtered",
    "make_records",
    "one_chunk",
    "vectors_for",
    "write_ok",
]


class ChunkStoreContract(
    CoreChunksContract,
    SettingsAndLayoutContract,
    TenantAwareContract,
    LeaseKeepingContract,
    EntityLinkingContract,
    SeedLayoutContract,
):
    """The tests every `ChunkStore` passes: every capability's contract. Subclasses provide the
    `store` fixture (see the module); a store with fewer capabilities subclasses only theirs."""
