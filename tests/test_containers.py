"""EPUB, OpenDocument text, RTF and e-mail: text, metadata and structure, and bad input.

Every file is built here (tests/container_files.py); each golden test states the whole stored
text, so a change in what chunk offsets refer to shows up as a diff.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import zipfile
from pathlib import Path

import pytest
from container_files import eml, epub, mbox, odt, xhtml

from stitcher.errors import LoadError
from stitcher.loaders import EmptyDocument, SourceFile, load, zipped
from stitcher.loaders.rewrap import rewrap

UTC = dt.timezone.utc


def write(tmp_path: Path, name: str, content: bytes) -> SourceFile:
    path = tmp_path / "docs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return SourceFile(path=path, doc_id=f"docs/{name}", source=str(path))


def load_error(src: SourceFile) -> str:
    with pytest.raises(LoadError) as caught:
        load(src)
    message = str(caught.value)
    assert message.startswith(f"{src.source}: "), message
    assert "\n" not in message
    return message


# -- EPUB ---------------------------------------------------------------------------------------

EPUB_METADATA = """
<dc:title>The Harbour Book</dc:title>
<dc:creator>Ann Smith</dc:creator>
<dc:creator>Bo Chen</dc:creator>
<dc:date>2019</dc:date>
<dc:language>en-GB</dc:language>
<dc:subject>Boats</dc:subject>
<dc:subject>Weather</dc:subject>
"""
CHAPTER_ONE = xhtml(
    "<h1>1. Tides</h1>\n<p>The tide turns twice a day,\n   and the harbour empties.</p>\n"
    "<pre>$ tides --port Falmouth\n  high 06:12</pre>\n"
    "<ul><li>rope</li><li>anchor</li></ul>"
)
CHAPTER_TWO = xhtml(
    "<h1>2. Knots</h1><table><tr><th>Knot</th><th>Use</th></tr>"
    "<tr><td>Bowline</td><td>a fixed loop</td></tr></table><p>Practise each knot.</p>"
)
NAV = xhtml('<nav epub:type="toc"><ol><li><a href="one.xhtml">1. Tides</a></li></ol></nav>')


def test_epub_chapters_in_spine_order_with_structure_and_metadata(tmp_path: Path) -> None:
    data = epub(
        [("two.xhtml", CHAPTER_TWO), ("nav.xhtml", NAV), ("one.xhtml", CHAPTER_ONE)],
        metadata=EPUB_METADATA,
        spine=["nav.xhtml", "one.xhtml", "two.xhtml"],  # not the manifest's order
    )
    document = load(write(tmp_path, "book.epub", data))
    assert document.text == (
        "1. Tides\n\n"
        "The tide turns twice a day, and the harbour empties.\n\n"
        "$ tides --port Falmouth\n  high 06:12\n\n"
        "rope\n\nanchor\n\n"
        "2. Knots\n\n"
        "Knot\tUse\n\nBowline\ta fixed loop\n\n"
        "Practise each knot."
    )
    meta = document.metadata
    assert meta["title"] == "The Harbour Book"
    assert meta["author"] == "Ann Smith, Bo Chen"
    assert meta["date"] == dt.datetime(2019, 1, 1, tzinfo=UTC)
    assert meta["language"] == "en-GB"
    assert meta["tags"] == ["Boats", "Weather"]
    assert meta["lang"] == "en"


def test_epub_in_chinese_and_sections_listed_as_items_of_their_own(tmp_path: Path) -> None:
    """sisu's books list "file#section" items; each file is read once. The title is Chinese,
    the publication date is preferred among EPUB 2's dated events."""
    chapter = xhtml("<h1>第一章 潮汐</h1><p>潮水每天涨落两次，港口随之变空。</p>")
    data = epub(
        [("ch1.xhtml", chapter)],
        metadata=(
            "<dc:title>港口之书</dc:title>"
            '<dc:date opf:event="modification">2021-03-04</dc:date>'
            '<dc:date opf:event="publication">2020-02-03</dc:date>'
        ),
        extra=[],
    )
    # Add a second manifest item that points into the same file.
    data = _rewrite(
        data,
        "OEBPS/content.opf",
        lambda opf: opf.replace(
            '<itemref idref="c0"/>',
            '<itemref idref="c0"/><itemref idref="c0s"/>',
        ).replace(
            "</manifest>",
            '<item id="c0s" href="ch1.xhtml#s2" media-type="application/xhtml+xml"/></manifest>',
        ),
    )
    document = load(write(tmp_path, "港口.epub", data))
    assert document.text == "第一章 潮汐\n\n潮水每天涨落两次，港口随之变空。"
    assert document.metadata["title"] == "港口之书"
    assert document.metadata["date"] == dt.datetime(2020, 2, 3, tzinfo=UTC)
    assert document.metadata["lang"] == "zh"


def _rewrite(data: bytes, member: str, change: object) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == member:
                content = change(content.decode("utf-8")).encode("utf-8")  # type: ignore[operator]
            archive.writestr(info, content)
    return buffer.getvalue()


def test_epub_without_container_xml_finds_its_only_opf(tmp_path: Path) -> None:
    data = epub([("a.xhtml", xhtml("<p>Found anyway.</p>"))])
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info in source.infolist():
            if info.filename != "META-INF/container.xml":
                archive.writestr(info, source.read(info))
    assert load(write(tmp_path, "b.epub", buffer.getvalue())).text == "Found anyway."


def test_epub_of_images_only_is_an_empty_document(tmp_path: Path) -> None:
    data = epub([("cover.xhtml", xhtml('<div><img src="cover.png" alt=""/></div>'))])
    with pytest.raises(EmptyDocument):
        load(write(tmp_path, "comic.epub", data))


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE package [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<package xmlns="http://www.idpf.org/2007/opf"><metadata>&lol3;</metadata></package>
"""


def _zip_of(**members: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("not-a-zip.epub", b"PK\x03\x04 but not really a zip file", "not a zip archive"),
        ("text.epub", b"just some text", "not a zip archive"),
        ("no-opf.epub", _zip_of(mimetype="application/epub+zip"), "no package document"),
    ],
)
def test_malformed_epub_is_a_clear_load_error(
    tmp_path: Path, name: str, data: bytes, expected: str
) -> None:
    message = load_error(write(tmp_path, name, data))
    assert "not a readable EPUB file" in message and expected in message


def test_epub_with_broken_parts_names_the_part(tmp_path: Path) -> None:
    good = epub([("a.xhtml", xhtml("<p>Text.</p>"))])
    missing = _rewrite(good, "OEBPS/content.opf", lambda opf: opf.replace('"a.xhtml"', '"b.xhtml"'))
    assert "'OEBPS/b.xhtml' is missing" in load_error(write(tmp_path, "m.epub", missing))
    broken = _rewrite(good, "OEBPS/content.opf", lambda opf: opf.replace("</spine>", "<spine>"))
    assert "'OEBPS/content.opf' is not well-formed XML" in load_error(
        write(tmp_path, "x.epub", broken)
    )
    bomb = _rewrite(good, "OEBPS/content.opf", lambda opf: BILLION_LAUGHS)
    assert "declares XML entities, which are refused" in load_error(
        write(tmp_path, "lol.epub", bomb)
    )
    drm = epub(
        [("a.xhtml", xhtml("<p>Text.</p>"))],
        extra=[
            (
                "META-INF/encryption.xml",
                '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
                '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
                '<enc:CipherData><enc:CipherReference URI="OEBPS/a.xhtml"/></enc:CipherData>'
                "</enc:EncryptedData></encryption>",
            )
        ],
    )
    assert "encrypted (DRM)" in load_error(write(tmp_path, "drm.epub", drm))


def test_epub_font_obfuscation_is_not_drm(tmp_path: Path) -> None:
    data = epub(
        [("a.xhtml", xhtml("<p>Readable text.</p>"))],
        extra=[
            (
                "META-INF/encryption.xml",
                '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
                '<enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
                '<enc:CipherData><enc:CipherReference URI="OEBPS/font.otf"/></enc:CipherData>'
                "</enc:EncryptedData></encryption>",
            )
        ],
    )
    assert load(write(tmp_path, "fonts.epub", data)).text == "Readable text."


def test_zip_bomb_is_refused_before_it_is_inflated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap is checked against the sizes the archive declares, before reading: a member of
    2 MB of zeros (2 KB packed) against a cap of 1 MB here, as 300 MB would be against 256 MB."""
    monkeypatch.setattr(zipped, "MAX_UNPACKED_BYTES", 1 << 20)
    chapter = xhtml("<p>" + "0" * (2 << 20) + "</p>")
    data = epub([("big.xhtml", chapter)])
    assert len(data) < 20_000
    message = load_error(write(tmp_path, "bomb.epub", data))
    assert "over the limit of 1,048,576 bytes per document (a zip bomb?)" in message


def test_many_chapters_share_one_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zipped, "MAX_UNPACKED_BYTES", 100_000)
    chapters = [(f"c{i}.xhtml", xhtml("<p>" + "word " * 5000 + "</p>")) for i in range(5)]
    assert "over the limit" in load_error(write(tmp_path, "long.epub", epub(chapters)))


def test_corrupt_member_is_a_load_error(tmp_path: Path) -> None:
    data = bytearray(epub([("a.xhtml", xhtml("<p>" + "Some text. " * 200 + "</p>"))]))
    at = data.find(b"a.xhtml") + 200  # inside the deflated chapter
    data[at : at + 40] = b"\xff" * 40
    message = load_error(write(tmp_path, "corrupt.epub", bytes(data)))
    assert "not a readable EPUB file" in message


# -- OpenDocument text ---------------------------------------------------------------------------

ODT_BODY = "".join(
    [
        '<text:sequence-decls><text:sequence-decl text:display-outline-level="0" '
        'text:name="Table"/></text:sequence-decls>',
        '<text:h text:outline-level="1">Harbour   notes</text:h>',
        '<text:p>The tide turns<text:s text:c="3"/>twice\n  a day,<text:tab/>and the '
        "<text:span>harbour</text:span> empties"
        '<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>'
        "<text:note-body><text:p>Except at neaps.</text:p></text:note-body></text:note>."
        "<text:line-break/>A second line.</text:p>",
        "<text:p>Kept<office:annotation><dc:creator>Rev</dc:creator><text:p>a comment</text:p>"
        "</office:annotation> text.</text:p>",
        '<text:tracked-changes><text:changed-region text:id="c1"><text:deletion>'
        "<text:p>deleted words</text:p></text:deletion></text:changed-region>"
        "</text:tracked-changes>",
        "<text:list><text:list-item><text:p>rope</text:p></text:list-item>\n"
        "<text:list-item><text:p>anchor</text:p><text:list><text:list-item><text:p>chain</text:p>"
        "</text:list-item></text:list></text:list-item></text:list>",
        '<text:p text:style-name="P1">$ tides --port Falmouth</text:p>',
        '<text:p text:style-name="P1"><text:s text:c="2"/>high 06:12</text:p>',
        '<text:p text:style-name="P1"/>',
        "<text:p>After the listing.</text:p>",
        '<table:table table:name="T"><table:table-column table:number-columns-repeated="3"/>',
        "<table:table-header-rows><table:table-row><table:table-cell><text:p>Knot</text:p>"
        "</table:table-cell><table:table-cell><text:p>Use</text:p></table:table-cell>"
        "<table:table-cell/></table:table-row></table:table-header-rows>",
        '<table:table-row><table:table-cell table:number-columns-spanned="2">'
        "<text:p>Bowline</text:p><text:p>(a loop)</text:p></table:table-cell>"
        "<table:covered-table-cell/><table:table-cell><text:p>fixed</text:p></table:table-cell>"
        "</table:table-row></table:table>",
    ]
)
ODT_META = """
<dc:title>Harbour Notes</dc:title>
<meta:initial-creator>Ann Smith</meta:initial-creator>
<dc:creator>Someone Else</dc:creator>
<meta:creation-date>2023-04-05T06:07:08.123456789</meta:creation-date>
<dc:date>2024-01-01T00:00:00</dc:date>
<meta:keyword>boats</meta:keyword><meta:keyword>tides</meta:keyword>
<dc:subject>Sailing</dc:subject>
<dc:description>Notes from the harbour.</dc:description>
<dc:language>en-GB</dc:language>
"""
ODT_STYLES = (
    '<style:style style:name="P1" style:family="paragraph" '
    'style:parent-style-name="Preformatted_20_Text"/>'
)


def test_odt_text_structure_and_metadata(tmp_path: Path) -> None:
    document = load(write(tmp_path, "notes.odt", odt(ODT_BODY, meta=ODT_META, styles=ODT_STYLES)))
    assert document.text == (
        "Harbour notes\n\n"
        "The tide turns   twice a day,\tand the harbour empties.\nA second line.\n\n"
        "[1] Except at neaps.\n\n"
        "Kept text.\n\n"
        "rope\n\nanchor\n\nchain\n\n"
        "$ tides --port Falmouth\n  high 06:12\n\n"
        "After the listing.\n\n"
        "Knot\tUse\n\n"
        "Bowline (a loop)\tfixed"
    )
    meta = document.metadata
    assert meta["title"] == "Harbour Notes"
    assert meta["author"] == "Ann Smith"
    assert meta["date"] == dt.datetime(2023, 4, 5, 6, 7, 8, 123456, tzinfo=UTC)
    assert meta["tags"] == ["boats", "tides"]
    assert meta["subject"] == "Sailing"
    assert meta["description"] == "Notes from the harbour."
    assert meta["language"] == "en-GB"


def test_odt_in_chinese(tmp_path: Path) -> None:
    body = (
        "<text:h>会议纪要</text:h><text:p>明天上午十点在三楼会议室开会，"
        "<text:span>请准时参加</text:span>。</text:p>"
    )
    document = load(
        write(tmp_path, "纪要.odt", odt(body, meta="<meta:keyword>会议，通知</meta:keyword>"))
    )
    assert document.text == "会议纪要\n\n明天上午十点在三楼会议室开会，请准时参加。"
    assert document.metadata["tags"] == ["会议", "通知"]
    assert document.metadata["title"] == "纪要"  # no dc:title: the file name
    assert document.metadata["lang"] == "zh"


def test_malformed_odt_is_a_clear_load_error(tmp_path: Path) -> None:
    def check(name: str, data: bytes, expected: str) -> None:
        message = load_error(write(tmp_path, name, data))
        assert "not a readable OpenDocument text file" in message and expected in message

    check("zip.odt", b"not a zip", "not a zip archive")
    check(
        "sheet.odt",
        odt("", mimetype="application/vnd.oasis.opendocument.spreadsheet"),
        "'application/vnd.oasis.opendocument.spreadsheet', not a text document",
    )
    check("broken.odt", odt("", content=b"<office:document-content"), "not well-formed XML")
    check("locked.odt", odt("<text:p>x</text:p>", encrypted=True), "password-protected")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("meta.xml", "<x/>")
    check("empty.odt", buffer.getvalue(), "'content.xml' is missing")
    bomb = BILLION_LAUGHS.replace("package", "office:document-content")
    check("lol.odt", odt("", content=bomb.encode()), "declares XML entities")


# -- RTF ----------------------------------------------------------------------------------------

RTF_EN = rb"""{\rtf1\ansi\ansicpg1252\deff0
{\fonttbl{\f0\froman\fcharset0 Times New Roman;}{\f1\fmodern\fcharset0 Courier New;}}
{\colortbl;\red255\green0\blue0;}
{\stylesheet{\s0 Normal;}{\s1 heading 1;}}
{\info{\title Harbour Notes}{\author Ann Smith}{\subject Sailing}{\keywords boats, tides}
{\creatim\yr2023\mo4\dy5\hr6\min7}{\revtim\yr2024\mo1\dy1}{\operator Someone}}
{\header \pard Running header\par}
\pard\s1 Harbour notes\par
\pard The tide turns twice a day,\line and the caf\'e9 empties\emdash quickly{\super\chftn}
{\footnote\pard\plain{\super\chftn} Except at neaps.\par}.\par
\pard {\field{\*\fldinst HYPERLINK "https://example.org"}{\fldrslt See the tables}} for times.\par
{\*\pn\pnlvlblt{\pntxtb\'b7}}\pard{\listtext\f0 1.\tab}Take a rope.\par
{\listtext\f0 2.\tab}Take an anchor.\par
{\pict\pngblip 89504e470d0a1a0a0000000d49484452}
\pard\plain\f1 $ tides --port Falmouth\line   high 06:12\par
\trowd\cellx2000\cellx4000
\pard\intbl Knot\cell Use\cell\row
\trowd\cellx2000\cellx4000
\pard\intbl Bowline\par (a loop)\cell fixed\cell\row
\pard Last paragraph.\par
}"""


def test_rtf_text_structure_and_metadata(tmp_path: Path) -> None:
    document = load(write(tmp_path, "notes.rtf", RTF_EN))
    assert document.text == (
        "Harbour notes\n\n"
        "The tide turns twice a day,\nand the café empties—quickly.\n\n"
        "[1] Except at neaps.\n\n"
        "See the tables for times.\n\n"
        "1. Take a rope.\n\n"
        "2. Take an anchor.\n\n"
        "$ tides --port Falmouth\n  high 06:12\n\n"
        "Knot\tUse\n\n"
        "Bowline (a loop)\tfixed\n\n"
        "Last paragraph."
    )
    meta = document.metadata
    assert meta["title"] == "Harbour Notes"
    assert meta["author"] == "Ann Smith"
    assert meta["subject"] == "Sailing"
    assert meta["tags"] == ["boats", "tides"]
    assert meta["date"] == dt.datetime(2023, 4, 5, 6, 7, tzinfo=UTC)


def test_rtf_in_chinese_code_pages_and_unicode(tmp_path: Path) -> None:
    """GBK bytes under \\ansicpg936, Big5 bytes in a \\fcharset136 font, \\uN with fallback
    characters (\\uc2: two of them), a surrogate pair, and a Chinese \\info title."""
    gbk = "".join(f"\\'{b:02x}" for b in "会议纪要".encode("gbk"))
    big5 = "".join(f"\\'{b:02x}" for b in "繁體中文".encode("big5"))
    title = "".join(f"\\'{b:02x}" for b in "通知".encode("gbk"))
    data = (
        "{\\rtf1\\ansi\\ansicpg936\\deff0{\\fonttbl{\\f0\\fnil\\fcharset134 SimSun;}"
        "{\\f1\\fnil\\fcharset136 MingLiU;}}"
        f"{{\\info{{\\title {title}}}}}"
        f"\\pard {gbk}\\par\n"
        f"\\pard {{\\f1 {big5}}}\\par\n"
        "\\pard\\uc2 \\u26126\\'c3\\'f7\\u22825\\'cc\\'ec\\u24320\\'bf\\'aa\\u20250\\'bb\\'e1"
        "\\u12290\\'a1\\'a3\\par\n"
        "\\pard\\uc1 Smile \\u-10179?\\u-8694?.\\par}"
    ).encode("ascii")
    document = load(write(tmp_path, "通知.rtf", data))
    assert document.text == "会议纪要\n\n繁體中文\n\n明天开会。\n\nSmile 😊."
    assert document.metadata["title"] == "通知"
    assert document.metadata["lang"] == "zh"


def test_rtf_that_is_not_rtf_is_a_clear_load_error(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "plain.rtf", b"Just text, saved as .rtf."))
    assert "not an RTF file" in message


def test_rtf_cut_short_keeps_what_it_has(tmp_path: Path) -> None:
    """A truncated file (no closing braces) is read up to where it stops, like word processors
    do."""
    assert load(write(tmp_path, "cut.rtf", rb"{\rtf1\ansi \pard One.\par Two")).text == (
        "One.\n\nTwo"
    )


# -- e-mail -------------------------------------------------------------------------------------

PLAIN_BODY = """Bob wrote:
> The build fails on the arm64 runners since the last toolchain update and
> nobody could find out why in the two days since.
> Any idea?

It is the linker flag that we added last week for the release builds;
removing it makes the build pass again on every runner that I tried today.

    make CFLAGS=-O2 all

--
Alice Example
Build team
""".replace("\n--\n", "\n-- \n")  # the signature separator is "-- ", trailing space and all


def test_eml_headers_body_quotes_and_signature(tmp_path: Path) -> None:
    data = eml(PLAIN_BODY, subject="Re: the arm64 build", cte="quoted-printable")
    assert b"=\n" in data or b"=0A" in data or b"=20" in data or b"-- \n" in data  # premise
    document = load(write(tmp_path, "reply.eml", data))
    assert document.text == (
        "From: Alice Example <alice@example.org>\n"
        "To: Bob <bob@example.org>\n"
        "Date: Mon, 06 May 2024 10:12:00 +0000\n"
        "Subject: Re: the arm64 build\n\n"
        "Bob wrote:\n"
        "> The build fails on the arm64 runners since the last toolchain update and "
        "nobody could find out why in the two days since.\n"
        "> Any idea?\n\n"
        "It is the linker flag that we added last week for the release builds; "
        "removing it makes the build pass again on every runner that I tried today.\n\n"
        "    make CFLAGS=-O2 all\n\n"
        "--\nAlice Example\nBuild team"
    )
    meta = document.metadata
    assert meta["title"] == "Re: the arm64 build"
    assert meta["date"] == dt.datetime(2024, 5, 6, 10, 12, tzinfo=UTC)
    assert meta["from"] == "Alice Example <alice@example.org>"
    assert meta["to"] == "Bob <bob@example.org>"
    assert meta["message_id"] == "m1@example.org"


def test_eml_in_chinese_gb2312_base64(tmp_path: Path) -> None:
    """GB2312 declared, a GBK-only character (镕) used: decoded as GB18030, its superset."""
    body = "各位同事：\n\n明天上午十点在三楼会议室开会，朱镕基路的同事请准时参加。\n"
    raw = (
        "From: =?gb2312?B?" + base64.b64encode("张三".encode("gbk")).decode() + "?= "
        "<zhangsan@example.cn>\n"
        "To: lisi@example.cn\n"
        "Subject: =?gb2312?B?" + base64.b64encode("会议通知".encode("gbk")).decode() + "?=\n"
        "Date: Mon, 6 May 2024 10:12:00 +0800\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=gb2312\n"
        "Content-Transfer-Encoding: base64\n\n"
    ).encode("ascii") + base64.encodebytes(body.encode("gbk"))
    document = load(write(tmp_path, "通知.eml", raw))
    assert document.text == (
        "From: 张三 <zhangsan@example.cn>\nTo: lisi@example.cn\n"
        "Date: Mon, 6 May 2024 10:12:00 +0800\nSubject: 会议通知\n\n"
        "各位同事：\n\n明天上午十点在三楼会议室开会，朱镕基路的同事请准时参加。"
    )
    assert document.metadata["title"] == "会议通知"
    assert document.metadata["date"] == dt.datetime(2024, 5, 6, 2, 12, tzinfo=UTC)
    assert document.metadata["lang"] == "zh"


def test_eml_html_only_goes_through_the_html_reader(tmp_path: Path) -> None:
    data = eml(
        "<html><body><p>Hello <b>team</b>,</p><ul><li>one</li><li>two</li></ul></body></html>",
        subtype="html",
    )
    assert load(write(tmp_path, "h.eml", data)).text.endswith(
        "Subject: A message\n\nHello team,\n\none\n\ntwo"
    )


def test_eml_prefers_plain_in_alternative_and_skips_attachments(tmp_path: Path) -> None:
    from email.message import EmailMessage
    from email.policy import default

    message = EmailMessage(policy=default)
    message["From"] = "a@example.org"
    message["Subject"] = "Both"
    message.set_content("The plain version.")
    message.add_alternative("<p>The HTML version.</p>", subtype="html")
    message.add_attachment(
        b"secret attachment bytes", maintype="text", subtype="plain", filename="notes.txt"
    )
    text = load(write(tmp_path, "alt.eml", message.as_bytes())).text
    assert text == "From: a@example.org\nSubject: Both\n\nThe plain version."


def test_eml_format_flowed_is_unflowed(tmp_path: Path) -> None:
    raw = (
        b"From: a@example.org\nSubject: Flowed\n"
        b"Content-Type: text/plain; charset=utf-8; format=flowed; delsp=no\n\n"
        b"> Quoted text that goes \n> on here.\n\nA paragraph that was \nsent flowed, "
        b"with \n From stuffed.\n\n-- \nSig\n"
    )
    assert load(write(tmp_path, "f.eml", raw)).text == (
        "From: a@example.org\nSubject: Flowed\n\n"
        "> Quoted text that goes on here.\n\n"
        "A paragraph that was sent flowed, with From stuffed.\n\n--\nSig"
    )


def test_mbox_one_document_messages_in_order(tmp_path: Path) -> None:
    first = eml("From the start, this was the plan.\n", subject="Plan")
    second = eml(
        "Agreed.\n\nFrom now on we ship weekly.\n",
        subject="Re: Plan",
        sender="Bob <bob@example.org>",
        date="Tue, 07 May 2024 08:00:00 +0000",
    )
    data = mbox([first, second])
    assert b"\n>From now on" in data  # the premise: escaped in the file
    document = load(write(tmp_path, "thread.mbox", data))
    assert document.text == (
        "From: Alice Example <alice@example.org>\nTo: Bob <bob@example.org>\n"
        "Date: Mon, 06 May 2024 10:12:00 +0000\nSubject: Plan\n\n"
        "From the start, this was the plan.\n\n"
        "From: Bob <bob@example.org>\nTo: Bob <bob@example.org>\n"
        "Date: Tue, 07 May 2024 08:00:00 +0000\nSubject: Re: Plan\n\n"
        "Agreed.\n\nFrom now on we ship weekly."
    )
    assert document.metadata["title"] == "Plan"
    assert document.metadata["messages"] == 2
    assert document.metadata["date"] == dt.datetime(2024, 5, 6, 10, 12, tzinfo=UTC)


def test_mbox_of_different_subjects_is_titled_by_its_file(tmp_path: Path) -> None:
    data = mbox([eml("One.\n", subject="First"), eml("Two.\n", subject="Second")])
    assert load(write(tmp_path, "2024-05.mbox", data)).metadata["title"] == "2024-05"


def test_mail_that_is_not_mail_is_a_clear_load_error(tmp_path: Path) -> None:
    assert "not an e-mail message" in load_error(
        write(tmp_path, "notes.eml", b"Just some notes\nwith no headers at all.\n")
    )
    assert "not an mbox file" in load_error(
        write(tmp_path, "one.mbox", eml("A single message, not an mbox.\n"))
    )


def test_a_patch_in_a_message_is_kept_line_for_line(tmp_path: Path) -> None:
    """git format-patch: the commit message is prose, the diff is not. Rewrap alone joined the
    "+" line (an added blank line) to the long added line above it."""
    diff = (
        "diff --git a/docs/changelog.rst b/docs/changelog.rst\n"
        "index 4c868f4..a853aa2 100644\n"
        "--- a/docs/changelog.rst\n"
        "+++ b/docs/changelog.rst\n"
        "@@ -4,6 +4,13 @@\n"
        "  Changelog\n"
        " ===========\n"
        " \n"
        "+.. _v3_39_1:\n"
        "+\n"
        "+3.39.1 (2026-07-25)\n"
        "+-------------------\n"
        "+\n"
        "+- Fixed a bug where ``table.delete_where()`` left the connection in an open "
        "transaction, so that deleted rows came back when the connection was closed. (#815)\n"
        "+\n"
        " .. _v4_1_1:\n"
    )
    body = (
        "Changelog entry for 3.39.1\n\n"
        "---\n"
        " docs/changelog.rst | 7 +++++++\n"
        " 1 file changed, 7 insertions(+)\n\n"
        f"{diff}"
        "-- \n"
        "2.39.5\n"
    )
    assert "(#815) +" in rewrap(body)  # the premise: rewrap alone would join
    text = load(write(tmp_path, "fix.eml", eml(body, subject="[PATCH] Changelog"))).text
    assert text.endswith(
        "Subject: [PATCH] Changelog\n\n"
        "Changelog entry for 3.39.1\n\n"
        "---\n"
        " docs/changelog.rst | 7 +++++++\n"
        " 1 file changed, 7 insertions(+)\n\n"
        + diff.replace(" \n", "\n").rstrip("\n")  # trailing spaces go
        + "\n\n--\n2.39.5"
    )
