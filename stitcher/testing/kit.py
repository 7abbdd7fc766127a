"""What every contract uses: the settings of a test collection, small chunks and their
vectors, and the fixtures a contract subclass overrides."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from stitcher.filters import Where
from stitcher.models import ChunkRecord, CollectionSettings, sha256_hex
from stitcher.store.base import ChunkStore

SETTINGS = CollectionSettings(model="test/fake", dimension=4, chunk_size=10, chunk_overlap=2)


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


class StoreFixtures:
    @pytest.fixture
    def store(self) -> ChunkStore:
        raise NotImplementedError("a contract subclass provides the `store` fixture")

    @pytest.fixture
    def created(self, store: ChunkStore) -> ChunkStore:
        store.create(SETTINGS)
        return store
