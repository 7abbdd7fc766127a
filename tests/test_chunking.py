from __future__ import annotations

import itertools
import re
from itertools import pairwise

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stitcher import chunking
from stitcher.chunking import split, validate_chunk_settings
from stitcher.errors import UsageError
from stitcher.models import Chunk

CHINESE_SENTENCES = [
    "我们需要重新编译内核。",
    "他说：“这个方法不行！”",
    "为什么向量检索找不到关键词？",
    "文本嵌入和矢量相似性搜索可以帮助我们理解文档的含义",  # no terminator
    "「引号里的句子。」",
    "数据库，索引，查询；",
]
ENGLISH_SENTENCES = [
    "The quick brown fox jumps over the lazy dog. ",
    "Is this the real life? ",
    'He said "stop!" and left. ',
    "Version 1.38.11 costs $1,000 per year",  # no terminator
    "e.g. this, that; and: more ",
]
SEPARATORS = ["\n", "\n\n", " ", "\n  \n", "\t", "　"]
NO_SPACE_RUN = st.integers(1, 400).map(lambda n: ("中文没有标点" * n)[: n * 3])
BASE64_RUN = st.integers(1, 400).map(lambda n: ("QUJDREVGR0g=" * n)[: n * 2])
PERIODIC_RUN = st.sampled_from(["=", "ab", "-+", "。", " ", "\n", "abc. "]).flatmap(
    lambda unit: st.integers(1, 300).map(lambda n: unit * n)
)

pieces = st.one_of(
    st.sampled_from(CHINESE_SENTENCES),
    st.sampled_from(ENGLISH_SENTENCES),
    st.sampled_from(SEPARATORS),
    NO_SPACE_RUN,
    BASE64_RUN,
    PERIODIC_RUN,
    st.text(alphabet='ab 。.!?\n，,”"', max_size=30),
)
documents = st.lists(pieces, max_size=40).map("".join)
sizes = st.integers(20, 300).flatmap(
    lambda size: st.tuples(st.just(size), st.integers(0, size - 1))
)


# Written apart from the module's own rule: a letter or digit of any script is content, all
# else (whitespace, punctuation, symbols, the underscore) is residue.
def has_content(text: str) -> bool:
    return any(character.isalnum() for character in text)


# A list item's number or letter standing alone ("a.", "(iv)", "12)"): residue too when the
# splitter cuts it off from its item.
_NUMBER_AT_EDGE = re.compile(
    r"^\(?(?:\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{2,6})[.)](?=[\W_]|$)"
    r"|(?<![^\W_])\(?(?:\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{2,6})[.)]$"
)


def core(text: str) -> str:
    """The chunk without the residue at its edges (punctuation, space, lone list numbers)."""
    while True:
        stripped = re.sub(r"^[\W_]+|[\W_]+$", "", _NUMBER_AT_EDGE.sub("", text.strip()))
        if stripped == text:
            return text
        text = stripped


def assert_tiles(text: str, chunks: list[Chunk], size: int, overlap: int) -> None:
    if not text:
        assert chunks == []
        return
    assert chunks[0].start == 0
    assert chunks[-1].end == len(text)
    for i, chunk in enumerate(chunks):
        assert chunk.index == i
        assert chunk.text == text[chunk.start : chunk.end]
        assert len(chunk.text) > 0
        assert len(core(chunk.text)) <= size
        if has_content(text):
            assert has_content(chunk.text), f"chunk {i} carries no text: {chunk.text!r}"
        else:
            assert len(chunk.text) <= size
    for before, after in pairwise(chunks):
        assert before.start < after.start
        assert before.end < after.end
        assert 0 <= before.end - after.start <= overlap  # no gap, bounded overlap


@settings(max_examples=300, deadline=None)
@given(documents, sizes)
@example("-+-+-+-+-+-+-+-+-+-+a.", (20, 0))  # the only letter is an "a." list number
@example("QUJDREVGR0g=QUJDREVGa.", (20, 0))  # "a." joins the chunk before it
@example("我们需要重新编译内核。-+-+-+-+-+-+-+-+-+-+a.", (20, 0))  # and the residue before it
@example("我们需要重新编译内核。-+-+-+-+-+-+-+-+-+-+a. ", (20, 0))
def test_chunks_tile_the_text(text: str, size_overlap: tuple[int, int]) -> None:
    size, overlap = size_overlap
    chunks = split(text, size, overlap)
    assert_tiles(text, chunks, size, overlap)
    assert split(text, size, overlap) == chunks  # deterministic


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000), sizes)
def test_arbitrary_unicode_tiles(text: str, size_overlap: tuple[int, int]) -> None:
    size, overlap = size_overlap
    assert_tiles(text, split(text, size, overlap), size, overlap)


@settings(max_examples=30, deadline=None)
@given(documents, sizes)
def test_windowed_large_texts_still_tile(text: str, size_overlap: tuple[int, int]) -> None:
    # Tiny windows (8 chunk sizes) force the pre-cutting path on most examples.
    size, overlap = size_overlap
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunking, "_WINDOW_CHARS", 1)
        assert_tiles(text, split(text, size, overlap), size, overlap)


def test_defaults_are_250_and_50() -> None:
    text = "我们需要重新编译内核。" * 100
    chunks = split(text)
    assert max(len(c.text) for c in chunks) <= 250
    assert_tiles(text, chunks, 250, 50)
    assert any(a.end - b.start > 0 for a, b in pairwise(chunks))


def test_empty_text_has_no_chunks() -> None:
    assert split("") == []


def test_whitespace_is_kept() -> None:
    text = "  \n\n  "
    assert [c.text for c in split(text)] == [text]


def test_chinese_sentences_are_cut_after_closing_quote() -> None:
    sentence = "他说：“今天我们重新编译内核。”"
    text = sentence * 20
    chunks = split(text, 60, 0)
    assert all(c.text.endswith("。”") for c in chunks)
    assert all(c.text.startswith("他说") for c in chunks)


def test_english_sentences_are_cut_after_the_space() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 20
    chunks = split(text, 100, 0)
    assert all(c.text.endswith("dog. ") for c in chunks)
    assert all(c.text.startswith("The") for c in chunks)


def test_paragraph_breaks_are_preferred_over_sentences() -> None:
    paragraph = "第一句。第二句！第三句？"
    text = "\n\n".join([paragraph] * 10)
    chunks = split(text, 40, 0)
    assert all(c.text.rstrip("\n").endswith("第三句？") for c in chunks)


def test_decimal_points_and_thousands_are_not_cut() -> None:
    text = ("value 3.14159 and 1,000,000 units " * 10).strip()
    for chunk in split(text, 40, 0):
        assert not chunk.text.endswith(("3.", "1,", "000,"))


def test_duplicate_sentences_get_their_own_offsets() -> None:
    # A naive text.find would place every chunk at the first occurrence.
    text = "重复的句子。" * 200
    chunks = split(text, 50, 10)
    assert_tiles(text, chunks, 50, 10)
    assert len({c.start for c in chunks}) == len(chunks)


def test_text_without_separators_is_cut_by_characters_with_overlap() -> None:
    text = "x" * 1000
    chunks = split(text, 250, 50)
    assert [(c.start, c.end) for c in chunks] == [
        (0, 250),
        (200, 450),
        (400, 650),
        (600, 850),
        (800, 1000),
    ]


def test_huge_text_without_separators_tiles() -> None:
    text = "中文没有标点的长文本" * 50_000  # 500k characters, several windows
    chunks = split(text)
    assert_tiles(text, chunks, 250, 50)


def test_huge_text_is_windowed_at_paragraph_breaks() -> None:
    paragraph = "An English sentence here. 一个中文句子。" * 10 + "\n\n"
    text = paragraph * 2000
    windows = chunking._windows(text, 65_536)
    assert len(windows) > 1
    assert all(text[end - 2 : end] == "\n\n" for _, end in windows[:-1])
    assert_tiles(text, split(text), 250, 50)


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (19, 0, "chunk_size=20"),  # the CLI says --chunk-size 20
        (250, -1, "negative"),
        (250, 250, "smaller than the chunk size"),
        (100, 300, "smaller than the chunk size"),
    ],
)
def test_bad_settings_are_refused(size: int, overlap: int, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        validate_chunk_settings(size, overlap)
    with pytest.raises(UsageError):
        split("some text", size, overlap)


def test_good_settings_pass() -> None:
    validate_chunk_settings(20, 0)
    validate_chunk_settings(250, 50)
    validate_chunk_settings(250, 249)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcXYZ0189+/=中文字", max_size=1500), sizes)
def test_fast_path_matches_the_splitter(text: str, size_overlap: tuple[int, int]) -> None:
    # Text without any separator skips the splitter; the result must be what it would give.
    size, overlap = size_overlap
    expected = chunking._splitter(size, overlap).split_text(text)
    spans = chunking._splitter_spans(text, size, overlap)
    assert [text[start:end] for start, end in spans] == expected


RESIDUE = [
    "\n",
    "\n\n",
    "\n \n\n",
    "* ",
    "# ",
    "## ",
    "| ",
    " |",
    "- ",
    "> ",
    "---\n",
    "|---|---|\n",
]
WORDS = ["Word", "一句话。", "The end. ", "x", "42", "Ünïcode"]
marked_up = st.lists(st.sampled_from(RESIDUE + WORDS), min_size=1, max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(marked_up, sizes)
@example("\n\nWord\n\n* \n\nx", (20, 0))
@example("# Title\n\n" + "The end. " * 10 + "\n\n" + "> quote " * 5, (20, 5))
@example("a" + "=" * 1000 + "b", (250, 50))  # residue longer than a chunk joins both sides
def test_every_chunk_carries_text(text: str, size_overlap: tuple[int, int]) -> None:
    size, overlap = size_overlap
    chunks = split(text, size, overlap)
    assert_tiles(text, chunks, size, overlap)


def test_blank_lines_between_paragraphs_join_the_paragraph_before() -> None:
    # The splitter alone gives the second "\n" of the paragraph break a chunk of its own.
    text = (
        "The first paragraph has a few sentences. It goes on a little. And it ends here.\n\n"
        "The second paragraph is short.\n\nThird one."
    )
    raw = [text[start:end] for start, end in chunking._splitter_spans(text, 60, 10)]
    assert "\n" in raw
    assert [c.text for c in split(text, 60, 10)] == [
        "The first paragraph has a few sentences. ",
        "It goes on a little. And it ends here.\n\n",
        "The second paragraph is short.\n\nThird one.",
    ]


@pytest.mark.parametrize(
    ("text", "pieces", "expected"),
    [
        # Markup opening a line leads into the text after it; the blank line before it trails.
        ("Intro.\n\n# Heading", ["Intro.\n", "\n# ", "Heading"], ["Intro.\n\n", "# Heading"]),
        ("Intro.\n* item", ["Intro.\n", "* ", "item"], ["Intro.\n", "* item"]),
        # Residue on the earlier chunk's own line stays with it, up to the line break.
        ("word *\n> next", ["word", " *\n> ", "next"], ["word *\n", "> next"]),
        # Leading and trailing residue join the first and the last chunk with text.
        ("\n\n| a |\n", ["\n\n| ", "a", " |\n"], ["\n\n| a |\n"]),
        # A list item's number alone leads into its item's text (python3's copyright file).
        (
            "VERSION 1\n\n1. This LICENSE",
            ["VERSION 1\n\n", "1. ", "This LICENSE"],
            ["VERSION 1\n\n", "1. This LICENSE"],
        ),
        ("Terms:\n(a) the", ["Terms:\n", "(a) ", "the"], ["Terms:\n", "(a) the"]),
    ],
)
def test_residue_is_shared_out_by_line(text: str, pieces: list[str], expected: list[str]) -> None:
    assert "".join(pieces) == text
    ends = list(itertools.accumulate(len(piece) for piece in pieces))
    spans = zip([0, *ends[:-1]], ends, strict=True)
    assert [text[s:e] for s, e in chunking._absorb_residue(text, iter(spans))] == expected


def test_a_list_number_is_no_chunk_of_its_own() -> None:
    # One sentence longer than a chunk: the splitter cuts "1. " off before it (python3's
    # copyright file in /usr/share/doc had nine such chunks).
    item = (
        'This LICENSE AGREEMENT is between BeOpen.com ("BeOpen"), having an office at 160 '
        "Saratoga Avenue, Santa Clara, CA 95051, and the Individual or Organization "
        '("Licensee") accessing and otherwise using this software in source or binary form '
        'and its associated documentation ("the Software").'
    )
    text = f"LICENSE AGREEMENT VERSION 1\n\n1. {item}\n\n2. {item}"
    raw = [text[start:end] for start, end in chunking._splitter_spans(text, 250, 50)]
    assert "1. " in raw  # the splitter cuts after "1." as after a sentence
    chunks = [c.text for c in split(text, 250, 50)]
    assert "1. " not in chunks and "2. " not in chunks
    assert any(chunk.startswith("1. This LICENSE") for chunk in chunks)
    # A number that is all the text there is stays a chunk: there is nothing to join.
    assert [c.text for c in split("1. ", 250, 50)] == ["1. "]


def test_text_without_letters_keeps_the_splitters_chunks() -> None:
    text = "---\n\n" * 40
    chunks = split(text, 20, 0)
    assert_tiles(text, chunks, 20, 0)
    assert len(chunks) > 1
