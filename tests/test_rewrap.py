"""Paragraph reconstruction: wrapped prose is re-joined exactly, structure never changes.

"Re-joined exactly" means: a paragraph that was wrapped (greedily, at one width for the whole
document) comes back as one line made of its first-line indent (or list marker) followed by
its words separated by single spaces (English) or by nothing (Chinese), i.e. the text the
paragraph was made from. Structure (code, tables, aligned columns, short list items, ASCII art)
comes back byte for byte, and rewrapping the result changes nothing.

The golden tests run short excerpts of each real form (written for these tests, not copied)
through the loader that reads that form, and compare with the expected text.
"""

from __future__ import annotations

import random
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stitcher.loaders.formats import pdf_pages_text, read_info, read_markdown, read_plain
from stitcher.loaders.org import read_org
from stitcher.loaders.rewrap import display_width, join_cjk_lines, rewrap

GOLDEN = Path(__file__).parent / "golden_forms"

# Words of a plain English vocabulary; sentences start with a capital and end with a full stop.
VOCABULARY = (
    "the of and to in is that for it as with was on be by this are or from at which have an "
    "but not they all were there can more when one been their if will would about so what up "
    "out into them these other could time than first its only new some then also after two "
    "system package manual paragraph reader search index document server network file line "
    "version release archive mirror kernel module driver shell command option value program "
    "configuration directory user account permission language translation chapter section "
    "installation upgrade security distribution developer maintainer"
)
WORDS = VOCABULARY.split()
HANZI = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能"
    "下过子说产种面而方后多定行学法所民得经"
)


def english_sentence(rnd: random.Random) -> str:
    words = [rnd.choice(WORDS) for _ in range(rnd.randint(3, 14))]
    return " ".join([words[0].capitalize(), *words[1:]]) + "."


def chinese_sentence(rnd: random.Random) -> str:
    def clause() -> str:
        return "".join(rnd.choice(HANZI) for _ in range(rnd.randint(4, 30)))

    return clause() + rnd.choice("，、；") + clause() + rnd.choice("。！？")


def wrap_cjk(text: str, width: int, first: str, rest: str) -> list[str]:
    """Greedy wrapping by display columns, breaking anywhere, as renderers do for Chinese."""
    lines: list[str] = []
    line = first
    for char in text:
        if display_width(line + char) > width and line.strip():
            lines.append(line)
            line = rest
        line += char
    lines.append(line)
    return lines


def wrap_english(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )


@st.composite
def wrapped_documents(draw: st.DrawFn, chinese: bool, min_width: int = 40) -> tuple[str, list[str]]:
    """A document of wrapped paragraphs and the one line each paragraph should become."""
    width = draw(st.integers(min_value=min_width, max_value=100))
    indent = " " * draw(st.integers(min_value=0, max_value=8))
    # The words come from a seeded generator that hypothesis controls: fast to draw, replayable.
    rnd = draw(st.randoms(use_true_random=False))
    sentence = chinese_sentence if chinese else english_sentence
    texts = []
    for _ in range(draw(st.integers(min_value=3, max_value=5))):
        # Three lines or more: a paragraph shorter than that shows too little of its wrapping.
        pieces = [sentence(rnd)]
        while display_width("".join(pieces)) < 3 * width:
            pieces.append(sentence(rnd))
        texts.append(("" if chinese else " ").join(pieces))
    layouts = ["uniform", "first-line", "bullet", "numbered"]
    if chinese:
        layouts.append("ideographic")
    wrapped: list[str] = []
    expected: list[str] = []
    for number, text in enumerate(texts, start=1):
        layout = draw(st.sampled_from(layouts))
        first, rest = indent, indent
        if layout == "first-line":
            first = indent + "   "
        elif layout == "bullet":
            first, rest = indent + "* ", indent + "  "
        elif layout == "numbered":
            first, rest = f"{indent}{number}. ", indent + " " * (len(str(number)) + 2)
        elif layout == "ideographic":
            first = indent + "\u3000\u3000"
        wrap = wrap_cjk if chinese else wrap_english
        wrapped.append("\n".join(wrap(text, width, first, rest)))
        expected.append(first + text)
    return "\n\n".join(wrapped), expected


@settings(deadline=None)
@given(wrapped_documents(chinese=False))
# Found by hypothesis: every line one whole sentence, every line starting with a capital.
@example(
    (
        " The the the the the the the the the.\n The the the the the the the the the.\n"
        " The the the the the the the the the.\n The the the.\n\n"
        " The the the. The the the the the the\n the the the the the the the. The the\n"
        " the the the the the the the the the the\n the the.\n\n"
        " The the the. The the the the the the\n the the the the the the the. The the\n"
        " the the the the the the the the the the\n the the.",
        [
            " The the the the the the the the the. The the the the the the the the the."
            " The the the the the the the the the. The the the.",
            " The the the. The the the the the the the the the the the the the."
            " The the the the the the the the the the the the the the.",
            " The the the. The the the the the the the the the the the the the."
            " The the the the the the the the the the the the the the.",
        ],
    )
)
def test_wrapped_english_paragraphs_rejoin_exactly(case: tuple[str, list[str]]) -> None:
    document, expected = case
    assert rewrap(document).split("\n\n") == expected


@st.composite
def option_list_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Man page paragraphs, 7 columns in, whose sentences list options ("--a-b, --c, --d.")."""
    width = draw(st.integers(min_value=50, max_value=100))
    rnd = draw(st.randoms(use_true_random=False))
    indent = " " * 7
    texts = []
    for _ in range(draw(st.integers(min_value=3, max_value=5))):
        options = [
            "--" + "-".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 3)))
            for _ in range(rnd.randint(4, 16))
        ]
        listed = english_sentence(rnd)[:-1] + ": " + ", ".join(options) + "."
        pieces = [english_sentence(rnd), listed]
        while len(" ".join(pieces)) < 3 * width:
            pieces.append(english_sentence(rnd))
        rnd.shuffle(pieces)
        texts.append(" ".join(pieces))
    wrapped = ["\n".join(wrap_english(text, width, indent, indent)) for text in texts]
    return "\n\n".join(wrapped), [indent + text for text in texts]


@settings(deadline=None)
@given(option_list_documents())
# Found by hypothesis: a line of nothing but options, ending the sentence, after a colon.
@example(
    (
        "       The the the. The system would:\n"
        "       --distribution, --the, --program, --the.\n"
        "       The the the. The the the. The the the. The\n"
        "       the the. The that the. The the the.",
        [
            "       The the the. The system would: --distribution, --the, --program, --the."
            " The the the. The the the. The the the. The the the. The that the. The the the."
        ],
    )
)
def test_wrapped_option_lists_rejoin_exactly(case: tuple[str, list[str]]) -> None:
    # A line of nothing but options ("--quiet, --verbosity.") inside a sentence is not an
    # option tag that starts an item, and option names count as words, not as code.
    document, expected = case
    assert rewrap(document).split("\n\n") == expected


@settings(deadline=None)
@given(wrapped_documents(chinese=True))
def test_wrapped_chinese_paragraphs_rejoin_exactly(case: tuple[str, list[str]]) -> None:
    document, expected = case
    assert rewrap(document).split("\n\n") == expected


# Structure: blocks that must come back byte for byte.
identifiers = st.sampled_from(
    ["x", "count", "path", "self.items", "buf", "cfg", "result", "argv", "i", "node.next"]
)
code_lines = st.one_of(
    st.builds(lambda a, b, n: f"{a} = {b}({n});", identifiers, identifiers, st.integers(0, 99)),
    st.builds(lambda a, b: f"if ({a} > {b}) {{", identifiers, identifiers),
    st.just("}"),
    st.builds(lambda a: f"$ stitcher search --limit 5 {a}", identifiers),
    st.builds(lambda a, b: f"# apt-get install {a}-{b}", identifiers, identifiers),
)
code_blocks = st.tuples(
    st.sampled_from(["    ", "        ", "\t"]),
    st.lists(code_lines, min_size=2, max_size=8),
).map(lambda parts: "\n".join(parts[0] + line for line in parts[1]))
cells = st.sampled_from(["name", "size", "42", "V:12", "none", "15m", "yes", "archive", "—"])
table_blocks = st.one_of(
    st.lists(st.lists(cells, min_size=2, max_size=4), min_size=2, max_size=6).map(
        lambda rows: "\n".join("| " + " | ".join(row) + " |" for row in rows)
    ),
    st.lists(st.lists(cells, min_size=2, max_size=3), min_size=2, max_size=6).map(
        lambda rows: "\n".join("".join(cell.ljust(10) for cell in row).rstrip() for row in rows)
    ),
)
list_blocks = st.lists(
    st.tuples(st.sampled_from(["- ", "* ", "1. ", "2) ", "• "]), st.sampled_from(WORDS)),
    min_size=2,
    max_size=6,
).map(lambda items: "\n".join(marker + word for marker, word in items))
ascii_art = st.sampled_from(
    [
        "+--------+      +--------+\n| client | ---> | server |\n+--------+      +--------+",
        "   /\\_/\\\n  ( o.o )\n   > ^ <",
        "  [load] --> [chunk] --> [embed]\n"
        "                 |\n                 v\n             [weaviate]",
    ]
)
VERSE = (
    "Shall I compare thee to a summer's day?\nThou art more lovely and more temperate:\n"
    "Rough winds do shake the darling buds of May,\nAnd summer's lease hath all too short a date;"
)
verse = st.just(VERSE)
structure_blocks = st.one_of(code_blocks, table_blocks, list_blocks, ascii_art, verse)


# The structure samples are at most 46 columns wide: narrower than the prose around them, as in
# real documents (a poem as wide as the wrap column, every line full, reads as a paragraph).
@settings(deadline=None)
@given(
    wrapped_documents(chinese=False, min_width=60),
    st.lists(structure_blocks, min_size=1, max_size=4),
)
def test_structure_blocks_never_change(case: tuple[str, list[str]], structures: list[str]) -> None:
    document, expected = case
    paragraphs = document.split("\n\n")
    mixed = "\n\n".join(
        [*paragraphs[:1], *structures, *paragraphs[1:]]
    )  # structure amid wrapped prose, so the document's wrap column is known
    assert rewrap(mixed).split("\n\n") == [*expected[:1], *structures, *expected[1:]]


@settings(deadline=None)
@given(
    st.one_of(wrapped_documents(chinese=False), wrapped_documents(chinese=True)),
    st.lists(structure_blocks, max_size=3),
)
# Found by the CI profile: once the narrow prose around it was joined, two copies of the verse
# set a wrap column of their own and the second pass joined them.
@example(
    case=(
        "The the the. The the the. The distribution\nthe. The the document the. The the the. "
        "The\nthe installation permission the with this the\nthe the.\n\nThe version the "
        "version the system\ndistribution the the the which with this. The\nthey program the "
        "this version the version the\nwith the.",
        [],
    ),
    structures=["    $ stitcher search --limit 5 x\n    self.items = x(0);", VERSE, VERSE],
)
def test_rewrap_is_idempotent(case: tuple[str, list[str]], structures: list[str]) -> None:
    document = "\n\n".join([case[0], *structures])
    once = rewrap(document)
    assert rewrap(once) == once


@settings(deadline=None)
@given(st.text(alphabet="ab 中文。.,-|#>*1\n\u2010\u00ad", max_size=300))
def test_rewrap_only_removes_whitespace_and_line_end_hyphens(text: str) -> None:
    joined = rewrap(text)
    assert squeeze(joined) == squeeze(text)
    assert all(joined.count(hyphen) <= text.count(hyphen) for hyphen in "-\u2010\u00ad")
    assert len(joined) <= len(text)


def squeeze(text: str) -> str:
    return re.sub(r"[\s\-\u2010\u00ad]", "", text)


def test_weak_evidence_leaves_lines_alone() -> None:
    # Two lines, the first a finished sentence and the second a new one: maybe deliberate.
    text = "This sentence is complete and ends here.\nThis one starts on a new line on purpose."
    assert rewrap(text) == text


def test_man_page_justified_paragraph_and_hyphen() -> None:
    page = "\n".join(
        [
            "DESCRIPTION",
            "       List  information  about  the FILEs (the current directory by default).",
            "       Sort entries alphabetically if none of -cftuvSUX nor --sort  is  speci‐",
            "       fied.",
        ]
        * 3
    )
    out = rewrap(page).split("\n")
    assert out[1] == (
        "       List information about the FILEs (the current directory by default). Sort "
        "entries alphabetically if none of -cftuvSUX nor --sort is specified."
    )


def test_markdown_indented_code_outside_a_list_is_kept() -> None:
    prose = (
        "Start by drying the meat thoroughly with paper towels and seasoning\n"
        "it well, then brown it in batches so the pot never crowds and steams."
    )
    code = "    the output of the command is a long line of words that looks like prose\n"
    code += "    and its second line continues it in lower case without any symbols at all"
    text = f"{prose}\n\n{code}\n\n{prose}"
    assert rewrap(text, markdown=True).split("\n\n")[1] == code


def test_rst_literal_block_after_double_colon_is_kept() -> None:
    literal = (
        "    the literal block holds words that a reader would take for a paragraph\n"
        "    and a second line that carries on in lower case as prose would do it"
    )
    text = f"The following example shows the output::\n\n{literal}\n\nAfter it, prose."
    assert rewrap(text).split("\n\n")[1] == literal


def test_line_end_hyphen_is_dropped_only_where_the_document_agrees() -> None:
    text = (
        "We recompile the module whenever its configuration changes, as you\n"
        "would expect, and the build system is always very careful to recom-\n"
        "pile only the files that changed since the last run; it is a well-\n"
        "known trick that saves a lot of time on a large tree of source files."
    )
    out = rewrap(text)
    assert "careful to recompile only the files" in out
    assert "it is a well-known trick" in out


@pytest.mark.parametrize(
    "name", sorted(path.name[: -len(".in.txt")] for path in GOLDEN.glob("*.in.txt"))
)
def test_golden_forms(name: str) -> None:
    source = (GOLDEN / f"{name}.in.txt").read_bytes()
    expected = (GOLDEN / f"{name}.out.txt").read_text(encoding="utf-8")
    assert load_form(name, source) == expected.rstrip("\n")


def load_form(name: str, data: bytes) -> str:
    """The text the loader stores for a file of this form (by the golden file's name)."""
    if name.startswith("info"):
        return read_info(data, name).text
    if name.startswith(("markdown", "rst")):
        return read_markdown(data, name).text if name.startswith("markdown") else rewrap_plain(data)
    if name.startswith("pdf"):
        # Form feeds separate the pages, as pdftotext writes them.
        pages = data.decode("utf-8").split("\f")
        return pdf_pages_text(pages)[0]
    return rewrap_plain(data)


def rewrap_plain(data: bytes) -> str:
    return read_plain(data, "golden").text


def indented(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.split("\n"))


@settings(deadline=None)
@given(wrapped_documents(chinese=False), st.sampled_from(["\t", "\t  ", "\t\t"]))
def test_tab_indented_paragraphs_rewrap_as_space_indented_ones(
    case: tuple[str, list[str]], tabs: str
) -> None:
    """`man X | col -b` indents with tabs: they count to their 8-column stops, and stay."""
    text, expected = case
    spaces = tabs.expandtabs(8)
    by_tabs = rewrap(indented(text, tabs)).split("\n")
    by_spaces = rewrap(indented(text, spaces)).split("\n")
    assert [line.expandtabs(8) for line in by_tabs] == by_spaces
    # Nothing but the indent of continuation lines went away: every paragraph rejoined, its
    # first line's tabs kept.
    assert by_tabs == [tabs + e if e else e for e in "\n\n".join(expected).split("\n")]


def test_col_b_man_page_with_tabs_inside_justified_lines() -> None:
    # bash(1) through `col -b`: tabs indent every line and stand for widened gaps inside them.
    paragraph = "\n".join(
        [
            "       break [n]",
            "\t      Exit from within a for, while, until, or select loop.  If\t n  is",
            "\t      specified, break n levels.  n must be ≥ 1.  If n is greater than",
            "\t      the number of enclosing loops, all enclosing loops  are  exited.",
            "\t      The  return  value is 0 unless n is not greater than or equal to",
            "\t      1.",
            "",
        ]
    )
    table = "\t      Name\tValue\tMeaning\n\t      one\t1\tthe first\n\t      two\t2\tthe second"
    page = paragraph * 3 + table  # enough lines to show the page's wrap column
    out = rewrap(page).split("\n")
    assert out[1] == (
        "\t      Exit from within a for, while, until, or select loop. If n is specified, break n "
        "levels. n must be ≥ 1. If n is greater than the number of enclosing loops, all "
        "enclosing loops are exited. The return value is 0 unless n is not greater than or "
        "equal to 1."
    )
    assert out[-3:] == page.split("\n")[-3:]  # a tab-separated table keeps its lines and tabs


# Lines of a Chinese PDF page as PDFium extracts them (maint-guide.zh-cn): the widths of
# proportional glyphs show no wrap column.
CHINESE_PDF_PAGE = [
    "3.4 不同的库名称",
    "还有另外一个常见的问题：不同平台之间的库名称常常因平台而异。这个变量根据不同的用户选择不同的",
    "主目录，你也应该知",
    "道这一点。如果你的程序由于 foo 库不存在，而 Debian 系统中的 foo2 库提供了其等效，那么你可以修",
    "复这个构建问题。",
    "一、第一项",
    "第二章 构建软件包",
    "缺省为空。",
]


def test_chinese_pdf_lines_broken_inside_a_sentence_are_joined() -> None:
    text, _starts = pdf_pages_text(["\n".join(CHINESE_PDF_PAGE)])
    assert text.split("\n") == [
        "3.4 不同的库名称",  # a heading stays a line of its own
        "还有另外一个常见的问题：不同平台之间的库名称常常因平台而异。这个变量根据不同的用户选择不同的"
        "主目录，你也应该知道这一点。如果你的程序由于 foo 库不存在，而 Debian 系统中的 foo2 "
        "库提供了其等效，那么你可以修复这个构建问题。",
        "一、第一项",  # a list item and a chapter title start their own lines
        "第二章 构建软件包",
        "缺省为空。",
    ]


def test_join_cjk_lines_keeps_short_lines_and_sentence_ends() -> None:
    page = [
        "这是一个很长的句子的第一行，它一直写到页面的右边距为",
        "止。",
        "标题",
        "正文从这里开始。",
    ]
    # "为" before a break in a full line reads on; "止。" ends its sentence; "标题" is short.
    assert (
        join_cjk_lines("\n".join(page), page)
        == "这是一个很长的句子的第一行，它一直写到页面的右边距为止。\n标题\n正文从这里开始。"
    )
    # Text without a Chinese character on both sides of a break is left alone.
    latin = ["A line of English text that runs to the right margin of the page", "and on."]
    assert join_cjk_lines("\n".join(latin), latin) == "\n".join(latin)


@settings(deadline=None)
@given(
    st.lists(st.text(alphabet="中文字，。、 ab\t（）一第章", min_size=1, max_size=40), max_size=12)
)
@example([" 、", " 一"])  # the indent of the line joined on goes, as in rewrap
def test_join_cjk_lines_only_removes_whitespace(lines: list[str]) -> None:
    text = "\n".join(lines)
    joined = join_cjk_lines(text, lines)
    assert re.sub(r"\s", "", joined) == re.sub(r"\s", "", text)
    assert joined.count("\n") <= text.count("\n")
    assert join_cjk_lines(joined, lines) == joined  # nothing left to join


DEP5_COPYRIGHT = """\
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Comment:
 This package was debianized by Thomas Schoepf <schoepf@debian.org> on
 Wed,  8 Sep 1999 13:28:20 +0200.
Source: http://www.greenwoodsoftware.com/less/
Upstream-Contact: Mark Nudelman <markn@greenwoodsoftware.com>

Files: *
Copyright: (C) 1984-2021  Mark Nudelman
License: GPL-3+ or Less
"""


def test_fields_of_a_header_block_are_not_joined() -> None:
    """A Debian copyright file (DEP-5): "Format: <URL>/" and "Comment:" were joined into
    ".../1.0/Comment:" (a URL's "/" joins without a space) in /usr/share/doc/less/copyright."""
    assert rewrap(DEP5_COPYRIGHT) == DEP5_COPYRIGHT
    # A wrapped sentence whose next line starts like a field still reads on.
    prose = (
        "The maintainers read every report that reaches the tracker, and they answer\n"
        "Questions: those about the package first, then the others in the order they arrive\n"
        "at the tracker, which keeps every report until it is answered or closed by hand.\n"
    ) * 3
    assert "answer Questions: those" in rewrap(prose)


# Man pages as GNU troff sets them: it breaks lines only at spaces (a run of Han characters has
# no break point) and runs a line past the column when one run does not fit at all. The reader
# knows the column it rendered at. (troff also widens the gaps of full lines; whether gaps are
# justification or table columns is _has_columns' question, apart from this one.)
def wrap_at_spaces(text: str, width: int, indent: str) -> list[str]:
    lines: list[str] = []
    line = ""
    for token in text.split(" "):
        if line and display_width(indent + line + " " + token) > width:
            lines.append(indent + line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(indent + line)
    return lines


@st.composite
def troff_chinese_pages(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Chinese man page paragraphs (Han runs with Latin words between spaces) set by troff."""
    # A seeded generator, not hypothesis' own: a shrunk example stays varied text (runs of one
    # length repeated line after line would align their gaps like a table's columns).
    rnd = random.Random(draw(st.integers(min_value=0, max_value=2**32)))
    # Words only: option names ("-H" at a line start after a full stop is an option tag) and
    # symbols ("/etc/passwd", "0x1F": few words to the tokens look like code) are other rules'.
    latin = ["linker", "gzip", "pack", "OMAGIC", "Unix", "shell", "ASCII", "Vim"]
    paragraphs = []
    for _ in range(rnd.randint(2, 4)):
        tokens: list[str] = []
        length = rnd.randint(150, 400)
        while display_width(" ".join(tokens)) < length:
            run = "".join(rnd.choice(HANZI) for _ in range(rnd.randint(2, 40)))
            tokens.append(run + rnd.choice(["", "，", "。", "."]))
            if rnd.random() < 0.4:
                tokens.append(rnd.choice(latin))
        paragraphs.append(" ".join(tokens))
    pages = ["\n".join(wrap_at_spaces(p, 78, " " * 7)) for p in paragraphs]
    return "\n\n".join(pages), paragraphs


@settings(deadline=None)
@given(troff_chinese_pages())
def test_troff_set_chinese_paragraphs_rejoin(case: tuple[str, list[str]]) -> None:
    page, paragraphs = case
    out = rewrap(page, column=78, breaks_cjk=False).split("\n\n")
    assert len(out) == len(paragraphs)
    for line, paragraph in zip(out, paragraphs, strict=True):
        assert "\n" not in line, line
        assert squeeze(line) == squeeze(paragraph)


def test_troff_chinese_line_short_of_the_column_before_a_long_han_run() -> None:
    # gzip(1) and file(1) in Chinese: the next run did not fit, so troff broke at the space
    # before it, and a line past the column is one run troff could not break at all.
    page = "\n".join(
        [
            "       幻数检查用来检查文件中是否有特殊的固定格式的数据.",
            "       规范的例子如二进制可执行文件(编译后的程序)a.out,该文件格式在标准"
            "include目录下定义",
            "       这个参数指定一个产生名字时所需要的范围。",
            "       范围这个概念，可以参见rfc1001.txt和rfc1002.txt这两个文件中的详细定义。"
            "实际上这个Net‐",
            "       BIOS范围的概念很少被用到。",
        ]
    )
    assert rewrap(page, column=78, breaks_cjk=False).split("\n") == [
        "       幻数检查用来检查文件中是否有特殊的固定格式的数据.规范的例子如二进制可执行文件"
        "(编译后的程序)a.out,该文件格式在标准include目录下定义这个参数指定一个产生名字时所需要"
        "的范围。范围这个概念，可以参见rfc1001.txt和rfc1002.txt这两个文件中的详细定义。实际上"
        "这个Net‐BIOS范围的概念很少被用到。"
    ]
    # A wrapper that breaks between Han characters would have filled the short line.
    assert rewrap(page, column=78).split("\n")[:2] == page.split("\n")[:2]


def test_a_wrapped_synopsis_is_not_a_tag_paragraph() -> None:
    # The command's name and one space, then lines hanging under its arguments: a synopsis
    # stays as troff set it, though its lines are full.
    page = "\n".join(
        [
            "SYNOPSIS",
            "       gcloud beta container hub packages resource-bundles releases update RE‐",
            "              LEASE  --resource-bundle=RESOURCE_BUNDLE [--lifecycle=LIFECYCLE]",
            "              [--location=LOCATION] [GCLOUD_WIDE_FLAG ...]",
        ]
    )
    assert rewrap(page, column=78, breaks_cjk=False) == page


def test_a_tag_that_overflowed_its_line_reads_on_into_its_body() -> None:
    # gcloud's pages set a whole paragraph as a .TP tag: the tag wraps at its own indent and
    # the body goes on two columns deeper, in the middle of the tag's sentence.
    page = "\n".join(
        [
            "POSITIONAL ARGUMENTS",
            "         Connection resource - Name of the  resource  The  arguments  in  this",
            "         group can be",
            "           used  to  specify  the attributes of this resource. (NOTE) Some at\u2010",
            "           tributes are not given arguments in this group but can  be  set  in",
            "           other ways.",
        ]
    )
    assert rewrap(page, column=78, breaks_cjk=False).split("\n") == [
        "POSITIONAL ARGUMENTS",
        "         Connection resource - Name of the resource The arguments in this group can be"
        " used to specify the attributes of this resource. (NOTE) Some attributes are not given"
        " arguments in this group but can be set in other ways.",
    ]


def test_a_short_tag_or_an_example_under_a_sentence_stays_apart() -> None:
    page = "\n".join(
        [
            "       -a, --all",
            "              do not ignore entries starting with .",
            "",
            "              File name matches shell pattern pattern. The  metacharacters  do",
            "              not treat `/' or `.' specially; so, for example,",
            '                  find . -path "./sr*sc"',
            "              will print an entry for a directory called ./src/misc.",
        ]
    )
    out = rewrap(page, column=78, breaks_cjk=False).split("\n")
    assert out[:2] == page.split("\n")[:2]
    assert out[-2:] == page.split("\n")[-2:]


def test_a_justified_option_list_is_a_filled_paragraph() -> None:
    # stty(1): the words are mostly option names, but troff justified every line but the last
    # to the column, which it does only to text it filled.
    page = "\n".join(
        [
            "       sane   同  cread  -ignbrk brkint -inlcr -igncr icrnl icanon iexten echo",
            "              echoe echok -echonl -noflsh -ixoff -iutf8 -iuclc -ixany  imaxbel",
            "              -xcase  -olcuc  -ocrnl opost -ofill onlcr -onocr -onlret nl0 cr0",
            "              tab0 bs0 vt0 ff0 isig -tostop  -ofdel  -echoprt  echoctl  echoke",
            "              -extproc -flusho，并将所有特殊字符都设为默认值",
        ]
    )
    assert rewrap(page, column=78, breaks_cjk=False).split("\n") == [
        "       sane   同 cread -ignbrk brkint -inlcr -igncr icrnl icanon iexten echo echoe echok"
        " -echonl -noflsh -ixoff -iutf8 -iuclc -ixany imaxbel -xcase -olcuc -ocrnl opost -ofill"
        " onlcr -onocr -onlret nl0 cr0 tab0 bs0 vt0 ff0 isig -tostop -ofdel -echoprt echoctl"
        " echoke -extproc -flusho，并将所有特殊字符都设为默认值"
    ]


def test_a_psql_session_stays_line_by_line() -> None:
    # psql(1): the query line is 85% of the column and the result row below starts in lower
    # case, which alone reads as a wrap; the prompt says it is a transcript.
    page = "\n".join(
        [
            "       peter@localhost testdb=>\\pset border 1",
            "       Border style is 1.",
            "       peter@localhost testdb=>\\pset format unaligned",
            "       Output format is unaligned.",
            '       peter@localhost testdb=>\\pset fieldsep ","',
            '       Field separator is ",".',
            "       peter@localhost testdb=>\\pset tuples_only",
            "       Showing only tuples.",
            "       peter@localhost testdb=>SELECT second, first FROM my_table;",
            "       one,1",
            "       two,2",
        ]
    )
    assert rewrap(page, column=78) == page


def test_a_justified_synopsis_stays_line_by_line() -> None:
    page = "\n".join(
        [
            "       cpio  {-o|--create} [-0acvABLV] [-C bytes] [-H format] [-M message] [-O",
            "       [[user@]host:]archive]            [-F            [[user@]host:]archive]",
            "       [--file=[[user@]host:]archive]   [--format=format]  [--message=message]",
            "       [--null] [--reset-access-time] [--verbose] [--dot] [--append]",
        ]
    )
    assert rewrap(page, column=78, breaks_cjk=False) == page


# Writers keep an inline code span on one line: when it does not fit, the line breaks before
# it, short of the column by less than the span's width.
SPANS = ["=M-x org-drill-resume=", "~C-c C-c~", "``IMPORTED``", "`git log --oneline`"]


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=50, max_value=90))
def test_paragraphs_wrapped_around_inline_code_rejoin_exactly(seed: int, width: int) -> None:
    rnd = random.Random(seed)
    paragraphs = []
    for _ in range(3):
        words: list[str] = []
        spans = 0
        while len(" ".join(words)) < 4 * width:
            # Prose with some code in it: a paragraph mostly of spans reads as code (few words).
            if spans < 3 and rnd.random() < 0.1:
                words.append(rnd.choice(SPANS))
                spans += 1
            else:
                words.append(rnd.choice(WORDS))
        paragraphs.append(" ".join([words[0].capitalize(), *words[1:]]) + ".")
    # A span's inner spaces are no break points: wrap with them held as no-break spaces.
    held = [p.replace(" ", "\x00") for p in paragraphs]
    for span in SPANS:
        held = [p.replace(span.replace(" ", "\x00"), span.replace(" ", "\u00a0")) for p in held]
    wrapped = [
        "\n".join(wrap_english(p.replace("\x00", " "), width, "", "")).replace("\u00a0", " ")
        for p in held
    ]
    assert rewrap("\n\n".join(wrapped)).split("\n\n") == paragraphs


def test_org_line_broken_before_a_verbatim_span_is_joined() -> None:
    # org-drill.org: "then press" stops 17 columns short of the others because
    # "=M-x org-drill-resume=" did not fit after it.
    text = (
        "You can leave a drill session early and come back to it later. When you do, the\n"
        "item you were looking at is shown again, so nothing is lost. For example, if you\n"
        "are shown an item that is poorly worded or contains an error, you can always\n"
        "press 'e' to leave the drill, then correct the item, then press\n"
        "=M-x org-drill-resume= and continue where you left off.\n"
    )
    assert read_org(text.encode(), "drill.org").text == " ".join(text.split("\n")).strip()
