"""The contract of the chunks themselves (`CoreChunks`)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from stitcher.errors import FilterError
from stitcher.filters import Where
from stitcher.models import ChunkRecord, PendingDocument, SpanRequest, sha256_hex
from stitcher.segment import keyword_text
from stitcher.store.base import ChunkStore
from stitcher.testing.cases import CST, FILTER_CASES, FILTER_DOCS, C
from stitcher.testing.kit import (
    SETTINGS,
    StoreFixtures,
    filtered,
    make_records,
    one_chunk,
    vectors_for,
    write_ok,
)


class CoreChunksContract(StoreFixtures):
    """The chunks: writing, listing, fetching, deleting, searching, filtering (`CoreChunks`)."""

    def test_write_counts_and_same_id_replaces(self, created: ChunkStore) -> None:
        records = make_records("a", "abcdefghijklmnopqrstuvwxyz")
        write_ok(created, records)
        assert created.count() == len(records) == 3

        changed = [
            ChunkRecord(**{**r.__dict__, "text": r.text.upper(), "metadata": {"lang": "en"}})
            for r in records
        ]
        write_ok(created, changed)
        assert created.count() == 3
        stored = {r.id: r for r in created.fetch([r.id for r in records])}
        assert {r.id: r for r in changed} == stored

    def test_records_round_trip_with_metadata(self, created: ChunkStore) -> None:
        metadata = {
            "title": "内核 Guide",
            "lang": "zh",
            "page": 3,
            "date": datetime(2024, 1, 2, 10, 0, tzinfo=CST),
            "tags": ["linux", "内核"],
            "author": "Alice",
            "Rating": 4.5,
            "draft": False,
            "作者": "张三",
            "id": "reserved-name",
            "my-key": ["x", "y"],
            "updated": datetime(2023, 5, 1, 12, 30),  # naive: taken as UTC
        }
        records = make_records(
            "meta", "重新编译内核的方法，以及更多的文字内容。", metadata=metadata
        )
        write_ok(created, records)
        fetched = {r.id: r for r in created.fetch([r.id for r in records])}
        expected = dict(metadata, updated=datetime(2023, 5, 1, 12, 30, tzinfo=timezone.utc))
        for record in records:
            assert fetched[record.id].metadata == expected
            assert fetched[record.id] == ChunkRecord(**{**record.__dict__, "metadata": expected})
            assert fetched[record.id].metadata["date"].utcoffset() == timedelta(0)

    def test_metadata_type_conflict_fails_that_document(self, created: ChunkStore) -> None:
        write_ok(created, make_records("first", "rated ok", metadata={"rating": 4}))
        good = make_records("good", "also fine", metadata={"rating": 5})
        bad = make_records("bad", "not a number", metadata={"rating": "five stars"})
        failures = created.write(good + bad, vectors_for(good + bad))
        assert [(f.id, f.doc_id) for f in failures] == [(r.id, "bad") for r in bad]
        assert "'rating'" in failures[0].reason and "'bad'" in failures[0].reason
        assert set(created.documents()) == {"first", "good"}

    def test_documents_lists_versions_counts_and_sources(self, created: ChunkStore) -> None:
        old = make_records("d1", "x" * 30, doc_hash="old", source="src/d1.md")
        new = make_records("d1", "y" * 20, doc_hash="new", source="src/d1.md")
        other = make_records("d2", "zzzz", source="src/d2.txt")
        for records in (old, new, other):
            write_ok(created, records)
        docs = created.documents()
        assert set(docs) == {"d1", "d2"}
        assert docs["d1"].doc_hashes == {"old", "new"}
        assert docs["d1"].chunk_count == len(old) + len(new)
        assert docs["d1"].source == "src/d1.md"
        assert docs["d2"].doc_hashes == {"v1"} and docs["d2"].chunk_count == 1

    def test_a_document_begun_and_not_finished_is_listed_incomplete(
        self, created: ChunkStore
    ) -> None:
        whole = make_records("whole", "x" * 30)
        half = make_records("half", "y" * 30, doc_hash="v2")
        write_ok(created, whole)
        created.begin_documents([PendingDocument("half", "v2", len(half))])
        write_ok(created, half[: len(half) // 2])  # the run stops here
        docs = created.documents()
        # Never begun (as in collections older than the record): complete.
        assert docs["whole"].complete
        assert not docs["half"].complete and docs["half"].chunk_count == len(half) // 2
        write_ok(created, half)
        assert not created.documents()["half"].complete  # written, not yet finished
        created.finish_documents(["half", "never-begun"])
        assert all(doc.complete for doc in created.documents().values())

    def test_a_deleted_document_forgets_that_it_was_incomplete(self, created: ChunkStore) -> None:
        records = make_records("gone", "z" * 30)
        created.begin_documents([PendingDocument("gone", "v1", len(records))])
        write_ok(created, records[:1])
        created.delete_document("gone")
        write_ok(created, records)  # stored again later, by a writer that never begins it
        assert created.documents()["gone"].complete

    def test_a_dropped_collection_forgets_its_incomplete_documents(
        self, created: ChunkStore
    ) -> None:
        records = make_records("left", "w" * 30)
        created.begin_documents([PendingDocument("left", "v1", len(records))])
        write_ok(created, records)
        created.drop()
        created.create(SETTINGS)
        write_ok(created, records)
        assert created.documents()["left"].complete

    def test_delete_document_keeps_the_kept_version(self, created: ChunkStore) -> None:
        old = make_records("d1", "x" * 30, doc_hash="old")
        new = make_records("d1", "y" * 20, doc_hash="new")
        other = make_records("d2", "zzzz")
        for records in (old, new, other):
            write_ok(created, records)
        assert created.delete_document("d1", keep_doc_hash="new") == len(old)
        assert created.documents()["d1"].doc_hashes == {"new"}
        assert created.delete_document("d1") == len(new)
        assert set(created.documents()) == {"d2"}
        assert created.delete_document("missing") == 0

    def test_fetch_many_ids(self, created: ChunkStore) -> None:
        records = make_records("many", "0123456789" * 25)
        write_ok(created, records)
        wanted = [r.id for r in records[:25]]
        assert len(wanted) == 25
        fetched = created.fetch([*wanted, str(uuid.uuid4())])
        assert sorted(r.id for r in fetched) == sorted(wanted)

    def test_fetch_spans_returns_exactly_the_overlapping_chunks(self, created: ChunkStore) -> None:
        text = "0123456789" * 8  # chunks [0,10) [8,18) [16,26) ...
        v1 = make_records("s", text, doc_hash="v1")
        v2 = make_records("s", text, doc_hash="v2")
        other = make_records("t", text)
        for records in (v1, v2, other):
            write_ok(created, records)
        requests = [
            SpanRequest("s", "v1", lo=9, hi=17),  # overlaps [0,10) and [8,18) (and [16,26))
            SpanRequest("t", "v1", lo=70, hi=80),
        ]
        expected = {r.id for r in v1 if r.start < 17 and r.end > 9}
        expected |= {r.id for r in other if r.start < 80 and r.end > 70}
        assert {r.id for r in created.fetch_spans(requests)} == expected
        assert created.fetch_spans([]) == []

    def test_vectors_by_chunk_hash(self, created: ChunkStore) -> None:
        records = make_records("v", "abcdefghijklmnopqrstuvwxyz")
        vectors = [[0.1, 0.2, 0.3, float(i)] for i in range(len(records))]
        assert created.write(records, vectors) == []
        wanted = {records[0].chunk_hash, records[2].chunk_hash, sha256_hex("unknown")}
        found = created.vectors_by_chunk_hash("v", wanted)
        assert found.keys() == {records[0].chunk_hash, records[2].chunk_hash}
        assert found[records[2].chunk_hash] == pytest.approx(vectors[2])
        assert created.vectors_by_chunk_hash("other-doc", wanted) == {}

    def test_hybrid_keyword_side_finds_chinese_words_in_compounds(
        self, created: ChunkStore
    ) -> None:
        docs = {
            "zh": "重新编译内核的方法",
            "zh2": "今天天气很好，适合出去散步",
            "en": "How to rebuild the kernel module",
        }
        for doc_id, text in docs.items():
            write_ok(created, one_chunk(doc_id, text))
        for query, doc_id in [("内核", "zh"), ("天气", "zh2"), ("Kernel", "en"), ("rebuild", "en")]:
            hits = created.hybrid(query, keyword_text(query), [1, 0, 0, 0], limit=5, alpha=0.0)
            assert [hit.record.doc_id for hit in hits] == [doc_id], query
            assert hits[0].explain is not None and hits[0].explain.keyword == pytest.approx(1.0)

    @pytest.mark.parametrize("fusion", ["relative", "ranked"])
    def test_hybrid_scores_are_explained(self, created: ChunkStore, fusion: str) -> None:
        records = one_chunk("a", "apple") + one_chunk("b", "cherry") + one_chunk("c", "apple tart")
        vectors = [[1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
        assert created.write(records, vectors) == []
        hits = created.hybrid("apple", "apple", [1, 0, 0, 0], limit=3, alpha=0.4, fusion=fusion)
        assert {hit.record.doc_id for hit in hits} == {"a", "b", "c"}
        assert hits[0].record.doc_id == "a"  # best on both sides
        for hit in hits:
            explain = hit.explain
            assert explain is not None and explain.fusion == fusion and explain.alpha == 0.4
            parts = (explain.keyword_contribution or 0.0) + (explain.vector_contribution or 0.0)
            assert hit.score == pytest.approx(parts, abs=1e-5)
            assert explain.vector is not None
            assert (explain.keyword is not None) == (hit.record.doc_id in ("a", "c"))

    @pytest.fixture
    def filter_store(self, created: ChunkStore) -> ChunkStore:
        records = []
        for doc_id, metadata in FILTER_DOCS.items():
            meta = {k: v for k, v in metadata.items() if k != "source"}
            records += make_records(doc_id, f"text of {doc_id}", size=40, step=40, metadata=meta)
            records[-1] = ChunkRecord(**{**records[-1].__dict__, "source": metadata["source"]})
        write_ok(created, records)
        return created

    def test_where_operators_narrow_correctly(self, filter_store: ChunkStore) -> None:
        # One test over all cases: the collection is built once per store.
        assert filtered(filter_store, Where()) == set(FILTER_DOCS)
        for where, expected in FILTER_CASES:
            assert filtered(filter_store, where) == expected, where

    def test_contains_with_wildcard_characters_still_finds_the_literal(
        self,
        filter_store: ChunkStore,
    ) -> None:
        # `*` and `?` cannot be escaped in Weaviate's like: they match any one character there.
        found = filtered(filter_store, Where((C("path", "contains", "x*y"),)))
        assert "d4" in found and "d1" not in found

    def test_where_with_unknown_field_or_bad_value_is_refused(
        self, filter_store: ChunkStore
    ) -> None:
        with pytest.raises(FilterError, match="colour") as refused:
            filtered(filter_store, Where((C("colour", "eq", "red"),)))
        # The fields listed are those `stitcher fields` shows, bookkeeping left out.
        listed = str(refused.value).rsplit("known fields: ", 1)[1].split(", ")
        assert listed == list(filter_store.fields())
        assert "chunk_hash" not in listed and "path" in listed
        with pytest.raises(FilterError, match="path~"):
            filtered(filter_store, Where((C("source", "contains", "d"),)))
        with pytest.raises(FilterError, match="page"):
            filtered(filter_store, Where((C("page", "gt", "many"),)))
        with pytest.raises(FilterError, match="contains"):
            filtered(filter_store, Where((C("page", "contains", "1"),)))

    def test_stored_values_are_each_value_once(self, filter_store: ChunkStore) -> None:
        assert sorted(filter_store.stored_values("lang")) == ["de", "en", "zh"]
        assert sorted(filter_store.stored_values("tags")) == ["kernel", "linux", "weather"]
        assert sorted(filter_store.stored_values("source")) == sorted(FILTER_DOCS)
        assert sorted(filter_store.stored_values("path")) == sorted(
            str(meta["source"]) for meta in FILTER_DOCS.values()
        )

    def test_write_failures_are_returned_and_the_rest_stored(self, created: ChunkStore) -> None:
        write_ok(created, one_chunk("first", "establishes the dimension"))
        records = [*one_chunk("ok1", "fine"), *one_chunk("bad", "short"), *one_chunk("ok2", "ok")]
        vectors = [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
        failures = created.write(records, vectors)
        assert [(f.id, f.doc_id) for f in failures] == [(records[1].id, "bad")]
        assert failures[0].reason
        assert created.count() == 3
        assert set(created.documents()) == {"first", "ok1", "ok2"}

    def test_drop_removes_the_collection_and_its_sources(self, created: ChunkStore) -> None:
        write_ok(created, make_records("d", "abcdefghijklmnopqrstuvwxyz"))
        created.register_source("docs", "/somewhere/docs")
        assert created.drop() is True
        assert not created.exists()
        assert created.drop() is False
        created.create(SETTINGS)  # a new collection of the same name starts empty
        assert created.count() == 0 and created.documents() == {}
        assert created.source_roots() == {}
