"""AsciiDoc (.adoc, .asciidoc): the source text, hard-wrapped prose joined, structure kept.

What is stored. `Document.text` is the file's text with its markup kept; only hard-wrapped
prose lines are joined (`stitcher.loaders.rewrap`). As for reST (see `stitcher.loaders.rst`):
a rendering would need Asciidoctor (Ruby) and would resolve includes and attributes the user
never sees in the file; the source keeps results recognisable and offsets meaningful.

Structure, never joined: the document header ("= Title", the author and revision lines,
":attr: value" entries); section titles ("== Section", "=== ..."); block titles (".Title");
block attribute lines ("[source,python]", "[[anchor]]", "[NOTE]"); attribute entries and "//"
comments in the body; delimited listing, literal, passthrough and comment blocks ("----",
"....", "++++", "////", "```") copied whole; tables ("|===", ",===", ":===", "!===") copied
whole; literal paragraphs (a paragraph whose first line is indented); paragraphs and blocks
whose line breaks are meant ("[verse]", "[source]", "[%hardbreaks]", or all of them while
":hardbreaks-option:" is set); block macros and preprocessor lines ("image::a.png[]",
"include::x.adoc[]", "ifdef::x[]"); list continuation "+" lines. A line after one ending in
" +" (a hard line break) starts a new paragraph. Example, sidebar, quote and open blocks
("====", "****", "____", "--") keep their delimiters and their prose is rewrapped. List items
("*", "**", "-", ".", "1.", "<1>", "term::") and admonition paragraphs ("NOTE: ...") start a
new paragraph.

Metadata from the header: title ("= Title", else ":doctitle:"); author (the author line or
":author:"); date (":revdate:" or the revision line's date, when it is a date); tags
(":keywords:" or ":tags:"); description; version (":revnumber:" or the revision line).
"""

from __future__ import annotations

import re
from typing import Any

from stitcher.loaders.extracted import Extracted
from stitcher.loaders.markup import (
    KEPT,
    NEW,
    PROSE,
    LineScan,
    Markers,
    Role,
    indent_of,
    loose_date,
    read_markup,
)

_TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
_ATTRIBUTE = re.compile(r"^:(!?[\w][\w-]*!?):(?:[ \t]+(.*?))?[ \t]*$")
_BLOCK_TITLE = re.compile(r"^\.[^ \t.]")
_BLOCK_ATTRIBUTES = re.compile(r"^\[[^\]]*\][ \t]*$")
_COMMENT = re.compile(r"^//(?!/)")
# Delimiter lines: verbatim blocks (content kept) and compound blocks (content is prose).
_VERBATIM_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|\+{4,}|/{4,}|`{3,}[\w+-]*|[|,:!]={3,})[ \t]*$")
_COMPOUND_DELIMITER = re.compile(r"^(={4,}|\*{4,}|_{4,}|--)[ \t]*$")
# Block macros and preprocessor lines: "image::a.png[]", "include::x.adoc[]", "ifdef::x[]".
_MACRO = re.compile(r"^[a-z][\w-]*::\S*\[.*\][ \t]*$")
# Block attributes after which the block's line breaks are meant: verse, literal and source
# styles, the hardbreaks option.
_KEEP_LINES = re.compile(
    r"^\[(?:verse|literal|listing|source|stem|latexmath|asciimath)\b|%hardbreaks|\bhardbreaks\b"
)
_HARDBREAKS = re.compile(r"^!?hardbreaks(?:-option)?!?$")
_ITEM = re.compile(r"^[ \t]*(\*{1,5}|-|\.{1,5}|\d+\.|[a-zA-Z]\.|[ivxIVX]+\)|<(?:\d+|\.)>)[ \t]+\S")
_LABELED = re.compile(r"^[ \t]*\S.*?(?::{2,4}|;;)(?:[ \t]+\S|[ \t]*$)")
_ADMONITION = re.compile(r"^(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION): ")
_REVISION = re.compile(r"^v?(\d[\w.-]*)?(?:,[ \t]*([^:]+?))?(?::[ \t]*(.*))?$")
# Markers `rewrap` takes for list items as they are.
_REWRAP_KNOWS = re.compile(r"-|\*|\d{1,3}\.|[a-z]\.")


def read_asciidoc(data: bytes, source: str) -> Extracted:
    """An .adoc/.asciidoc file → (text, metadata): see the module docstring."""
    return read_markup(data, source, _label)


def _label(lines: list[str], roles: list[Role]) -> tuple[Markers, dict[str, Any]]:
    start, meta = _header(lines, roles)
    return _scan(lines, roles, start), meta


def _header(lines: list[str], roles: list[Role]) -> tuple[int, dict[str, Any]]:
    """Label the document header KEPT; (index after it, metadata)."""
    meta: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    i = 0
    while i < len(lines) and (not lines[i].strip() or _COMMENT.match(lines[i])):
        i += 1
    title = _TITLE.match(lines[i]) if i < len(lines) else None
    has_title = title is not None and len(title.group(1)) == 1
    if not has_title and (i >= len(lines) or not _ATTRIBUTE.match(lines[i])):
        return 0, meta
    if has_title and title is not None:
        meta["title"] = title.group(2).strip()
        roles[i] = KEPT
        i += 1
        # Author line, then revision line: the first lines after the title that are not
        # attribute entries or comments.
        extra = 0
        while i < len(lines) and lines[i].strip() and extra < 2:
            if _ATTRIBUTE.match(lines[i]) or _COMMENT.match(lines[i]):
                break
            roles[i] = KEPT
            if extra == 0:
                meta["author"] = _author(lines[i])
            else:
                _revision(lines[i], meta)
            extra += 1
            i += 1
    while i < len(lines) and lines[i].strip():
        match = _ATTRIBUTE.match(lines[i])
        if not match and not _COMMENT.match(lines[i]):
            break
        roles[i] = KEPT
        if match and match.group(2):
            attributes[match.group(1).lower()] = match.group(2)
        i += 1
    _from_attributes(attributes, meta)
    return i, meta


def _author(line: str) -> str:
    # "Ada Lovelace <ada@example.org>; Charles Babbage": names without addresses.
    names = [re.sub(r"<[^>]*>", "", part).strip() for part in line.split(";")]
    return ", ".join(name for name in names if name)


def _revision(line: str, meta: dict[str, Any]) -> None:
    match = _REVISION.match(line.strip())
    if match is None:
        return
    if match.group(1):
        meta["version"] = match.group(1)
    date = loose_date(match.group(2)) if match.group(2) else None
    if date is not None:
        meta["date"] = date


def _from_attributes(attributes: dict[str, str], meta: dict[str, Any]) -> None:
    if "doctitle" in attributes and "title" not in meta:
        meta["title"] = attributes["doctitle"]
    if "author" in attributes:
        meta["author"] = attributes["author"]
    if "revnumber" in attributes:
        meta["version"] = attributes["revnumber"]
    date = loose_date(attributes.get("revdate"))
    if date is not None:
        meta["date"] = date
    tags = attributes.get("tags") or attributes.get("keywords")
    if tags:
        meta["tags"] = tags
    if "description" in attributes:
        meta["description"] = attributes["description"]


def _scan(lines: list[str], roles: list[Role], start: int) -> Markers:
    markers: dict[int, tuple[int, int]] = {}
    scan = LineScan(lines, roles, start)
    end = scan.end
    keep_next = False  # block attributes say the next block's line breaks are meant
    hardbreaks = False  # ":hardbreaks-option:" is set: every paragraph keeps its lines
    for line in scan.filled():
        i = scan.i
        verbatim = _VERBATIM_DELIMITER.match(line)
        compound = _COMPOUND_DELIMITER.match(line)
        if verbatim or (compound and keep_next):
            delimiter = (verbatim or compound).group(1)  # type: ignore[union-attr]
            scan.keep(_delimited_end(lines, i, end, delimiter))
            keep_next = False
            continue
        attribute = _ATTRIBUTE.match(line)
        if attribute and _HARDBREAKS.match(attribute.group(1)):
            hardbreaks = not attribute.group(1).startswith("!") and "!" not in attribute.group(1)
        if _BLOCK_ATTRIBUTES.match(line):
            keep_next = keep_next or bool(_KEEP_LINES.search(line))
        if (
            compound
            or _TITLE.match(line)
            or _BLOCK_ATTRIBUTES.match(line)
            or attribute
            or _COMMENT.match(line)
            or _MACRO.match(line)
            or (_BLOCK_TITLE.match(line) and scan.paragraph_start)
            or line.strip() == "+"
        ):
            scan.keep(i + 1)
            if not _BLOCK_ATTRIBUTES.match(line) and not _BLOCK_TITLE.match(line):
                keep_next = False
            continue
        if scan.paragraph_start and (
            (indent_of(line) > 0 and not _ITEM.match(line)) or keep_next or hardbreaks
        ):
            # A literal paragraph (indented first line), a verse, a [%hardbreaks] paragraph:
            # up to the next blank line, as written.
            k = i
            while k < end and lines[k].strip():
                k += 1
            scan.keep(k)
            keep_next = False
            continue
        item = _ITEM.match(line)
        if item or _LABELED.match(line) or _ADMONITION.match(line):
            scan.take(NEW)
            if item and not _REWRAP_KNOWS.fullmatch(item.group(1)):
                markers[i] = (item.start(1), item.end(1))
        elif scan.paragraph_start or lines[i - 1].endswith(" +"):
            scan.take(NEW)  # a block starts, or the line above ends in a hard break " +"
        else:
            scan.take(PROSE)
    return markers


def _delimited_end(lines: list[str], i: int, end: int, delimiter: str) -> int:
    """Index after the line that closes the block opened at line i (or `end`, unclosed)."""
    closing = "```" if delimiter.startswith("```") else delimiter
    for k in range(i + 1, end):
        if lines[k].rstrip() == closing:
            return k + 1
    return end
