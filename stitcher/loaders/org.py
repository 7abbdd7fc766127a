"""Org (.org): the source text, hard-wrapped prose joined, structure kept.

What is stored. `Document.text` is the file's text with its markup kept; only hard-wrapped
prose lines are joined (`stitcher.loaders.rewrap`), for the reasons given for reST in
`stitcher.loaders.rst`: results stay recognisable in the file, offsets stay meaningful.

Structure, never joined: headings ("* Heading :tag:"); keyword lines ("#+TITLE:", "#+NAME:",
"#+RESULTS:"...); blocks "#+BEGIN_SRC" ... "#+END_SRC" (and EXAMPLE, EXPORT, VERSE, COMMENT,
any block but QUOTE, CENTER and special blocks, whose content is prose) copied whole; drawers
(":PROPERTIES:" ... ":END:") and planning lines ("SCHEDULED: <...>"); tables ("| a | b |",
"+---+"); fixed-width lines (": text"); comments ("# text"); horizontal rules. List items
("-", "+", "*" when indented, "1.", "1)", "- term :: text") start a new paragraph; a
description item's lines hanging under its text are joined to it.

Metadata: title ("#+TITLE:", else the first heading without its TODO keyword, priority and
tags); date ("#+DATE:", an Org timestamp or an ISO date); author ("#+AUTHOR:"); tags
("#+FILETAGS:" ":a:b:", "#+KEYWORDS:" or "#+TAGS:" lists, then the tags of every heading, each
once, except those that steer Org: noexport, export, ARCHIVE, ignore, TOC, crypt);
description ("#+DESCRIPTION:").
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
from stitcher.loaders.metadata import parse_date, split_tags, unique

_HEADING = re.compile(r"^(\*+)[ \t]+(.*?)(?:[ \t]+(:[\w@#%:]+:))?[ \t]*$")
_TODO = re.compile(r"^(?:TODO|DONE|NEXT|WAITING|HOLD|CANCELLED|CANCELED)[ \t]+")
_PRIORITY = re.compile(r"^\[#[A-Z0-9]\][ \t]+")
_KEYWORD = re.compile(r"^[ \t]*#\+(\w[\w-]*(?:\[[^\]]*\])?):(?:[ \t]+(.*?))?[ \t]*$")
_BLOCK_BEGIN = re.compile(r"^[ \t]*#\+begin_(\w+)", re.IGNORECASE)
_BLOCK_END = re.compile(r"^[ \t]*#\+end_\w+[ \t]*$", re.IGNORECASE)
_DRAWER = re.compile(r"^[ \t]*:[\w-]+:[ \t]*$")
_DRAWER_END = re.compile(r"^[ \t]*:end:[ \t]*$", re.IGNORECASE)
_PLANNING = re.compile(r"^[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):")
_TABLE = re.compile(r"^[ \t]*[|+]")
_FIXED = re.compile(r"^[ \t]*:(?:[ \t]|$)")
_COMMENT = re.compile(r"^[ \t]*#(?:[ \t]|$)")
_RULE = re.compile(r"^[ \t]*-{5,}[ \t]*$")
_ITEM = re.compile(r"^(?:[ \t]*[-+]|[ \t]+\*|[ \t]*(?:\d+|[a-zA-Z])[.)])[ \t]+\S|^[ \t]*[-+*]$")
_DESCRIPTION_ITEM = re.compile(r"^[ \t]*((?:[-+]|[ \t]\*|\d+[.)])[ \t]+\S.*?[ \t]::[ \t])(?=\S)")
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ \t]+[^\s\d>\]]+)?(?:[ \t]+(\d{1,2}:\d{2}))?")
#: Heading tags that steer Org itself (export, archiving, TOC tools), not topics.
_EXPORT_TAGS = frozenset({"noexport", "export", "ARCHIVE", "ignore", "TOC", "toc", "crypt"})
#: Blocks copied whole; the content of any other (QUOTE, CENTER, special blocks) is prose.
_VERBATIM_BLOCKS = frozenset({"src", "example", "export", "verse", "comment"})


def read_org(data: bytes, source: str) -> Extracted:
    """An .org file → (text, metadata): see the module docstring."""
    return read_markup(data, source, _label)


def _label(lines: list[str], roles: list[Role]) -> tuple[Markers, dict[str, Any]]:
    keywords: dict[str, str] = {}
    heading_tags: list[str] = []
    first_heading: str | None = None
    scan = LineScan(lines, roles)
    for line in scan.filled():
        i = scan.i
        heading = _HEADING.match(line)
        keyword = _KEYWORD.match(line)
        block = _BLOCK_BEGIN.match(line)
        if block:
            name = block.group(1).lower()
            # A verbatim block is copied whole; a prose block only keeps its delimiter lines
            # (the #+END_ line is caught below) and its content is read like any other text.
            scan.keep(_block_end(lines, i, name) if name in _VERBATIM_BLOCKS else i + 1)
        elif heading:
            scan.keep(i + 1)
            name = _PRIORITY.sub("", _TODO.sub("", heading.group(2))).strip()
            if first_heading is None and name:
                first_heading = name
            if heading.group(3):
                heading_tags += [
                    tag for tag in heading.group(3).split(":") if tag and tag not in _EXPORT_TAGS
                ]
        elif keyword:
            scan.keep(i + 1)
            key = keyword.group(1).lower()
            if keyword.group(2) and key not in keywords:
                keywords[key] = keyword.group(2)
        elif _DRAWER.match(line) and not _DRAWER_END.match(line):
            end = i + 1
            while end < len(lines) and not _DRAWER_END.match(lines[end]):
                if _HEADING.match(lines[end]):
                    break
                end += 1
            if end < len(lines) and _DRAWER_END.match(lines[end]):
                scan.keep(end + 1)
            else:  # not closed: a line that only looks like a drawer's start
                roles[i] = KEPT
                scan.i += 1
        elif (
            _BLOCK_END.match(line)
            or _PLANNING.match(line)
            or _TABLE.match(line)
            or _FIXED.match(line)
            or _COMMENT.match(line)
            or _RULE.match(line)
        ):
            scan.keep(i + 1)
        elif _ITEM.match(line) or scan.paragraph_start:
            scan.take(NEW)
        else:
            scan.take(PROSE)
    markers = {}
    for index, line in enumerate(lines):
        term = _DESCRIPTION_ITEM.match(line) if roles[index] is NEW else None
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if term and following.strip() and indent_of(following) == term.end():
            # "- term :: text" wrapped under "text": rewrap sees a bullet as wide as "- term ::".
            markers[index] = (term.start(1), term.end(1) - 1)
    return markers, _meta(keywords, heading_tags, first_heading)


def _closing_line(name: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*#\+end_{re.escape(name)}[ \t]*$", re.IGNORECASE)


def _block_end(lines: list[str], i: int, name: str) -> int:
    """Index after the block's #+END_ line; an unclosed block is only its first line."""
    closing = _closing_line(name)
    for k in range(i + 1, len(lines)):
        if closing.match(lines[k]):
            return k + 1
    return i + 1


def _meta(keywords: dict[str, str], heading_tags: list[str], heading: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    title = keywords.get("title") or heading
    if title:
        meta["title"] = title
    if keywords.get("author"):
        meta["author"] = keywords["author"]
    date = _org_date(keywords.get("date"))
    if date is not None:
        meta["date"] = date
    tags: list[str] = []
    if keywords.get("filetags"):
        tags += [tag for tag in re.split(r"[:\s]+", keywords["filetags"]) if tag]
    for key in ("keywords", "tags"):
        tags += split_tags(keywords.get(key))
    tags += heading_tags
    if tags:
        meta["tags"] = unique(tags)
    if keywords.get("description"):
        meta["description"] = keywords["description"]
    return meta


def _org_date(value: str | None) -> Any:
    """ "<2024-05-01 Wed>", "[2024-05-01 Wed 10:30]" or an ISO date → datetime; else None."""
    if not value:
        return None
    direct = loose_date(value.strip())
    if direct is not None:
        return direct
    match = _TIMESTAMP.search(value)
    if match is None:
        return None
    return parse_date(f"{match.group(1)}T{match.group(2)}" if match.group(2) else match.group(1))
