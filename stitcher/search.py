"""Hybrid search whose hits come back as whole sentences, in two round trips.

Round trip 1 is the hybrid query. Round trip 2 fetches, for all hits at once, every chunk of the
same document version that overlaps the hit widened by the stitching bound — a filter on
character offsets, so it always covers as far as stitching may reach and no third trip is ever
needed. Stitching itself (stitcher.stitch) is pure and works on character offsets, so the
overlap between chunks is never repeated and every passage is an exact slice of its document.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from stitcher.config import DEFAULT_MAX_EXTEND
from stitcher.errors import UsageError, setting
from stitcher.filters import Where
from stitcher.fusion import ModelReading, demote_weak_hits, effective_alpha, one_sided
from stitcher.models import ChunkRecord, Hit, Passage, SpanRequest
from stitcher.store.base import ChunkStore

#: Candidates asked for per wanted passage: hits from one document often merge into one
#: passage, and the spare candidates fill the freed places without another round trip.
CANDIDATES_PER_RESULT = 3

FUSIONS = ("relative", "ranked")


@dataclass(frozen=True)
class SearchOptions:
    """How to search; defaults are the CLI's defaults.

    `alpha` None lets stitcher.fusion.effective_alpha choose from the query and the model.
    """

    limit: int = 5
    alpha: float | None = None
    fusion: str = "relative"
    stitch: bool = True
    max_extend: int = DEFAULT_MAX_EXTEND
    where: Where | None = None
    #: Rank one-sided and bare-heading hits after the others (stitcher.fusion.demote_weak_hits).
    #: Off by default: on 300 benchmark questions (MiniLM, alpha 0.5) it removed every
    #: one-sided-over-two-sided inversion but lowered hit@5 (en 0.647→0.621, zh 0.530→0.485).
    demote_weak: bool = False

    def validate(self) -> None:
        """Raise UsageError for values no query could use."""
        if self.limit < 1:
            raise UsageError(f"{setting('limit')} must be at least 1")
        if self.alpha is not None and not 0.0 <= self.alpha <= 1.0:
            raise UsageError(
                f"{setting('alpha')} must be between 0 (keyword only) and 1 (vector only)"
            )
        if self.fusion not in FUSIONS:
            raise UsageError(f"{setting('fusion')} must be one of {', '.join(FUSIONS)}")
        if self.max_extend < 0:
            raise UsageError(f"{setting('max_extend')} must not be negative")


@dataclass(frozen=True)
class SearchResult:
    """The passages for one query, with how long it took and how many store calls it made."""

    query: str
    passages: list[Passage]
    took_ms: float
    round_trips: int
    extra: dict[str, Any] = field(default_factory=dict)
    #: The vector weight the query ran with and why (stitcher.fusion.effective_alpha).
    alpha: float | None = None
    alpha_reason: str = ""

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        """The `--json` object for one query."""
        out: dict[str, Any] = {
            "query": self.query,
            "took_ms": round(self.took_ms, 2),
            "round_trips": self.round_trips,
            "results": [passage_json(p, explain) for p in self.passages],
        }
        if explain and self.alpha is not None:
            out["alpha"] = self.alpha
            out["alpha_reason"] = self.alpha_reason
        out.update(self.extra)
        return out


def passage_json(passage: Passage, explain: bool = False) -> dict[str, Any]:
    """One result object of the `--json` output."""
    out: dict[str, Any] = {
        "text": passage.text,
        "source": passage.source,
        "doc_id": passage.doc_id,
        "score": round(passage.score, 6),
        "hit_ids": list(passage.hit_ids),
        "chunk_ids": list(passage.chunk_ids),
        "start": passage.start,
        "end": passage.end,
        "truncated": passage.truncated,
    }
    for key in ("title", "date", "page", "tags", "lang"):
        value = passage.metadata.get(key)
        if value is not None:
            out[key] = value.isoformat() if hasattr(value, "isoformat") else value
    if explain and passage.explain is not None:
        e = passage.explain
        out["explain"] = {
            "alpha": e.alpha,
            "fusion": e.fusion,
            "keyword_score": e.keyword,
            "vector_score": e.vector,
            "keyword_contribution": e.keyword_contribution,
            "vector_contribution": e.vector_contribution,
            "one_sided": one_sided(e),
            "raw": e.raw,
        }
    return out


def search(
    store: ChunkStore,
    query: str,
    embed_query: Callable[[str], list[float]],
    options: SearchOptions = SearchOptions(),
    reading: ModelReading | None = None,
) -> SearchResult:
    """Run one hybrid query and stitch its hits into whole-sentence passages.

    Without an explicit `options.alpha`, the vector weight comes from effective_alpha: lower
    when `reading` says the model cannot read the query. With `options.demote_weak`, hits that
    matched on one side only, or that are a bare heading, rank after the others.

    Raises UsageError for an empty query or invalid options.
    """
    from stitcher.segment import query_keyword_text

    options.validate()
    if not query.strip():
        raise UsageError("the query is empty")
    started = time.perf_counter()
    alpha, alpha_reason = effective_alpha(query, reading, options.alpha)
    vector = embed_query(query)
    wanted = options.limit * (CANDIDATES_PER_RESULT if options.stitch else 1)
    hits = store.hybrid(
        query,
        query_keyword_text(query),
        vector,
        limit=wanted,
        alpha=alpha,
        fusion=options.fusion,
        where=options.where,
    )
    if options.demote_weak:
        hits = demote_weak_hits(hits)
    round_trips = 1
    if options.stitch and hits:
        passages, more = stitch_hits(store, hits, options.limit, options.max_extend)
        round_trips += more
    else:
        passages = [raw_passage(hit) for hit in hits[: options.limit]]
    took = (time.perf_counter() - started) * 1000
    return SearchResult(
        query=query,
        passages=passages,
        took_ms=took,
        round_trips=round_trips,
        alpha=alpha,
        alpha_reason=alpha_reason,
    )


def latest(store: ChunkStore, options: SearchOptions = SearchOptions()) -> SearchResult:
    """No query: the newest matching documents by `date`, each from its start, stitched.

    The seed's "no topic: just return the latest" branch. Two round trips, like a search.
    """
    options.validate()
    started = time.perf_counter()
    heads = store.heads(options.where, limit=options.limit, newest_first=True)
    hits = [Hit(record, 0.0) for record in heads]
    round_trips = 1
    if options.stitch and hits:
        passages, more = stitch_hits(store, hits, options.limit, options.max_extend)
        round_trips += more
    else:
        passages = [raw_passage(hit) for hit in hits]
    took = (time.perf_counter() - started) * 1000
    return SearchResult(query="", passages=passages, took_ms=took, round_trips=round_trips)


def raw_passage(hit: Hit) -> Passage:
    """A hit as it is stored: the chunk's own text, not stitched."""
    r = hit.record
    return Passage(
        text=r.text,
        source=r.source,
        doc_id=r.doc_id,
        score=hit.score,
        hit_ids=(r.id,),
        chunk_ids=(r.id,),
        start=r.start,
        end=r.end,
        truncated=False,
        explain=hit.explain,
        metadata=dict(r.metadata),
        hit_spans=((r.start, r.end),),
    )


def stitch_hits(
    store: ChunkStore, hits: Sequence[Hit], limit: int, max_extend: int
) -> tuple[list[Passage], int]:
    """Fetch the neighbourhood of every hit that needs it in one request, stitch, merge, keep
    the best `limit`. Returns the passages and the requests made (0 or 1): hits that ingest
    marked as whole sentences need no request at all."""
    from stitcher.stitch import Scored, merge, needed_window, stitch

    # Chunks stored with their surrounding text need no request at all; the others are
    # fetched in one request, and only for the hits that will be returned.
    local: dict[str, list[ChunkRecord]] = {}
    windows: dict[str, tuple[int, int]] = {}
    likely = {hit.record.id for hit in _likely_returned(hits, limit)}
    for hit in hits:
        needed = needed_window(hit.record, max_extend, carry_headings=True)
        if needed is None:
            continue
        around = _from_context(store.name, hit.record, needed)
        if around is not None:
            local[hit.record.id] = around
        elif hit.record.id in likely:
            windows[hit.record.id] = needed
    by_version: dict[tuple[str, str], list[ChunkRecord]] = defaultdict(list)
    if windows:
        requests = _span_requests(hits, windows)
        for record in store.fetch_spans(requests):
            by_version[(record.doc_id, record.doc_hash)].append(record)

    scored = []
    for hit in hits:
        r = hit.record
        neighbours = [*by_version.get((r.doc_id, r.doc_hash), []), *local.get(r.id, [])]
        span = stitch(r, [*neighbours, r], max_extend=max_extend, carry_headings=True)
        scored.append(Scored(span=span, score=hit.score, payload=hit))
    passages = []
    for merged in merge(scored):
        best: Hit = merged.payloads[0]
        r = best.record
        passages.append(
            Passage(
                text=merged.span.text,
                source=r.source,
                doc_id=r.doc_id,
                score=merged.score,
                hit_ids=tuple(h.record.id for h in merged.payloads),
                chunk_ids=merged.span.chunk_ids,
                start=merged.span.start,
                end=merged.span.end,
                truncated=merged.span.truncated,
                explain=best.explain,
                metadata=dict(r.metadata),
                hit_spans=merged.span.hit_spans,
            )
        )
        if len(passages) == limit:
            break
    return passages, int(bool(windows))


def _from_context(
    collection: str, hit: ChunkRecord, window: tuple[int, int]
) -> list[ChunkRecord] | None:
    """The neighbours of `hit` rebuilt from the text stored with it (exact slices of the
    document, under the neighbours' real ids), or None when that text does not cover `window`."""
    from stitcher.ids import chunk_uuid

    context = hit.context
    if context is None:
        return None
    lo, hi = hit.start - len(context.before), hit.end + len(context.after)
    if window[0] < lo or window[1] > hi:
        return None
    text = context.before + hit.text + context.after
    pieces = []
    for index, start, end in context.neighbours:
        a, b = max(start, lo), min(end, hi)
        if a < b:
            pieces.append(
                replace(
                    hit,
                    id=chunk_uuid(collection, hit.doc_id, hit.doc_hash, index),
                    chunk_index=index,
                    start=a,
                    end=b,
                    text=text[a - lo : b - lo],
                    chunk_hash="",
                    parent_id=None,
                    starts_sentence=None,
                    ends_sentence=None,
                    context=None,
                )
            )
    return pieces


def _likely_returned(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The hits that will make the first `limit` passages, predicted from their raw ranges.

    Hits of one document whose chunks overlap will merge anyway; spare candidates beyond that
    are kept only to fill places freed by merging. Fetching neighbours just for the predicted
    hits keeps the second request small (and often unnecessary). A spare candidate that ends up
    returned after all is stitched from what was fetched and marked truncated if that was not
    enough — never wrong, at worst shorter.
    """
    chosen: list[Hit] = []
    groups: list[tuple[str, str, int, int]] = []
    for hit in hits:
        r = hit.record
        joined = False
        for i, (doc_id, doc_hash, lo, hi) in enumerate(groups):
            if (doc_id, doc_hash) == (r.doc_id, r.doc_hash) and r.start <= hi and r.end >= lo:
                groups[i] = (doc_id, doc_hash, min(lo, r.start), max(hi, r.end))
                joined = True
                break
        if not joined:
            if len(groups) == limit:
                break
            groups.append((r.doc_id, r.doc_hash, r.start, r.end))
        chosen.append(hit)
    return chosen


def _span_requests(hits: Sequence[Hit], windows: dict[str, tuple[int, int]]) -> list[SpanRequest]:
    """One character range per document version: overlapping windows are fused to keep the
    filter small."""
    ranges: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for hit in hits:
        r = hit.record
        if r.id in windows:
            ranges[(r.doc_id, r.doc_hash)].append(windows[r.id])
    requests = []
    for (doc_id, doc_hash), spans in ranges.items():
        spans.sort()
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a <= hi:
                hi = max(hi, b)
            else:
                requests.append(SpanRequest(doc_id, doc_hash, lo, hi))
                lo, hi = a, b
        requests.append(SpanRequest(doc_id, doc_hash, lo, hi))
    return requests
