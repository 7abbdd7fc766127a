"""Stitched hybrid search on a collection made the seed's way, in a bounded number of trips.

Round trip 1 is the hybrid query on the collection's own schema (BM25 on `text`, word
tokenization: Chinese keywords match poorly there, which `stitcher adopt` fixes). Offsets are
unknown, so the neighbourhood cannot be asked for as a character range as in stitcher's layout;
it is walked along the `parent_id` chain instead, but for all hits at once: each further trip
fetches, in one request, the parents of every chain end that still needs one (by id) and the
children of every chain end that still needs one (by `parent_id`). After each trip the hits are
stitched (stitcher.stitch, on chunks laid out by stitcher.foreign.chains); only the sides that
still end mid-sentence and have not yet covered the extension bound ask for another hop, and
`max_round_trips` caps the total, so a passage cut by that cap is marked truncated.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stitcher.config import DEFAULT_ALPHA, DEFAULT_MAX_EXTEND
from stitcher.errors import CollectionMissing, UsageError, setting
from stitcher.foreign.chains import Reconstruction, SeedObject, reconstruct
from stitcher.models import ChunkRecord, Hit, Passage
from stitcher.search import CANDIDATES_PER_RESULT, SearchOptions, SearchResult
from stitcher.stitch import BOUND_MARGIN, Scored, Span, raw_passage, stitch, to_passages
from stitcher.store.weaviate import parse_explain, weaviate_fusion

# weaviate is imported inside the functions that query it, as in stitcher.store.weaviate: the
# client costs about a second to import, which nothing but a query should pay.

#: Default cap on server requests per query: the hybrid query plus two hops of neighbours.
#: With 250-character chunks two hops reach ~400 characters on each side, past the default
#: extension bound of 300.
DEFAULT_ROUND_TRIPS = 3

#: Offset of a reconstructed run whose start is not known to be the document's start: `stitch`
#: treats offset 0 as the document's first character, so a run that begins mid-document must not
#: start there.
_MID_DOCUMENT = 1

#: Objects asked for per hop at most; a hop needs at most two per open chain end.
_MAX_FETCH = 10_000

TEXT_KEY = "text"
SOURCE_KEY = "source"
PARENT_KEY = "parent_id"


@dataclass(frozen=True)
class _Run:
    """One reconstructed run of known chunks of one source, as synthetic stitcher records."""

    key: str
    reconstruction: Reconstruction
    origin: int
    records: dict[str, ChunkRecord]
    first_open: bool  # the document may continue before the run's first chunk
    last_open: bool  # ... or after its last chunk


def to_seed_object(obj: Any, *, with_vector: bool = False) -> SeedObject:
    """A `SeedObject` from a weaviate-client result object of a seed-layout collection."""
    properties = dict(obj.properties or {})
    text = properties.pop(TEXT_KEY, None)
    source = properties.pop(SOURCE_KEY, None)
    parent = properties.pop(PARENT_KEY, None)
    vector = None
    if with_vector:
        vectors = obj.vector
        if isinstance(vectors, dict) and vectors:
            raw = vectors.get("default")
            if raw is None:
                raw = next(iter(vectors.values()))
            vector = [float(x) for x in raw]
    return SeedObject(
        id=str(obj.uuid),
        text=str(text or ""),
        source=str(source or ""),
        parent_id=str(parent) if parent else None,
        extra={k: v for k, v in properties.items() if v is not None},
        vector=vector,
    )


def seed_search(
    client: Any,
    collection: str,
    query: str,
    vector: Sequence[float] | Callable[[str], Sequence[float]],
    *,
    keyword: str | None = None,
    limit: int = 5,
    alpha: float = DEFAULT_ALPHA,
    fusion: str = "relative",
    max_extend: int = DEFAULT_MAX_EXTEND,
    stitch: bool = True,
    max_round_trips: int = DEFAULT_ROUND_TRIPS,
) -> SearchResult:
    """Hybrid search on a seed-layout collection; hits come back as whole sentences.

    Args:
        client: A connected `weaviate.WeaviateClient`.
        collection: The seed-layout collection (see `stitcher.seed_layout.detect_layout`).
        query: The query as the user typed it (shown in the result).
        vector: The query's embedding, from the model the collection was embedded with, or the
            function that embeds it (then embedding counts in `took_ms`, as in stitcher.search).
        keyword: Text for the BM25 side; default `query` (the collection's `text` property is
            word-tokenized, so pre-segmenting Chinese would not help).
        limit: At most this many passages.
        alpha: Weight of the vector side (1 vector only, 0 BM25 only).
        fusion: "relative" or "ranked".
        max_extend: Most characters stitching adds on each side of a hit.
        stitch: False returns the stored chunks as they are (one round trip).
        max_round_trips: Cap on requests, the hybrid query included (at least 1).

    Returns:
        A SearchResult; ``extra["layout"] == "seed"``. A passage's `doc_id` is the chunk's
        `source`; its `start`/`end` are offsets in the text reconstructed around the hits, not in
        the file (the collection does not know those).

    Raises:
        UsageError: Empty query or an option out of range.
        CollectionMissing: The collection does not exist.
    """
    from weaviate.classes.query import MetadataQuery

    if not query.strip():
        raise UsageError("the query is empty")
    # The same bounds as a search of stitcher's own layout, in the same words.
    SearchOptions(limit=limit, alpha=alpha, fusion=fusion, max_extend=max_extend).validate()
    if max_round_trips < 1:
        raise UsageError("the round-trip cap must be at least 1")
    _require(client, collection)

    started = time.perf_counter()
    query_vector = list(vector(query) if callable(vector) else vector)
    handle = client.collections.use(collection)
    result = handle.query.hybrid(
        query=keyword if keyword is not None else query,
        vector=query_vector,
        alpha=alpha,
        fusion_type=weaviate_fusion(fusion),
        query_properties=[TEXT_KEY],
        limit=limit * (CANDIDATES_PER_RESULT if stitch else 1),
        return_metadata=MetadataQuery(score=True, explain_score=True),
    )
    round_trips = 1
    scored: list[tuple[SeedObject, Hit]] = []
    for obj in result.objects:
        seed = to_seed_object(obj)
        explain = parse_explain(obj.metadata.explain_score or "", alpha, fusion)
        record = _plain_record(seed)
        scored.append((seed, Hit(record, float(obj.metadata.score or 0.0), explain)))

    hops = 0
    if stitch and scored:
        neighbourhood = Neighbourhood([seed for seed, _hit in scored])
        while round_trips < max_round_trips:
            want_parents, want_children = neighbourhood.open_ends(max_extend)
            if not want_parents and not want_children:
                break
            fetched = _fetch_hop(handle, want_parents, want_children)
            round_trips += 1
            hops += 1
            neighbourhood.add_hop(fetched, want_parents, want_children)
        passages = neighbourhood.passages([hit for _seed, hit in scored], limit, max_extend)
    else:
        passages = [raw_passage(hit) for _seed, hit in scored[:limit]]
    took = (time.perf_counter() - started) * 1000
    return SearchResult(
        query=query,
        passages=passages,
        took_ms=took,
        round_trips=round_trips,
        extra={"layout": "seed", "hops": hops},
    )


def _require(client: Any, collection: str) -> None:
    if not client.collections.exists(collection):
        raise CollectionMissing(
            f"collection {collection!r} does not exist on the server; check {setting('collection')}"
        )


def _fetch_hop(handle: Any, parent_ids: Sequence[str], child_of: Sequence[str]) -> list[SeedObject]:
    """One request: the objects with these ids, and the objects whose parent is one of these."""
    from weaviate.classes.query import Filter

    clauses = []
    if parent_ids:
        clauses.append(Filter.by_id().contains_any(list(parent_ids)))
    if child_of:
        # parent_id is word-tokenized text in the seed's auto-schema: the match is checked
        # exactly on our side (Neighbourhood.add_hop), the limit leaves room for chance matches.
        clauses.append(Filter.by_property(PARENT_KEY).contains_any(list(child_of)))
    result = handle.query.fetch_objects(
        filters=clauses[0] if len(clauses) == 1 else Filter.any_of(clauses),
        limit=min(_MAX_FETCH, 2 * (len(parent_ids) + len(child_of)) + 10),
    )
    return [to_seed_object(obj) for obj in result.objects]


def _plain_record(seed: SeedObject) -> ChunkRecord:
    """A hit as a record of its own (used when not stitching)."""
    return ChunkRecord(
        id=seed.id,
        doc_id=seed.source,
        doc_hash="",
        chunk_index=0,
        start=0,
        end=len(seed.text),
        text=seed.text,
        source=seed.source,
        chunk_hash="",
        parent_id=seed.parent_id,
    )


class Neighbourhood:
    """The chunks known around a set of hits, grown one hop at a time.

    Pure: the caller fetches; this class decides what to fetch next and stitches.
    """

    def __init__(self, hits: Iterable[SeedObject]) -> None:
        self.known: dict[str, SeedObject] = {}
        # id -> its child's id, or None once the server said it has none.
        self.child: dict[str, str | None] = {}
        self.hit_ids: list[str] = []
        for seed in hits:
            self.known.setdefault(seed.id, seed)
            if seed.id not in self.hit_ids:
                self.hit_ids.append(seed.id)
        self._runs: dict[str, _Run] | None = None

    def add_hop(
        self,
        fetched: Iterable[SeedObject],
        asked_parents: Iterable[str],
        asked_children_of: Iterable[str],
    ) -> None:
        """Record a hop's answer; ends whose child was asked for and not found have none.

        Objects that answer neither question (chance matches of the tokenized `parent_id`
        filter) are dropped.
        """
        parents = set(asked_parents)
        asked = set(asked_children_of)
        for seed in sorted(fetched, key=lambda s: s.id):
            if seed.id in parents:
                self.known.setdefault(seed.id, seed)
            if seed.parent_id in asked:
                self.known.setdefault(seed.id, seed)
                # First answer wins; a second child would mean a tampered chain.
                self.child.setdefault(seed.parent_id, seed.id)
        for parent in asked:
            self.child.setdefault(parent, None)
        self._runs = None

    # -- layout ------------------------------------------------------------------------------

    def _predecessor(self, seed: SeedObject) -> SeedObject | None:
        parent = self.known.get(seed.parent_id) if seed.parent_id else None
        return parent if parent is not None and parent.source == seed.source else None

    def _successor(self, seed: SeedObject, next_of: dict[str, str]) -> SeedObject | None:
        child_id = self.child.get(seed.id) or next_of.get(seed.id)
        child = self.known.get(child_id) if child_id else None
        return child if child is not None and child.source == seed.source else None

    def _starts_document(self, seed: SeedObject) -> bool:
        if not seed.parent_id:
            return True
        parent = self.known.get(seed.parent_id)
        return parent is not None and parent.source != seed.source

    def _ends_document(self, seed: SeedObject, next_of: dict[str, str]) -> bool:
        if seed.id not in self.child and seed.id not in next_of:
            return False
        child_id = self.child.get(seed.id) or next_of.get(seed.id)
        if child_id is None:
            return True
        child = self.known.get(child_id)
        return child is not None and child.source != seed.source

    def runs(self) -> dict[str, _Run]:
        """Every hit's run of connected known chunks, keyed by object id."""
        if self._runs is not None:
            return self._runs
        # Children known without asking (one hit is another's child) link runs as well, so that
        # every chunk lies in exactly one run whichever hit is looked at first.
        next_of: dict[str, str] = {}
        for seed in sorted(self.known.values(), key=lambda s: s.id):
            if seed.parent_id in self.known:
                next_of.setdefault(seed.parent_id, seed.id)
        runs: dict[str, _Run] = {}
        for hit_id in self.hit_ids:
            if hit_id in runs:
                continue
            first = self.known[hit_id]
            seen = {first.id}
            while (before := self._predecessor(first)) is not None and before.id not in seen:
                seen.add(before.id)
                first = before
            ordered = [first]
            placed = {first.id}
            while (
                after := self._successor(ordered[-1], next_of)
            ) is not None and after.id not in placed:
                placed.add(after.id)
                ordered.append(after)
            if hit_id not in placed:  # the links disagree (a tampered chain): the hit alone
                ordered = [self.known[hit_id]]
            run = self._make_run(ordered, next_of)
            for record_id in run.records:
                runs[record_id] = run
        self._runs = runs
        return runs

    def _make_run(self, ordered: list[SeedObject], next_of: dict[str, str]) -> _Run:
        first_open = not self._starts_document(ordered[0])
        last_open = not self._ends_document(ordered[-1], next_of)
        origin = _MID_DOCUMENT if first_open else 0
        reconstruction = reconstruct(ordered, origin)
        # The text keeps the file's line breaks; the sentence rules tell a wrapped line's soft
        # break from a structural one, exactly as for an adopted collection, which stores the
        # same text.
        text = reconstruction.text
        key = ordered[0].id
        doc_length = 0 if last_open else origin + len(reconstruction.text)
        records = {}
        for index, placed in enumerate(reconstruction.placed):
            seed = placed.obj
            records[seed.id] = ChunkRecord(
                id=seed.id,
                doc_id=seed.source,
                doc_hash=key,
                chunk_index=index,
                start=placed.start,
                end=placed.end,
                text=text[placed.start - origin : placed.end - origin],
                source=seed.source,
                chunk_hash="",
                doc_length=doc_length,
                parent_id=seed.parent_id,
            )
        return _Run(key, reconstruction, origin, records, first_open, last_open)

    # -- what to fetch next ------------------------------------------------------------------

    def open_ends(self, max_extend: int) -> tuple[list[str], list[str]]:
        """Parent ids and child-of ids to fetch next: the run ends where stitching still needs
        text (the side is cut mid-sentence, the run goes on, and the bound is not covered)."""
        runs = self.runs()
        parents: set[str] = set()
        children_of: set[str] = set()
        for hit_id in self.hit_ids:
            run = runs[hit_id]
            hit = run.records[hit_id]
            span = stitch(hit, run.records.values(), max_extend=max_extend)
            ordered = run.reconstruction.placed
            first, last = ordered[0].obj, ordered[-1].obj
            reach = max_extend + BOUND_MARGIN
            if (
                span.truncated_start
                and run.first_open
                and hit.start - run.records[first.id].start < reach
                and first.parent_id
                and first.parent_id not in self.known
            ):
                parents.add(first.parent_id)
            if (
                span.truncated_end
                and run.last_open
                and run.records[last.id].end - hit.end < reach
                and last.id not in self.child
            ):
                children_of.add(last.id)
        return sorted(parents), sorted(children_of)

    # -- passages ----------------------------------------------------------------------------

    def passages(self, hits: Sequence[Hit], limit: int, max_extend: int) -> list[Passage]:
        """Stitch every hit in its run, merge those that meet, keep the best `limit`.

        Offsets are moved back by the run's origin, so a passage's are offsets in its run's
        reconstructed text.
        """
        runs = self.runs()
        scored = []
        for hit in hits:
            run = runs[hit.record.id]
            span = stitch(run.records[hit.record.id], run.records.values(), max_extend=max_extend)
            scored.append(Scored(span=_shifted(span, -run.origin), score=hit.score, payload=hit))
        return to_passages(scored, limit)


def _shifted(span: Span, by: int) -> Span:
    """`span` with every offset moved by `by` characters."""
    return replace(
        span,
        start=span.start + by,
        end=span.end + by,
        hit_spans=tuple((s + by, e + by) for s, e in span.hit_spans),
        chunk_spans=tuple((s + by, e + by) for s, e in span.chunk_spans),
    )
