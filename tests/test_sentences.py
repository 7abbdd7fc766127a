"""Sentence boundary rules: examples for the nasty cases and an independent reference checked
against the module on random Chinese / English documents."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stitcher.loaders.formats import read_plain
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

GOLDEN = Path(__file__).parent / "golden_forms"


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
        # An ellipsis right before a Latin word is an "and so on", not an end.
        ("在 Red Hat/SuSE/……Linux 上运行。好……OK", ["在 Red Hat/SuSE/……Linux 上运行。", "好……OK"]),
        ("等等……然后 Then… Done", ["等等……", "然后 Then…", "Done"]),
        # "etc." before a lower-case word ends the list, not the sentence.
        (
            "Stack, heap, etc. is used. Tea etc. Then",
            ["Stack, heap, etc. is used.", "Tea etc.", "Then"],
        ),
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
        cjk_spans.append((m.start(), m.end()))
        following = doc[m.end() : m.end() + 1]
        if set(m.group()) <= set(ELLIPSES) and following.isascii() and following.isalnum():
            continue  # "Slackware/……Linux": an "and so on" inside the sentence
        ends.add(m.end())
    for m in _REF_STOP.finditer(doc):
        if not any(a <= m.start() < b for a, b in cjk_spans):
            ends.add(m.end())
            cjk_spans.append((m.start(), m.end()))

    def inside_cjk_run(i: int) -> bool:
        return any(a <= i < b for a, b in cjk_spans)

    for m in _REF_LATIN_SPACE.finditer(doc):
        if inside_cjk_run(m.start()):
            continue
        closed = any(c in CLOSERS for c in m.group())
        if closed and re.match(r"[ \t]+[a-z]", doc[m.end() :]):
            continue  # a quoted "...?" inside a sentence that reads on in lower case
        if m.group() == ".":
            word = re.search(r"[A-Za-z.]*\Z", doc[: m.start()])
            assert word is not None
            before = doc[word.start() - 1] if word.start() > 0 else ""
            glued = before.isascii() and before.isalnum()
            if word.group().lower() in ABBREVIATIONS and not glued:
                continue
            etc = doc[max(0, m.start() - 4) : m.start()]
            reads_on = re.match(r"[ \t]+[a-z]", doc[m.end() :])
            if reads_on and re.fullmatch(r"(?:^|[^A-Za-z0-9])etc", etc, re.IGNORECASE):
                continue  # "etc. is used": the list ends, the sentence reads on
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
    return len(indent.replace("\u3000", "  ").expandtabs(8))


_REF_MARKER = re.compile(
    r"(?:[-*+•·‣▪◦]|\d{1,3}(?:\.\d{1,3})*[.)]|[A-Za-z][.)]|\([A-Za-z\d]{1,3}\))[ \t]+"
)
_REF_STRUCTURE = re.compile(
    r"[-*+•·‣▪◦][ \t]|--?[A-Za-z]|\d{1,3}(?:\.\d{1,3})*[.)](?:\s|$)|[A-Za-z][.)][ \t]"
    r"|[一二三四五六七八九十百]+、|[(（][一二三四五六七八九十\d]{1,3}[)）]|[#>|{}=]|<(?!https?:|ftp:|mailto:)[A-Za-z!/]"
    r"|```|~~~|[-_*]{3,}|\$[ \t]"
)


def is_table_like(text: str, column: int) -> bool:
    """Table-like text starting at `column`: tabs are the spaces up to their 8-column stop."""
    text = (" " * column + text).expandtabs(8)[column:]
    gaps = re.findall(r"(?<=\S)( {3,})(?=\S)", text)
    return "|" in text or any(len(g) >= 4 for g in gaps) or len(gaps) >= 2


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
    in_list = False
    tag_column = None
    indent_before = 0
    if known:
        body = line.lstrip()
        indent_before = indent_columns(line[: len(line) - len(body)])
        if columns(body) < SHORT_LINE or re.match(r"#{1,6}(\s|$)", body):
            return True
        in_list = _REF_MARKER.match(body) is not None
        tag = re.match(r"[^\s.!?:;,。！？：；，]{1,24}[ \t]+(?=\S)", body)
        tag_column = indent_before + columns(tag.group()) if tag else None
    else:
        body = line[-LINE_LOOKBACK:]
    if is_table_like(body, indent_before) or body.endswith((":", "：", "{", "}", "\\")):
        return True
    if body.endswith(";") and re.search(r"\w\(.*\)|\S\s*=\s*\w", body[:-1]):
        return True  # code: a call or an assignment
    head = next_line.lstrip()[:NEXT_LINE_LOOKAHEAD]
    after = indent_columns(indent_after)
    if _REF_STRUCTURE.match(head) or is_table_like(head, after):
        return True
    if known:
        # One column deeper is a stray space; a list item or a tag paragraph hangs its lines.
        deeper = after > indent_before + 1 and not in_list and after != tag_column
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
        if body[-1] in ",;-，；、":
            return False
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
            st.sampled_from(["\n", " \n", "\n  ", "\n\u3000\u3000", "\n    ", "\n "]),
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
@example("\u3000\u3000\tthe quick brown fox jumps over the lazy dog\nthen")  # tab stops
@example("the the the the the the the the the the the (see cloth; x=1;\nthen")
@example("．3.14")  # nothing before the "．" at the document's start: no decimal point
@example("See “What is a preinst?” for more. Then (a script?”) script.")  # quoted, reads on
@example("He asked “Why?” Then left.")  # a capital after the quote: an end
@example("的……alpha。etc. the etc.\nthe")  # ellipsis before Latin; "etc." reads on or not
@example("the quick brown fox jumps over the lazy dog and\n then")  # one column deeper
@example("the quick brown fox jumps over the lazy dog\nthen\t")  # a tab is its spaces, no gap
@example("the quick brown fox jumps over the lazy dog.  If\t n  is\nthen")  # col -b's gap
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


# ---------------------------------------------------------------------------------------------
# Soft line breaks: a wrapped sentence goes on across a single line break, structure does not

MAN_PARAGRAPH = (
    "DESCRIPTION\n"
    "       List information about the FILEs (the current directory by default).\n"
    "       Sort entries alphabetically if none of the options is specified, and\n"
    "       print them in columns.\n"
    "\n"
    "       -a, --all\n"
    "              do not ignore entries starting with a dot\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # plain hard wrap
            "The keeper logged every passing ship in a ledger bound with\n"
            "green cloth, and the entries ran for forty years. Then he left.",
            [
                "The keeper logged every passing ship in a ledger bound with\n"
                "green cloth, and the entries ran for forty years.",
                "Then he left.",
            ],
        ),
        (  # man page: heading, uniformly indented body, option tag with its description
            MAN_PARAGRAPH,
            [
                "DESCRIPTION",
                "List information about the FILEs (the current directory by default).",
                "Sort entries alphabetically if none of the options is specified, and\n"
                "       print them in columns.",
                "-a, --all",
                "do not ignore entries starting with a dot",
            ],
        ),
        (  # first-line indent, then the margin (GNU licences)
            "  For example, if you distribute copies of such a program, whether\n"
            "gratis or for a fee, you must pass on the same freedoms.",
            [
                "For example, if you distribute copies of such a program, whether\n"
                "gratis or for a fee, you must pass on the same freedoms."
            ],
        ),
        (  # a list item with a hanging indent, then the next item
            "- Each item of this list is long enough to be wrapped by the editor\n"
            "  at the margin like this\n"
            "- the next item starts here",
            [
                "- Each item of this list is long enough to be wrapped by the editor\n"
                "  at the margin like this",
                "- the next item starts here",
            ],
        ),
        (  # Chinese lines wrapped without a space, with a two-ideographic-space indent
            "\u3000\u3000茶树喜欢温暖湿润的气候，土壤要偏酸性，种植的时候要注意排水\n"
            "和通风，否则根系容易腐烂。第二句。",
            [
                "茶树喜欢温暖湿润的气候，土壤要偏酸性，种植的时候要注意排水\n和通风，否则根系容易腐烂。",
                "第二句。",
            ],
        ),
        (  # a word split by a hyphen at the line end
            "The programs must be compiled again after every change of the recom-\n"
            "piled library, or they fail.",
            [
                "The programs must be compiled again after every change of the recom-\n"
                "piled library, or they fail."
            ],
        ),
        (  # a table: every row is its own line
            "| name of the column | value of the column |\n| tea | green, black, oolong |",
            ["| name of the column | value of the column |", "| tea | green, black, oolong |"],
        ),
        (  # a line that introduces a listing, and the code under it
            "Run the following commands in a terminal to build it:\n"
            "    ./configure --prefix=/usr\n"
            "    make install",
            [
                "Run the following commands in a terminal to build it:",
                "./configure --prefix=/usr",
                "make install",
            ],
        ),
        (  # code at the same indentation: each statement ends with its line
            "    result = compute_the_answer(first_argument, second);\n    print(result)",
            ["result = compute_the_answer(first_argument, second);", "print(result)"],
        ),
        (  # Markdown heading, numbered items, an English line over its Chinese translation
            "# Growing tea at home\n"
            "Tea plants like a warm and humid climate in summer\n"
            "茶树喜欢温暖湿润的气候\n"
            "1. Choose a sunny spot that is sheltered from the wind\n"
            "2. water the young plants often in the first summer",
            [
                "# Growing tea at home",
                "Tea plants like a warm and humid climate in summer",
                "茶树喜欢温暖湿润的气候",
                "1. Choose a sunny spot that is sheltered from the wind",
                "2. water the young plants often in the first summer",
            ],
        ),
        (  # licences: a lazily continued list item, a <URL>, capitals after a comma
            "    c) You must license the entire work, as a whole, under this\n"
            "    License to anyone who comes into possession of a copy. See\n"
            '    <https://www.gnu.org/licenses/> for the whole text, on an "AS IS" BASIS,\n'
            "    WITHOUT WARRANTIES OF ANY KIND.",
            [
                "c) You must license the entire work, as a whole, under this\n"
                "    License to anyone who comes into possession of a copy.",
                'See\n    <https://www.gnu.org/licenses/> for the whole text, on an "AS IS" '
                "BASIS,\n    WITHOUT WARRANTIES OF ANY KIND.",
            ],
        ),
        (  # Apache style: "(a)" items whose continuation is indented deeper
            "    (a) You must give any other recipients of the Work or\n"
            "          Derivative Works a copy of this License; and",
            [
                "(a) You must give any other recipients of the Work or\n"
                "          Derivative Works a copy of this License; and"
            ],
        ),
        (  # a heading in capitals under a line of prose; short lines
            "This line of prose is long enough but does not end a sentence\n"
            "SEE ALSO\n"
            "ls(1), dir(1)",
            [
                "This line of prose is long enough but does not end a sentence",
                "SEE ALSO",
                "ls(1), dir(1)",
            ],
        ),
    ],
)
def test_soft_and_hard_line_breaks(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_a_next_line_one_column_deeper_is_not_indented() -> None:
    """A man page line that starts with a stray space continues the sentence; two columns
    deeper is an indented block."""
    line = "              因此这条命令：frob -n /tmp /var/tmp --tcp-flags SYN,ACK,FIN,RST"
    one, two = (line + "\n" + " " * (14 + d) + "只匹配设置了 SYN 的包。" for d in (1, 2))
    assert len(sentences(one)) == 1
    assert len(sentences(two)) == 2


def test_a_joined_line_longer_than_90_characters_keeps_its_indent() -> None:
    """A line the loader joined (here 109 characters) is still seen whole: the same-indent
    line after it continues its sentence; a line two columns deeper does not."""
    line = (
        "               对应的列表是 7 30 90。因此这条命令：frob --older-than 7,30,90 -n /tmp/x"
        " --keep-newest 3, 10, 15,"
    )
    assert 90 < len(line) <= LINE_LOOKBACK
    same, deeper = (line + "\n" + " " * (15 + d) + "20, 50 只保留最新的三个文件。" for d in (0, 2))
    assert len(sentences(same)) == 2
    assert len(sentences(deeper)) == 3


@pytest.mark.parametrize(
    ("tag", "indent", "whole"),
    [
        ("kernel ", 21, True),  # the text after the tag starts at column 21: a hanging indent
        ("F9   ", 19, True),
        ("kernel ", 20, False),  # two columns deeper than the line, not at its text: a block
        ("kernel ", 22, False),
    ],
)
def test_a_tag_paragraph_hangs_its_lines(tag: str, indent: int, whole: bool) -> None:
    """man sets a short tag on the line of its text; the lines below start under the text."""
    doc = (
        "              "
        + tag
        + "该目录包括如下文件: domainname;, ;file-max;, ;file-nr;,\n"
        + " " * indent
        + ";hostname;, ;ostype;, ;version, 由文件名就可以得知各文件功能."
    )
    assert (len(sentences(doc)) == 1) is whole


@pytest.mark.parametrize(
    "name", sorted(p.name[: -len(".sentences.json")] for p in GOLDEN.glob("*.sentences.json"))
)
def test_golden_sentences(name: str) -> None:
    """Sentences of a golden excerpt, as stored by the loader (tests/golden_forms)."""
    stored = read_plain((GOLDEN / f"{name}.in.txt").read_bytes(), "golden").text
    expected = json.loads((GOLDEN / f"{name}.sentences.json").read_text(encoding="utf-8"))
    assert sentences(stored) == expected


def test_a_break_whose_next_line_is_not_visible_is_not_an_end() -> None:
    text = "The keeper logged every passing ship in a ledger bound with\n"
    q = text.index("\n")
    assert not is_sentence_end(text, q, at_doc_start=True)  # the next line may continue it
    assert is_sentence_end(text, q, at_doc_start=True, at_doc_end=True)
    cut = text + "gre"  # too little of the next line to tell a list item or a table
    assert not is_sentence_end(cut, q, at_doc_start=True)
    assert is_sentence_end(cut, q, at_doc_start=True, at_doc_end=True) is False  # "gre" goes on
    # The line's start is not visible: its indentation and length are unknown.
    assert not is_sentence_end("bound with\n# Title", 10)
    assert is_sentence_end("bound with\n# Title", 10, at_doc_start=True)


PROSE_WORDS = ["the", "keeper", "logged", "every", "ship", "in", "a", "ledger", "Linux", "I"]
PROSE_WORDS += ["and", "42", "(see", "it)", "well-known", "colour,", "cloth;", "GNU's"]


@st.composite
def wrapped_paragraph(draw: st.DrawFn) -> str:
    """A paragraph of prose hard-wrapped at a random width in one of the usual layouts."""
    style = draw(st.sampled_from(["plain", "man", "first-line", "hanging", "chinese"]))
    # Lines up to LINE_LOOKBACK long (an indented line longer than that is not known to be
    # indented like the next one).
    width = draw(st.integers(50, 100 if style in ("plain", "chinese") else 80))
    if style == "chinese":
        text = "".join(
            draw(st.text(alphabet=HAN, min_size=4, max_size=30)) + draw(st.sampled_from("，，。"))
            for _ in range(draw(st.integers(1, 12)))
        )
        step = width // 2
        lines = [text[i : i + step] for i in range(0, len(text), step)]
        lines[0] = "\u3000\u3000" + lines[0] if draw(st.booleans()) else lines[0]
        return "\n".join(lines)
    words = [
        draw(st.sampled_from(PROSE_WORDS)) + ("." if draw(st.integers(0, 9)) == 0 else "")
        for _ in range(draw(st.integers(1, 80)))
    ]
    # "a." or "I." or "42." at a line's start reads as a list item: not prose
    words = [w if len(w) > 3 and w[0].isalpha() else w.rstrip(".") for w in words]
    lines = [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    if style == "man":
        return "\n".join("       " + line for line in lines)
    if style == "first-line":
        return "\n".join(("  " if i == 0 else "") + line for i, line in enumerate(lines))
    if style == "hanging":
        return "\n".join(("- " if i == 0 else "  ") + line for i, line in enumerate(lines))
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(st.lists(wrapped_paragraph(), min_size=1, max_size=4).map("\n\n".join))
@example("the. the. the. the. the. the. the. (see cloth;\nthe.")  # ";" after "(" is prose
@example("       " + "the " * 18 + "ship\n       the.")  # an 80-column man page line
def test_wrapped_prose_ends_sentences_only_after_terminators(doc: str) -> None:
    """No sentence end at a line break inside a paragraph unless a terminator stands there."""
    for q in sentence_ends(doc, at_doc_start=True, at_doc_end=True):
        rest = doc[q:].lstrip(" \t")
        if rest.startswith("\n") and rest[1:].lstrip(" \t\u3000")[:1] not in ("", "\n"):
            assert doc[q - 1] in ".。", (q, doc[max(0, q - 30) : q + 30])


@pytest.mark.parametrize("gap", ["\t ", " \t", "\t", "\t\t"])
def test_a_tab_inside_a_line_counts_as_the_spaces_to_its_stop(gap: str) -> None:
    # `man bash | col -b` writes a justified line's widened gaps as tabs: the sentences must be
    # those of the same page rendered with spaces.
    line = "\t      Exit from within a for, while, until, or select loop.  If" + gap + "n  is"
    text = line + "\n\t      specified, break n levels and more words follow here.\n"
    by_tabs, by_spaces = sentences(text), sentences(text.expandtabs(8))
    assert [s.split()[:2] for s in by_tabs] == [s.split()[:2] for s in by_spaces]


def test_a_sentence_reads_on_over_a_line_with_a_tab_in_a_narrow_gap() -> None:
    line = "\t      Exit from within a for, while, until, or select loop.  If\t n  is"
    text = line + "\n\t      specified, break n levels and more words follow here.\n"
    assert sentences(text)[-1].startswith("If") and sentences(text)[-1].endswith("here.")


def test_a_tab_separated_table_row_still_ends_its_line() -> None:
    text = "Name\tValue\tMeaning of the value in words here\none\t1\tthe first of them all\n"
    assert len(sentences(text)) == 2
