"""What documents a Weaviate collection holds, and every object of it: whole listings.

A listing is served by one replica per shard, which may be behind: `Listings.listed_whole` takes
one only when it agrees with the replicas' count (`between_counts`). What documents there are
comes from one aggregate grouped by doc_id, or, when its answer does not add up, a walk.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from stitcher.errors import ListingIncomplete
from stitcher.models import ChunkRecord, StoredDocument
from stitcher.store.weaviate.collection import CollectionSchema
from stitcher.store.weaviate.core import T
from stitcher.store.weaviate.schema import MAX_RESULTS
from stitcher.store.weaviate.seed import default_vector

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


_LISTING_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0)


class Listings(CollectionSchema):
    """Whole-collection listings, each checked against the replicas' count."""

    def count(self) -> int:
        """Number of chunk objects.

        On a replicated collection Weaviate asks every replica of each shard for its count and
        takes the most common answer (the median if all differ), so one replica that is behind
        does not change it: this is the number a whole listing is checked against.
        """
        self._require()
        result = self._call_aggregate(
            "counting", lambda: self._collection.aggregate.over_all(total_count=True)
        )
        return int(result.total_count or 0)

    def documents(self) -> dict[str, StoredDocument]:
        """Every document, keyed by doc_id.

        One aggregate query grouped by doc_id (about 5x faster than walking 10k chunks). Its
        answer is checked for completeness (chunk counts add up per document and overall); if it
        does not, e.g. a document with more stored versions than the aggregate lists, the
        collection is walked with the cursor API instead. Either listing comes from one replica
        per shard, so it is taken only when it agrees with the replicas' count (`listed_whole`):
        ingest's unchanged/changed/vanished decisions and --prune never act on a replica that
        is behind.

        Raises:
            ListingIncomplete: The listing stayed short of the count for `listing_patience`.
        """
        self._require()
        self._load_extras()

        def listing(total: int) -> tuple[dict[str, StoredDocument], int]:
            if total == 0:
                return {}, 0
            with_rules = "rules" in self._present
            grouped = self._call_aggregate(
                "listing documents",
                lambda: documents_by_aggregate(self._collection, total, with_rules=with_rules),
            )
            if grouped is None:
                grouped = self._call(
                    "listing documents",
                    lambda: documents_by_walk(self._collection, with_rules=with_rules),
                )
            return grouped, sum(doc.chunk_count for doc in grouped.values())

        listed = self.listed_whole("listing documents", listing)
        incomplete = self._call("listing incomplete documents", self._pending.incomplete)
        return {
            doc_id: dataclasses.replace(doc, complete=False) if doc_id in incomplete else doc
            for doc_id, doc in listed.items()
        }

    def listed_whole(self, doing: str, listing: Callable[[int], tuple[T, int]]) -> T:
        """Run `listing(count)` until the number of objects it saw lies between the replicas'
        count before and after it; retried with back-off for `listing_patience` seconds.
        `listing` gets the count before and returns (its result, objects it saw).

        Why: a listing is served by one replica per shard (the coordinator's own first) and the
        consistency level only re-checks the objects it returned, so a replica that missed
        writes (down at the time, or its commit still in flight when QUORUM was reached) lists
        too few, silently. `count()` polls every replica. Between the two counts, not equal to
        both: another writer (a different source, another host) may be busy meanwhile.

        Raises:
            ListingIncomplete: Still outside after `listing_patience` seconds.
        """
        deadline = time.monotonic() + self._listing_patience
        attempt = 0
        while True:
            before = self.count()
            found, listed = listing(before)
            after = self.count()
            if between_counts(listed, before, after):
                return found
            delay = _LISTING_DELAYS[min(attempt, len(_LISTING_DELAYS) - 1)]
            attempt += 1
            if time.monotonic() + delay > deadline:
                raise self._incomplete(doing, listed, before, after, attempt)
            time.sleep(delay)

    def _incomplete(
        self, doing: str, listed: int, before: int, after: int, attempts: int
    ) -> ListingIncomplete:
        counted = str(before) if before == after else f"{before}, then {after}"
        waited = f" ({attempts} attempts in {self._listing_patience:.0f} s)" if attempts > 1 else ""
        return ListingIncomplete(
            f"{doing} of collection {self._name!r} through {self.url} saw {listed} chunks, but "
            f"its replicas count {counted}{waited}: the node answering lists only its own copy, "
            "which is behind (a node restarted or lost writes; async replication catches up "
            "within minutes), or the collection is being written to. Nothing was decided on "
            "the listing; run the command again later, or through another node"
        )

    def records_with_vectors(
        self, page_size: int = 500
    ) -> Iterator[tuple[ChunkRecord, list[float]]]:
        """Every chunk with its vector, in id order, through the cursor API (`after` the last
        id, `page_size` objects per request): memory stays constant however big the collection.

        The pages come from one replica per shard; once the last is read, the number of objects
        is checked against the replicas' count before and after (see `listed_whole`). Already
        streamed, so not retried: the caller (export) must not call its output complete.

        Raises:
            ServerFault: A page could not be read even after retries.
            ListingIncomplete: After the last page: fewer (or more) objects than counted.
        """
        self._require()
        properties = self._return_properties()
        before = self.count()
        listed = 0
        after: str | None = None
        while True:
            page = self._call(
                "reading every object",
                functools.partial(
                    self._collection.query.fetch_objects,
                    limit=page_size,
                    after=after,
                    include_vector=True,
                    return_properties=properties,
                ),
            )
            for obj in page.objects:
                yield self._to_record(obj), default_vector(obj.vector) or []
            listed += len(page.objects)
            if len(page.objects) < page_size:
                break
            after = str(page.objects[-1].uuid)
        counted = self.count()
        if not between_counts(listed, before, counted):
            raise self._incomplete("reading every object", listed, before, counted, 1)
