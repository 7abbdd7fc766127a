"""Stitching, all of it: widen search hits to whole sentences and merge the passages that meet.

The seed's `complete_text` followed `parent_id` one query per hop, forward only, glued whole
chunks together (repeating the 50-character overlap) and never stopped on text without
terminators. Here one query's hits go through one call, `stitch_hits`, in three steps:

1. plan: what each hit needs around it (`needed_window`: nothing on a side that ingest already
   marked as a sentence boundary, else up to `max_extend` characters);
2. read it from the text stored with the hit (`_from_context`), or else ask for it: every chunk
   of the hit's document version that overlaps the window, for all such hits in ONE request made
   through the function the caller passes (`_span_requests`);
3. assemble: `stitch` lays each hit's chunks out by their character offsets, so the overlap is
   never repeated and the result is always an exact slice of the document, and widens the hit
   backwards to a sentence start and forwards to a sentence end (rules in stitcher.sentences),
   never further than `max_extend` characters on either side; `merge` joins the spans that meet;
   `to_passages` turns them into the best `limit` passages.

Seed-layout collections (stitcher.foreign.seed_search) fetch their neighbourhood their own way
(hop by hop along `parent_id`) and share step 3: `stitch`, `merge` and `to_passages`.

No store and no I/O here: the one request goes through the `fetch_spans` function passed in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from stitcher.errors import UsageError
from stitcher.ids import chunk_uuid
from stitcher.models import ChunkRecord, Hit, Passage, SpanRequest
from stitcher.sentences import (
    CJK_TERMINATORS,
    ELLIPSES,
    LATIN_TERMINATORS,
    LINE_LOOKBACK,
    next_non_space,
    sentence_end_at_or_after,
    sentence_start_at_or_before,
    weak_end_at_or_before,
    weak_start_at_or_after,
)

P = TypeVar("P")

#: Characters looked at beyond the extension bound: enough to see the terminator (and the
#: whitespace) before a sentence that starts right at the bound.
BOUND_MARGIN = 64
#: Before the lower bound more is looked at: whether a line break there ends a sentence depends
#: on the line before it, read up to LINE_LOOKBACK characters back (its start, so its indent).
#: With only BOUND_MARGIN visible, a table row starting at the bound after a long line was not
#: known as a sentence start, though every chunk was at hand.
BACK_MARGIN = max(BOUND_MARGIN, LINE_LOOKBACK + 1)


@dataclass(frozen=True)
class Span:
    """An exact slice ``[start, end)`` of one document version, whole sentences if possible.

    `hit_ids` / `hit_spans` are the hits the span was grown from (one for `stitch`, several
    after `merge`), in document order. `chunk_ids` are the chunks that contribute characters to
    ``[start, end)`` in document order, `chunk_spans` their ``(start, end)`` offsets.
    `truncated_start` / `truncated_end` say that no sentence boundary was reached on that side
    within the bound (or a neighbour chunk was missing); the cut is then at a clause mark, a
    word boundary or the bound itself.
    """

    doc_id: str
    doc_hash: str
    start: int
    end: int
    text: str
    hit_ids: tuple[str, ...]
    hit_spans: tuple[tuple[int, int], ...]
    chunk_ids: tuple[str, ...]
    chunk_spans: tuple[tuple[int, int], ...]
    truncated_start: bool
    truncated_end: bool

    @property
    def truncated(self) -> bool:
        """Whether either side stopped short of a sentence boundary."""
        return self.truncated_start or self.truncated_end


@dataclass(frozen=True)
class Scored(Generic[P]):
    """A stitched span with its hit's score and whatever the caller wants to keep (the Hit)."""

    span: Span
    score: float
    payload: P


@dataclass(frozen=True)
class Merged(Generic[P]):
    """Spans of one document version that overlapped or touched, joined into one.

    `score` is the best member's score. `payloads` and `scores` are the members' payloads and
    scores, best first (ties keep input order); `span.hit_ids` lists the hits in document order.
    """

    span: Span
    score: float
    payloads: tuple[P, ...]
    scores: tuple[float, ...]


def stitch_hits(
    hits: Sequence[Hit],
    fetch_spans: Callable[[list[SpanRequest]], Iterable[ChunkRecord]],
    *,
    collection: str,
    limit: int,
    max_extend: int,
) -> tuple[list[Passage], int]:
    """Stitch one query's hits into at most `limit` whole-sentence passages, best first.

    Each hit's neighbours come from the text stored with it when that covers what stitching
    needs; the others are fetched with ONE call of `fetch_spans` (a store's `fetch_spans`), and
    only for the hits likely to be returned. Hits of one document that meet are merged.

    Args:
        hits: The query's hits, best first (more than `limit`: spare ones fill places freed by
            merging).
        fetch_spans: Returns every chunk overlapping any of the requested character ranges.
        collection: The collection the hits come from (neighbours rebuilt from stored context
            get their real ids, which depend on it).
        limit: Most passages returned.
        max_extend: Most characters added on each side of a hit.

    Returns:
        The passages and the number of requests made (0 or 1).
    """
    local: dict[str, list[ChunkRecord]] = {}
    windows: dict[str, tuple[int, int]] = {}
    likely = {hit.record.id for hit in _likely_returned(hits, limit)}
    for hit in hits:
        needed = needed_window(hit.record, max_extend, carry_headings=True)
        if needed is None:
            continue
        around = _from_context(collection, hit.record, needed)
        if around is not None:
            local[hit.record.id] = around
        elif hit.record.id in likely:
            windows[hit.record.id] = needed
    by_version: dict[tuple[str, str], list[ChunkRecord]] = defaultdict(list)
    if windows:
        for record in fetch_spans(_span_requests(hits, windows)):
            by_version[(record.doc_id, record.doc_hash)].append(record)

    scored = []
    for hit in hits:
        r = hit.record
        neighbours = [*by_version.get((r.doc_id, r.doc_hash), []), *local.get(r.id, [])]
        span = stitch(r, [*neighbours, r], max_extend=max_extend, carry_headings=True)
        scored.append(Scored(span=span, score=hit.score, payload=hit))
    return to_passages(scored, limit), int(bool(windows))


def needed_window(
    hit: ChunkRecord, max_extend: int, *, carry_headings: bool = False
) -> tuple[int, int] | None:
    """The characters `stitch` may need around `hit`, or None when it needs none: sides that
    ingest already marked as sentence boundaries are not widened."""
    back = not hit.starts_sentence
    forward = not hit.ends_sentence or (carry_headings and is_heading(hit.text.strip()))
    if not (back or forward):
        return None
    lo, hi = window(hit, max_extend)
    return (lo if back else hit.start, hi if forward else hit.end)


def window(hit: ChunkRecord, max_extend: int) -> tuple[int, int]:
    """The character range ``[lo, hi)`` whose chunks `stitch` may need for `hit`.

    Fetch every chunk of the hit's document version that overlaps this range. When the record
    does not know its document's length (``doc_length == 0``), the upper end is not clamped.
    """
    _check_extend(max_extend)
    hi = hit.end + max_extend
    if hit.doc_length > 0:
        hi = min(hit.doc_length, hi)
    return max(0, hit.start - max_extend), hi


def _likely_returned(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The hits that will make the first `limit` passages, predicted from their raw ranges.

    Hits of one document whose chunks overlap will merge anyway; spare candidates beyond that
    are kept only to fill places freed by merging. Fetching neighbours just for the predicted
    hits keeps the request small (and often unnecessary). A spare candidate that ends up
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


def _from_context(
    collection: str, hit: ChunkRecord, window: tuple[int, int]
) -> list[ChunkRecord] | None:
    """The neighbours of `hit` rebuilt from the text stored with it (exact slices of the
    document, under the neighbours' real ids), or None when that text does not cover `window`."""
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


def _check_extend(max_extend: int) -> None:
    if max_extend < 0:
        raise UsageError(f"the stitching bound must not be negative (got {max_extend})")


def _usable(chunk: ChunkRecord) -> bool:
    return 0 <= chunk.start <= chunk.end and len(chunk.text) == chunk.end - chunk.start


def _layout(
    hit: ChunkRecord, chunks: list[ChunkRecord]
) -> tuple[int, str, list[tuple[int, int, str]]]:
    """Lay out the chunks connected to `hit` by offsets, each character once.

    Returns the offset of the first character, the text, and the pieces ``(start, end, id)``
    each chunk contributes, in document order. The hit contributes its whole range; the other
    chunks fill in what lies before and after it.
    """
    chunks.sort(key=lambda c: (c.start, c.end))
    # Keep only the run of chunks connected to the hit (touching counts: no character missing).
    group: list[ChunkRecord] = []
    reach = -1
    has_hit = False
    for c in chunks:
        if group and c.start > reach:
            if has_hit:
                break
            group, reach = [], -1
        group.append(c)
        reach = max(reach, c.end)
        has_hit = has_hit or c.id == hit.id
    base = group[0].start

    pieces: list[tuple[int, int, str]] = []
    texts: list[str] = []
    cursor = base
    for c in group:
        if cursor >= hit.start or c.start >= hit.start:
            break
        if c.end > cursor:
            stop = min(c.end, hit.start)
            texts.append(c.text[cursor - c.start : stop - c.start])
            pieces.append((cursor, stop, c.id))
            cursor = stop
    pieces.append((hit.start, hit.end, hit.id))
    texts.append(hit.text)
    cursor = hit.end
    for c in group:
        if c.end > cursor:
            texts.append(c.text[cursor - c.start :])
            pieces.append((cursor, c.end, c.id))
            cursor = c.end
    return base, "".join(texts), pieces


#: A passage this short without any sentence terminator reads as a heading or a label.
HEADING_MAX_CHARS = 120
_TERMINATOR_CHARS = frozenset(CJK_TERMINATORS + ELLIPSES + LATIN_TERMINATORS)


def is_heading(passage: str) -> bool:
    """Whether `passage` (stripped) reads as a heading or a label: short, one line at most, and
    without any sentence terminator."""
    return (
        0 < len(passage) <= HEADING_MAX_CHARS
        and passage.count("\n") <= 1
        and not _TERMINATOR_CHARS.intersection(passage)
    )


def stitch(
    hit: ChunkRecord,
    neighbours: Iterable[ChunkRecord],
    *,
    max_extend: int = 300,
    carry_headings: bool = False,
) -> Span:
    """Widen `hit` to whole sentences using the chunks around it.

    Backwards, the span starts at the nearest sentence start at or before the hit's first
    non-whitespace character; forwards, it ends at the nearest sentence end at or after its last
    one; each side reaches at most `max_extend` characters beyond the hit. A side that finds no
    sentence boundary in reach is cut at the best weaker boundary (clause punctuation, then a
    word boundary, else the bound) and marked truncated; so is a side where a neighbour chunk is
    missing before the boundary. Leading and trailing whitespace is trimmed; the span never
    shrinks below the hit's non-whitespace content, and ``span.text`` is always exactly the
    document's characters ``[span.start, span.end)``.

    Args:
        hit: The chunk the query matched.
        neighbours: Chunks fetched around it (see `window`). Chunks of another document or
            version, duplicates, the hit itself and far-away chunks are ignored.
        max_extend: Most characters added on each side.
        carry_headings: When the stitched text is only a heading (a short line with no
            sentence terminator, e.g. "## Food"), carry on to the end of the sentence that
            follows it, still within `max_extend` — a heading alone answers nothing.

    Returns:
        The stitched span; `chunk_ids` are only the chunks that contribute characters to it.
    """
    _check_extend(max_extend)
    if not _usable(hit):
        # The record contradicts itself, so there is no reliable document text to widen into.
        return Span(
            hit.doc_id, hit.doc_hash, hit.start, hit.start + len(hit.text), hit.text,
            (hit.id,), ((hit.start, hit.start + len(hit.text)),), (hit.id,),
            ((hit.start, hit.start + len(hit.text)),), True, True,
        )  # fmt: skip
    lo_need = hit.start - max_extend - BACK_MARGIN
    hi_need = hit.end + max_extend + BOUND_MARGIN
    chosen: dict[str, ChunkRecord] = {hit.id: hit}
    for c in neighbours:
        if (
            c.end >= lo_need
            and c.start <= hi_need
            and c.doc_id == hit.doc_id
            and c.doc_hash == hit.doc_hash
            and c.id not in chosen
            and _usable(c)
        ):
            chosen[c.id] = c
    base, text, pieces = _layout(hit, list(chosen.values()))
    at_doc_start = base == 0
    at_doc_end = hit.doc_length > 0 and base + len(text) >= hit.doc_length

    hit_lo, hit_hi = hit.start - base, hit.end - base
    first = next_non_space(text, hit_lo, hit_hi)
    if first == hit_hi:
        # A whitespace-only hit has no sentence to belong to; give it back as it is.
        start, end, truncated_start, truncated_end = hit_lo, hit_hi, False, False
    else:
        last = hit_hi
        while text[last - 1].isspace():
            last -= 1
        lo = max(hit.start - max_extend, base) - base
        hi = min(hit.end + max_extend, base + len(text)) - base

        # Flags decided at ingest on the whole document spare the search on that side.
        found_start: int | None = first
        if not hit.starts_sentence:
            found_start = sentence_start_at_or_before(
                text, first, lo, at_doc_start=at_doc_start, at_doc_end=at_doc_end
            )
        truncated_start = found_start is None
        if found_start is None:
            weak = weak_start_at_or_after(text, lo, first)
            found_start = lo if weak is None else weak
        start = min(next_non_space(text, found_start), first)

        found_end: int | None = last
        if not hit.ends_sentence:
            found_end = sentence_end_at_or_after(
                text, last, hi, at_doc_start=at_doc_start, at_doc_end=at_doc_end
            )
        truncated_end = found_end is None
        if found_end is None:
            weak = weak_end_at_or_before(text, last, hi)
            found_end = hi if weak is None else weak
        end = max(found_end, last)
        while end > last and text[end - 1].isspace():
            end -= 1
        for _ in range(3):  # "# Title" then "## Section" then the first sentence, at most
            if not (carry_headings and not truncated_end and is_heading(text[start:end])):
                break
            following = next_non_space(text, end, hi)
            if following >= hi:
                break
            carried = sentence_end_at_or_after(
                text, following + 1, hi, at_doc_start=at_doc_start, at_doc_end=at_doc_end
            )
            if carried is None:
                break
            end = carried
            while text[end - 1].isspace():
                end -= 1

    abs_start, abs_end = base + start, base + end
    used = [p for p in pieces if (p[0] < abs_end and p[1] > abs_start) or p[2] == hit.id]
    return Span(
        doc_id=hit.doc_id,
        doc_hash=hit.doc_hash,
        start=abs_start,
        end=abs_end,
        text=text[start:end],
        hit_ids=(hit.id,),
        hit_spans=((hit.start, hit.end),),
        chunk_ids=tuple(p[2] for p in used),
        chunk_spans=tuple(_chunk_span(chosen[p[2]]) for p in used),
        truncated_start=truncated_start,
        truncated_end=truncated_end,
    )


def _chunk_span(chunk: ChunkRecord) -> tuple[int, int]:
    return chunk.start, chunk.end


def merge(spans: Iterable[Scored[P]]) -> list[Merged[P]]:
    """Join spans of the same document version whose ranges overlap or touch.

    Chains join too (A touches B touches C gives one). A joined span covers the union of its
    members' ranges with its text re-assembled from theirs; hit and chunk ids are unioned in
    document order; a side is truncated only if the outermost member on that side is (when
    several members share the outermost position, only if all of them are).

    Args:
        spans: Stitched spans with scores and payloads, typically in score order.

    Returns:
        The merged spans, best score first; ties keep the order of their best member's input.
    """
    items = list(spans)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault((item.span.doc_id, item.span.doc_hash), []).append(i)

    ranked: list[tuple[float, int, Merged[P]]] = []
    for members in groups.values():
        members.sort(key=lambda i: (items[i].span.start, items[i].span.end))
        cluster: list[int] = []
        reach = 0
        for i in members:
            span = items[i].span
            if cluster and span.start > reach:
                ranked.append(_join(items, cluster))
                cluster = []
            if not cluster:
                reach = span.end
            cluster.append(i)
            reach = max(reach, span.end)
        if cluster:
            ranked.append(_join(items, cluster))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return [r[2] for r in ranked]


def _join(items: Sequence[Scored[P]], cluster: list[int]) -> tuple[float, int, Merged[P]]:
    """Merge one cluster (indexes into `items`, sorted by start); returns (score, order, merged)."""
    spans = [items[i].span for i in cluster]
    first = spans[0]
    texts = [first.text]
    end = first.end
    for s in spans[1:]:
        if s.end > end:
            texts.append(s.text[end - s.start :])
            end = s.end
    start = first.start

    hits: dict[str, tuple[int, int]] = {}
    chunks: dict[str, tuple[int, int]] = {}
    for s in spans:
        for hit_id, hit_span in zip(s.hit_ids, s.hit_spans, strict=True):
            hits.setdefault(hit_id, hit_span)
        for chunk_id, chunk_span in zip(s.chunk_ids, s.chunk_spans, strict=True):
            chunks.setdefault(chunk_id, chunk_span)
    hit_order = sorted(hits.items(), key=lambda kv: kv[1])
    chunk_order = sorted(chunks.items(), key=lambda kv: kv[1])

    by_score = sorted(cluster, key=lambda i: (-items[i].score, i))
    merged_span = Span(
        doc_id=first.doc_id,
        doc_hash=first.doc_hash,
        start=start,
        end=end,
        text="".join(texts),
        hit_ids=tuple(k for k, _ in hit_order),
        hit_spans=tuple(v for _, v in hit_order),
        chunk_ids=tuple(k for k, _ in chunk_order),
        chunk_spans=tuple(v for _, v in chunk_order),
        truncated_start=all(s.truncated_start for s in spans if s.start == start),
        truncated_end=all(s.truncated_end for s in spans if s.end == end),
    )
    best = by_score[0]
    merged = Merged(
        span=merged_span,
        score=items[best].score,
        payloads=tuple(items[i].payload for i in by_score),
        scores=tuple(items[i].score for i in by_score),
    )
    return items[best].score, best, merged


def to_passages(scored: Iterable[Scored[Hit]], limit: int) -> list[Passage]:
    """Merge stitched hits (`merge`) and keep the best `limit` as passages.

    A passage takes its source, document, metadata and score explanation from its best hit;
    `hit_ids` lists every merged hit, best first.
    """
    passages = []
    for merged in merge(scored):
        best = merged.payloads[0]
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
                metadata=_passage_metadata(r, merged.span.start, merged.span.text),
                hit_spans=merged.span.hit_spans,
            )
        )
        if len(passages) == limit:
            break
    return passages


def _passage_metadata(r: ChunkRecord, start: int, text: str) -> dict[str, Any]:
    """The hit's metadata, its "line" moved from where the chunk starts to where the passage
    starts: the line breaks between the two are in the chunk's or the passage's text."""
    metadata = dict(r.metadata)
    line = metadata.get("line")
    if isinstance(line, int) and not isinstance(line, bool):
        if start >= r.start:
            metadata["line"] = line + r.text.count("\n", 0, start - r.start)
        else:
            metadata["line"] = line - text.count("\n", 0, r.start - start)
    return metadata


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
