"""The ChunkStore contract (stitcher.testing) run on both stores, plus what only Weaviate has.

The "weaviate" parameter runs against the real server from tests/conftest.py, in a fresh
collection per test (deleted afterwards, with its entity collections and registered sources).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from stitcher.graph.model import KINDS, entity_collection
from stitcher.models import ChunkRecord
from stitcher.store.base import ChunkStore
from stitcher.store.memory import MemoryServer, MemoryStore
from stitcher.store.weaviate import WeaviateStore
from stitcher.store.weaviate.scores import parse_explain
from stitcher.testing import (
    SETTINGS,
    ChunkStoreContract,
    make_records,
    one_chunk,
    write_ok,
)


class TestChunkStore(ChunkStoreContract):
    @pytest.fixture(params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)])
    def store(self, request: pytest.FixtureRequest) -> Iterator[ChunkStore]:
        name = f"ContractTest_{uuid.uuid4().hex[:12]}"
        if request.param == "memory":
            yield MemoryStore(name)
            return
        client = request.getfixturevalue("weaviate_client")
        # Short retry delays: the wrong-dimension test waits through all of them.
        real = WeaviateStore(client, name, retry_delays=(0.05, 0.05))
        try:
            yield real
        finally:
            real.drop()
            for kind in KINDS:
                client.collections.delete(entity_collection(real.name, kind))

    def test_delete_more_than_the_server_cap(
        self, created: ChunkStore, request: pytest.FixtureRequest
    ) -> None:
        total = 10_050  # above the 10,000 objects one delete_many call removes
        records = make_records("big", "a" * (total * 8 + 2))
        assert len(records) == total
        if isinstance(created, WeaviateStore):
            _insert_without_vectors(request.getfixturevalue("weaviate_client"), created, records)
        else:
            write_ok(created, records)
        write_ok(created, make_records("small", "keep me"))
        assert created.delete_document("big") == total
        assert created.count() == 1


def _insert_without_vectors(client: Any, store: WeaviateStore, records: list[ChunkRecord]) -> None:
    """Bulk insert for the delete test: without vectors the server skips the HNSW index, which
    takes ~2.5 ms per object on a small machine; deletion does not care about vectors."""
    from weaviate.classes.data import DataObject

    from stitcher.store.schema import record_to_properties

    collection = client.collections.use(store.name)
    for begin in range(0, len(records), 2000):
        objects = [
            DataObject(properties=record_to_properties(r, {}), uuid=r.id)
            for r in records[begin : begin + 2000]
        ]
        assert not collection.data.insert_many(objects).errors


def test_parse_explain_relative_and_ranked() -> None:
    relative = (
        "\nHybrid (Result Set keyword,bm25) Document 6f1c: original score 0.5162, "
        "normalized score: 0.7 - \nHybrid (Result Set vector,hybridVector) Document 6f1c: "
        "original score 0.9938837, normalized score: 0.15"
    )
    explain = parse_explain(relative, 0.3, "relative")
    assert explain.keyword == pytest.approx(1.0) and explain.vector == pytest.approx(0.5)
    assert explain.keyword_contribution == pytest.approx(0.7)
    assert explain.vector_contribution == pytest.approx(0.15)
    ranked = (
        "\nHybrid (Result Set vector,hybridVector) Document 6f1c contributed 0.0050000004 to "
        "the score\nHybrid (Result Set keyword,bm25) Document 6f1c contributed 1.1666667e-02 to "
        "the score"
    )
    explain = parse_explain(ranked, 0.3, "ranked")
    assert explain.vector == pytest.approx(1 / 60) and explain.keyword == pytest.approx(1 / 60)
    only_vector = parse_explain(ranked.split("\nHybrid (Result Set keyword")[0], 0.3, "ranked")
    assert only_vector.keyword is None and only_vector.keyword_contribution is None


def test_langchain_reads_the_collection(weaviate_client: Any) -> None:
    from langchain_core.embeddings import Embeddings
    from langchain_weaviate import WeaviateVectorStore

    class Fixed(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0, 0.0, 0.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [1.0, 0.0, 0.0, 0.0]

    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    store = WeaviateStore(weaviate_client, name)
    store.create(SETTINGS)
    try:
        write_ok(store, one_chunk("zh", "重新编译内核的方法") + one_chunk("en", "kernel build"))
        langchain = WeaviateVectorStore(
            client=weaviate_client, index_name=name, text_key="text", embedding=Fixed()
        )
        docs = langchain.similarity_search("kernel", k=2)
        assert {doc.page_content for doc in docs} == {"重新编译内核的方法", "kernel build"}
        assert {doc.metadata["doc_id"] for doc in docs} == {"zh", "en"}
    finally:
        weaviate_client.collections.delete(name)


def test_foreign_collection_has_no_settings(weaviate_client: Any) -> None:
    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    weaviate_client.collections.create(name, description="made by someone else")
    try:
        assert WeaviateStore(weaviate_client, name).settings() is None
    finally:
        weaviate_client.collections.delete(name)


def test_documents_falls_back_to_walking_when_the_aggregate_is_incomplete(
    weaviate_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stitcher.store.weaviate import listing as wlisting

    monkeypatch.setattr(wlisting, "_MAX_VERSIONS", 1)  # the aggregate then lists one version only
    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    store = WeaviateStore(weaviate_client, name)
    store.create(SETTINGS)
    try:
        for doc_hash in ("old", "new"):
            write_ok(store, make_records("d", "x" * 20, doc_hash=doc_hash))
        write_ok(store, make_records("e", "y" * 20))
        listed = wlisting.documents_by_aggregate(store._collection, store.count(), with_rules=False)
        assert listed is None  # incomplete: detected
        docs = store.documents()
        assert docs["d"].doc_hashes == {"old", "new"} and docs["d"].chunk_count == 6
        assert docs["e"].doc_hashes == {"v1"}
    finally:
        weaviate_client.collections.delete(name)


# --- whole listings checked against the count (issue 13; the cluster case is in test_cluster) --


def test_a_listing_short_of_the_count_is_retried_then_refused(weaviate_client: Any) -> None:
    from stitcher.errors import ListingIncomplete

    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    store = WeaviateStore(weaviate_client, name, listing_patience=1.5)
    store.create(SETTINGS)
    try:
        write_ok(store, make_records("d", "x" * 20))  # 3 chunks
        seen: list[int] = []

        def short_once(count: int) -> tuple[str, int]:
            seen.append(count)
            return "listed", count - 1 if len(seen) == 1 else count

        assert store.listed_whole("listing", short_once) == "listed"
        assert seen == [3, 3]  # retried after the short one, with a fresh count

        def always_short(count: int) -> tuple[str, int]:
            seen.append(count)
            return "never", count - 1

        seen.clear()
        with pytest.raises(ListingIncomplete, match=r"saw 2 chunks, but its replicas count 3 \("):
            store.listed_whole("listing documents", always_short)
        assert len(seen) == 2  # one retry fits in 1.5 s (after 1 s), the next wait (2 s) not
    finally:
        weaviate_client.collections.delete(name)


def test_a_walk_that_missed_an_object_raises_after_its_last_page(weaviate_client: Any) -> None:
    """What export relies on: the cursor walk counts what it streamed against the count before
    and after. Here one object vanishes ahead of the cursor while another appears behind it:
    the count stays 3, the walk sees 2 (as a replica missing an object would)."""
    import dataclasses

    from stitcher.errors import ListingIncomplete

    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    store = WeaviateStore(weaviate_client, name)
    store.create(SETTINGS)
    try:
        ids = [f"00000000-0000-4000-8000-00000000000{i}" for i in range(4)]
        for i in (1, 2, 3):
            (record,) = one_chunk(f"doc{i}", f"text {i}")
            write_ok(store, [dataclasses.replace(record, id=ids[i])])
        walk = store.records_with_vectors(page_size=1)
        first, _vector = next(walk)
        assert first.id == ids[1]
        assert store.delete_document("doc3") == 1  # ahead of the cursor
        (behind,) = one_chunk("doc0", "text 0")
        write_ok(store, [dataclasses.replace(behind, id=ids[0])])  # behind it
        with pytest.raises(ListingIncomplete, match="saw 2 chunks, but its replicas count 3"):
            list(walk)
        assert {r.doc_id for r, _ in store.records_with_vectors()} == {"doc0", "doc1", "doc2"}
    finally:
        weaviate_client.collections.delete(name)


def test_memory_stores_of_one_server_see_each_others_collections() -> None:
    server = MemoryServer()
    first, second = MemoryStore("first", server), MemoryStore("second", server)
    alone = MemoryStore("alone")
    first.create(SETTINGS)
    alone.create(SETTINGS)
    assert second.collection_names() == ["First"]
    second.create(SETTINGS)
    assert first.collection_names() == ["First", "Second"]
    assert alone.collection_names() == ["Alone"]
    first.drop()
    assert second.collection_names() == ["Second"]


# --- a delete refused by a full disk is named as such (seen in CI's disk-full fault test) ------


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("store is read-only", "refuses writes to"),
        ("object is locked by another writer", "could not delete 1 chunks of 'd'"),
    ],
)
def test_a_refused_delete_says_why(weaviate_client: Any, error: str, expected: str) -> None:
    """When the disk fills between writing a new version and deleting the old one, the delete is
    what fails: its per-object error must reach the one-line message (read-only → the fault
    that says 'free disk space', anything else → the reason itself)."""
    from weaviate.collections.classes.batch import DeleteManyObject, DeleteManyReturn

    from stitcher.errors import StitcherError

    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    store = WeaviateStore(weaviate_client, name)
    store.create(SETTINGS)
    try:
        write_ok(store, make_records("d", "x" * 20))
        refusal = DeleteManyReturn(
            failed=1,
            matches=1,
            successful=0,
            objects=[DeleteManyObject(uuid=uuid.uuid4(), successful=False, error=error)],
        )
        data = store._collection.data
        original = type(data).delete_many
        try:
            type(data).delete_many = lambda self, **kwargs: refusal  # type: ignore[method-assign]
            with pytest.raises(StitcherError) as raised:
                store.delete_document("d")
        finally:
            type(data).delete_many = original  # type: ignore[method-assign]
        assert expected in str(raised.value)
        assert error in str(raised.value)
        assert store.count() == 3  # nothing lost
    finally:
        weaviate_client.collections.delete(name)


# --- replacing a version never deletes a chunk of the version kept (seen on a 3-node cluster) ---


def test_a_lagging_doc_hash_index_never_costs_the_new_version_a_chunk(
    weaviate_client: Any,
) -> None:
    """On a 3-node cluster at consistency ONE the old version's delete removed one chunk of the
    version just written: `doc_hash != new` was answered by a replica that had not yet indexed
    the new chunks' doc_hash. Here the index lags everywhere: every filter on doc_hash matches
    the whole document. Only chunks whose stored doc_hash is old may go."""
    from weaviate.classes.query import Filter

    name = f"ContractTest_{uuid.uuid4().hex[:12]}"
    store = WeaviateStore(weaviate_client, name)
    store.create(SETTINGS)
    try:
        old = make_records("d", "the old words " * 4, doc_hash="old")
        new = make_records("d", "brand new text " * 5, doc_hash="new")
        write_ok(store, old)
        write_ok(store, new)
        whole_document = Filter.by_property("doc_id").equal("d")

        def lagging(method: Any, keyword: str) -> Any:
            def answer(self: Any, *args: Any, **kwargs: Any) -> Any:
                condition = kwargs.get(keyword)
                if "doc_hash" in repr(getattr(condition, "filters", condition)):
                    kwargs[keyword] = whole_document
                return method(self, *args, **kwargs)

            return answer

        query, data = type(store._collection.query), type(store._collection.data)
        fetch, delete = query.fetch_objects, data.delete_many
        try:
            query.fetch_objects = lagging(fetch, "filters")  # type: ignore[method-assign]
            data.delete_many = lagging(delete, "where")  # type: ignore[method-assign]
            deleted = store.delete_document("d", keep_doc_hash="new")
        finally:
            query.fetch_objects = fetch  # type: ignore[method-assign]
            data.delete_many = delete  # type: ignore[method-assign]
        assert deleted == len(old)
        assert sorted(r.id for r in store.fetch([r.id for r in old + new])) == sorted(
            r.id for r in new
        )
    finally:
        weaviate_client.collections.delete(name)
