"""The contract of what adopt and seed search need (`SeedLayoutAccess`)."""

from __future__ import annotations

import pytest

from stitcher.store.base import ChunkStore
from stitcher.testing.kit import (
    SETTINGS,
    StoreFixtures,
    make_records,
    one_chunk,
    vectors_for,
    write_ok,
)


class SeedLayoutContract(StoreFixtures):
    """What adopt needs: markers, siblings, every object as stored (`SeedLayoutAccess`)."""

    def test_a_marker_is_kept_next_to_the_settings(self, created: ChunkStore) -> None:
        assert created.marker("stitcher_test") == {}
        created.set_marker("stitcher_test", {"verified": True, "objects": 3})
        assert created.marker("stitcher_test") == {"verified": True, "objects": 3}
        settings = created.settings()  # the marker leaves the settings record alone
        assert settings is not None
        assert (settings.model, settings.dimension) == (SETTINGS.model, SETTINGS.dimension)

    def test_a_sibling_is_another_collection_on_the_same_server(self, created: ChunkStore) -> None:
        assert created.sibling(created.name).exists()
        other = created.sibling(created.name + "_Sibling")
        assert not other.exists()
        try:
            other.create(SETTINGS)
            write_ok(other, one_chunk("s", "in the sibling"))
            assert created.sibling(other.name).count() == 1
            assert other.name in created.collection_names()
            assert created.count() == 0
        finally:
            other.drop()
        assert not created.sibling(other.name).exists()

    def test_seed_objects_are_every_object_as_stored(self, created: ChunkStore) -> None:
        records = make_records("doc", "abcdefghijklmnopqrstuvwxyz", source="notes/doc.txt")
        write_ok(created, records)
        found = {obj.id: obj for obj in created.seed_objects()}
        assert set(found) == {r.id for r in records}
        for record, vector in zip(records, vectors_for(records), strict=True):
            obj = found[record.id]
            assert (obj.text, obj.source, obj.parent_id) == (
                record.text,
                record.source,
                record.parent_id,
            )
            assert obj.vector == pytest.approx(vector)
            assert obj.extra["doc_id"] == "doc"
        bare = created.seed_objects([], vectors=False)
        assert {obj.id for obj in bare} == set(found)
        assert all(obj.text == "" and obj.vector is None and not obj.extra for obj in bare)
        texts = created.seed_objects(["text"])
        assert {obj.text for obj in texts} == {r.text for r in records}
        assert all(obj.vector and not obj.extra for obj in texts)
