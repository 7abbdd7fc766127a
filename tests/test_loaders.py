"""Loading files into Documents: formats, encodings, hard-wrap joining, metadata, bad input."""

from __future__ import annotations

import datetime as dt
import errno
import io
import json
import os
import re
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stitcher.errors import LoadError
from stitcher.loaders import SourceFile, load
from stitcher.loaders.decoding import decode_text
from stitcher.loaders.metadata import detect_lang, json_like, parse_date, sanitise_key
from stitcher.loaders.rewrap import rewrap

UTC = dt.timezone.utc

BILINGUAL = (
    "混合文档：中文与 English 同在。\r\n"
    "第二段说明 Weaviate 的混合检索，score 来自 BM25 和向量。\r\n"
    "\r\n"
    "Last paragraph, plain English only.\r\n"
)
BILINGUAL_TEXT = (
    "混合文档：中文与 English 同在。\n"
    "第二段说明 Weaviate 的混合检索，score 来自 BM25 和向量。\n"
    "\n"
    "Last paragraph, plain English only."
)


def write(tmp_path: Path, name: str, content: str | bytes) -> SourceFile:
    """A file under tmp_path/docs and the SourceFile that discovery would make for it."""
    path = tmp_path / "docs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return SourceFile(path=path, doc_id=f"docs/{name}", source=str(path))


def load_error(src: SourceFile) -> str:
    with pytest.raises(LoadError) as caught:
        load(src)
    message = str(caught.value)
    assert message.startswith(f"{src.source}: "), message
    assert "\n" not in message
    return message


# Encodings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [
        ("gb18030", b""),
        ("gbk", b""),
        ("utf-16", b""),  # Python writes the platform's BOM
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-32", b""),
        ("utf-8", b"\xef\xbb\xbf"),
    ],
)
def test_encoded_twin_loads_to_the_same_text_as_utf8(
    tmp_path: Path, encoding: str, prefix: bytes
) -> None:
    utf8 = load(write(tmp_path, "utf8.txt", BILINGUAL.encode("utf-8")))
    twin = load(write(tmp_path, f"{encoding}.txt", prefix + BILINGUAL.encode(encoding)))
    assert utf8.text == BILINGUAL_TEXT
    assert twin.text == utf8.text
    assert not twin.text.startswith("\ufeff")


def test_gb18030_sample_file_decodes_to_chinese() -> None:
    sample = Path(__file__).parent.parent / "samples" / "zh_rail_history.gb18030.txt"
    doc = load(SourceFile(sample, "samples/zh_rail_history.gb18030.txt", str(sample)))
    assert doc.text.startswith("蒸汽、钢轨与时刻表——铁路发展简史\n\n")
    assert doc.metadata["lang"] == "zh"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Café crème brûlée à la française, très élégant.", "cp1252"),
        ("Ein schöner Tag für Übungen", "cp1252"),
        ("naïve café", "cp1252"),
        ("Привет, как дела? Это русский текст.", "koi8-r"),
    ],
)
def test_legacy_single_byte_text_is_not_misread_as_gb18030(text: str, encoding: str) -> None:
    # A few sentences: charset-normalizer cannot tell single-byte code pages apart on less.
    text = " ".join([text] * 3)
    assert decode_text(text.encode(encoding), "x.txt") == text


def test_old_mac_and_windows_newlines_become_unix() -> None:
    assert decode_text(b"a\r\nb\rc\n", "x.txt") == "a\nb\nc\n"


# Bad input ----------------------------------------------------------------------------------


def test_empty_file(tmp_path: Path) -> None:
    assert "empty" in load_error(write(tmp_path, "empty.txt", b""))


def test_whitespace_only_file(tmp_path: Path) -> None:
    assert "empty" in load_error(write(tmp_path, "blank.md", " \n\t\n\u3000\n"))


def test_markdown_with_only_front_matter_is_empty(tmp_path: Path) -> None:
    assert "empty" in load_error(write(tmp_path, "meta.md", "---\ntitle: x\n---\n\n"))


def test_png_renamed_to_txt_is_a_binary_file(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"
    assert "binary file" in load_error(write(tmp_path, "image.txt", png))


def test_nul_bytes_in_utf8_text_are_a_binary_file(tmp_path: Path) -> None:
    assert "binary file" in load_error(write(tmp_path, "nul.md", b"hello\x00world"))


INFO_FILE = (
    b"This is demo.info, produced by makeinfo version 7.0 from demo.texi.\n\n"
    b"\x1f\nFile: demo.info,  Node: Top,  Next: Usage,  Up: (dir)\n\n"
    b"Demo\n****\n\n"
    b"\x00\x08[index\x00\x08]\n"
    b"* retention:                          Top.           (line 6)\n\n"
    b"   The demo program keeps copies for a number of days that you choose\n"
    b"when you install it, and removes older copies after each run.\n\n"
    b"\x1f\nTag Table:\nNode: Top\x7f71\n\x1f\nEnd Tag Table\n"
)


def test_info_file_with_node_separators_and_index_markers_loads(tmp_path: Path) -> None:
    doc = load(write(tmp_path, "demo.info", INFO_FILE))
    assert doc.text == (
        "This is demo.info, produced by makeinfo version 7.0 from demo.texi.\n\n"
        "Demo\n****\n\n"
        "* retention:                          Top.           (line 6)\n\n"
        "   The demo program keeps copies for a number of days that you choose when you install"
        " it, and removes older copies after each run."
    )
    assert doc.metadata["title"] == "Demo"


def test_info_markers_are_the_only_nul_bytes_a_text_file_may_hold(tmp_path: Path) -> None:
    assert "\x00" not in load(write(tmp_path, "markers.txt", INFO_FILE)).text
    # A NUL outside the marker pattern, or an unterminated marker, is still binary.
    broken = INFO_FILE.replace(b"\x00\x08]", b"]")
    assert "binary file" in load_error(write(tmp_path, "broken.info", broken))
    elf = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00>\x00\x01\x00\x00\x00"
    assert "binary file" in load_error(write(tmp_path, "program.info", elf))


def test_info_files_are_discovered(tmp_path: Path) -> None:
    from stitcher.loaders import discover

    (tmp_path / "manuals").mkdir()
    (tmp_path / "manuals" / "demo.info").write_bytes(INFO_FILE)
    found = discover([str(tmp_path / "manuals")])
    assert [f.doc_id for f in found.files] == ["manuals/demo.info"]


def test_undecodable_bytes(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "noise.txt", bytes(range(0x80, 0x100)) * 20))
    assert "cannot detect the text encoding" in message


def test_broken_bom_is_reported(tmp_path: Path) -> None:
    message = load_error(
        write(tmp_path, "odd.txt", b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00")
    )
    assert "utf-16-le" in message


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = write(tmp_path, "secret.txt", "text")
    real_open = open

    def refuse(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(src.path):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", refuse)
    assert "permission denied" in load_error(src)


def test_broken_symlink(tmp_path: Path) -> None:
    link = tmp_path / "dangling.txt"
    link.symlink_to(tmp_path / "gone.txt")
    assert "broken symlink" in load_error(SourceFile(link, "dangling.txt", str(link)))


def test_symlink_loop(tmp_path: Path) -> None:
    link = tmp_path / "loop.txt"
    link.symlink_to(link)
    assert "symlink loop" in load_error(SourceFile(link, "loop.txt", str(link)))


def test_unsupported_extension(tmp_path: Path) -> None:
    assert "unsupported file type '.png'" in load_error(write(tmp_path, "a.png", "text"))


def test_corrupt_pdf_and_docx(tmp_path: Path) -> None:
    assert "not a readable PDF" in load_error(write(tmp_path, "bad.pdf", b"%PDF-1.4 junk"))
    assert "not a readable .docx" in load_error(write(tmp_path, "bad.docx", b"PK\x03\x04junk"))


def test_invalid_front_matter(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "bad.md", "---\ntitle: [unclosed\n---\nBody text.\n"))
    assert "front matter is not valid YAML" in message


def test_front_matter_that_is_not_a_mapping(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "list.md", "---\n- a\n- b\n---\nBody text.\n"))
    assert "mapping" in message


def test_date_that_is_not_a_date(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "d.md", "---\ndate: next tuesday\n---\nBody.\n"))
    assert "'date' is not a date" in message


def test_50_mb_without_line_breaks_loads(tmp_path: Path) -> None:
    unit = b"lorem ipsum dolor sit amet "
    count = 50_000_000 // len(unit) + 1
    src = write(tmp_path, "huge.txt", unit * count + b"end")
    doc = load(src)
    assert len(doc.text) == len(unit) * count + 3
    assert doc.text.endswith("amet end")
    assert doc.metadata["lang"] == "other"  # Latin, but no English function words


def test_text_without_sentence_terminators_loads(tmp_path: Path) -> None:
    src = write(tmp_path, "list.txt", "alpha beta gamma\n\n没有句号的一行\n")
    assert load(src).text == "alpha beta gamma\n\n没有句号的一行"


# Hard-wrap joining --------------------------------------------------------------------------

ENGLISH_WRAPPED = """\
Braising is one of the oldest cooking methods and one of the most
forgiving. The idea is simple: brown the food in a little fat, add a
modest amount of liquid, cover the pot and let it cook gently for a
long time. Tough cuts are the classic candidates, because their
connective tissue slowly turns into gelatin.

A second paragraph that is also wrapped at roughly the same width
to show that blank lines keep paragraphs apart."""

CHINESE_WRAPPED = """\
本机出厂前已经过严格检验，开箱后请先核对附件是否齐全：梭芯四只、梭壳一只
、机针一包、螺丝刀大小各一把、油壶一只。机头应当安放在平稳的台板上，台板
下方的皮带轮要与 Weaviate 机头上轮对齐。"""


def test_english_hard_wrap_is_joined_with_spaces() -> None:
    assert rewrap(ENGLISH_WRAPPED) == (
        "Braising is one of the oldest cooking methods and one of the most forgiving. The idea "
        "is simple: brown the food in a little fat, add a modest amount of liquid, cover the pot "
        "and let it cook gently for a long time. Tough cuts are the classic candidates, because "
        "their connective tissue slowly turns into gelatin.\n\n"
        "A second paragraph that is also wrapped at roughly the same width to show that blank "
        "lines keep paragraphs apart."
    )


def test_chinese_hard_wrap_is_joined_without_spaces() -> None:
    assert rewrap(CHINESE_WRAPPED) == (
        "本机出厂前已经过严格检验，开箱后请先核对附件是否齐全：梭芯四只、梭壳一只、机针一包、"
        "螺丝刀大小各一把、油壶一只。机头应当安放在平稳的台板上，台板下方的皮带轮要与 Weaviate "
        "机头上轮对齐。"
    )


def test_hyphen_at_line_end_joins_without_space() -> None:
    text = "The mixture should be stirred often, especially with a well-\nknown brand of pot."
    assert rewrap(text) == (
        "The mixture should be stirred often, especially with a well-known brand of pot."
    )


@pytest.mark.parametrize(
    "text",
    [
        # list items
        "Things to bring on the trip this summer:\n- a tent that is waterproof\n- two stoves",
        "1. first step of a longer process here\n2. second step of the same process",
        "一、问题描述和背景介绍以及一些说明\n二、解决方案和具体的实现步骤",
        # a short heading line above a long line
        "一、问题描述\n此文默认大家对RAG的工作原理及流程有所了解，还没了解的可以自行查找相应资料",
        "Introduction\nThis chapter explains how synchronisation works between devices",
        # table rows and aligned columns
        "| key | value |\n|-----|-------|\n| remote | name of the archive |",
        "remote      none      name of the archive\ninterval    15m       how often it runs",
        # indented code, Chinese paragraph indent, quotes, headings
        "Run the following command to sync now\n    fieldnote sync --all --verbose now",
        "第一段文字在这里结束了但是没有句号\n\u3000\u3000第二段以全角空格缩进开头的文字",
        "> quoted text that goes on for quite a while\n>> and a deeper reply on the next line",
        "# A heading that is fairly long for a heading\nThen body text follows right below it",
        # a two-line paragraph whose first line is a finished sentence
        "This sentence is complete and ends here.\nThis one starts on a new line on purpose.",
    ],
)
def test_structured_lines_are_kept(text: str) -> None:
    assert rewrap(text) == text


def test_quoted_lines_of_one_depth_are_joined_without_their_prefix() -> None:
    text = "> quoted text that goes on for quite a while\n> and continues on the next line"
    assert rewrap(text) == (
        "> quoted text that goes on for quite a while and continues on the next line"
    )


def test_code_fences_are_kept_line_by_line() -> None:
    text = (
        "```\nfieldnote sync --exclude drafts --exclude archive/old\n"
        "fieldnote status --long --show-hashes\n```"
    )
    assert rewrap(text) == text


def test_finished_sentences_inside_a_wrapped_paragraph_are_joined_too() -> None:
    text = (
        "Start by drying the meat thoroughly with paper towels and seasoning\n"
        "it well. Brown it in batches so the pot never crowds and steams.\n"
        "Deglaze with wine, stock or even water, scraping the browned bits\n"
        "from the bottom."
    )
    assert "\n" not in rewrap(text)


def _non_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


@given(st.lists(st.text(alphabet="ab 中文。.,-|#>\n", max_size=40), max_size=8))
def test_rewrap_only_removes_whitespace(lines: list[str]) -> None:
    text = "\n".join(lines)
    joined = rewrap(text)
    assert _non_space(joined) == _non_space(text)
    assert joined.count("\n\n") >= 0 and len(joined) <= len(text)


@given(st.text(alphabet=st.characters(blacklist_characters="\n")))
def test_rewrap_leaves_single_lines_alone(line: str) -> None:
    assert rewrap(line) == line


def test_plain_text_file_is_rewrapped(tmp_path: Path) -> None:
    doc = load(write(tmp_path, "wrapped.txt", CHINESE_WRAPPED + "\n"))
    assert "\n" not in doc.text


# Markdown -----------------------------------------------------------------------------------

FRONT_MATTER_DOC = """\
---
title: 豆腐的做法
date: 2023-11-05
tags: 美食, tofu
Published-At: "2024-02-03T04:05:06+08:00"
author: 林晓雯
draft: false
rating: 4.5
pages: 12
aliases: [tofu, 豆腐]
nested: {a: 1}
empty:
---

# Not the title

做豆腐并不神秘，真正需要的只是耐心。
"""


def test_front_matter_becomes_typed_metadata(tmp_path: Path) -> None:
    doc = load(write(tmp_path, "tofu.md", FRONT_MATTER_DOC))
    meta = doc.metadata
    assert doc.text == "# Not the title\n\n做豆腐并不神秘，真正需要的只是耐心。"
    assert meta["title"] == "豆腐的做法"
    assert meta["date"] == dt.datetime(2023, 11, 5, tzinfo=UTC)
    assert meta["tags"] == ["美食", "tofu"]
    assert meta["published_at"] == dt.datetime(
        2024, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=8))
    )
    assert meta["author"] == "林晓雯"
    assert meta["draft"] is False
    assert meta["rating"] == 4.5
    assert meta["pages"] == 12
    assert meta["aliases"] == ["tofu", "豆腐"]
    assert meta["nested"] == '{"a": 1}'
    assert "empty" not in meta
    assert meta["lang"] == "zh"


def test_markdown_title_is_the_first_h1_outside_code(tmp_path: Path) -> None:
    text = "```bash\n# not a heading\n```\n\n## Sub\n\n# Real Title #\n\nBody text here.\n"
    assert load(write(tmp_path, "t.md", text)).metadata["title"] == "Real Title"


def test_markdown_table_and_code_block_survive(tmp_path: Path) -> None:
    sample = Path(__file__).parent.parent / "samples" / "en_fieldnote_sync_manual.md"
    doc = load(SourceFile(sample, "samples/en_fieldnote_sync_manual.md", str(sample)))
    assert "\n|------------|" in doc.text
    assert doc.metadata["title"] == "Fieldnote Manual, Chapter 4: Synchronising Notebooks"
    assert doc.metadata["tags"] == ["manual", "software", "sync"]


# HTML ---------------------------------------------------------------------------------------

HTML_DOC = """\
<!DOCTYPE html>
<html lang="en"><head>
<title>  The Keepers
 of Cape Merrow </title>
<meta property="article:published_time" content="2022-06-14T09:30:00Z">
<meta name="keywords" content="lighthouse, history">
<style>body { color: red } .zqxv-style {}</style>
<script>var secret = "zqxv-script-text";</script>
</head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Cape Merrow</h1>
<p>For almost a century, the <b>light</b>
   was tended by hand.</p><p>Second&nbsp;paragraph<br>with a line break.</p>
<!-- a comment zqxv-comment -->
<div hidden>zqxv-hidden</div>
<ul><li>one</li><li>two</li></ul>
<table><tr><th>Year</th><th>Keeper</th></tr><tr><td>1871</td><td>Elias Brant</td></tr></table>
<pre>line one
  indented   line</pre>
<script type="text/javascript">document.write("zqxv-late-script")</script>
</body></html>
"""


def test_html_visible_text_and_metadata(tmp_path: Path) -> None:
    doc = load(write(tmp_path, "page.html", HTML_DOC))
    assert doc.text == (
        "Cape Merrow\n\n"
        "For almost a century, the light was tended by hand.\n\n"
        "Second paragraph\nwith a line break.\n\n"
        "one\n\ntwo\n\n"
        "Year\tKeeper\n\n1871\tElias Brant\n\n"
        "line one\n  indented   line"
    )
    assert "zqxv" not in doc.text
    assert doc.metadata["title"] == "The Keepers of Cape Merrow"
    assert doc.metadata["date"] == dt.datetime(2022, 6, 14, 9, 30, tzinfo=UTC)
    assert doc.metadata["tags"] == ["lighthouse", "history"]


def test_html_sample_has_no_script_text() -> None:
    sample = Path(__file__).parent.parent / "samples" / "cape_merrow_lighthouse.html"
    doc = load(SourceFile(sample, "samples/cape_merrow_lighthouse.html", str(sample)))
    assert "zqxv-script-text-must-not-be-indexed" not in doc.text
    assert doc.metadata["title"] == "The Keepers of Cape Merrow Light"
    assert doc.metadata["date"] == dt.datetime(2022, 6, 14, tzinfo=UTC)


# PDF ----------------------------------------------------------------------------------------


def make_pdf(
    pages: list[list[str]],
    info: dict[str, str],
    *,
    font: bytes = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    extra: dict[int, bytes] | None = None,
    shown_by: str = "Tj",
) -> bytes:
    """A minimal valid PDF: one text object per page (Helvetica unless `font`), one Tj per line.

    With `shown_by="TJ"` each line is one TJ array in which the gaps between words are drawn
    as position adjustments, not space characters (as LaTeX and DocBook PDFs draw them).
    `extra` adds objects numbered from 1000 (a font descriptor, a font file).
    """

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    def show(line: str) -> str:
        if shown_by == "Tj":
            return f"({escape(line)}) Tj"
        return "[" + " -333 ".join(f"({escape(word)})" for word in line.split(" ")) + "] TJ"

    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: font,
        4: ("<< " + " ".join(f"/{k} ({escape(v)})" for k, v in info.items()) + " >>").encode(),
        **(extra or {}),
    }
    kids = []
    for number, lines in enumerate(pages):
        page_id, content_id = 5 + 2 * number, 6 + 2 * number
        kids.append(f"{page_id} 0 R")
        ops = " ".join(f"{show(line)} 0 -16 Td" for line in lines)
        stream = zlib.compress(f"BT /F1 12 Tf 72 720 Td {ops} ET".encode())
        objects[page_id] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
        ).encode()
        objects[content_id] = (
            f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode()
            + stream
            + b"\nendstream"
        )
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for number in range(1, size):
        if number in offsets:
            out += f"{offsets[number]:010d} 00000 n \n".encode()
        else:
            out += b"0000000000 65535 f \n"  # a number no object uses
    out += f"trailer\n<< /Size {size} /Root 1 0 R /Info 4 0 R >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_pdf_pages_and_page_starts(tmp_path: Path) -> None:
    pdf = make_pdf(
        [
            ["First page opens here and goes on", "across a second line of text."],
            ["Second page begins with this sentence."],
        ],
        {"Title": "Two Pages", "CreationDate": "D:20240501120000+02'00'", "Keywords": "a, b"},
    )
    doc = load(write(tmp_path, "two.pdf", pdf))
    starts = doc.metadata["page_starts"]
    assert starts[0] == 0 and len(starts) == 2
    assert doc.text[: starts[1]].startswith("First page opens here")
    assert doc.text[: starts[1]].endswith("\n\n")
    assert doc.text[starts[1] :] == "Second page begins with this sentence."
    assert doc.metadata["title"] == "Two Pages"
    assert doc.metadata["date"] == dt.datetime(
        2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2))
    )
    assert doc.metadata["tags"] == ["a", "b"]


def test_pdf_words_drawn_without_space_characters_keep_their_spaces(tmp_path: Path) -> None:
    # The gaps are TJ adjustments, narrower than the font's (unused) space slot: pypdf judges
    # a gap by that slot's width and ran the words together ("Thebasenameisthepart...").
    widths = " ".join(["1500"] + ["500"] * 94).encode()
    font = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 32 /LastChar 126"
        b" /Widths [" + widths + b"] >>"
    )
    lines = ["The basename is the part after the final slash.", "It names the file alone."]
    doc = load(write(tmp_path, "gaps.pdf", make_pdf([lines], {}, font=font, shown_by="TJ")))
    assert doc.text.split("\n") == lines


def test_pdf_line_end_hyphens_are_decided_like_any_text(tmp_path: Path) -> None:
    # A page of prose wrapped at 60 columns: "recom-" + "pile" is a word the document also
    # spells whole ("recompile" below), "well-" + "known" is not, so its hyphen stays.
    lines = [
        "Every night the build system starts from a clean tree and",
        "is careful to recompile only the files that changed since",
        "the last run, which is a simple and well-known trick. A full",
        "rebuild takes an hour on the old machine in the basement, so",
        "the careful one, which takes minutes, is a good deal: recom-",
        "pile what changed and nothing else. It is a simple and well-",
        "known trick, and nobody waits for the morning report any more",
        "while the shelf of printed logs has gone to the recycling bin.",
    ]
    doc = load(write(tmp_path, "hyphens.pdf", make_pdf([lines], {})))
    assert "\ufffe" not in doc.text
    assert "a good deal: recompile what changed" in doc.text
    assert "It is a simple and well-known trick, and" in doc.text


def test_loading_a_pdf_writes_nothing_to_stderr(tmp_path: Path) -> None:
    # A CFF font (/FontFile3) made pypdf's text extraction log "fontTools is required to fully
    # parse the encoding of a CFF Type1 font" on every page (issue 16).
    cff = zlib.compress(b"not really a font program")
    widths = " ".join(["500"] * 95).encode()
    font = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+CMMI9 /FirstChar 32 /LastChar 126"
        b" /Widths [" + widths + b"] /FontDescriptor 1000 0 R >>"
    )
    extra = {
        1000: b"<< /Type /FontDescriptor /FontName /ABCDEF+CMMI9 /Flags 4"
        b" /FontBBox [0 0 500 700] /ItalicAngle 0 /Ascent 700 /Descent 0 /CapHeight 700"
        b" /StemV 80 /FontFile3 1001 0 R >>",
        1001: f"<< /Subtype /Type1C /Length {len(cff)} /Filter /FlateDecode >>\nstream\n".encode()
        + cff
        + b"\nendstream",
    }
    pdf = make_pdf([["A page set in a CFF font."]], {}, font=font, extra=extra)
    path = write(tmp_path, "cff.pdf", pdf).path
    # In a fresh interpreter, as the CLI runs: pytest's own log capture would hide a warning
    # that Python's last-resort handler prints to stderr.
    code = (
        "import sys, pathlib; from stitcher.loaders import SourceFile, load; "
        "path = pathlib.Path(sys.argv[1]); "
        "print(load(SourceFile(path=path, doc_id=path.name, source=str(path))).text)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "A page set in a CFF font.\n"


def test_pdf_glyph_mapped_to_a_lone_surrogate_is_dropped(tmp_path: Path) -> None:
    from tests.test_faults import _pdf_with_lone_surrogate

    pdf = _pdf_with_lone_surrogate(["The keeper wrote A letter every day.", "Nobody answered."])
    doc = load(write(tmp_path, "broken.pdf", pdf))
    assert doc.text == "The keeper wrote  letter every day.\nNobody answered."


def test_truncated_pdf(tmp_path: Path) -> None:
    pdf = make_pdf([["Some text on the page."]], {})
    assert "not a readable PDF" in load_error(write(tmp_path, "cut.pdf", pdf[: len(pdf) // 2]))


def test_pdf_without_text_is_empty(tmp_path: Path) -> None:
    assert "empty" in load_error(write(tmp_path, "blank.pdf", make_pdf([[]], {})))


# DOCX ---------------------------------------------------------------------------------------


def test_docx_paragraphs_tables_and_core_properties(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("第一段：缝纫机的使用说明。")
    document.add_paragraph("")
    document.add_paragraph("Second paragraph in English.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "梭芯"
    table.rows[0].cells[1].text = "四只"
    document.add_paragraph("After the table.")
    document.core_properties.title = "使用说明"
    document.core_properties.created = dt.datetime(2023, 1, 2, 3, 4, 5)
    document.core_properties.keywords = "manual; 缝纫机"
    path = tmp_path / "manual.docx"
    document.save(str(path))
    doc = load(SourceFile(path, "manual.docx", str(path)))
    assert doc.text == (
        "第一段：缝纫机的使用说明。\n\nSecond paragraph in English.\n\n"
        "梭芯\t四只\n\nAfter the table."
    )
    assert doc.metadata["title"] == "使用说明"
    assert doc.metadata["date"] == dt.datetime(2023, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert doc.metadata["tags"] == ["manual", "缝纫机"]


def test_docx_with_broken_xml(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("text")
    buffer = io.BytesIO()
    document.save(buffer)
    broken = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as zin,
        zipfile.ZipFile(broken, "w") as zout,
    ):
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item, data[:200] if item.filename == "word/document.xml" else data)
    assert "not a readable .docx" in load_error(write(tmp_path, "broken.docx", broken.getvalue()))


# Metadata -----------------------------------------------------------------------------------


def test_defaults_title_from_stem_and_date_from_mtime(tmp_path: Path) -> None:
    src = write(tmp_path, "notes.v2.txt", "Some text.")
    os.utime(src.path, (1_700_000_000, 1_700_000_000))
    meta = load(src).metadata
    assert meta["title"] == "notes.v2"
    assert meta["date"] == dt.datetime.fromtimestamp(1_700_000_000, tz=UTC)
    assert meta["tags"] == []


def test_sidecar_wins_over_front_matter(tmp_path: Path) -> None:
    src = write(tmp_path, "a.md", "---\ntitle: Inside\nauthor: Ann\n---\nBody text.\n")
    sidecar = src.path.with_name("a.md.meta.json")
    sidecar.write_text(
        json.dumps({"title": "Outside", "Reviewed On": "2024-01-02", "tags": ["x", "y"]}),
        encoding="utf-8",
    )
    meta = load(src, extra_tags=["cli"]).metadata
    assert meta["title"] == "Outside"
    assert meta["author"] == "Ann"
    assert meta["reviewed_on"] == dt.datetime(2024, 1, 2, tzinfo=UTC)
    assert meta["tags"] == ["x", "y", "cli"]


def test_invalid_sidecar_is_a_load_error(tmp_path: Path) -> None:
    src = write(tmp_path, "a.txt", "Body text.")
    src.path.with_name("a.txt.meta.json").write_text("{not json", encoding="utf-8")
    assert "a.txt.meta.json is not valid UTF-8 JSON" in load_error(src)
    src.path.with_name("a.txt.meta.json").write_text("[1, 2]", encoding="utf-8")
    assert "must hold a JSON object" in load_error(src)


def test_tags_from_dirs_and_extra_tags(tmp_path: Path) -> None:
    path = tmp_path / "samples" / "zh" / "recipes" / "a.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ntags: [food, zh]\n---\n豆腐。\n", encoding="utf-8")
    src = SourceFile(path, "samples/zh/recipes/a.md", str(path))
    assert load(src, extra_tags=["demo"], tags_from_dirs=True).metadata["tags"] == [
        "food",
        "zh",
        "demo",
        "recipes",
    ]
    assert load(src, tags_from_dirs=False).metadata["tags"] == ["food", "zh"]


def test_explicit_lang_is_kept(tmp_path: Path) -> None:
    src = write(tmp_path, "a.md", "---\nlang: fr\n---\nBonjour tout le monde.\n")
    assert load(src).metadata["lang"] == "fr"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("茶树喜欢温暖湿润的气候，也喜欢酸性土壤。", "zh"),
        (
            "LlamaIndex 推出 SQLAutoVectorQueryEngine，结合 Text-to-SQL 与语义搜索完成 RAG 查询",
            "zh",
        ),
        ("The tower was finished in the spring of 1871 after two winters of delays.", "en"),
        ("Hybrid search demo", "en"),
        (
            "Le phare du cap fut achevé au printemps après deux hivers de retard, et son premier "
            "gardien, un ancien charpentier de marine, écrivit dans le journal que la lampe "
            "était allumée au coucher du soleil devant tout le village rassemblé sur la jetée.",
            "other",
        ),
        ("Привет, как дела? Это русский текст.", "other"),
        ("これは日本語のテキストです。漢字も少しあります。", "other"),
        ("12345 !!!", "other"),
    ],
)
def test_detect_lang(text: str, lang: str) -> None:
    assert detect_lang(text) == lang


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("published-at", "published_at"),
        ("Published At", "published_at"),
        ("2nd", "_2nd"),
        ("__x__", "x"),
        ("作者", None),
        ("a.b/c", "a_b_c"),
    ],
)
def test_sanitise_key(key: str, expected: str | None) -> None:
    assert sanitise_key(key) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01", dt.datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T10:00:00", dt.datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01 10:00:00 +0800", dt.datetime(2024, 5, 1, 2, tzinfo=UTC)),
        ("2024-05-01T10:00Z", dt.datetime(2024, 5, 1, 10, tzinfo=UTC)),
        (dt.date(2024, 5, 1), dt.datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-13-01", None),
        ("May 1st", None),
        (20240501, None),
    ],
)
def test_parse_date(value: object, expected: dt.datetime | None) -> None:
    assert parse_date(value) == expected


def test_json_like_values() -> None:
    assert json_like([1, None, dt.date(2024, 1, 2)]) == ["1", "2024-01-02"]
    assert json_like(float("nan")) is None
    assert json_like([]) is None
    assert json_like("not a date 2024-01-01") == "not a date 2024-01-01"


# A sentence that runs from one page on to the next, with a footnote at the foot of the first
# page (its number run into the text, as LaTeX's superscripts come out of PDFium) and a running
# header on each: written for this test.
_RUN_ON_PAGES = [
    [
        "Field Notes on Packaging 1 / 3",
        "The archive keeps every upload for a week before it is published, and",
        "each maintainer is told by mail when a build fails on any of the ports1 that",
        "1A port is one processor architecture, such as arm64 or riscv64.",
    ],
    [
        "Field Notes on Packaging 2 / 3",
        "the archive builds for, so that nobody has to watch the logs by hand.",
        "Short uploads are rare.",
        "$ dput ftp-master hello_1.0-1_source.changes",
    ],
    [
        "Field Notes on Packaging 3 / 3",
        "Uploads go to a queue first.",
    ],
]


def test_pdf_sentence_across_a_page_break_is_not_cut(tmp_path: Path) -> None:
    doc = load(write(tmp_path, "runon.pdf", make_pdf(_RUN_ON_PAGES, {})))
    # The page's own lines are rewrapped; the page break is one line break in the sentence.
    sentence = (
        "The archive keeps every upload for a week before it is published, and "
        "each maintainer is told by mail when a build fails on any of the ports1 that\n"
        "the archive builds for, so that nobody has to watch the logs by hand."
    )
    assert doc.text.startswith(sentence)
    # The footnote moved after the sentence it interrupted, a paragraph of its own.
    footnote = "1A port is one processor architecture, such as arm64 or riscv64."
    assert f"by hand.\n\n{footnote}\n\nShort uploads are rare." in doc.text
    # The running header is gone; the page ending on a command is not run on to the next.
    assert "Field Notes" not in doc.text
    assert "hello_1.0-1_source.changes\n\nUploads go to a queue first." in doc.text
    starts = doc.metadata["page_starts"]
    assert doc.text[starts[1] :].startswith("the archive builds for")
    assert doc.text[starts[2] :] == "Uploads go to a queue first."
