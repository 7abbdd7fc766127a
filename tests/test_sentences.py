"""Sentence boundary rules: examples for the nasty cases and an independent reference checked
against the module on random Chinese / English documents."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stitcher.sentences import (
    ABBREVIATIONS,
    CJK_TERMINATORS,
    CLAUSE_PUNCTUATION,
    CLOSERS,
    ELLIPSES,
    FIRST_LINE_INDENT,
    LATIN_TERMINATORS,
    LINE_LOOKBACK,
    NEXT_LINE_LOOKAHEAD,
    SHORT_LINE,
    is_sentence_end,
    is_sentence_start,
    next_non_space,
    sentence_end_at_or_after,
    sentence_ends,
    sentence_start_at_or_before,
    split_sentences,
    weak_end_at_or_before,
    weak_start_at_or_after,
)


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


# ---------------------------------------------------------------------------------------------
# Examples


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("他说：“走吧。”然后他们走了。", ["他说：“走吧。”", "然后他们走了。"]),
        ('He said "Go." Then he left.', ['He said "Go."', "Then he left."]),
        ("Pi is 3.14 roughly. Yes", ["Pi is 3.14 roughly.", "Yes"]),
        ("See www.a.com or e.g.x now. Done", ["See www.a.com or e.g.x now.", "Done"]),
        ("Dr. Smith came, e.g. today. He left.", ["Dr. Smith came, e.g. today.", "He left."]),
        ("你知道吗？我不知道。", ["你知道吗？", "我不知道。"]),  # the seed's missing full-width ？
        ("真的吗？！是的……好吧", ["真的吗？！", "是的……", "好吧"]),
        # Full-width ． between digits is a decimal point, not a terminator.
        ("价格是３．５元。下一句", ["价格是３．５元。", "下一句"]),
        ("好!然后呢?走", ["好!", "然后呢?", "走"]),
        ("版本1.0版发布了", ["版本1.0版发布了"]),
        ("第一段\n\n第二段  \n第三行", ["第一段", "第二段", "第三行"]),
        ("1. 将拆分的文本加长\n2. 从库中查询", ["1. 将拆分的文本加长", "2. 从库中查询"]),
        ("| a | b |\n| c | d |", ["| a | b |", "| c | d |"]),
        ("「好。」他说。", ["「好。」", "他说。"]),
        ("Really?! Yes.) No", ["Really?!", "Yes.)", "No"]),
        ("  leading and trailing  ", ["leading and trailing"]),
        ("", []),
    ],
)
def test_split_examples(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_sets_are_exported_and_disjoint_where_it_matters() -> None:
    assert "？" in CJK_TERMINATORS and "．" not in CJK_TERMINATORS + LATIN_TERMINATORS
    assert "…" in ELLIPSES
    assert "”" in CLOSERS and "“" not in CLOSERS
    assert "，" in CLAUSE_PUNCTUATION and "。" not in CLAUSE_PUNCTUATION
    assert "dr" in ABBREVIATIONS


def test_end_at_or_after_finds_nearest_and_respects_bound() -> None:
    text = "前半句，后半句。下一句。"
    assert sentence_end_at_or_after(text, 2) == 8
    assert sentence_end_at_or_after(text, 8) == 8
    assert sentence_end_at_or_after(text, 9) is None  # the window may not end the document
    assert sentence_end_at_or_after(text, 9, at_doc_end=True) == 12
    assert sentence_end_at_or_after(text, 2, 7) is None


def test_full_width_stop_ends_a_sentence_except_between_digits() -> None:
    text = "选项无效．请重试。版本３．５已经发布．"
    ends = sentence_ends(text, at_doc_start=True, at_doc_end=True)
    assert 5 in ends and 9 in ends and 12 not in ends and len(text) in ends
    assert not is_sentence_end("３．", 2)  # what follows is not visible: maybe a digit
    assert is_sentence_end("３．", 2, at_doc_end=True)


def test_end_inside_a_closer_run_is_the_run_end() -> None:
    text = "他说：“走吧。”然后"
    # Position 7 is between 。 and ”: text[:7] does not end a sentence, text[:8] does.
    assert not is_sentence_end(text, 7)
    assert is_sentence_end(text, 8)
    assert sentence_end_at_or_after(text, 7) == 8


def test_start_at_or_before() -> None:
    text = "First one. Second one. Third"
    assert sentence_start_at_or_before(text, 15, at_doc_start=True) == 11
    assert sentence_start_at_or_before(text, 11) == 11
    assert sentence_start_at_or_before(text, 5, at_doc_start=True) == 0
    assert sentence_start_at_or_before(text, 5) is None  # the window may start mid-sentence
    assert sentence_start_at_or_before(text, 15, 12) is None  # start 11 is below the bound
    assert is_sentence_start(text, 23) and not is_sentence_start(text, 24)


def test_window_edges_are_not_taken_as_boundaries() -> None:
    # A window that ends right after 。 cannot know whether a closing quote follows.
    assert sentence_end_at_or_after("他说：“走吧。", 3) is None
    assert sentence_end_at_or_after("他说：“走吧。", 3, at_doc_end=True) == 7
    # A window that starts right after "e." of "e.g. x" must not see "g." as a sentence end.
    assert not is_sentence_end("g. x", 2)
    assert is_sentence_end("go. x", 3, at_doc_start=True)
    # The list number test needs the line start.
    assert not is_sentence_end("1. x", 2)
    assert not is_sentence_end("1. x", 2, at_doc_start=True)
    assert is_sentence_end("We won 1. x", 9, at_doc_start=True)


def test_weak_boundaries() -> None:
    text = "一个很长的句子，没有句号；继续写 more words here"
    assert weak_start_at_or_after(text, 0, 20) == 8  # after the first ，
    assert weak_end_at_or_before(text, 2, 30) == 13  # after the last ；
    words = "alpha beta gamma delta"
    assert weak_start_at_or_after(words, 2, 15) == 6  # a word start, never mid-word
    assert weak_end_at_or_before(words, 7, 19) == 16  # the space after "gamma"
    assert weak_end_at_or_before("1,000,000", 1, 8) is None  # Latin commas need a space
    assert weak_start_at_or_after("nospaceshere", 2, 8) is None


# ---------------------------------------------------------------------------------------------
# An independent reference, written as whole-document regular expressions


_RUN = re.escape(CJK_TERMINATORS + "．" + ELLIPSES + LATIN_TERMINATORS)
_CL = re.escape(CLOSERS)
_PREV_NOT_RUN = f"(?<![{_RUN}])"
_REF_CJK = re.compile(f"[{re.escape(CJK_TERMINATORS + ELLIPSES)}][{_RUN}]*[{_CL}]*")
# "．" starts a terminator run unless it is a decimal point (a digit on both sides) or inside a
# run that a Chinese terminator began (checked with the spans below). A Latin run does not take
# it in ("．" is no Latin terminator), so ".．一" ends after "．", as ".。一" ends after "。".
_REF_STOP = re.compile(f"(?<!\\d)．[{_RUN}]*[{_CL}]*|．(?!\\d)[{_RUN}]*[{_CL}]*")
_REF_LATIN_SPACE = re.compile(_PREV_NOT_RUN + f"[.!?]+[{_CL}]*(?=\\s)")
_REF_LATIN_HAN = re.compile(_PREV_NOT_RUN + f"[.!?]*[!?][.!?]*[{_CL}]*(?=[\u4e00-\u9fff])")
_REF_ENUM = re.compile(r"[^\S\n]{0,4}(?:\d{1,3}(?:\.\d{1,3}){0,2}|[A-Za-z])")


def reference_ends(doc: str) -> list[int]:
    ends: set[int] = set()
    cjk_spans = []
    for m in _REF_CJK.finditer(doc):
        ends.add(m.end())
        cjk_spans.append((m.start(), m.end()))
    for m in _REF_STOP.finditer(doc):
        if not any(a <= m.start() < b for a, b in cjk_spans):
            ends.add(m.end())
            cjk_spans.append((m.start(), m.end()))

    def inside_cjk_run(i: int) -> bool:
        return any(a <= i < b for a, b in cjk_spans)

    for m in _REF_LATIN_SPACE.finditer(doc):
        if inside_cjk_run(m.start()):
            continue
        if m.group() == ".":
            word = re.search(r"[A-Za-z.]*\Z", doc[: m.start()])
            assert word is not None
            before = doc[word.start() - 1] if word.start() > 0 else ""
            glued = before.isascii() and before.isalnum()
            if word.group().lower() in ABBREVIATIONS and not glued:
                continue
            line = doc[doc.rfind("\n", 0, m.start()) + 1 : m.start()]
            if _REF_ENUM.fullmatch(line):
                continue
        ends.add(m.end())
    for m in _REF_LATIN_HAN.finditer(doc):
        if not inside_cjk_run(m.start()):
            ends.add(m.end())
    for m in re.finditer(r"[^\S\n]*\n", doc):
        visible = m.start() > 0 and not doc[m.start() - 1].isspace()
        if visible and reference_break_is_hard(doc, m.start(), m.end() - 1):
            ends.add(m.start())
    ends.add(len(doc.rstrip()))
    ends.add(len(doc))
    return sorted(ends)


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def indent_columns(indent: str) -> int:
    return len(indent.expandtabs(8).replace("\u3000", "  "))


_REF_MARKER = re.compile(r"(?:[-*+•·‣▪◦]|\d{1,3}(?:\.\d{1,3})*[.)]|[A-Za-z][.)])[ \t]+")
_REF_STRUCTURE = re.compile(
    r"[-*+•·‣▪◦][ \t]|--?[A-Za-z]|\d{1,3}(?:\.\d{1,3})*[.)](?:\s|$)|[A-Za-z][.)][ \t]"
    r"|[一二三四五六七八九十百]+、|[(（][一二三四五六七八九十\d]{1,3}[)）]|[#>|{}=]|<[A-Za-z!/]"
    r"|```|~~~|[-_*]{3,}|\$[ \t]"
)


def is_table_like(text: str) -> bool:
    gaps = re.findall(r"(?<=\S)( {3,})(?=\S)", text)
    return "|" in text or "\t" in text or any(len(g) >= 4 for g in gaps) or len(gaps) >= 2


def reference_break_is_hard(doc: str, q: int, nl: int) -> bool:
    """The soft line break rule, written over whole lines of the whole document."""
    following = doc[nl + 1 :].split("\n", 1)
    next_line = following[0]
    indent_after = next_line[: len(next_line) - len(next_line.lstrip())]
    if not next_line.strip():
        return True  # blank line, or the document's end
    line_start = doc.rfind("\n", 0, q) + 1
    line = doc[line_start:q]
    known = len(line) <= LINE_LOOKBACK
    hanging = None
    if known:
        body = line.lstrip()
        indent_before = indent_columns(line[: len(line) - len(body)])
        if columns(body) < SHORT_LINE or re.match(r"#{1,6}(\s|$)", body):
            return True
        marker = _REF_MARKER.match(body)
        if marker:
            hanging = indent_before + len(marker.group().expandtabs(8))
    else:
        body = line[-LINE_LOOKBACK:]
    if is_table_like(body) or body.endswith((":", "：", "{", "}", "\\")):
        return True
    if body.endswith(";") and re.search(r"[(=]", body):
        return True
    head = next_line.lstrip()[:NEXT_LINE_LOOKAHEAD]
    if _REF_STRUCTURE.match(head) or is_table_like(head):
        return True
    after = indent_columns(indent_after)
    if known:
        deeper = after > indent_before and after != hanging
        if deeper or indent_before - after > FIRST_LINE_INDENT:
            return True
    elif after:
        return True
    word = head.lstrip("\"'“‘「『（《【〔([{«")
    if not word:
        return True
    if "\u4e00" <= word[0] <= "\u9fff":
        return not re.search("[\u4e00-\u9fff]", body)
    if word[0].isupper():
        return bool(re.search("[A-Z]{2}", head)) and head == head.upper() and body != body.upper()
    return False


def reference_starts(doc: str) -> list[int]:
    starts = {0, next_non_space(doc, 0)}
    for q in reference_ends(doc):
        p = next_non_space(doc, q)
        if p < len(doc):
            starts.add(p)
    return sorted(s for s in starts if s < len(doc) or s == 0)


HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工"
WORDS = ["alpha", "beta", "Dr", "e.g.", "3.14", "www.a.com", "version", "1,000", "a:b", "x"]

pieces = st.one_of(
    st.text(alphabet=HAN, min_size=1, max_size=12),
    st.sampled_from(WORDS),
    st.sampled_from(
        ["。", "！", "？", "？！", "……", "…", ".", "!", "?", "...", "?!", "．", "，", "；", ", "]
    ),
    st.sampled_from(["”", "」", "』", "）", '"', "'", ")", "“", "「", "("]),
    st.sampled_from([" ", "  ", "\n", "\n\n", " \n", "\n  \n", "\t", "\n1. ", "\na. ", "\n  2. "]),
    st.sampled_from(["Mr", "i.e.", "No", "etc", "1", "12", "A"]),
    # Soft line breaks: prose long enough to be a wrapped line, and what makes a break hard.
    st.sampled_from(
        ["the quick brown fox jumps over", "而且茶树的根系很深很深", "and then", "GNU"]
    ),
    st.sampled_from(
        ["\n    ", "\n- ", "\n# ", " | ", ":", "\u3000\u3000", "\n\t", "{", ";", "x=1"]
    ),
    st.builds(
        "".join,
        st.tuples(
            st.sampled_from(["", "  ", "- ", "\u3000\u3000", "\t", "1. "]),
            st.sampled_from(
                [
                    "the quick brown fox jumps over the lazy dog",
                    "茶树喜欢温暖湿润的气候土壤要偏酸性种植",
                ]
            ),
            st.sampled_from(["", " and", ",", "-", " (see", "e.g."]),
            st.sampled_from(["\n", " \n", "\n  ", "\n\u3000\u3000", "\n    "]),
            st.sampled_from(["then", "Then", "THEN IT", "时要", "(and", "— so", "3 more", "1. x"]),
        ),
    ),
)
documents = st.lists(pieces, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(documents)
@example(".．一")  # "．" after a Latin "." starts its own run (it was the reference that was wrong)
@example("the quick brown fox jumps over the lazy dog\n\u3000\u30001. x")  # an indented list number
@example("一\u3000\u3000\n- ")  # trailing ideographic spaces are whitespace before a break
def test_ends_match_the_reference(doc: str) -> None:
    assert sentence_ends(doc, at_doc_start=True, at_doc_end=True) == reference_ends(doc)


@settings(max_examples=300, deadline=None)
@given(documents, st.data())
def test_nearest_end_and_start_match_the_reference(doc: str, data: st.DataObject) -> None:
    n = len(doc)
    pos = data.draw(st.integers(0, n))
    hi = data.draw(st.integers(pos, n))
    lo = data.draw(st.integers(0, pos))
    ends = [q for q in reference_ends(doc) if pos <= q <= hi]
    got_end = sentence_end_at_or_after(doc, pos, hi, at_doc_start=True, at_doc_end=True)
    assert got_end == (ends[0] if ends else None)
    starts = [p for p in reference_starts(doc) if lo <= p <= pos]
    got_start = sentence_start_at_or_before(doc, pos, lo, at_doc_start=True, at_doc_end=True)
    assert got_start == (starts[-1] if starts else None)


@settings(max_examples=300, deadline=None)
@given(documents, st.data())
def test_a_window_never_invents_a_boundary(doc: str, data: st.DataObject) -> None:
    """Looking at a piece of the document may miss boundaries near its edges, never add one."""
    a = data.draw(st.integers(0, len(doc)))
    b = data.draw(st.integers(a, len(doc)))
    piece = doc[a:b]
    flags = {"at_doc_start": a == 0, "at_doc_end": b == len(doc)}
    true_ends = set(reference_ends(doc))
    for q in sentence_ends(piece, **flags):
        assert a + q in true_ends
    true_starts = set(reference_starts(doc))
    for p in range(len(piece)):
        if is_sentence_start(piece, p, **flags):
            assert a + p in true_starts


@settings(max_examples=200, deadline=None)
@given(documents)
def test_split_covers_every_visible_character_once(doc: str) -> None:
    pairs = split_sentences(doc)
    covered = [False] * len(doc)
    for a, b in pairs:
        assert a < b and not doc[a].isspace() and not doc[b - 1].isspace()
        for i in range(a, b):
            assert not covered[i]
            covered[i] = True
    for i, ch in enumerate(doc):
        assert covered[i] or ch.isspace()
