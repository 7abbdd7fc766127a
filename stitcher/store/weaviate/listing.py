"""What documents a Weaviate collection holds: one aggregate grouped by doc_id, or a walk.

WeaviateStore.documents runs these inside its retries and checks the result against the
replicas' count (`between_counts`): a listing is served by one replica per shard, which may be
behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stitcher.models import StoredDocument
from stitcher.store.weaviate.schema import MAX_RESULTS

# weaviate is imported inside the functions that use it: importing the client costs about a
# second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    from weaviate.collections import Collection

#: Versions of one document the aggregate lists (normally 1, 2 mid-update); a document with
#: more fails its completeness check and the collection is walked instead.
_MAX_VERSIONS = 20


def documents_by_aggregate(
    collection: Collection[Any, Any], total: int, *, with_rules: bool
) -> dict[str, StoredDocument] | None:
    """Every document from one aggregate grouped by doc_id (about 5x faster than a walk), or
    None when its answer does not add up: a group without a source, versions whose counts miss
    some of the document's chunks (more than _MAX_VERSIONS), groups short of `total`."""
    from weaviate.classes.aggregate import GroupByAggregate
    from weaviate.classes.query import Metrics

    result = collection.aggregate.over_all(
        group_by=GroupByAggregate(prop="doc_id", limit=total),
        total_count=True,
        return_metrics=[
            Metrics("doc_hash").text(
                top_occurrences_count=True, top_occurrences_value=True, limit=_MAX_VERSIONS
            ),
            Metrics("source").text(top_occurrences_count=True, top_occurrences_value=True, limit=1),
            *(
                [
                    Metrics("rules").text(
                        top_occurrences_count=True,
                        top_occurrences_value=True,
                        limit=_MAX_VERSIONS,
                    )
                ]
                if with_rules
                else []
            ),
        ],
    )
    documents: dict[str, StoredDocument] = {}
    for group in result.groups:
        hashes = getattr(group.properties.get("doc_hash"), "top_occurrences", None) or []
        sources = getattr(group.properties.get("source"), "top_occurrences", None) or []
        stamped = getattr(group.properties.get("rules"), "top_occurrences", None) or []
        chunk_count = int(group.total_count or 0)
        if not sources or sum(int(h.count or 0) for h in hashes) != chunk_count:
            return None
        rules = {str(r.value) for r in stamped}
        if sum(int(r.count or 0) for r in stamped) < chunk_count:
            rules.add("")  # some chunks were stored before the rules were recorded
        doc_id = str(group.grouped_by.value)
        documents[doc_id] = StoredDocument(
            doc_id,
            frozenset(str(h.value) for h in hashes),
            chunk_count,
            str(sources[0].value),
            frozenset(rules),
        )
    if sum(doc.chunk_count for doc in documents.values()) != total:
        return None
    return documents


def documents_by_walk(
    collection: Collection[Any, Any], *, with_rules: bool
) -> dict[str, StoredDocument]:
    """Every document, from reading each object's bookkeeping properties with the cursor."""
    hashes: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    sources: dict[str, str] = {}
    rules: dict[str, set[str]] = {}
    wanted = ["doc_id", "doc_hash", "source"]
    if with_rules:
        wanted.append("rules")
    for obj in collection.iterator(
        include_vector=False, return_properties=wanted, cache_size=MAX_RESULTS
    ):
        doc_id = str(obj.properties["doc_id"])
        hashes.setdefault(doc_id, set()).add(str(obj.properties["doc_hash"]))
        counts[doc_id] = counts.get(doc_id, 0) + 1
        sources[doc_id] = str(obj.properties["source"])
        rules.setdefault(doc_id, set()).add(str(obj.properties.get("rules") or ""))
    return {
        doc_id: StoredDocument(
            doc_id, frozenset(found), counts[doc_id], sources[doc_id], frozenset(rules[doc_id])
        )
        for doc_id, found in hashes.items()
    }


def between_counts(listed: int, before: int, after: int) -> bool:
    """Whether a whole listing saw as many objects as the replicas counted before or after it,
    or a number in between (another writer may have been busy meanwhile)."""
    return min(before, after) <= listed <= max(before, after)
