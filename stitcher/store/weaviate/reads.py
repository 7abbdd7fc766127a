"""Reading chunks: by id, by character span, by stored hash (vectors to reuse), the hybrid search,
and the small queries the filters and `stitcher docs` ask (values of a field, first chunks).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence

from stitcher.filters import Where
from stitcher.ids import source_of
from stitcher.models import ChunkRecord, Hit, SpanRequest
from stitcher.store.schema import SOURCE_FIELD, resolve_field
from stitcher.store.vectors import vector_name
from stitcher.store.weaviate.collection import CollectionSchema
from stitcher.store.weaviate.filters import translate
from stitcher.store.weaviate.schema import IDS_PER_QUERY, MAX_RESULTS
from stitcher.store.weaviate.scores import parse_explain, weaviate_fusion
from stitcher.store.weaviate.seed import default_vector

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.

_HASHES_PER_QUERY = 500


class Reads(CollectionSchema):
    """Queries over the collection's chunks."""

    def vectors_by_chunk_hash(
        self, doc_id: str, chunk_hashes: Iterable[str]
    ) -> dict[str, list[float]]:
        """Stored vectors of this document's chunks (any version) whose hash is in the set.

        Not checked like a whole listing: the filtered fetch is served by one replica, and one
        that is behind returns fewer, whose chunks are then embedded again. A vector found is
        never wrong: same chunk text, same model (the collection's settings are checked).
        """
        from weaviate.classes.query import Filter

        self._require()
        wanted = sorted(set(chunk_hashes))
        vectors: dict[str, list[float]] = {}
        for begin in range(0, len(wanted), _HASHES_PER_QUERY):
            group = wanted[begin : begin + _HASHES_PER_QUERY]
            condition = Filter.by_property("doc_id").equal(doc_id) & Filter.by_property(
                "chunk_hash"
            ).contains_any(group)
            result = self._call(
                "reading stored vectors",
                functools.partial(
                    self._collection.query.fetch_objects,
                    filters=condition,
                    include_vector=True,
                    return_properties=["chunk_hash"],
                    limit=MAX_RESULTS,
                ),
            )
            for obj in result.objects:
                vector = default_vector(obj.vector)
                if vector is not None:
                    vectors[str(obj.properties["chunk_hash"])] = vector
        return vectors

    def fetch(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """The records with these ids that exist, in any order (any number of ids)."""
        from weaviate.classes.query import Filter

        self._require()
        unique = list(dict.fromkeys(ids))
        records: list[ChunkRecord] = []
        for begin in range(0, len(unique), IDS_PER_QUERY):
            group = unique[begin : begin + IDS_PER_QUERY]
            # fetch_objects_by_ids would stop at the server's default limit of 10 objects.
            result = self._collection.query.fetch_objects(
                filters=Filter.by_id().contains_any(group),
                limit=len(group),
                return_properties=self._return_properties(),
            )
            records.extend(self._to_record(obj) for obj in result.objects)
        return records

    def fetch_spans(self, requests: Sequence[SpanRequest]) -> list[ChunkRecord]:
        """All chunks overlapping any requested range of a document version, in one query."""
        from weaviate.classes.query import Filter

        self._require()
        unique = list(dict.fromkeys(requests))
        if not unique:
            return []
        clauses = [
            Filter.all_of(
                [
                    Filter.by_property("doc_id").equal(request.doc_id),
                    Filter.by_property("doc_hash").equal(request.doc_hash),
                    Filter.by_property("start").less_than(request.hi),
                    Filter.by_property("end").greater_than(request.lo),
                ]
            )
            for request in unique
        ]
        result = self._call(
            "reading chunks",
            functools.partial(
                self._collection.query.fetch_objects,
                filters=clauses[0] if len(clauses) == 1 else Filter.any_of(clauses),
                limit=MAX_RESULTS,
                return_properties=self._return_properties(),
            ),
        )
        if len(result.objects) >= MAX_RESULTS and len(unique) > 1:
            # Possibly cut off by the server's result cap: ask for each half separately.
            middle = len(unique) // 2
            return self.fetch_spans(unique[:middle]) + self.fetch_spans(unique[middle:])
        return [self._to_record(obj) for obj in result.objects]

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
        """Hybrid query: BM25 on `text_seg` over `keyword_text` plus the vector; see Hit.explain.

        In a collection with a named vector per model part the vector side searches the part
        that embeds `text` (stitcher.store.vectors), the one `vector` came from.
        """
        from weaviate.classes.query import MetadataQuery

        self._require()
        fusion_type = weaviate_fusion(fusion)
        target = vector_name(self._vector_layout(), text)
        result = self._call(
            "searching",
            functools.partial(
                self._collection.query.hybrid,
                query=keyword_text,
                vector=vector,
                target_vector=target,
                alpha=alpha,
                fusion_type=fusion_type,
                query_properties=["text_seg"],
                limit=limit,
                filters=translate(where, self._load_extras(), self._references, self._name),
                return_metadata=MetadataQuery(score=True, explain_score=True),
                return_properties=self._return_properties(),
            ),
        )
        hits = []
        for obj in result.objects:
            raw = obj.metadata.explain_score or ""
            explain = parse_explain(raw, alpha, fusion)
            hits.append(Hit(self._to_record(obj), float(obj.metadata.score or 0.0), explain))
        return hits

    def stored_values(self, field: str, limit: int = MAX_RESULTS) -> list[str]:
        """Distinct values of a text field (`source`: the source names), most common first; one
        aggregate query (stitcher.filtervalues says when it is worth asking)."""
        from weaviate.classes.aggregate import GroupByAggregate

        self._require()
        name = "doc_id" if field == SOURCE_FIELD else resolve_field(field, self._load_extras())[0]
        # Grouping, not the text metric's top occurrences: those come back with backslashes
        # doubled (verified on v1.38.11), so a stored value would not compare equal to itself.
        result = self._collection.aggregate.over_all(
            group_by=GroupByAggregate(prop=name, limit=limit), total_count=True
        )
        counts: Counter[str] = Counter()
        for group in result.groups:
            value = str(group.grouped_by.value)
            counts[source_of(value) if field == SOURCE_FIELD else value] += group.total_count or 0
        return [value for value, _ in counts.most_common()]

    def heads(
        self, where: Where | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> list[ChunkRecord]:
        """First chunks of matching documents, filtered inside Weaviate, newest first if asked."""
        from weaviate.classes.query import Filter, Sort

        self._require()
        first = Filter.by_property("chunk_index").equal(0)
        condition = translate(where, self._load_extras(), self._references, self._name)
        result = self._collection.query.fetch_objects(
            filters=first if condition is None else first & condition,
            sort=Sort.by_property("date", ascending=False) if newest_first else None,
            limit=min(limit, MAX_RESULTS),
            return_properties=self._return_properties(),
        )
        return [self._to_record(obj) for obj in result.objects]

    def sample(self, limit: int = 100) -> list[ChunkRecord]:
        """Up to `limit` chunks."""
        self._require()
        result = self._collection.query.fetch_objects(
            limit=min(limit, MAX_RESULTS), return_properties=self._return_properties()
        )
        return [self._to_record(obj) for obj in result.objects]
