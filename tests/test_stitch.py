"""Stitching hits into whole sentences by character offsets, and merging the passages that meet.

Documents are chunked here with a plain fixed-window chunker (not stitcher.chunking) so these
tests only depend on the chunk contract: `text == doc[start:end]`, overlaps, no gaps.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Sequence

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from stitcher.errors import UsageError
from stitcher.models import ChunkRecord
from stitcher.sentences import (
    is_sentence_end,
    is_sentence_start,
    next_non_space,
    sentence_end_at_or_after,
    sentence_start_at_or_before,
    weak_end_at_or_before,
    weak_start_at_or_after,
)
from stitcher.stitch import Merged, Scored, Span, merge, stitch, window

# ---------------------------------------------------------------------------------------------
# Helpers


def chunk(
    doc: str, size: int = 250, overlap: int = 50, doc_id: str = "doc", doc_hash: str = "v1"
) -> list[ChunkRecord]:
    """Fixed windows of `size` characters, each starting `size - overlap` after the previous."""
    out: list[ChunkRecord] = []
    start = 0
    while True:
        end = min(len(doc), start + size)
        i = len(out)
        out.append(
            ChunkRecord(
                id=f"{doc_id}@{doc_hash}#{i}",
                doc_id=doc_id,
                doc_hash=doc_hash,
                chunk_index=i,
                start=start,
                end=end,
                text=doc[start:end],
                source=f"{doc_id}.txt",
                chunk_hash=f"h{i}",
                doc_length=len(doc),
            )
        )
        if end == len(doc):
            return out
        start = end - overlap


def fetched(chunks: Sequence[ChunkRecord], hit: ChunkRecord, max_extend: int) -> list[ChunkRecord]:
    """What the store returns for `window(hit)`: every chunk overlapping the range."""
    lo, hi = window(hit, max_extend)
    return [c for c in chunks if c.end > lo and c.start < hi]


def content(doc: str, hit: ChunkRecord) -> tuple[int, int] | None:
    """The hit's range without its edge whitespace, or None if it is all whitespace."""
    s0 = next_non_space(doc, hit.start, hit.end)
    if s0 == hit.end:
        return None
    e0 = hit.end
    while doc[e0 - 1].isspace():
        e0 -= 1
    return s0, e0


def expected(doc: str, hit: ChunkRecord, max_extend: int) -> tuple[int, int, bool, bool]:
    """The span the rules give when the whole document is visible."""
    edges = content(doc, hit)
    assert edges is not None
    s0, e0 = edges
    lo, hi = max(0, hit.start - max_extend), min(len(doc), hit.end + max_extend)
    p = sentence_start_at_or_before(doc, s0, lo, at_doc_start=True)
    cut_start = p is None
    if p is None:
        weak = weak_start_at_or_after(doc, lo, s0)
        p = lo if weak is None else weak
    p = min(next_non_space(doc, p), s0)
    q = sentence_end_at_or_after(doc, e0, hi, at_doc_start=True, at_doc_end=True)
    cut_end = q is None
    if q is None:
        weak = weak_end_at_or_before(doc, e0, hi)
        q = hi if weak is None else weak
    while q > e0 and doc[q - 1].isspace():
        q -= 1
    return p, q, cut_start, cut_end


def assert_valid(doc: str, hit: ChunkRecord, span: Span, max_extend: int) -> None:
    """What must hold whatever chunks were available."""
    assert span.text == doc[span.start : span.end]
    assert span.doc_id == hit.doc_id and span.doc_hash == hit.doc_hash
    assert max(0, hit.start - max_extend) <= span.start <= span.end
    assert span.end <= hit.end + max_extend
    assert span.truncated == (span.truncated_start or span.truncated_end)
    assert span.hit_ids == (hit.id,) and span.hit_spans == ((hit.start, hit.end),)
    edges = content(doc, hit)
    if edges is not None:
        s0, e0 = edges
        assert span.start <= s0 and span.end >= e0  # never shrinks below the hit
        assert not span.text[0].isspace() and not span.text[-1].isspace()
    if not span.truncated_start:
        assert is_sentence_start(doc, span.start, at_doc_start=True), span
    if not span.truncated_end:
        assert is_sentence_end(doc, span.end, at_doc_start=True, at_doc_end=True), span
    # Chunk ids: the hit, plus only chunks that contribute characters, in document order.
    assert hit.id in span.chunk_ids
    assert len(set(span.chunk_ids)) == len(span.chunk_ids)
    assert list(span.chunk_spans) == sorted(span.chunk_spans)
    for cid, (a, b) in zip(span.chunk_ids, span.chunk_spans, strict=True):
        assert (a < span.end and b > span.start) or cid == hit.id
    covered = span.start
    for a, b in span.chunk_spans:
        assert a <= covered or covered >= span.end
        covered = max(covered, b)
    assert covered >= span.end


# ---------------------------------------------------------------------------------------------
# Random documents

HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工"
WORDS = ["alpha", "beta", "gamma", "Dr.", "e.g.", "3.14", "www.a.com", "1,000", "a:b", "word"]
TERMINATORS = ["。", "！", "？", "？！", "……", ".", "!", "?", "...", ""]
CLOSERS = ["", "", "", "”", "」", '"', "'", ")"]
SEPARATORS = ["", " ", " ", "\n", "\n\n", "  \n", "\n \n", "\t"]


@st.composite
def sentence(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["han", "latin", "table", "long_han", "long_latin", "list"]))
    if kind == "han":
        body = "".join(
            draw(st.text(alphabet=HAN, min_size=1, max_size=15))
            + draw(st.sampled_from(["", "，", "；", "："]))
            for _ in range(draw(st.integers(1, 3)))
        )
        if draw(st.booleans()):
            body = "他说：“" + body + draw(st.sampled_from(["。", "！", "？"])) + "”"
    elif kind == "latin":
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
        body = " ".join(w + draw(st.sampled_from(["", "", ",", ";"])) for w in words)
    elif kind == "table":
        rows = draw(st.integers(1, 4))
        body = "\n".join(
            "| " + " | ".join(draw(st.sampled_from(WORDS)) for _ in range(3)) + " |"
            for _ in range(rows)
        )
    elif kind == "long_han":
        body = draw(st.text(alphabet=HAN, min_size=50, max_size=300))
    elif kind == "long_latin":
        body = " ".join(
            draw(st.lists(st.sampled_from(["lorem", "ipsum", "dolor"]), min_size=20, max_size=60))
        )
    else:
        body = draw(st.sampled_from(["1. ", "2. ", "a. ", "  3. "])) + draw(
            st.text(alphabet=HAN, min_size=1, max_size=10)
        )
    return body + draw(st.sampled_from(TERMINATORS)) + draw(st.sampled_from(CLOSERS))


@st.composite
def document(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(st.tuples(sentence(), st.sampled_from(SEPARATORS)), min_size=1, max_size=20)
    )
    lead = draw(st.sampled_from(["", " ", "\n"]))
    return lead + "".join(s + sep for s, sep in parts)


chunkings = st.one_of(
    st.just((250, 50)),
    st.integers(8, 250).flatmap(
        lambda size: st.tuples(st.just(size), st.integers(0, min(50, size - 1)))
    ),
)
extends = st.one_of(st.just(300), st.integers(0, 400))


@st.composite
def case(draw: st.DrawFn) -> tuple[str, list[ChunkRecord], ChunkRecord, int]:
    doc = draw(document())
    size, overlap = draw(chunkings)
    chunks = chunk(doc, size, overlap)
    hit = draw(st.sampled_from(chunks))
    assume(content(doc, hit) is not None)
    return doc, chunks, hit, draw(extends)


# ---------------------------------------------------------------------------------------------
# Properties


# A table row that starts at the lower bound after an 80-character line: whether it starts a
# sentence depends on that line's start, which stitch did not look at (it read 64 characters
# before the bound, the line rule reads up to 200).
_LONG_LINE_THEN_ROW = "一" * 50 + "。一。一。| alpha | alpha | alpha |\n| alpha | alpha | alpha |。"


@settings(max_examples=500, deadline=None)
@given(case())
@example(
    (
        _LONG_LINE_THEN_ROW,
        chunk(_LONG_LINE_THEN_ROW, 12, 0),
        chunk(_LONG_LINE_THEN_ROW, 12, 0)[8],
        15,
    )
)
def test_with_every_chunk_the_span_is_exactly_the_rule_span(
    c: tuple[str, list[ChunkRecord], ChunkRecord, int],
) -> None:
    doc, chunks, hit, max_extend = c
    shuffled = list(chunks)
    random.Random(len(doc)).shuffle(shuffled)
    span = stitch(hit, shuffled, max_extend=max_extend)
    assert_valid(doc, hit, span, max_extend)
    assert (span.start, span.end, span.truncated_start, span.truncated_end) == expected(
        doc, hit, max_extend
    )


@settings(max_examples=500, deadline=None)
@given(case())
def test_with_the_fetched_window_the_span_is_valid(
    c: tuple[str, list[ChunkRecord], ChunkRecord, int],
) -> None:
    doc, chunks, hit, max_extend = c
    span = stitch(hit, fetched(chunks, hit, max_extend), max_extend=max_extend)
    assert_valid(doc, hit, span, max_extend)


@settings(max_examples=300, deadline=None)
@given(document(), st.data())
def test_with_250_50_chunks_the_fetched_window_is_enough(doc: str, data: st.DataObject) -> None:
    """The window the search code fetches gives the same span as the whole document."""
    chunks = chunk(doc, 250, 50)
    hit = data.draw(st.sampled_from(chunks))
    assume(content(doc, hit) is not None)
    span = stitch(hit, fetched(chunks, hit, 300))
    assert (span.start, span.end, span.truncated_start, span.truncated_end) == expected(
        doc, hit, 300
    )


@settings(max_examples=300, deadline=None)
@given(case(), st.data())
def test_a_missing_neighbour_truncates_instead_of_inventing_text(
    c: tuple[str, list[ChunkRecord], ChunkRecord, int], data: st.DataObject
) -> None:
    doc, chunks, hit, max_extend = c
    others = [x for x in fetched(chunks, hit, max_extend) if x.id != hit.id]
    assume(others)
    missing = data.draw(st.sampled_from(others))
    span = stitch(hit, [x for x in chunks if x.id != missing.id], max_extend=max_extend)
    assert_valid(doc, hit, span, max_extend)
    assert missing.id not in span.chunk_ids


@settings(max_examples=200, deadline=None)
@given(case(), document())
def test_other_documents_versions_and_duplicates_are_ignored(
    c: tuple[str, list[ChunkRecord], ChunkRecord, int], other_doc: str
) -> None:
    _, chunks, hit, max_extend = c
    clean = stitch(hit, chunks, max_extend=max_extend)
    noise = (
        chunk(other_doc, 30, 10, doc_id="other")  # another document, same offsets
        + chunk(other_doc, 40, 5, doc_id="doc", doc_hash="v0")  # an older version of this one
        + chunks  # every chunk twice
        + [hit]
    )
    assert stitch(hit, noise + chunks, max_extend=max_extend) == clean


# ---------------------------------------------------------------------------------------------
# Examples


def hit_at(chunks: Sequence[ChunkRecord], needle_doc: str, needle: str) -> ChunkRecord:
    at = needle_doc.index(needle)
    return next(c for c in chunks if c.start <= at < c.end)


def make_hit(doc: str, start: int, end: int, i: int = 0) -> ChunkRecord:
    return ChunkRecord(
        id=f"hit{i}", doc_id="doc", doc_hash="v1", chunk_index=i, start=start, end=end,
        text=doc[start:end], source="doc.txt", chunk_hash="", doc_length=len(doc),
    )  # fmt: skip


def test_extends_both_ways_in_chinese_with_quotes() -> None:
    doc = "第一句。他说：“走吧。”然后他们一起离开了。最后一句。"
    chunks = chunk(doc, 12, 4)
    hit = make_hit(doc, doc.index("吧"), doc.index("一起"))
    span = stitch(hit, chunks)
    assert span.text == "他说：“走吧。”然后他们一起离开了。"
    assert span.text == doc[span.start : span.end]
    assert not span.truncated


def test_english_quote_ends_after_the_closing_quote() -> None:
    doc = 'Start here. He said "Go." Then he left. End.'
    hit = make_hit(doc, doc.index("said"), doc.index("Go") + 2)
    span = stitch(hit, chunk(doc, 10, 3))
    assert span.text == 'He said "Go."'
    assert not span.truncated


def test_decimal_point_is_not_a_sentence_end() -> None:
    doc = "The value of pi is 3.14 and more. Next sentence."
    hit = make_hit(doc, doc.index("of"), doc.index(".14") + 1)  # ends right after "3."
    span = stitch(hit, chunk(doc, 15, 5))
    assert span.text == "The value of pi is 3.14 and more."


def test_no_extension_when_the_hit_is_already_whole_sentences() -> None:
    doc = "前一句。正好一句话。后一句。"
    hit = make_hit(doc, doc.index("正"), doc.index("后"))
    span = stitch(hit, chunk(doc, 6, 2))
    assert span.text == "正好一句话。"
    assert (span.start, span.end) == (hit.start, hit.end)


def test_seed_full_width_question_mark_ends_the_sentence() -> None:
    # The seed's list ['.', '?', '!', '。', '?', '！'] lacks ？ and kept appending chunks.
    doc = "你知道吗？我不知道这是什么意思。"
    hit = make_hit(doc, 0, doc.index("？") + 1)
    span = stitch(hit, chunk(doc, 5, 2))
    assert span.text == "你知道吗？"
    assert not span.truncated


def test_forward_only_and_backward_only() -> None:
    doc = "Alpha sentence one. Beta sentence two. Gamma three."
    at_start = make_hit(doc, doc.index("Beta"), doc.index("two"))
    assert stitch(at_start, chunk(doc)).text == "Beta sentence two."
    at_end = make_hit(doc, doc.index("sentence two"), doc.index("Gamma"))
    assert stitch(at_end, chunk(doc)).text == "Beta sentence two."


def test_document_start_and_end_need_no_terminator() -> None:
    doc = "  标题没有句号\n正文也没有结尾"
    whole = chunk(doc, 6, 2)
    first = stitch(whole[0], whole)
    assert first.text == "标题没有句号" and not first.truncated
    last = stitch(whole[-1], whole)
    assert last.text == "正文也没有结尾" and not last.truncated


def test_table_without_terminators_is_truncated_at_the_bound() -> None:
    row = "| 名称 | 数值 | 说明 |"
    doc = "表格如下" + "".join(f"{row}" for _ in range(40)) + "。"
    chunks = chunk(doc, 50, 10)
    hit = chunks[len(chunks) // 2]
    span = stitch(hit, chunks, max_extend=30)
    assert span.truncated_start and span.truncated_end
    assert hit.start - 30 <= span.start and span.end <= hit.end + 30
    assert span.text == doc[span.start : span.end]
    # The cut is on a word boundary: next to whitespace, not inside 名称.
    assert doc[span.start - 1].isspace() and doc[span.end].isspace()


def test_long_sentence_falls_back_to_clause_punctuation() -> None:
    doc = "开头。" + "很长的从句，" * 30 + "结尾。"
    hit = make_hit(doc, 60, 80)
    span = stitch(hit, chunk(doc, 25, 5), max_extend=20)
    assert span.truncated_start and span.truncated_end
    assert doc[span.start - 1] == "，" and span.text.endswith("，")


def test_a_gap_stops_the_text_and_truncates_that_side() -> None:
    doc = "A first sentence that is long enough. " * 6
    chunks = chunk(doc, 40, 10)
    hit = chunks[3]
    without = [c for c in chunks if c.id != chunks[4].id and c.id != chunks[2].id]
    span = stitch(hit, without, max_extend=200)
    assert span.text == doc[span.start : span.end]
    assert span.truncated_start and span.truncated_end
    assert span.chunk_ids == (hit.id,)


def test_hit_starting_with_a_closer_belongs_to_the_previous_sentence() -> None:
    doc = "他说：“走吧。”然后他们走了。"
    hit = make_hit(doc, doc.index("”"), len(doc))
    assert stitch(hit, chunk(doc, 5, 1)).text == doc


def test_chunk_ids_only_list_contributing_chunks() -> None:
    doc = "一二三四五六七八九十。" * 10
    chunks = chunk(doc, 20, 5)
    hit = chunks[2]
    span = stitch(hit, chunks, max_extend=0)
    assert span.chunk_ids[0] != chunks[0].id
    assert hit.id in span.chunk_ids


def test_negative_bound_is_refused() -> None:
    doc = "abc."
    with pytest.raises(UsageError):
        stitch(make_hit(doc, 0, 4), [], max_extend=-1)


def test_window() -> None:
    doc = "x" * 1000
    hit = make_hit(doc, 100, 350)
    assert window(hit, 300) == (0, 650)
    assert window(make_hit(doc, 800, 1000), 300) == (500, 1000)
    unknown_length = ChunkRecord(
        id="a", doc_id="d", doc_hash="h", chunk_index=0, start=10, end=20, text="y" * 10,
        source="", chunk_hash="",
    )  # fmt: skip
    assert window(unknown_length, 5) == (5, 25)
    assert window(hit, 50) == (50, 400)


def test_hit_whose_text_contradicts_its_offsets_is_returned_as_is() -> None:
    broken = ChunkRecord(
        id="b", doc_id="d", doc_hash="h", chunk_index=0, start=0, end=99, text="short",
        source="", chunk_hash="", doc_length=99,
    )  # fmt: skip
    span = stitch(broken, [])
    assert span.text == "short" and span.truncated


# ---------------------------------------------------------------------------------------------
# Merging


def scored(span: Span, score: float, payload: str) -> Scored[str]:
    return Scored(span=span, score=score, payload=payload)


def test_merge_chain_becomes_one() -> None:
    doc = "甲句。乙句。丙句。丁句。"
    chunks = chunk(doc, 3, 0)
    spans = [stitch(c, chunks) for c in chunks[:3]]
    assert [s.text for s in spans] == ["甲句。", "乙句。", "丙句。"]
    merged = merge(
        [scored(spans[2], 0.9, "c"), scored(spans[0], 0.5, "a"), scored(spans[1], 0.7, "b")]
    )
    assert len(merged) == 1
    m = merged[0]
    assert m.span.text == "甲句。乙句。丙句。" and (m.span.start, m.span.end) == (0, 9)
    assert m.score == 0.9 and m.payloads == ("c", "b", "a") and m.scores == (0.9, 0.7, 0.5)
    assert m.span.hit_ids == tuple(c.id for c in chunks[:3])


def test_merge_keeps_separate_documents_and_gaps_apart_in_score_order() -> None:
    doc = "甲句。乙句。丙句。"
    chunks = chunk(doc, 3, 0)
    other = chunk(doc, 3, 0, doc_id="other")
    a, c = stitch(chunks[0], chunks), stitch(chunks[2], chunks)
    o = stitch(other[0], other)
    merged = merge([scored(a, 0.2, "a"), scored(c, 0.8, "c"), scored(o, 0.5, "o")])
    assert [m.payloads for m in merged] == [("c",), ("o",), ("a",)]


def test_merge_truncation_follows_the_outermost_span() -> None:
    def span(start: int, end: int, ts: bool, te: bool, name: str) -> Span:
        text = "x" * (end - start)
        return Span("d", "h", start, end, text, (name,), ((start, end),), (name,), ((start, end),),
                    ts, te)  # fmt: skip

    inner_cut = span(5, 10, True, True, "inner")
    outer = span(0, 20, False, False, "outer")
    (m,) = merge([scored(inner_cut, 1.0, "i"), scored(outer, 0.5, "o")])
    assert not m.span.truncated
    (m,) = merge(
        [
            scored(span(0, 10, True, False, "a"), 1, "a"),
            scored(span(0, 12, False, True, "b"), 1, "b"),
        ]
    )
    assert not m.span.truncated_start and m.span.truncated_end


@settings(max_examples=300, deadline=None)
@given(st.lists(document(), min_size=1, max_size=3), st.data())
def test_merge_properties(docs: list[str], data: st.DataObject) -> None:
    by_doc: dict[str, str] = {}
    inputs: list[Scored[str]] = []
    for d, doc in enumerate(docs):
        doc_id = f"d{d}"
        by_doc[doc_id] = doc
        size, overlap = data.draw(chunkings)
        chunks = chunk(doc, size, overlap, doc_id=doc_id)
        picks = data.draw(
            st.lists(st.sampled_from(chunks), min_size=1, max_size=8, unique_by=lambda c: c.id)
        )
        max_extend = data.draw(extends)
        for hit in picks:
            score = data.draw(st.floats(0, 1))
            inputs.append(scored(stitch(hit, chunks, max_extend=max_extend), score, hit.id))
    merged = merge(inputs)

    # Best first, every hit exactly once, payload bookkeeping intact.
    assert [m.score for m in merged] == sorted((m.score for m in merged), reverse=True)
    all_hits = [h for m in merged for h in m.span.hit_ids]
    assert sorted(all_hits) == sorted(i.span.hit_ids[0] for i in inputs)
    assert sorted(p for m in merged for p in m.payloads) == sorted(i.payload for i in inputs)
    for m in merged:
        assert m.score == max(m.scores) == m.scores[0]
        assert list(m.scores) == sorted(m.scores, reverse=True)
        doc = by_doc[m.span.doc_id]
        assert m.span.text == doc[m.span.start : m.span.end]
        assert list(m.span.hit_spans) == sorted(m.span.hit_spans)
        assert list(m.span.chunk_spans) == sorted(m.span.chunk_spans)
        members = [i.span for i in inputs if i.payload in m.payloads]
        # The range is the union of the members' ranges, with no hole.
        assert m.span.start == min(s.start for s in members)
        assert m.span.end == max(s.end for s in members)
        reach = m.span.start
        for s in sorted(members, key=lambda s: s.start):
            assert s.start <= reach
            reach = max(reach, s.end)
        assert {c for s in members for c in s.chunk_ids} == set(m.span.chunk_ids)
        assert m.span.truncated_start == all(
            s.truncated_start for s in members if s.start == m.span.start
        )
        assert m.span.truncated_end == all(s.truncated_end for s in members if s.end == m.span.end)
    # No two results of the same document overlap or touch.
    for i, a in enumerate(merged):
        for b in merged[i + 1 :]:
            if a.span.doc_id == b.span.doc_id:
                assert a.span.end < b.span.start or b.span.end < a.span.start


def test_merged_type_is_generic_over_payloads() -> None:
    doc = "一句。"
    chunks = chunk(doc)
    result: list[Merged[int]] = merge([Scored(stitch(chunks[0], chunks), 1.0, 42)])
    assert result[0].payloads == (42,)


def test_without_neighbours_the_hit_is_cut_inside_itself() -> None:
    doc = "前文很长很长。中间的句子在这里，还有更多内容。后文"
    hit = make_hit(doc, doc.index("中间"), doc.index("更多"))
    span = stitch(hit, [])
    # Nothing before or after the hit is known, so neither side can be confirmed.
    assert span.truncated_start and span.truncated_end
    assert (span.start, span.end) == (hit.start, hit.end)
    assert span.chunk_ids == (hit.id,)


def test_whitespace_only_hit_comes_back_unchanged() -> None:
    doc = "第一句。\n\n\n\n第二句。"
    hit = make_hit(doc, 4, 8)
    span = stitch(hit, chunk(doc, 4, 1))
    assert (span.start, span.end, span.text) == (4, 8, "\n\n\n\n")


def test_a_heading_hit_carries_on_into_the_sentence_below() -> None:
    doc = "# Lyon\n\n## Food\n\nBouchons serve tripe and sausages at long tables. Book ahead."
    chunks = chunk(doc, 20, 5)
    hit = make_hit(doc, doc.index("## Food"), doc.index("## Food") + len("## Food\n\n"))
    assert stitch(hit, chunks).text == "## Food"  # the plain rule: a line is a sentence
    span = stitch(hit, chunks, carry_headings=True)
    assert span.text == "## Food\n\nBouchons serve tripe and sausages at long tables."
    assert span.text == doc[span.start : span.end] and not span.truncated


def test_heading_carry_stops_at_the_bound_and_never_for_sentences() -> None:
    doc = "茶树栽培入门\n\n" + "茶" * 400 + "。"
    hit = make_hit(doc, 0, 6)
    span = stitch(hit, chunk(doc, 250, 50), max_extend=50, carry_headings=True)
    assert span.text == "茶树栽培入门"  # no sentence end within reach: the heading stays alone
    doc2 = "A whole sentence.\n\nNext one."
    span2 = stitch(make_hit(doc2, 0, 17), chunk(doc2, 250, 50), carry_headings=True)
    assert span2.text == "A whole sentence."


# ---------------------------------------------------------------------------------------------
# Wrapped text: a sentence across a line break and a chunk boundary comes back whole

WRAPPED = {
    "plain": (
        "Lighthouse keepers kept a log.\n\n"
        "The keeper logged every passing ship in a ledger bound with\n"
        "green cloth, and the entries ran for forty years without a gap. The\n"
        "ledger is now in the museum.\n"
    ),
    "man": (
        "DESCRIPTION\n"
        "       The keeper logged every passing ship in a ledger bound with\n"
        "       green cloth, and the entries ran for forty years without a gap.\n"
        "       The ledger is now in the museum.\n"
    ),
    "chinese": (
        "灯塔的故事。\n"
        "守塔人把每一艘经过的船都记在一本用绿色布面装订的账簿里，这些记录\n"
        "持续了整整四十年，中间没有一天间断。账簿现在保存在博物馆里。\n"
    ),
}
WHOLE = {
    "plain": "The keeper logged every passing ship in a ledger bound with\n"
    "green cloth, and the entries ran for forty years without a gap.",
    "man": "The keeper logged every passing ship in a ledger bound with\n"
    "       green cloth, and the entries ran for forty years without a gap.",
    "chinese": "守塔人把每一艘经过的船都记在一本用绿色布面装订的账簿里，这些记录\n"
    "持续了整整四十年，中间没有一天间断。",
}


@pytest.mark.parametrize("layout", sorted(WRAPPED))
@pytest.mark.parametrize("half", ["first", "second"])
def test_a_wrapped_sentence_cut_by_a_chunk_boundary_comes_back_whole(
    layout: str, half: str
) -> None:
    doc = WRAPPED[layout]
    whole = WHOLE[layout]
    start = doc.index(whole)
    cut = doc.index("\n", start) + 1  # a chunk boundary at the line break inside the sentence
    end = start + len(whole)
    bounds = [0, start, cut, end, len(doc)]
    chunks = [make_hit(doc, a, b, i) for i, (a, b) in enumerate(itertools.pairwise(bounds))]
    hit = chunks[1] if half == "first" else chunks[2]
    span = stitch(hit, chunks)
    assert span.text == whole
    assert span.text == doc[span.start : span.end] and not span.truncated


@pytest.mark.parametrize(
    ("doc", "needle", "expected"),
    [
        ("- first item of a list that is long enough\n- second item", "second", "- second item"),
        (
            "| col one | col two |\n| value one | value two |",
            "value one",
            "| value one | value two |",
        ),
        (
            "Build it with the commands below:\n    make all\n    make install",
            "install",
            "make install",
        ),
        ("# Heading of the section\nthe text below it", "text", "the text below it"),
    ],
)
def test_structure_still_ends_at_line_breaks(doc: str, needle: str, expected: str) -> None:
    at = doc.index(needle)
    span = stitch(make_hit(doc, at, at + len(needle)), chunk(doc, 250, 50))
    assert span.text == expected and not span.truncated


def test_a_passage_line_is_where_the_passage_starts() -> None:
    from stitcher.stitch import _passage_metadata

    text = "zero\none\ntwo. Three\nfour\nfive\n"
    hit_start = text.index("Three")
    record = dataclasses.replace(make_hit(text, hit_start, len(text)), metadata={"line": 3})
    # The passage reaches back before the hit chunk ...
    assert _passage_metadata(record, 0, text)["line"] == 1
    assert _passage_metadata(record, text.index("one"), text[text.index("one") :])["line"] == 2
    # ... or starts inside it.
    assert _passage_metadata(record, text.index("four"), "four\nfive\n")["line"] == 4
    assert "line" not in _passage_metadata(make_hit(text, 0, 4), 0, text)
