"""The contract of a collection's settings, layout and replication (`SettingsAndLayout`)."""

from __future__ import annotations

import pytest

from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS
from stitcher.errors import CollectionMissing
from stitcher.store.base import ChunkStore
from stitcher.testing.kit import SETTINGS, StoreFixtures


class SettingsAndLayoutContract(StoreFixtures):
    """Settings, layout, replication and the server's collections (`SettingsAndLayout`)."""

    def test_create_records_settings(self, store: ChunkStore) -> None:
        assert not store.exists()
        store.create(SETTINGS)
        assert store.exists()
        assert store.settings() == SETTINGS
        assert store.count() == 0

    def test_layout_of_a_created_collection_is_stitchers(self, store: ChunkStore) -> None:
        with pytest.raises(CollectionMissing):
            store.layout()
        store.create(SETTINGS)
        assert store.layout() == "stitcher"

    def test_replication_is_checked_and_described(self, store: ChunkStore) -> None:
        store.check_replication()  # no factor asked of a new collection: nothing to refuse
        with pytest.raises(CollectionMissing):
            store.replication()
        store.create(SETTINGS)
        store.check_replication()
        described = store.replication()
        assert described["replication_factor"] >= 1
        assert described["consistency"] in ("ONE", "QUORUM", "ALL")
        assert isinstance(described["shards"], dict)

    def test_collection_names_list_it_while_it_exists_and_never_bookkeeping(
        self, store: ChunkStore
    ) -> None:
        assert store.name not in store.collection_names()
        store.create(SETTINGS)
        store.register_source("docs", "/somewhere/docs")  # Weaviate: a bookkeeping collection
        names = store.collection_names()
        assert store.name in names and names == sorted(names)
        assert not set(names) & BOOKKEEPING_COLLECTIONS
        store.drop()
        assert store.name not in store.collection_names()
