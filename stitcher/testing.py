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
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from stitcher.api import Stitcher
from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS
from stitcher.cli.library import commands_open
from stitcher.errors import (
    CollectionMissing,
    FilterError,
    SettingsMismatch,
    TenancyMismatch,
    TenantMissing,
    UsageError,
)
from stitcher.faults import is_transient
from stitcher.filters import Condition, Where
from stitcher.graph import AmbiguousEntity, UnknownEntity, org_condition
from stitcher.graph.model import MENTIONED_KIND, Entity
from stitcher.models import (
    ChunkRecord,
    CollectionSettings,
    PendingDocument,
    SpanRequest,
    sha256_hex,
)
from stitcher.segment import keyword_text
from stitcher.store.base import ChunkStore

SETTINGS = CollectionSettings(model="test/fake", dimension=4, chunk_size=10, chunk_overlap=2)


CST = timezone(timedelta(hours=8))


EST = timezone(timedelta(hours=-5))


WEIRD = 'O\'Brien "the {chef}" \\ back'


FILTER_DOCS: dict[str, dict[str, Any]] = {
    "d1": {
        "source": "notes/a.md",
        "lang": "zh",
        "title": "Kernel Guide",
        "page": 1,
        "date": datetime(2024, 1, 1, 10, 0, tzinfo=CST),  # 02:00 UTC
        "tags": ["linux", "kernel"],
        "author": "Alice",
        "rating": 4.5,
        "draft": False,
    },
    "d2": {
        "source": "notes/b.md",
        "lang": "en",
        "title": "Weather Report",
        "page": 5,
        "date": datetime(2024, 1, 1, 3, 0, tzinfo=timezone.utc),
        "tags": ["weather"],
        "author": "Bob",
        "rating": 3.0,
        "draft": True,
    },
    "d3": {
        "source": "other/c{1}\\x.txt",
        "lang": "en",
        "title": "Cooking",
        "page": 10,
        "date": datetime(2024, 2, 1, 0, 0, tzinfo=EST),
        "author": WEIRD,
        "rating": 5.0,
    },
    "d4": {
        "source": "other/x*y.md",
        "lang": "de",
        "title": "Sonstiges",
        "page": 7,
        "date": datetime(2023, 12, 31, 23, 0, tzinfo=timezone.utc),
        "author": 'say "hi" {x} $y',
        "rating": 1.0,
    },
}


C = Condition


FILTER_CASES: list[tuple[Where, set[str]]] = [
    (Where((C("lang", "eq", "en"),)), {"d2", "d3"}),
    (Where((C("lang", "ne", "en"),)), {"d1", "d4"}),
    (Where((C("page", "gt", 5),)), {"d3", "d4"}),
    (Where((C("page", "ge", 5),)), {"d2", "d3", "d4"}),
    (Where((C("page", "lt", 5),)), {"d1"}),
    (Where((C("page", "le", 5),)), {"d1", "d2"}),
    (Where((C("page", "any", (1, 10)),)), {"d1", "d3"}),
    (Where((C("tags", "any", ("kernel", "weather")),)), {"d1", "d2"}),
    (Where((C("tags", "eq", "linux"),)), {"d1"}),
    (Where((C("path", "contains", "notes/"),)), {"d1", "d2"}),
    # `source` is the source name, the first segment of doc_id (these ids have only one).
    (Where((C("source", "eq", "d2"),)), {"d2"}),
    (Where((C("source", "any", ("d1", "d3", "nope")),)), {"d1", "d3"}),
    (Where((C("source", "ne", "d2"),)), {"d1", "d3", "d4"}),
    (Where((C("title", "contains", "guide"),)), {"d1"}),
    (Where((C("title", "eq", "weather"),)), {"d2"}),
    (Where((C("doc_id", "any", ("d1", "d4", "nope")),)), {"d1", "d4"}),
    # Dates: 10:30+08:00 is 02:30 UTC, after d1 (02:00 UTC) and before d2 (03:00 UTC).
    (Where((C("date", "lt", datetime(2024, 1, 1, 10, 30, tzinfo=CST)),)), {"d1", "d4"}),
    (Where((C("date", "ge", "2024-01-01T02:00:00Z"),)), {"d1", "d2", "d3"}),
    (Where((C("date", "le", datetime(2024, 1, 1, 2, 0)),)), {"d1", "d4"}),  # naive = UTC
    (Where((C("date", "gt", datetime(2024, 1, 31, 23, 0, tzinfo=EST)),)), {"d3"}),
    # Extra metadata properties created on demand.
    (Where((C("author", "eq", "Alice"),)), {"d1"}),
    (Where((C("rating", "gt", 4),)), {"d1", "d3"}),
    (Where((C("draft", "eq", True),)), {"d2"}),
    # all_of AND one any_of group.
    (
        Where(
            (C("lang", "eq", "en"),),
            (C("page", "eq", 5), C("author", "eq", WEIRD)),
        ),
        {"d2", "d3"},
    ),
    (Where((C("lang", "eq", "en"), C("page", "lt", 10))), {"d2"}),
    # Literal values: quotes, braces, backslashes, GraphQL syntax.
    (Where((C("author", "eq", WEIRD),)), {"d3"}),
    (Where((C("author", "contains", '"the {chef}" \\'),)), {"d3"}),
    (Where((C("author", "eq", 'say "hi" {x} $y'),)), {"d4"}),
    (Where((C("author", "contains", "} $y"),)), {"d4"}),
    (Where((C("path", "eq", "other/c{1}\\x.txt"),)), {"d3"}),
    (Where((C("path", "contains", "c{1}\\"),)), {"d3"}),
    (Where((C("author", "eq", 'Alice" } OR { "a'),)), set()),
]


@contextmanager
def cli_on_stores(
    open_store: Callable[[str, str | None], ChunkStore], query_embedder: Any
) -> Iterator[None]:
    """Every `stitcher` command run in this process meanwhile (`stitcher.cli.main([...])`) opens
    its collection as `open_store(collection, tenant)` and embeds its queries with
    `query_embedder` (an Embedder whose `name` is the model the collection was stored with),
    instead of connecting to a server: the CLI's own logic (options, filters, output) tested on
    the in-memory store. Searches run in-process, never in the warm worker.
    """

    def opened(collection: str, tenant: str | None) -> Stitcher:
        store = open_store(collection, tenant)
        return Stitcher(
            collection=collection, tenant=tenant, store=store, query_embedder=query_embedder
        )

    with commands_open(opened):
        yield


def chunk_id(doc_id: str, doc_hash: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"test|{doc_id}|{doc_hash}|{index}"))


def make_records(
    doc_id: str,
    text: str,
    *,
    doc_hash: str = "v1",
    size: int = 10,
    step: int = 8,
    source: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[ChunkRecord]:
    """Chunks of `size` characters every `step` characters, like the real chunker's overlap."""
    records = []
    starts = range(0, max(len(text) - size + step, 1), step)
    for index, start in enumerate(starts):
        end = min(start + size, len(text))
        piece = text[start:end]
        records.append(
            ChunkRecord(
                id=chunk_id(doc_id, doc_hash, index),
                doc_id=doc_id,
                doc_hash=doc_hash,
                chunk_index=index,
                start=start,
                end=end,
                text=piece,
                source=source or f"docs/{doc_id}",
                chunk_hash=sha256_hex(piece),
                doc_length=len(text),
                parent_id=chunk_id(doc_id, doc_hash, index - 1) if index else None,
                metadata=dict(metadata or {}),
            )
        )
    return records


def vectors_for(records: list[ChunkRecord]) -> list[list[float]]:
    return [[1.0, (r.chunk_index % 5) / 5, 0.5, 0.25] for r in records]


def write_ok(store: ChunkStore, records: list[ChunkRecord]) -> None:
    assert store.write(records, vectors_for(records)) == []


def one_chunk(doc_id: str, text: str, **metadata: Any) -> list[ChunkRecord]:
    return make_records(doc_id, text, size=len(text), step=len(text), metadata=metadata)


def filtered(store: ChunkStore, where: Where) -> set[str]:
    hits = store.hybrid("", "", [1, 0, 0, 0], limit=50, alpha=1.0, where=where)
    return {hit.record.doc_id for hit in hits}


class _StoreFixtures:
    @pytest.fixture
    def store(self) -> ChunkStore:
        raise NotImplementedError("a contract subclass provides the `store` fixture")

    @pytest.fixture
    def created(self, store: ChunkStore) -> ChunkStore:
        store.create(SETTINGS)
        return store


class CoreChunksContract(_StoreFixtures):
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


class SettingsAndLayoutContract(_StoreFixtures):
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


class TenantAwareContract(_StoreFixtures):
    """The store's own collection as `TenantAware` sees it (several tenants: `TenantContract`)."""

    def test_a_created_collection_exists_with_its_tenancy(self, store: ChunkStore) -> None:
        assert not store.collection_exists()
        store.create(SETTINGS)
        assert store.collection_exists() and store.exists()
        assert store.is_multi_tenant() == (store.tenant is not None)
        if store.tenant is None:
            with pytest.raises(TenancyMismatch):
                store.tenants()
        else:
            assert [info.name for info in store.tenants()] == [store.tenant]


class LeaseKeepingContract(_StoreFixtures):
    """The server's lease board (`LeaseKeeping`)."""

    def test_a_lease_record_is_created_once_changed_and_deleted(self, store: ChunkStore) -> None:
        board = store.leases()
        board.ensure()
        lease_id = str(uuid.uuid4())
        now = datetime.now(timezone.utc).replace(microsecond=0)
        record = {"collection": store.name, "host": "h", "pid": 7, "command": "ingest"}
        record.update({"token": "first", "acquired_at": now, "expires_at": now})
        try:
            assert board.read(lease_id) is None
            assert board.create(lease_id, record) is True
            assert board.create(lease_id, {**record, "token": "second"}) is False
            assert (board.read(lease_id) or {})["token"] == "first"
            board.update(lease_id, {"expires_at": now + timedelta(minutes=2)})
            stored = board.read(lease_id) or {}
            assert stored["expires_at"] == now + timedelta(minutes=2)
            assert stored["token"] == "first" and stored["acquired_at"] == now
            board.delete(lease_id)
            assert board.read(lease_id) is None
            board.delete(lease_id)  # gone already: nothing happens
        finally:
            board.delete(lease_id)

    def test_the_board_tells_its_own_failures_apart(self, store: ChunkStore) -> None:
        """An update of a lease that is not there fails, and its board calls that nothing
        a retry would mend (stitcher.locks retries what `fault_kind` calls transient)."""
        board = store.leases()
        board.ensure()
        with pytest.raises(Exception) as raised:
            board.update(str(uuid.uuid4()), {"token": "none"})
        assert board.fault_kind(raised.value) in (None, "refused")
        assert not is_transient(raised.value, board.fault_kind)
        assert board.fault_kind(ValueError("connection reset")) is None  # not the board's own


class EntityLinkingContract(_StoreFixtures):
    """Entities, and filters that follow the references to them (`EntityLinking`)."""

    def test_entities_load_and_resolve_by_name_and_alias(self, created: ChunkStore) -> None:
        entities = created.entities()
        assert entities.collection == created.name
        assert not entities.exists(MENTIONED_KIND)
        loaded = [
            Entity("organization", "acme", "Acme Corporation", ("ACME",), {"country": "France"}),
            Entity("organization", "kestrel", "Kestrel Motors", (), {"country": "Korea"}),
            Entity("person", "ada", "Ada Lovelace"),
        ]
        entities.load(loaded)
        assert entities.exists(MENTIONED_KIND) and entities.exists("person")
        assert {e.id for e in entities.entities([MENTIONED_KIND])} == {"acme", "kestrel"}
        assert entities.resolver(MENTIONED_KIND).one("acme").id == "acme"
        assert entities.resolver(MENTIONED_KIND).one("Kestrel").id == "kestrel"
        assert org_condition(entities, "Acme Corporation") == Condition("mentions.id", "eq", "acme")
        with pytest.raises(UnknownEntity):
            org_condition(entities, "Nobody Inc")

    def test_an_entity_is_shown_with_its_links_both_ways(self, created: ChunkStore) -> None:
        entities = created.entities()
        entities.load(GRAPH_ENTITIES)
        view = entities.show("kestrel motors")
        assert view.entity.id == "kestrel"
        assert [e.id for e in view.links["supplier"]] == ["acme"]
        assert [e.id for e in entities.show("Acme", "organization").links["supplier_of"]] == [
            "kestrel"
        ]
        with pytest.raises(AmbiguousEntity):
            entities.show("Twin")
        with pytest.raises(UnknownEntity):
            entities.show("Nobody Inc")

    def test_unresolved_mentions_are_taken_once(self, created: ChunkStore) -> None:
        created.entities().load(GRAPH_ENTITIES)
        write_ok(created, one_chunk("nobody", "news nobody", mentions=["Nobody", "Kestrel Motors"]))
        # A store that links mentions names the one it could not link; one that keeps them as
        # text only (the in-memory store) links none and so names none.
        assert created.take_unresolved_mentions() in ({}, {"nobody": ["Nobody"]})
        assert created.take_unresolved_mentions() == {}

    @pytest.fixture
    def graph_store(self, created: ChunkStore) -> ChunkStore:
        """Organizations and a person linked to them, then one chunk per document mentioning
        them (entities first: a store links mentions to the entities it holds)."""
        created.entities().load(GRAPH_ENTITIES)
        for doc_id, mentions in GRAPH_DOCS.items():
            metadata = {"mentions": mentions, "lang": "en"} if mentions else {"lang": "zh"}
            write_ok(created, one_chunk(doc_id, f"news {doc_id}", **metadata))
        return created

    def test_filters_follow_references_to_entities(self, graph_store: ChunkStore) -> None:
        for where, expected in GRAPH_CASES:
            assert filtered(graph_store, where) == expected, where
            heads = graph_store.heads(where, limit=50)
            assert {record.doc_id for record in heads} == expected, where

    def test_not_equal_along_references_means_some_entity_differs(
        self, graph_store: ChunkStore
    ) -> None:
        # Weaviate's meaning: an organization without a country differs from France too.
        found = filtered(graph_store, Where((C("mentions.country", "ne", "France"),)))
        assert found == {"korea", "nimbus", "both"}

    def test_reference_filters_refuse_bad_operators_and_unlinked_collections(
        self, created: ChunkStore
    ) -> None:
        write_ok(created, one_chunk("plain", "no entities here", mentions=["Acme"]))
        with pytest.raises(FilterError, match="no links to entities"):
            filtered(created, Where((C("mentions.country", "eq", "France"),)))
        with pytest.raises(FilterError, match="unknown field 'ceo'"):
            filtered(created, Where((C("mentions.ceo", "eq", "x"),)))
        with pytest.raises(FilterError, match=r"only =, ~ and a,b lists"):
            filtered(created, Where((C("mentions.name", "gt", "x"),)))
        with pytest.raises(FilterError, match="at least one value"):
            filtered(created, Where((C("mentions.country", "any", []),)))


class SeedLayoutContract(_StoreFixtures):
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


#: The entities of the graph contract: Acme (France) supplies Kestrel (Korea), Ada sits on
#: Acme's board, Nimbus has no country, and "Twin" is a name two organizations share.
GRAPH_ENTITIES = [
    Entity(
        "organization",
        "acme",
        "Acme Corporation",
        ("ACME", "艾克米"),
        {"country": "France", "city": "Paris"},
        {"supplier_of": ("kestrel",)},
    ),
    Entity("organization", "kestrel", "Kestrel Motors", (), {"country": "Korea"}),
    Entity("organization", "nimbus", "Nimbus Labs", ("Twin",)),
    Entity("organization", "other", "Other Twin Works", ("Twin",), {"country": "France"}),
    Entity("person", "ada", "Ada Lovelace", (), {}, {"board_member_of": ("acme",)}),
]

#: Raw mentions by document: resolved by name or alias; "Twin" is ambiguous and "Nobody" is
#: unknown, so neither links (the raw names stay filterable).
GRAPH_DOCS: dict[str, list[str]] = {
    "france": ["acme corporation"],
    "korea": ["Kestrel Motors"],
    "nimbus": ["Nimbus Labs", "Twin"],
    "both": ["艾克米", "KESTREL  motors"],
    "nobody": ["Nobody", "Twin"],
    "none": [],
}

GRAPH_CASES: list[tuple[Where, set[str]]] = [
    (Where((C("mentions.country", "eq", "france"),)), {"france", "both"}),
    (Where((C("mentions.country", "any", ["Korea", "Japan"]),)), {"korea", "both"}),
    (Where((C("mentions.city", "eq", "PARIS"),)), {"france", "both"}),
    (Where((C("mentions.name", "eq", "ACME"),)), {"france", "both"}),
    (Where((C("mentions.name", "eq", "Twin"),)), {"nimbus"}),
    (Where((C("mentions.name", "contains", "motor"),)), {"korea", "both"}),
    (Where((C("mentions.id", "eq", "kestrel"),)), {"korea", "both"}),
    (Where((C("mentions.id", "ne", "kestrel"),)), {"france", "nimbus", "both"}),
    (Where((C("mentions.supplier_of.name", "eq", "Kestrel Motors"),)), {"france", "both"}),
    (Where((C("mentions.supplier_of", "eq", "kestrel motors"),)), {"france", "both"}),
    (Where((C("mentions.supplier.country", "eq", "France"),)), {"korea", "both"}),
    (Where((C("mentions.board_member.name", "eq", "Ada Lovelace"),)), {"france", "both"}),
    (
        Where((C("mentions.board_member.board_member_of.supplier_of.id", "eq", "kestrel"),)),
        {"france", "both"},
    ),
    (
        Where((C("mentions.country", "eq", "France"), C("mentions.country", "eq", "Korea"))),
        {"both"},
    ),
    (Where((C("mentions", "eq", "Nobody"),)), {"nobody"}),  # raw names filter as ever
    (
        Where(any_of=(C("mentions.country", "eq", "Korea"), C("lang", "eq", "zh"))),
        {"korea", "both", "none"},
    ),
    (
        Where((C("lang", "eq", "en"),), any_of=(C("mentions.name", "eq", "Nimbus Labs"),)),
        {"nimbus"},
    ),
]

OpenStore = Callable[..., ChunkStore]


class TenantContract:
    """What tenants of one multi-tenant collection keep apart, and what mixing is refused.

    Subclasses provide `open_store`: a callable `open_store(tenant, name=None)` returning a
    store of tenant `tenant` (None: no tenant) of a fresh collection (or of `name`), all on one
    server; the fixture removes what the test made.
    """

    @pytest.fixture
    def open_store(self) -> OpenStore:
        raise NotImplementedError("a TenantContract subclass provides the `open_store` fixture")

    def test_tenants_with_the_same_ids_keep_apart(self, open_store: OpenStore) -> None:
        a, b = open_store("kb-a"), open_store("kb-b")
        assert not a.exists() and not b.exists()
        a.create(SETTINGS)
        assert a.exists() and not b.exists()
        b.create(SETTINGS)
        ours = make_records("doc", "alpha beta gamma delta epsilon zeta")
        # The same ids with other text: each tenant is a shard of its own.
        theirs = [replace(r, text=r.text.upper(), chunk_hash="x" + r.chunk_hash) for r in ours]
        write_ok(a, ours)
        write_ok(b, theirs)
        write_ok(b, make_records("only-b", "nothing of a here"))
        assert a.count() == len(ours) and b.count() == len(ours) + 2
        assert {r.id for r in a.fetch([r.id for r in ours])} == {r.id for r in ours}
        assert {r.text for r in a.fetch([ours[0].id])} == {ours[0].text}
        assert {r.text for r in b.fetch([ours[0].id])} == {theirs[0].text}
        assert set(a.documents()) == {"doc"} and set(b.documents()) == {"doc", "only-b"}
        hits = a.hybrid("nothing", keyword_text("nothing"), [1, 0, 0, 0], limit=10, alpha=0.0)
        assert hits == []
        hits = b.hybrid("nothing", keyword_text("nothing"), [1, 0, 0, 0], limit=10, alpha=0.0)
        assert {h.record.doc_id for h in hits} == {"only-b"}

        a.register_source("docs", "/a/docs")
        b.register_source("docs", "/b/docs")
        assert a.source_roots() == {"docs": "/a/docs"}
        assert b.source_roots() == {"docs": "/b/docs"}

        assert a.delete_document("doc") == len(ours)
        assert a.count() == 0 and b.count() == len(ours) + 2
        assert a.drop() is True
        assert not a.exists() and a.drop() is False
        assert b.count() == len(ours) + 2 and b.source_roots() == {"docs": "/b/docs"}
        assert a.name in b.collection_names()  # the collection stays for its other tenants

    def test_the_collection_exists_apart_from_each_tenant(self, open_store: OpenStore) -> None:
        a = open_store("kb-a")
        assert not a.collection_exists()
        a.create(SETTINGS)
        b = open_store("kb-b", a.name)
        assert a.collection_exists() and b.collection_exists()
        assert a.exists() and not b.exists()
        assert a.is_multi_tenant() and b.is_multi_tenant()

    def test_tenants_are_listed_and_deactivated_and_a_read_activates(
        self, open_store: OpenStore
    ) -> None:
        a = open_store("kb-a")
        b = open_store("kb-b", a.name)
        a.create(SETTINGS)
        b.create(SETTINGS)
        write_ok(a, make_records("doc", "alpha beta gamma delta epsilon zeta"))
        listing = a.tenants()
        assert [(t.name, t.status, t.chunks) for t in listing] == [
            ("kb-a", "ACTIVE", 5),
            ("kb-b", "ACTIVE", 0),
        ]
        assert b.set_tenant_active("kb-a", False) == "ACTIVE"
        first = b.tenants()[0]
        assert (first.name, first.status, first.chunks) == ("kb-a", "INACTIVE", None)
        hits = a.hybrid("alpha", keyword_text("alpha"), [1, 0, 0, 0], limit=3, alpha=0.0)
        assert hits and hits[0].record.doc_id == "doc"  # answered: the read activated it
        assert b.tenants()[0].status == "ACTIVE"
        with pytest.raises(TenantMissing):
            b.set_tenant_active("kb-zzz", True)

    def test_a_tenant_that_does_not_exist_is_named(self, open_store: OpenStore) -> None:
        a = open_store("kb-a")
        a.create(SETTINGS)
        with pytest.raises(TenantMissing):
            open_store("kb-nope", a.name).settings()
        with pytest.raises(UsageError):
            open_store("not a tenant name", a.name)

    def test_tenants_share_the_collection_settings(self, open_store: OpenStore) -> None:
        a = open_store("kb-a")
        a.create(SETTINGS)
        other = CollectionSettings(model="other/model", dimension=4, chunk_size=10, chunk_overlap=2)
        b = open_store("kb-b", a.name)
        with pytest.raises(SettingsMismatch):
            b.create(other)
        assert [t.name for t in a.tenants()] == ["kb-a"]
        assert a.settings() == SETTINGS
        assert (a.settings() or SETTINGS).multi_tenant

    def test_mixing_tenants_and_a_single_tenant_collection_is_refused(
        self, open_store: OpenStore
    ) -> None:
        tenant = open_store("kb-a")
        tenant.create(SETTINGS)
        whole = open_store(None, tenant.name)
        assert whole.exists()
        with pytest.raises(TenancyMismatch, match="multi-tenant"):
            whole.settings()
        with pytest.raises(TenancyMismatch, match="all_tenants"):
            whole.drop()
        assert tenant.exists()

        single = open_store(None)
        single.create(SETTINGS)
        with pytest.raises(TenancyMismatch, match="single-tenant"):
            open_store("kb-a", single.name).exists()
        with pytest.raises(TenancyMismatch, match="single-tenant"):
            single.tenants()
        assert single.settings() == SETTINGS and not (single.settings() or SETTINGS).multi_tenant

        assert whole.drop(all_tenants=True) is True
        assert not whole.exists() and not tenant.exists()
