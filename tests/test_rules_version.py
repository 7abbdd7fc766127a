"""Documents stored under other text rules are rebuilt by the next ingest (vectors reused),
not skipped as unchanged — also in collections written before the rules were recorded."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher import rules
from stitcher.chunking import split
from stitcher.config import DEFAULT_MODEL
from stitcher.ids import build_records
from stitcher.loaders import discover, load
from stitcher.models import ChunkRecord, CollectionSettings, SpanRequest
from tests.fakes import FakeEmbedder
from tests.stores import both_stores
from tests.test_sources import make_root, run

OLD_RULES = "loader0.sentences0"
SETTINGS = CollectionSettings(model=DEFAULT_MODEL, dimension=384, chunk_size=250, chunk_overlap=50)


store = both_stores("Rules")


def old_records(
    store: Any,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    stamp: str | None,
    size_overlap: tuple[int, int] = (250, 50),
) -> list[ChunkRecord]:
    """Records as an older stitcher wrote them: their version hashed under other rules, and
    `rules` stored as `stamp` (None: written before the property existed)."""
    with monkeypatch.context() as patch:
        patch.setattr(rules, "TEXT_RULES_VERSION", OLD_RULES)
        records = []
        for src in discover([str(root)]).files:
            doc = load(src)
            records += build_records(store.name, doc, split(doc.text, *size_overlap))
    return [dataclasses.replace(r, rules=stamp) for r in records]


def write_old(store: Any, records: list[ChunkRecord]) -> None:
    store.write(records, FakeEmbedder(384).embed_documents([r.text for r in records]))


def stored_rules(store: Any) -> set[str | None]:
    docs = store.documents()
    spans = [SpanRequest(d, h, 0, 10**9) for d, doc in docs.items() for h in doc.doc_hashes]
    return {r.rules for r in store.fetch_spans(spans)}


@pytest.mark.parametrize("stamp", [OLD_RULES, None])
def test_documents_under_old_rules_are_rebuilt_reusing_vectors(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stamp: str | None
) -> None:
    root = make_root(tmp_path, "a")
    store.create(SETTINGS)
    records = old_records(store, root, monkeypatch, stamp)
    write_old(store, records)

    summary = run(store, root)
    assert sorted(summary.rebuilt) == sorted(summary.updated) == sorted(store.documents())
    assert len(summary.rebuilt) == 3 and summary.added == [] and summary.unchanged == []
    assert summary.embedded == 0 and summary.reused_vectors == len(records)
    assert "3 updated (3 rebuilt for new text rules)" in summary.one_line()
    assert summary.to_json()["rebuilt"] == 3
    assert stored_rules(store) == {rules.TEXT_RULES_VERSION}
    assert store.count() == len(records)  # the old versions are gone

    again = run(store, root)
    assert len(again.unchanged) == 3 and again.rebuilt == [] and again.chunks_written == 0


def test_a_collection_without_the_rules_property_is_upgraded(
    weaviate_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection created by the previous layout lacks the `rules` property altogether."""
    from stitcher.store.schema import settings_to_description
    from stitcher.store.weaviate import WeaviateStore
    from stitcher.store.weaviate.schema import core_properties

    name = "Rules" + uuid.uuid4().hex[:12]
    from weaviate.classes.config import Configure

    weaviate_client.collections.create(
        name,
        description=settings_to_description(SETTINGS),
        properties=[p for p in core_properties() if p.name != "rules"],
        vector_config=Configure.Vectors.self_provided(),
    )
    store = WeaviateStore(weaviate_client, name)
    try:
        root = make_root(tmp_path, "a")
        records = old_records(store, root, monkeypatch, None)
        # Write as the old code did: without adding the property it did not know.
        with monkeypatch.context() as patch:
            patch.setattr(WeaviateStore, "_add_missing_core_properties", lambda self: None)
            write_old(WeaviateStore(weaviate_client, name), records)
        assert "rules" not in {
            p.name for p in weaviate_client.collections.use(name).config.get().properties
        }
        assert {d.rules for d in store.documents().values()} == {frozenset({""})}

        summary = run(WeaviateStore(weaviate_client, name), root)
        assert len(summary.rebuilt) == 3 and summary.embedded == 0
        assert summary.reused_vectors == len(records)
        assert stored_rules(WeaviateStore(weaviate_client, name)) == {rules.TEXT_RULES_VERSION}
    finally:
        store.forget_sources()
        weaviate_client.collections.delete(name)


def test_new_chunk_boundaries_rebuild_reusing_the_vectors_of_unchanged_chunks(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks stored before blank pieces joined their neighbours (chunk rules 1): the chunks
    whose text did not change keep their vectors, only the joined ones are embedded."""
    from stitcher import chunking

    root = tmp_path / "docs"
    root.mkdir()
    paragraph = "The first paragraph has a few sentences. It goes on a little. And it ends here."
    (root / "a.txt").write_text("\n\n".join([paragraph] * 12), encoding="utf-8")
    store.create(dataclasses.replace(SETTINGS, chunk_size=60, chunk_overlap=10))
    with monkeypatch.context() as patch:
        patch.setattr(chunking, "_absorb_residue", lambda text, spans: spans)
        records = old_records(store, root, monkeypatch, OLD_RULES, (60, 10))
    assert any(not r.text.strip() for r in records)  # the old rules stored blank chunks
    write_old(store, records)

    summary = run(store, root, chunk_size=60, chunk_overlap=10)
    assert summary.rebuilt == ["docs/a.txt"]
    new_texts = [c.text for c in split((root / "a.txt").read_text(encoding="utf-8"), 60, 10)]
    kept = [text for text in new_texts if text in {r.text for r in records}]
    assert 0 < len(kept) < len(new_texts)
    assert summary.reused_vectors == len(kept)
    assert summary.embedded == len(new_texts) - len(kept)
    assert store.count() == len(new_texts)
