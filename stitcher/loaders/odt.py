"""OpenDocument text (.odt): the body of content.xml as paragraphs, and meta.xml.

The stored text (what chunk offsets refer to) is the document body in document order, one block
per paragraph, separated by a blank line:

- a heading (text:h) or paragraph (text:p) is one block; its white space is normalised as ODF
  says (runs of spaces, tabs and newlines in the XML are one space), while text:s (spaces),
  text:tab and text:line-break become real spaces, tabs and line breaks;
- consecutive paragraphs in a preformatted style ("Preformatted Text", "Source Text" and their
  derived styles: code) are one block with one line each, never joined;
- each paragraph of a list item (text:list, nested lists too) is a block of its own;
- a table row is a block: its cells' text separated by tabs (merged-away cells skipped);
- a footnote or endnote leaves its number out of the sentence and follows its paragraph as a
  block "[1] note text"; text frames (draw:text-box) follow their paragraph too;
- comments (office:annotation), tracked deletions and index templates are not text.

Metadata from meta.xml: dc:title → title; meta:creation-date (else dc:date) → date;
meta:keyword (each) → tags; dc:subject → subject; dc:description → description;
meta:initial-creator (else dc:creator) → author; dc:language → language (`lang` is still
detected from the text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stitcher.loaders.formats import Extracted
from stitcher.loaders.zipped import Container, local_name, loose_date

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

_TEXT_MIMETYPES = frozenset(
    {
        "application/vnd.oasis.opendocument.text",
        "application/vnd.oasis.opendocument.text-template",
        "application/vnd.oasis.opendocument.text-master",
        "application/vnd.oasis.opendocument.text-web",
    }
)
# Stand-ins for the spaces, tabs and breaks the markup asks for: they survive the collapsing
# of the XML's own white space.
_SPACE, _TAB, _LINE = "\ue002", "\ue003", "\ue001"
_STANDINS = re.compile("[\ue000-\ue003]")
_XML_SPACE = re.compile(r"[ \t\n\r]+")
# Not text: templates of indexes, declarations, forms, comments, tracked (deleted) changes.
_SKIP = frozenset(
    {
        "annotation",
        "annotation-end",
        "tracked-changes",
        "sequence-decls",
        "variable-decls",
        "user-field-decls",
        "dde-connection-decls",
        "forms",
        "note-citation",
        "change",
        "change-start",
        "change-end",
        "ruby-text",
        "title",  # svg:title of a drawing (alt text); dc:title lives in meta.xml
        "desc",
    }
)
_PREFORMATTED = re.compile(r"^(?:Preformatted|Source|Code)(?:_20_|\s)?", re.IGNORECASE)


def read_odt(data: bytes, source: str) -> Extracted:
    """An .odt file: the body's blocks separated by blank lines (see the module docstring).

    Raises:
        LoadError: Not a zip archive, another OpenDocument type, password-protected, no
            content.xml, malformed XML, more than `stitcher.loaders.zipped.MAX_UNPACKED_BYTES`
            to unpack.
    """
    document = Container(data, source, "OpenDocument text")
    if document.has("mimetype"):
        mimetype = document.read("mimetype").decode("ascii", "replace").strip()
        if mimetype not in _TEXT_MIMETYPES:
            raise document.error(f"it is {mimetype!r}, not a text document")
    if _content_encrypted(document):
        raise document.error("it is password-protected; save a copy without a password")
    content = document.xml("content.xml")
    walker = _Walker(_preformatted_styles(content))
    for element in content.iter():
        if local_name(element.tag) == "text" and _is_office(element):
            walker.blocks(element)
            break
    meta = _metadata(document.xml("meta.xml")) if document.has("meta.xml") else {}
    # A listing's trailing empty lines (the blank paragraphs before the next block) go.
    return Extracted("\n\n".join(block.rstrip() for block in walker.out), meta)


def _is_office(element: Element) -> bool:
    return element.tag.startswith("{urn:oasis:names:tc:opendocument:xmlns:office:")


def _content_encrypted(document: Container) -> bool:
    manifest_path = "META-INF/manifest.xml"
    if not document.has(manifest_path):
        return False
    for entry in document.xml(manifest_path).iter():
        if local_name(entry.tag) != "file-entry":
            continue
        path = next((v for k, v in entry.attrib.items() if local_name(k) == "full-path"), "")
        if path == "content.xml":
            return any(local_name(child.tag) == "encryption-data" for child in entry)
    return False


def _attr(element: Element, name: str) -> str:
    return next((v for k, v in element.attrib.items() if local_name(k) == name), "")


def _preformatted_styles(content: Element) -> frozenset[str]:
    """Names of the paragraph styles that are, or derive from, a code style.

    Automatic styles ("P3") name their parent; styles.xml's named styles are matched by name.
    """
    parents: dict[str, str] = {}
    for style in content.iter():
        if local_name(style.tag) == "style" and _attr(style, "name"):
            parents[_attr(style, "name")] = _attr(style, "parent-style-name")
    found = set()
    for name in parents:
        seen = name
        for _ in range(10):  # parent chains are short; a cycle must not loop
            if _PREFORMATTED.match(seen):
                found.add(name)
                break
            seen = parents.get(seen, "")
            if not seen:
                break
    return frozenset(found)


@dataclass
class _Walker:
    """Collects the body's blocks in document order."""

    code_styles: frozenset[str]
    out: list[str] = field(default_factory=list)
    _in_code: bool = False

    def blocks(self, element: Element) -> None:
        for child in element:
            name = local_name(child.tag)
            if name in ("p", "h"):
                self.paragraph(child)
            elif name == "table":
                self._in_code = False
                self.table(child)
            elif name in _SKIP or name.endswith("-source"):
                continue
            else:  # lists, list items, sections, index bodies, text boxes, unknown wrappers
                self._in_code = False
                self.blocks(child)

    def paragraph(self, element: Element) -> None:
        notes: list[Element] = []
        frames: list[Element] = []
        text = _flatten(_inline(element, notes, frames))
        style = _attr(element, "style-name")
        code = local_name(element.tag) == "p" and (
            style in self.code_styles or bool(_PREFORMATTED.match(style))
        )
        if code and self._in_code:
            self.out[-1] += "\n" + text  # the next line of the same listing
        else:
            self._in_code = False
            if text.strip():
                self.out.append(text)
                self._in_code = code
        for note in notes:
            self._note(note)
        for frame in frames:
            self.blocks(frame)

    def _note(self, note: Element) -> None:
        citation = next(
            (
                " ".join("".join(c.itertext()).split())
                for c in note
                if local_name(c.tag) == "note-citation"
            ),
            "",
        )
        body = next((c for c in note if local_name(c.tag) == "note-body"), None)
        if body is None:
            return
        walker = _Walker(self.code_styles)
        walker.blocks(body)
        text = " ".join(" ".join(walker.out).split())
        if text:
            self._in_code = False
            self.out.append(f"[{citation}] {text}" if citation else text)

    def table(self, table: Element) -> None:
        for row in _rows(table):
            cells: list[str] = []
            for cell in row:
                if local_name(cell.tag) != "table-cell":
                    continue  # covered-table-cell: the part of a merged cell already read
                walker = _Walker(self.code_styles)
                walker.blocks(cell)
                text = " ".join(" ".join(walker.out).split())
                repeat = _attr(cell, "number-columns-repeated")
                count = min(int(repeat), 64) if repeat.isdigit() and int(repeat) > 1 else 1
                cells.extend([text] * count)
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                self.out.append("\t".join(cells))


def _rows(table: Element) -> Iterator[Element]:
    """The table's rows, through header and row groups, not those of tables inside cells."""
    for child in table:
        name = local_name(child.tag)
        if name == "table-row":
            yield child
        elif name in ("table-header-rows", "table-rows", "table-row-group"):
            yield from _rows(child)


def _inline(element: Element, notes: list[Element], frames: list[Element]) -> list[str]:
    """The pieces of a paragraph's text: text nodes (white space still raw) and stand-ins."""
    pieces = [_STANDINS.sub("", element.text or "")]
    for child in element:
        name = local_name(child.tag)
        if name == "s":
            count = _attr(child, "c")
            pieces.append(_SPACE * (min(int(count), 1000) if count.isdigit() else 1))
        elif name == "tab":
            pieces.append(_TAB)
        elif name == "line-break":
            pieces.append(_LINE)
        elif name == "note":
            notes.append(child)
        elif name in ("frame", "text-box"):
            frames.append(child)
        elif name not in _SKIP:
            pieces.extend(_inline(child, notes, frames))
        pieces.append(_STANDINS.sub("", child.tail or ""))
    return pieces


def _flatten(pieces: list[str]) -> str:
    text = _XML_SPACE.sub(" ", "".join(pieces)).strip(" ")
    text = text.replace(_SPACE, " ").replace(_TAB, "\t")
    return "\n".join(line.rstrip(" ") for line in text.split(_LINE))


def _metadata(root: Element) -> dict[str, Any]:
    found: dict[str, str] = {}
    keywords: list[str] = []
    for element in root.iter():
        name = local_name(element.tag)
        value = " ".join("".join(element.itertext()).split())
        if not value:
            continue
        if name == "keyword":
            keywords.append(value)
        else:
            found.setdefault(name, value)
    meta: dict[str, Any] = {}
    if found.get("title"):
        meta["title"] = found["title"]
    date = loose_date(found.get("creation-date")) or loose_date(found.get("date"))
    if date is not None:
        meta["date"] = date
    if keywords:
        meta["tags"] = keywords
    for key, source_name in (("subject", "subject"), ("description", "description")):
        if found.get(source_name):
            meta[key] = found[source_name]
    author = found.get("initial-creator") or found.get("creator")
    if author:
        meta["author"] = author
    if found.get("language"):
        meta["language"] = found["language"]
    return meta
