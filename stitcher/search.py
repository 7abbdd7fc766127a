"""Hybrid search whose hits come back as whole sentences, in one round trip, at most two.

Round trip 1 is the hybrid query. Its hits go to stitcher.stitch.stitch_hits in one call, which
widens them from the text stored with each chunk; only for a hit whose stored text does not
reach as far as stitching may need (a larger --max-extend, or chunks stored without it) does it
make round trip 2: every chunk of the same document version that overlaps the hit widened by
the stitching bound, for all such hits at once — a filter on character offsets, so no third trip
is ever needed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from stitcher.errors import UsageError, worded
from stitcher.fusion import (
    ModelReading,
    demote_contents_listings,
    demote_weak_hits,
    effective_alpha,
    one_sided,
)
from stitcher.ids import source_of
from stitcher.models import Hit, Passage
from stitcher.request import SearchRequest
from stitcher.segment import query_keyword_text
from stitcher.stitch import raw_passage, stitch_hits
from stitcher.store.base import ChunkStore

#: Candidates asked for per wanted passage: hits from one document often merge into one
#: passage, and the spare candidates fill the freed places without another round trip.
CANDIDATES_PER_RESULT = 3


#: The search options are the request itself (stitcher.request): one definition for every front
#: end. The old name stays for callers that built `SearchOptions(limit=..., where=...)`.
SearchOptions = SearchRequest

DEFAULT_REQUEST = SearchRequest()


@dataclass(frozen=True)
class SearchResult:
    """The passages for one query, with how long it took and how many store calls it made."""

    query: str
    passages: list[Passage]
    took_ms: float
    round_trips: int
    extra: dict[str, Any] = field(default_factory=dict)
    #: The vector weight the query ran with and why (stitcher.fusion.effective_alpha), the
    #: settings it names spelled as the library's parameters (`alpha`).
    alpha: float | None = None
    alpha_reason: str = ""
    #: What orders the passages: "score" (a ranked search) or "date" (the newest documents,
    #: `latest`: their scores mean nothing, so the output shows each one's date instead).
    sorted_by: str = "score"
    #: The reason with its settings still named (stitcher.errors.setting), for `spelled`.
    _alpha_reason: str = field(default="", repr=False, compare=False)

    def spelled(self, wording: Callable[[str], str] = worded) -> SearchResult:
        """The result with the settings its texts name spelled by `wording` (the CLI: as flags;
        by default as the library's parameters, see stitcher.errors.setting)."""
        return replace(self, alpha_reason=wording(self._alpha_reason or self.alpha_reason))

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        """The `--json` object for one query."""
        out: dict[str, Any] = {
            "query": self.query,
            "took_ms": round(self.took_ms, 2),
            "round_trips": self.round_trips,
            "results": [passage_json(p, explain, self.sorted_by) for p in self.passages],
        }
        if self.sorted_by != "score":
            out["sorted_by"] = self.sorted_by
        if explain and self.alpha is not None:
            out["alpha"] = self.alpha
            out["alpha_reason"] = self.alpha_reason
        out.update(self.extra)
        return out


def passage_json(
    passage: Passage, explain: bool = False, sorted_by: str = "score"
) -> dict[str, Any]:
    """One result object of the `--json` output; sorted by date, it has the `date` it was
    sorted by (null for an undated document, listed last) and no score."""
    out: dict[str, Any] = {
        "text": passage.text,
        "source": source_of(passage.doc_id),
        "path": passage.source,
        "doc_id": passage.doc_id,
        "score": round(passage.score, 6),
        "hit_ids": list(passage.hit_ids),
        "chunk_ids": list(passage.chunk_ids),
        "start": passage.start,
        "end": passage.end,
        "truncated": passage.truncated,
    }
    for key in ("title", "date", "page", "line", "tags", "lang"):
        value = passage.metadata.get(key)
        if value is not None:
            out[key] = value.isoformat() if hasattr(value, "isoformat") else value
    if sorted_by == "date":
        del out["score"]
        out.setdefault("date", None)
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
            "demoted": e.demoted or None,
            "raw": e.raw,
        }
    return out


def search(
    store: ChunkStore,
    query: str,
    embed_query: Callable[[str], list[float]],
    options: SearchRequest = DEFAULT_REQUEST,
    reading: ModelReading | None = None,
) -> SearchResult:
    """Run one hybrid query and stitch its hits into whole-sentence passages.

    Without an explicit `options.alpha`, the vector weight comes from effective_alpha: lower
    when `reading` says the model cannot read the query. Table-of-contents chunks rank after
    the others (unless `options.demote_listings` is off); with `options.demote_weak`, so do
    hits that matched on one side only or are a bare heading.

    Raises UsageError for an empty query or invalid options.
    """
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
    if options.demote_listings:
        hits = demote_contents_listings(hits)
    if options.demote_weak:
        hits = demote_weak_hits(hits)
    passages, more = _passages(store, hits, options)
    round_trips = 1 + more
    took = (time.perf_counter() - started) * 1000
    return SearchResult(
        query=query,
        passages=passages,
        took_ms=took,
        round_trips=round_trips,
        alpha=alpha,
        alpha_reason=worded(alpha_reason),
        _alpha_reason=alpha_reason,
    )


def latest(store: ChunkStore, options: SearchRequest = DEFAULT_REQUEST) -> SearchResult:
    """No query: the newest matching documents by `date`, each from its start, stitched.

    The seed's "no topic: just return the latest" branch. Stitched like a search: one round
    trip, two when the stored context does not cover a passage.
    """
    options.validate()
    started = time.perf_counter()
    heads = store.heads(options.where, limit=options.limit, newest_first=True)
    hits = [Hit(record, 0.0) for record in heads]
    passages, more = _passages(store, hits, options)
    round_trips = 1 + more
    took = (time.perf_counter() - started) * 1000
    return SearchResult(
        query="", passages=passages, took_ms=took, round_trips=round_trips, sorted_by="date"
    )


def _passages(
    store: ChunkStore, hits: list[Hit], options: SearchRequest
) -> tuple[list[Passage], int]:
    """The hits as passages, stitched unless `options` says not; with the requests made."""
    if options.stitch and hits:
        return stitch_hits(
            hits,
            store.fetch_spans,
            collection=store.name,
            limit=options.limit,
            max_extend=options.max_extend,
        )
    return [raw_passage(hit) for hit in hits[: options.limit]], 0
