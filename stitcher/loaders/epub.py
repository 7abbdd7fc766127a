"""EPUB books (.epub): the chapters in reading order, read by the HTML reader.

The stored text (what chunk offsets refer to) is the text of each chapter of the spine, in spine
order, exactly as `stitcher.loaders.formats.read_html` gives it for that XHTML file (block
elements are paragraphs, <pre> keeps its lines, table cells are separated by tabs, list items
are paragraphs of their own, <nav> tables of contents are dropped), chapters separated by one
blank line. Images, fonts, stylesheets and chapters in other formats are not read.

Metadata from the package document (OPF): dc:title → title; dc:creator (each, in order) →
author ("A, B"); dc:date (the publication date where several are given; a year alone is
January 1st) → date; dc:language → language (as declared; `lang` is still detected from the
text, because books often declare a wrong one); dc:subject → tags.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from stitcher.loaders.formats import Extracted, read_html
from stitcher.loaders.zipped import Container, local_name, loose_date

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

_CONTAINER = "META-INF/container.xml"
_ENCRYPTION = "META-INF/encryption.xml"
_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/html"})
# Font obfuscation (IDPF and Adobe) scrambles fonts only, never text: not DRM.
_FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)


def read_epub(data: bytes, source: str) -> Extracted:
    """An .epub file: its spine's chapters through the HTML reader, joined by blank lines.

    Raises:
        LoadError: Not a zip archive, no package document, a chapter missing or encrypted (DRM),
            more than `stitcher.loaders.zipped.MAX_UNPACKED_BYTES` to unpack, malformed XML.
    """
    book = Container(data, source, "EPUB")
    opf_path = _package_path(book)
    package = book.xml(opf_path)
    chapters = _spine(package, posixpath.dirname(opf_path), book)
    encrypted = _encrypted(book) & set(chapters)
    if encrypted:
        raise book.error(
            f"its chapters are encrypted (DRM), e.g. {sorted(encrypted)[0]!r}; "
            "only DRM-free books can be read"
        )
    texts = []
    for path in chapters:
        markup = book.read(path)
        if not markup.strip():
            continue  # read_html would refuse an empty file; an empty chapter is no error
        chapter = read_html(markup, f"{source} ({path})")
        if chapter.text.strip():
            texts.append(chapter.text)
    return Extracted("\n\n".join(texts), _metadata(package))


def _package_path(book: Container) -> str:
    """The OPF's path: from META-INF/container.xml, else the only .opf in the archive."""
    if book.has(_CONTAINER):
        for element in book.xml(_CONTAINER).iter():
            if local_name(element.tag) == "rootfile":
                path = element.get("full-path")
                if path and book.has(path):
                    return path
    candidates = [name for name in book.names() if name.lower().endswith(".opf")]
    if len(candidates) == 1:
        return candidates[0]
    raise book.error(f"no package document (.opf) named by {_CONTAINER}")


def _spine(package: Element, base: str, book: Container) -> list[str]:
    """Archive paths of the spine's (X)HTML documents, in reading order, each once."""
    manifest: dict[str, tuple[str, str]] = {}
    itemrefs: list[str] = []
    for element in package.iter():
        name = local_name(element.tag)
        if name == "item" and element.get("id") and element.get("href"):
            href = unquote(urlsplit(element.get("href", "")).path)
            path = posixpath.normpath(posixpath.join(base, href))
            manifest[element.get("id", "")] = (path, element.get("media-type", ""))
        elif name == "itemref" and element.get("idref"):
            itemrefs.append(element.get("idref", ""))
    chapters = []
    for idref in itemrefs:
        path, media_type = manifest.get(idref, ("", ""))
        if not path:
            raise book.error(f"the spine names {idref!r}, which the manifest does not list")
        if media_type in _CHAPTER_TYPES or path.lower().endswith((".xhtml", ".html", ".htm")):
            if not book.has(path):
                raise book.error(f"chapter {path!r} is missing from the archive")
            chapters.append(path)
    # Some books (sisu's) list every section of a file as an item "file#section" of its own.
    return list(dict.fromkeys(chapters))


def _encrypted(book: Container) -> set[str]:
    """Paths that META-INF/encryption.xml says are encrypted with something other than font
    obfuscation."""
    if not book.has(_ENCRYPTION):
        return set()
    paths: set[str] = set()
    for data in book.xml(_ENCRYPTION).iter():
        if local_name(data.tag) != "EncryptedData":
            continue
        methods = (e for e in data.iter() if local_name(e.tag) == "EncryptionMethod")
        method = next((e.get("Algorithm", "") for e in methods), "")
        if method in _FONT_OBFUSCATION:
            continue
        for reference in data.iter():
            if local_name(reference.tag) == "CipherReference" and reference.get("URI"):
                paths.add(posixpath.normpath(unquote(reference.get("URI", ""))))
    return paths


def _metadata(package: Element) -> dict[str, Any]:
    found: dict[str, list[Element]] = {}
    for element in package.iter():
        found.setdefault(local_name(element.tag), []).append(element)

    def texts(name: str) -> list[str]:
        values = (" ".join("".join(e.itertext()).split()) for e in found.get(name, []))
        return [value for value in values if value]

    meta: dict[str, Any] = {}
    titles = texts("title")
    if titles:
        meta["title"] = titles[0]
    creators = texts("creator")
    if creators:
        meta["author"] = ", ".join(dict.fromkeys(creators))
    date = _publication_date(found.get("date", []))
    if date is not None:
        meta["date"] = date
    languages = texts("language")
    if languages:
        meta["language"] = languages[0]
    subjects = texts("subject")
    if subjects:
        meta["tags"] = subjects
    return meta


def _publication_date(elements: list[Element]) -> Any:
    """EPUB 2 may give several dc:date with an opf:event; the publication date is preferred."""

    def event(element: Element) -> str:
        return next((v for k, v in element.attrib.items() if local_name(k) == "event"), "")

    ordered = sorted(elements, key=lambda e: event(e) != "publication")
    for element in ordered:
        date = loose_date("".join(element.itertext()))
        if date is not None:
            return date
    return None
