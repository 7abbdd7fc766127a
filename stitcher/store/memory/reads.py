"""Reads of an in-memory collection: fetches, hybrid search, listings and samples."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence

from stitcher.errors import UsageError
from stitcher.filters import Where
from stitcher.ids import source_of
from stitcher.models import VECTORS_SINGLE, ChunkRecord, Hit, SpanRequest
from stitcher.store.base import check_fusion
from stitcher.store.memory.core import MemoryCore
from stitcher.store.memory.filters import Predicate, WherePredicates
from stitcher.store.memory.scoring import bm25_scores, fuse
from stitcher.store.schema import SOURCE_FIELD, resolve_field, user_fields
from stitcher.store.vectors import vector_name


class MemoryReads(MemoryCore):
    """Reading chunks back, filtered and scored as Weaviate does (filters.py, scoring.py)."""

    def fetch(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """The records with these ids that exist."""
        unique = dict.fromkeys(ids)
        return [self._record(object_id) for object_id in unique if object_id in self._objects]

    def fetch_spans(self, requests: Sequence[SpanRequest]) -> list[ChunkRecord]:
        """All chunks overlapping any requested range of a document version."""
        found = []
        for object_id, (properties, _vector) in self._objects.items():
            for request in requests:
                if (
                    properties["doc_id"] == request.doc_id
                    and properties["doc_hash"] == request.doc_hash
                    and properties["start"] < request.hi
                    and properties["end"] > request.lo
                ):
                    found.append(self._record(object_id))
                    break
        return found

    def hybrid(
        self,
        text: str,
        keyword_text: str,
        vector: list[float],
        *,
        limit: int,
        alpha: float,
        fusion: str = "relative",
        where: Where | None = None,
    ) -> list[Hit]:
        """BM25 over `keyword_text` tokens and cosine similarity, fused like Weaviate does.

        With a named vector per model part (stitcher.store.vectors), the vector side compares
        only the chunks whose vector is in the part that embeds `text`, as Weaviate's search of
        that named vector does.
        """
        self._wake()
        check_fusion(fusion)
        predicate = self._predicate(where) if where else None
        allowed = [
            object_id
            for object_id, (properties, _vector) in self._objects.items()
            if predicate is None or predicate(properties)
        ]
        keyword_scores = self._bm25(keyword_text.split(), allowed) if alpha < 1 else {}
        searched = self._in_vector_of(text, allowed)
        vector_scores = self._similarities(vector, searched) if alpha > 0 else {}
        return [
            Hit(self._record(object_id), score, explain)
            for object_id, score, explain in fuse(
                keyword_scores, vector_scores, limit, alpha, fusion, label="memory"
            )
        ]

    def fields(self) -> dict[str, str]:
        """Filterable fields (core and metadata) with their kinds."""
        self._require()
        return dict(user_fields(self._extras))

    def stored_values(self, field: str, limit: int = 10_000) -> list[str]:
        """Distinct values of a text field (`source`: the source names), most common first."""
        self._require()
        name = "doc_id" if field == SOURCE_FIELD else resolve_field(field, self._extras)[0]
        counts: Counter[str] = Counter()
        for properties, _vector in self._objects.values():
            value = properties.get(name)
            for item in value if isinstance(value, list) else [value] if value else []:
                counts[source_of(str(item)) if field == SOURCE_FIELD else str(item)] += 1
        return [value for value, _ in counts.most_common(limit)]

    def heads(
        self, where: Where | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> list[ChunkRecord]:
        """First chunks of matching documents, newest first if asked (undated last)."""
        self._require()
        predicate = self._predicate(where) if where else None
        found = [
            self._record(object_id)
            for object_id, (properties, _vector) in self._objects.items()
            if properties["chunk_index"] == 0 and (predicate is None or predicate(properties))
        ]
        if newest_first:
            found.sort(key=lambda r: (r.metadata.get("date") is None, _sort_key(r)))
        return found[:limit]

    def sample(self, limit: int = 100) -> list[ChunkRecord]:
        """Up to `limit` chunks."""
        return [self._record(object_id) for object_id in list(self._objects)[:limit]]

    def records_with_vectors(
        self, page_size: int = 500
    ) -> Iterator[tuple[ChunkRecord, list[float]]]:
        """Every chunk with its vector, in id order (as Weaviate's cursor returns them)."""
        self._require()
        for object_id in sorted(self._objects):
            yield self._record(object_id), list(self._objects[object_id][1])

    def _bm25(self, query_tokens: list[str], allowed: list[str]) -> dict[str, float]:
        documents = {
            object_id: properties.get("text_seg", "").split()
            for object_id, (properties, _vector) in self._objects.items()
        }
        return bm25_scores(documents, query_tokens, allowed)

    def _in_vector_of(self, text: str, allowed: list[str]) -> list[str]:
        """The ids of `allowed` whose vector is in the named vector `text` is searched in."""
        layout = VECTORS_SINGLE if self._settings is None else self._settings.vectors
        target = vector_name(layout, text)
        if target is None:
            return allowed
        return [
            object_id
            for object_id in allowed
            if vector_name(layout, self._objects[object_id][0]["text"]) == target
        ]

    def _similarities(self, query: list[float], allowed: list[str]) -> dict[str, float]:
        query_norm = math.sqrt(sum(x * x for x in query)) or 1.0
        scores = {}
        for object_id in allowed:
            stored = self._objects[object_id][1]
            if len(stored) != len(query):
                raise UsageError(
                    f"query vector has length {len(query)}, the collection {len(stored)}"
                )
            norm = math.sqrt(sum(x * x for x in stored)) or 1.0
            scores[object_id] = sum(a * b for a, b in zip(query, stored, strict=True))
            scores[object_id] /= query_norm * norm
        return scores

    def _predicate(self, where: Where) -> Predicate:
        return WherePredicates(self._name, self._extras, self._entities).predicate(where)


def _sort_key(record: ChunkRecord) -> float:
    date = record.metadata.get("date")
    return -date.timestamp() if date is not None else 0.0
