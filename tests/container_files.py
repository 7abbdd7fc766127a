"""Small EPUB, OpenDocument, RTF and e-mail files built in the test itself (no fixtures on disk).

Each builder writes the format's real structure (an EPUB's container.xml, OPF and spine; an
ODT's mimetype, manifest, content.xml and meta.xml), so the readers are tested on what
e-book and office programs write, only smaller.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from email.message import EmailMessage
from email.policy import default as default_policy

XHTML = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>{title}</title></head>
<body>
{body}
</body>
</html>
"""


def xhtml(body: str, title: str = "Chapter") -> str:
    return XHTML.format(title=title, body=body)


def epub(
    chapters: Sequence[tuple[str, str]],
    *,
    metadata: str = "<dc:title>A Book</dc:title>",
    spine: Sequence[str] | None = None,
    extra: Sequence[tuple[str, bytes | str]] = (),
    opf_dir: str = "OEBPS",
) -> bytes:
    """An EPUB: `chapters` are (file name, XHTML) in manifest order; `spine` lists file names in
    reading order (default: manifest order); `extra` adds members as they are."""
    manifest = "\n".join(
        f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(chapters)
    )
    ids = {name: f"c{i}" for i, (name, _) in enumerate(chapters)}
    order = spine if spine is not None else [name for name, _ in chapters]
    itemrefs = "\n".join(f'<itemref idref="{ids[name]}"/>' for name in order)
    opf = f"""<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
<dc:identifier id="id">urn:uuid:0</dc:identifier>
{metadata}
</metadata>
<manifest>
<item id="css" href="style.css" media-type="text/css"/>
{manifest}
</manifest>
<spine>
{itemrefs}
</spine>
</package>
"""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?>\n'
            '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            f'<rootfiles><rootfile full-path="{opf_dir}/content.opf" '
            'media-type="application/oebps-package+xml"/></rootfiles></container>',
        )
        archive.writestr(f"{opf_dir}/content.opf", opf, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(f"{opf_dir}/style.css", "p { margin: 0 }")
        for name, markup in chapters:
            archive.writestr(f"{opf_dir}/{name}", markup, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in extra:
            archive.writestr(name, data)
    return buffer.getvalue()


ODF_NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
    'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
)


def odt(
    body: str,
    *,
    meta: str = "",
    styles: str = "",
    mimetype: str = "application/vnd.oasis.opendocument.text",
    content: bytes | None = None,
    encrypted: bool = False,
) -> bytes:
    """An .odt: `body` is the XML inside office:text, `meta` inside office:meta, `styles` inside
    office:automatic-styles; `content` replaces content.xml whole."""
    content_xml = (
        content
        or (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {ODF_NAMESPACES} '
            f'office:version="1.3"><office:automatic-styles>{styles}</office:automatic-styles>'
            f"<office:body><office:text>{body}</office:text></office:body>"
            "</office:document-content>"
        ).encode()
    )
    meta_xml = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-meta {ODF_NAMESPACES} '
        f'office:version="1.3"><office:meta>{meta}</office:meta></office:document-meta>'
    )
    encryption = (
        '<manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x">'
        "</manifest:encryption-data>"
        if encrypted
        else ""
    )
    manifest = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest {ODF_NAMESPACES} '
        'manifest:version="1.3">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mimetype}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">'
        f"{encryption}</manifest:file-entry>"
        '<manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", mimetype, compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", content_xml, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("meta.xml", meta_xml, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def odt_paragraphs(paragraphs: Sequence[str], title: str = "") -> bytes:
    """An .odt of plain paragraphs (text escaped for XML)."""
    from xml.sax.saxutils import escape

    body = "".join(f"<text:p>{escape(p)}</text:p>" for p in paragraphs)
    meta = f"<dc:title>{escape(title)}</dc:title>" if title else ""
    return odt(body, meta=meta)


def rtf_escape(text: str) -> str:
    """Text as RTF writes it: ASCII as is, everything else as \\uN? (signed 16-bit units)."""
    out = []
    for char in text:
        if char in "\\{}":
            out.append("\\" + char)
        elif ord(char) < 128:
            out.append(char)
        else:
            for unit in _utf16_units(char):
                out.append(f"\\u{unit - 65536 if unit > 32767 else unit}?")
    return "".join(out)


def _utf16_units(char: str) -> list[int]:
    data = char.encode("utf-16-le")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def rtf_paragraphs(paragraphs: Sequence[str], title: str = "") -> bytes:
    info = f"{{\\info{{\\title {rtf_escape(title)}}}}}" if title else ""
    body = "\n".join(f"\\pard {rtf_escape(p)}\\par" for p in paragraphs)
    header = "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Times;}}"
    return f"{header}{info}\n{body}\n}}".encode("ascii")


def eml(
    body: str,
    *,
    subject: str = "A message",
    sender: str = "Alice Example <alice@example.org>",
    to: str = "Bob <bob@example.org>",
    date: str = "Mon, 06 May 2024 10:12:00 +0000",
    charset: str = "utf-8",
    cte: str | None = None,
    subtype: str = "plain",
    message_id: str = "<m1@example.org>",
) -> bytes:
    """One message as a mail program writes it (headers encoded as needed)."""
    message = EmailMessage(policy=default_policy)
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = date
    message["Message-ID"] = message_id
    message.set_content(body, subtype=subtype, charset=charset, cte=cte)
    return message.as_bytes()


def mbox(messages: Sequence[bytes]) -> bytes:
    """An mboxrd file: a "From " line before each message, ">From " escaped in bodies."""
    import re

    out = []
    for number, message in enumerate(messages):
        escaped = re.sub(rb"^(>*From )", rb">\1", message, flags=re.MULTILINE)
        out.append(
            f"From sender{number}@example.org Mon May  6 10:1{number}:00 2024\n".encode()
            + escaped.rstrip(b"\n")
            + b"\n\n"
        )
    return b"".join(out)
