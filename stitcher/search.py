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

from stitcher.config import DEFAULT_MAX_EXTEND
from stitcher.errors import UsageError, setting, worded
from stitcher.filters import Where
from stitcher.fusion import (
    ModelReading,
    demote_contents_listings,
    demote_weak_hits,
    effective_alpha,
    one_sided,
)
from stitcher.models import Hit, Passage
from stitcher.segment import query_keyword_text
from stitcher.stitch import raw_passage, stitch_hits
from stitcher.store.base import FUSIONS, ChunkStore

#: Candidates asked for per wanted passage: hits from one document often merge into one
#: passage, and the spare candidates fill the freed places without another round trip.
CANDIDATES_PER_RESULT = 3


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
    #: Rank table-of-contents chunks after the others (stitcher.fusion.demote_contents_listings);
    #: BENCHMARKS.md "Issue 15, fourth round" has what it changes on the question benchmark.
    demote_listings: bool = True

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
    #: The vector weight the query ran with and why (stitcher.fusion.effective_alpha), the
    #: settings it names spelled as the library's parameters (`alpha`).
    alpha: float | None = None
    alpha_reason: str = ""
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
    for key in ("title", "date", "page", "line", "tags", "lang"):
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
            "demoted": e.demoted or None,
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


def latest(store: ChunkStore, options: SearchOptions = SearchOptions()) -> SearchResult:
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
    return SearchResult(query="", passages=passages, took_ms=took, round_trips=round_trips)


def _passages(
    store: ChunkStore, hits: list[Hit], options: SearchOptions
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
