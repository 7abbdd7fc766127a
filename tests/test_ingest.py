"""Ingest bookkeeping: skip, replace, prune, never lose or duplicate, on memory and Weaviate.

The same scenarios run against both stores; the embedder is a deterministic fake so that the
scenarios test ingest's bookkeeping. tests/test_end_to_end.py runs the real model and CLI.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import SettingsMismatch
from stitcher.ingest import IngestOptions, SilentProgress, ingest
from stitcher.models import ChunkRecord
from tests.fakes import FakeEmbedder
from tests.stores import both_stores

ZH = (
    "茶树喜欢温暖湿润的气候，也需要排水良好的酸性土壤。每年春天，农人会在清明前后采摘第一批嫩芽，"
    "这时的茶叶香气最浓，价格也最高。采摘之后，鲜叶要先摊晾几个小时，让水分慢慢散失，再进入杀青的工序。"
    "杀青的火候决定了茶的颜色和味道：火太小，叶子会发红；火太大，又会有焦味！经验丰富的师傅会用手感来判断温度。"
)
EN = (
    "The railway reached the valley in 1887, and within a decade the town had doubled in size. "
    "Freight trains carried timber and wool to the coast, while passenger services brought "
    "visitors who had never seen the mountains before. The station master kept a diary of every "
    "arrival, and his notes are still the best record of how the line changed daily life! "
    "Did anyone expect the branch line to close so soon? Nobody in the town did."
)


def _all(store: Any) -> list[ChunkRecord]:
    docs = store.documents()
    ids: list[str] = []
    records = store.fetch_spans(
        [_span(doc_id, h) for doc_id, d in docs.items() for h in d.doc_hashes]
    )
    ids = [r.id for r in records]
    assert len(ids) == len(set(ids))
    return records


def _span(doc_id: str, doc_hash: str) -> Any:
    from stitcher.models import SpanRequest

    return SpanRequest(doc_id, doc_hash, 0, 10**9)


store = both_stores("T")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "zh").mkdir(parents=True)
    (root / "zh" / "tea.txt").write_text(ZH * 2, encoding="utf-8")
    (root / "rail.txt").write_text(EN * 2, encoding="utf-8")
    (root / "short.md").write_text(
        "---\ntitle: Short note\ndate: 2021-03-04\ntags: [policy, rail]\n---\nOne line only.\n",
        encoding="utf-8",
    )
    return root


def run(store: Any, root: Path, embedder: FakeEmbedder | None = None, **opts: Any) -> Any:
    embedder = embedder or FakeEmbedder()
    return ingest(
        store,
        [str(root)],
        model_name=embedder.name,
        embedder=lambda: embedder,
        options=IngestOptions(**opts),
    )


def test_first_run_stores_every_chunk_with_a_chain(store: Any, corpus: Path) -> None:
    summary = run(store, corpus)
    assert len(summary.added) == 3 and summary.exit_status == 0
    records = _all(store)
    assert store.count() == len(records) == summary.chunks_written == summary.embedded
    by_doc: dict[str, list[ChunkRecord]] = {}
    for r in records:
        by_doc.setdefault(r.doc_id, []).append(r)
    assert set(by_doc) == {"docs/zh/tea.txt", "docs/rail.txt", "docs/short.md"}
    for doc_id, chunks in by_doc.items():
        chunks.sort(key=lambda r: r.chunk_index)
        text = (corpus.parent / doc_id).read_text(encoding="utf-8")
        assert chunks[0].parent_id is None and chunks[0].start == 0
        for prev, cur in itertools.pairwise(chunks):
            assert cur.parent_id == prev.id
            assert 0 <= prev.end - cur.start <= 50  # overlap as configured, no gap
            assert len(cur.text) <= 250
        if doc_id != "docs/short.md":  # its front matter is not part of the text
            assert chunks[-1].end == chunks[-1].doc_length == len(text)
            assert all(text[r.start : r.end] == r.text for r in chunks)
    short = by_doc["docs/short.md"][0]
    assert short.metadata["title"] == "Short note"
    assert set(short.metadata["tags"]) == {"policy", "rail"}


def test_second_run_changes_nothing_and_embeds_nothing(store: Any, corpus: Path) -> None:
    run(store, corpus)
    before = {r.id: r.text for r in _all(store)}
    embedder = FakeEmbedder()
    summary = run(store, corpus, embedder)
    assert embedder.calls == 0 and summary.embedded == 0 and summary.chunks_written == 0
    assert len(summary.unchanged) == 3
    assert {r.id: r.text for r in _all(store)} == before


def test_editing_one_document_replaces_only_its_chunks(store: Any, corpus: Path) -> None:
    run(store, corpus)
    before = _all(store)
    tea = corpus / "zh" / "tea.txt"
    tea.write_text(ZH * 2 + "新的一段：今年的春茶比往年早了十天。", encoding="utf-8")
    embedder = FakeEmbedder()
    summary = run(store, corpus, embedder)
    assert summary.updated == ["docs/zh/tea.txt"] and len(summary.unchanged) == 2
    after = _all(store)
    others_before = {r.id for r in before if r.doc_id != "docs/zh/tea.txt"}
    others_after = {r.id for r in after if r.doc_id != "docs/zh/tea.txt"}
    assert others_before == others_after
    tea_chunks = [r for r in after if r.doc_id == "docs/zh/tea.txt"]
    assert len({r.doc_hash for r in tea_chunks}) == 1  # no old chunk remains
    assert "".join(sorted({r.text[-5:] for r in tea_chunks})).count("十天") == 1
    # chunks whose text did not change kept their vectors: fewer embeddings than chunks
    assert summary.reused_vectors > 0
    assert embedder.embedded == len(tea_chunks) - summary.reused_vectors


def test_prune_deletes_vanished_documents_only(store: Any, corpus: Path) -> None:
    run(store, corpus)
    (corpus / "rail.txt").unlink()
    kept = {r.id for r in _all(store) if r.doc_id != "docs/rail.txt"}
    dry = run(store, corpus, dry_run=True, prune=True)
    assert dry.deleted == ["docs/rail.txt"] and store.count() > len(kept)
    summary = run(store, corpus, prune=True)
    assert summary.deleted == ["docs/rail.txt"]
    assert {r.id for r in _all(store)} == kept


def test_without_prune_vanished_documents_stay(store: Any, corpus: Path) -> None:
    run(store, corpus)
    count = store.count()
    (corpus / "rail.txt").unlink()
    summary = run(store, corpus)
    assert summary.deleted == [] and store.count() == count


def test_unreadable_input_is_reported_and_harms_nothing(store: Any, corpus: Path) -> None:
    run(store, corpus)
    before = {r.id for r in _all(store)}
    (corpus / "broken.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    (corpus / "rail.txt").write_bytes(b"\x00\x01binary now")  # unreadable: must not be deleted
    summary = run(store, corpus, prune=True)
    assert summary.exit_status == 3
    assert any("broken.txt" in m for m in summary.unreadable.values())
    assert any("rail.txt" in m for m in summary.unreadable.values())
    assert summary.deleted == []
    assert {r.id for r in _all(store)} == before


def test_an_empty_file_is_skipped_with_a_notice_not_an_error(store: Any, corpus: Path) -> None:
    (corpus / "placeholder.txt").write_bytes(b"")
    (corpus / "blank.md").write_text("  \n\n", encoding="utf-8")
    notices: list[str] = []

    class Notices(SilentProgress):
        def notice(self, message: str) -> None:
            notices.append(message)

    embedder = FakeEmbedder()
    summary = ingest(
        store,
        [str(corpus)],
        model_name=embedder.name,
        embedder=lambda: embedder,
        progress=Notices(),
    )
    assert summary.exit_status == 0 and summary.unreadable == {}
    assert sorted(summary.empty) == ["docs/blank.md", "docs/placeholder.txt"]
    assert len(summary.added) == 3
    assert "2 empty" in summary.one_line()
    assert any("placeholder.txt" in n and "empty" in n for n in notices)
    assert set(store.documents()) == {"docs/zh/tea.txt", "docs/rail.txt", "docs/short.md"}


def test_an_emptied_file_stays_stored_without_prune(store: Any, corpus: Path) -> None:
    run(store, corpus)
    before = {r.id for r in _all(store)}
    (corpus / "rail.txt").write_bytes(b"")
    summary = run(store, corpus)
    assert summary.exit_status == 0 and summary.empty == ["docs/rail.txt"]
    assert {r.id for r in _all(store)} == before


def test_an_emptied_file_counts_as_gone_under_prune(store: Any, corpus: Path) -> None:
    run(store, corpus)
    kept = {r.id for r in _all(store) if r.doc_id != "docs/rail.txt"}
    (corpus / "rail.txt").write_bytes(b"")
    summary = run(store, corpus, prune=True)
    assert summary.exit_status == 0 and summary.deleted == ["docs/rail.txt"]
    assert {r.id for r in _all(store)} == kept


def test_a_partial_version_is_completed_on_the_next_run(store: Any, corpus: Path) -> None:
    """What a crash leaves behind: half of a new version next to the old one."""
    run(store, corpus)
    tea = corpus / "zh" / "tea.txt"
    tea.write_text(ZH * 3, encoding="utf-8")
    from stitcher.chunking import split
    from stitcher.ids import build_records
    from stitcher.loaders import discover, load

    found = discover([str(corpus)])
    src = next(f for f in found.files if f.doc_id == "docs/zh/tea.txt")
    doc = load(src)
    records = build_records(store.name, doc, split(doc.text))
    half = records[: len(records) // 2]
    store.write(half, FakeEmbedder().embed_documents([r.text for r in half]))
    summary = run(store, corpus)
    assert summary.updated == ["docs/zh/tea.txt"]
    stored = [r for r in _all(store) if r.doc_id == "docs/zh/tea.txt"]
    assert sorted(r.id for r in stored) == sorted(r.id for r in records)


def test_other_chunk_settings_are_refused(store: Any, corpus: Path) -> None:
    run(store, corpus)
    count = store.count()
    with pytest.raises(SettingsMismatch, match="chunk_size"):
        run(store, corpus, chunk_size=300)
    assert store.count() == count


def test_write_failures_keep_the_old_version(store: Any, corpus: Path) -> None:
    run(store, corpus)
    before = {r.id for r in _all(store)}
    fresh = "A new railway museum opened in the old goods shed, with the station master's diary. "
    (corpus / "rail.txt").write_text(fresh * 4 + EN * 2, encoding="utf-8")

    class Broken(FakeEmbedder):
        def embed_documents(self, texts: Any) -> list[list[float]]:
            vectors = super().embed_documents(texts)
            return [v[:3] if "railway" in t else v for v, t in zip(vectors, texts, strict=False)]

    summary = run(store, corpus, Broken())
    assert summary.exit_status == 1 and "docs/rail.txt" in summary.failed
    # the old version of rail.txt is still complete: nothing was deleted
    assert before <= {r.id for r in _all(store)}


def test_touching_a_file_is_no_change(store: Any, corpus: Path) -> None:
    """A date that is only the file's mtime is kept, but a new mtime is not a new version."""
    import os
    import time

    run(store, corpus)
    later = time.time() + 86_400
    for path in corpus.rglob("*.*"):
        os.utime(path, (later, later))
    summary = run(store, corpus)
    assert len(summary.unchanged) == 3 and summary.chunks_written == 0


def test_editing_front_matter_is_a_change(store: Any, corpus: Path) -> None:
    run(store, corpus)
    short = corpus / "short.md"
    short.write_text(short.read_text(encoding="utf-8").replace("2021-03-04", "2022-01-01"), "utf-8")
    summary = run(store, corpus)
    assert summary.updated == ["docs/short.md"] and summary.reused_vectors == 1
