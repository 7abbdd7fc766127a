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

from stitcher.config import DEFAULT_ALPHA, DEFAULT_MAX_EXTEND
from stitcher.errors import CollectionMissing, UsageError, setting
from stitcher.foreign.chains import Reconstruction, SeedObject, reconstruct
from stitcher.models import ChunkRecord, Hit, Passage
from stitcher.search import CANDIDATES_PER_RESULT, SearchOptions, SearchResult
from stitcher.stitch import BOUND_MARGIN, Scored, Span, raw_passage, stitch, to_passages
from stitcher.store.base import ChunkStore

# The store asks the server (ChunkStore.seed_hybrid, seed_hop); to_seed_object is kept importable
# from here, where it lived before the store took the reading over.
from stitcher.store.weaviate.seed import to_seed_object

__all__ = ["DEFAULT_ROUND_TRIPS", "Neighbourhood", "seed_search", "to_seed_object"]

#: Default cap on server requests per query: the hybrid query plus two hops of neighbours.
#: With 250-character chunks two hops reach ~400 characters on each side, past the default
#: extension bound of 300.
DEFAULT_ROUND_TRIPS = 3

#: Offset of a reconstructed run whose start is not known to be the document's start: `stitch`
#: treats offset 0 as the document's first character, so a run that begins mid-document must not
#: start there.
_MID_DOCUMENT = 1


@dataclass(frozen=True)
class _Run:
    """One reconstructed run of known chunks of one source, as synthetic stitcher records."""

    key: str
    reconstruction: Reconstruction
    origin: int
    records: dict[str, ChunkRecord]
    first_open: bool  # the document may continue before the run's first chunk
    last_open: bool  # ... or after its last chunk


def seed_search(
    store: ChunkStore,
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
        store: The seed-layout collection (see `stitcher.seed_layout.detect_layout`), e.g.
            `WeaviateStore(client, name)`.
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
    if not query.strip():
        raise UsageError("the query is empty")
    # The same bounds as a search of stitcher's own layout, in the same words.
    SearchOptions(limit=limit, alpha=alpha, fusion=fusion, max_extend=max_extend).validate()
    if max_round_trips < 1:
        raise UsageError("the round-trip cap must be at least 1")
    _require(store)

    started = time.perf_counter()
    query_vector = list(vector(query) if callable(vector) else vector)
    found = store.seed_hybrid(
        keyword if keyword is not None else query,
        query_vector,
        limit=limit * (CANDIDATES_PER_RESULT if stitch else 1),
        alpha=alpha,
        fusion=fusion,
    )
    round_trips = 1
    scored = [(seed, Hit(_plain_record(seed), score, explain)) for seed, score, explain in found]

    hops = 0
    if stitch and scored:
        neighbourhood = Neighbourhood([seed for seed, _hit in scored])
        while round_trips < max_round_trips:
            want_parents, want_children = neighbourhood.open_ends(max_extend)
            if not want_parents and not want_children:
                break
            fetched = store.seed_hop(want_parents, want_children)
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


def _require(store: ChunkStore) -> None:
    if not store.exists():
        raise CollectionMissing(
            f"collection {store.name!r} does not exist on the server; check {setting('collection')}"
        )


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
