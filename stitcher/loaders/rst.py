"""reStructuredText (.rst, .rest): the source text, hard-wrapped prose joined, structure kept.

What is stored. `Document.text` is the file's own text with its markup ("**bold**", ":ref:`x`",
".. note::") kept; the only change is that hard-wrapped prose lines are joined (rule in
`stitcher.loaders.rewrap`). A rendering (docutils → plain text) would drop the markup, but it
would also have to invent text for cross-references and substitutions, and Sphinx projects use
roles and directives docutils alone does not know, so whole pages would fail or come back
mangled. Keeping the source keeps every search result recognisable in the file it came from and
every chunk offset a position in text the user can open.

Structure, never joined (copied line by line): section titles with their under/overlines;
directives (".. name::" with its options; the content too unless the directive holds prose,
like "note" or "function"); literal blocks after "::"; doctest blocks (">>>"); grid tables
("+---+") and simple tables ("=== ==="); comments and targets (".. _label:"); line blocks
("| "); the field list at the top of the document. List items (bullets, "1.", "#.", "(a)")
and field list entries start a new paragraph; their own wrapped lines are joined.

Metadata: title is Sphinx's ".. title::" or else the first section title; the bibliographic
field list (":author:", ":date:", ":tags:" or ":keywords:", any other field) before the first
paragraph gives a key per field, keys lowercased; ":keywords:" becomes tags when there are no
":tags:". A date that is not one (":date: Spring 2024") is dropped.

No library: a line scanner is enough for this, and docutils is not needed at run time.
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
    keep,
    loose_date,
    read_markup,
)
from stitcher.loaders.metadata import clean_mapping
from stitcher.loaders.rewrap import display_width

_ADORNMENT = re.compile(r"""^([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])\1{2,}[ \t]*$""")
_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+(?:\|[^|]+\|[ \t]+)?([\w:.+-]+)::(?:[ \t]|$)")
_TITLE_DIRECTIVE = re.compile(r"^\.\.[ \t]+title::[ \t]+(\S.*)$", re.MULTILINE)
_EXPLICIT = re.compile(r"^[ \t]*\.\.(?:[ \t]|$)")
_FIELD = re.compile(r"^[ \t]*:(?![ \t])([^:`]+(?:\\:[^:`]*)*):(?:[ \t]+(.*?))?[ \t]*$")
_GRID_BORDER = re.compile(r"^[ \t]*\+(?:[-=]+\+)+[ \t]*$")
_SIMPLE_BORDER = re.compile(r"^[ \t]*=+(?:[ \t]+=+)+[ \t]*$")
_ITEM = re.compile(
    r"^[ \t]*(?:[-*+•‣⁃](?=[ \t])|(?:\d+|[#a-zA-Z]|[ivxlcIVXLC]+)[.)](?=[ \t])"
    r"|\((?:\d+|[#a-zA-Z]|[ivxlcIVXLC]+)\)(?=[ \t]))"
)
# docutils' Chinese bibliographic field names (docutils.languages.zh_cn), as key names.
_FIELD_NAMES = {
    "作者": "author",
    "作者群": "authors",
    "日期": "date",
    "版本": "version",
    "摘要": "abstract",
    "关键词": "keywords",
    "标签": "tags",
}
# Items whose marker `rewrap` does not take for one: "#." / "#)" / "(#)", "A." and "B)".
_AUTO_ITEM = re.compile(r"^[ \t]*(#[.)]|\(#\)|[A-Z]\.)[ \t]+\S")
_OPTION_ITEM = re.compile(r"^[ \t]*-{1,2}[A-Za-z0-9][\w-]*(?:[ =]\S+)?(?: {2,}|$)")

#: Directives whose content is prose (rewrapped); every other directive's content is kept.
PROSE_DIRECTIVES = frozenset(
    [
        "admonition",
        "attention",
        "caution",
        "danger",
        "error",
        "hint",
        "important",
        "note",
        "tip",
        "warning",
        "seealso",
        "todo",
        "topic",
        "sidebar",
        "rubric",
        "epigraph",
        "highlights",
        "pull-quote",
        "compound",
        "container",
        "class",
        "deprecated",
        "versionadded",
        "versionchanged",
        "glossary",
        "centered",
        "hlist",
        "only",
        "figure",
        "function",
        "method",
        "attribute",
        "data",
        "exception",
        "module",
        "describe",
        "object",
        "option",
        "envvar",
        "program",
        "cmdoption",
        "confval",
        "event",
        "index",
    ]
)
_DOMAIN_PROSE = frozenset(
    [
        "function",
        "class",
        "method",
        "staticmethod",
        "classmethod",
        "attribute",
        "property",
        "data",
        "exception",
        "module",
        "decorator",
        "type",
        "member",
        "var",
        "macro",
        "struct",
        "union",
        "enum",
        "enumerator",
        "namespace",
        "concept",
    ]
)


def read_rst(data: bytes, source: str) -> Extracted:
    """A .rst/.rest file → (text, metadata): see the module docstring."""
    return read_markup(data, source, _label)


def _label(lines: list[str], roles: list[Role]) -> tuple[Markers, dict[str, Any]]:
    meta = _scan(lines, roles)
    explicit_title = _TITLE_DIRECTIVE.search("\n".join(lines))
    if explicit_title:  # Sphinx's ".. title::" names the page instead of its first section
        meta["title"] = explicit_title.group(1).strip()
    markers = {}
    for index, line in enumerate(lines):
        match = _AUTO_ITEM.match(line) if roles[index] is not KEPT else None
        if match:
            markers[index] = (match.start(1), match.end(1))
    return markers, meta


def _scan(lines: list[str], roles: list[Role]) -> dict[str, Any]:
    """Label the lines (all PROSE to start with); the metadata the document states."""
    fields: dict[str, str] = {}
    title: str | None = None
    seen_body = False  # a paragraph other than titles and the bibliographic fields
    scan = LineScan(lines, roles)
    for line in scan.filled():
        i = scan.i
        stripped = line.strip()
        indent = indent_of(line)
        heading = _title_at(lines, i)
        if heading is not None:
            end, name = heading
            scan.keep(end)
            if title is None:
                title = name
            continue
        if _GRID_BORDER.match(line):
            scan.keep(_grid_end(lines, i))
            seen_body = True
            continue
        if _SIMPLE_BORDER.match(line):
            scan.keep(_simple_table_end(lines, i))
            seen_body = True
            continue
        if _EXPLICIT.match(line):
            scan.i = _explicit_block(lines, roles, i, indent)
            continue
        if stripped.startswith(">>>") or stripped.startswith("| ") or stripped == "|":
            scan.keep(_paragraph_end(lines, i))  # a doctest block, a line block
            seen_body = True
            continue
        field = _FIELD.match(line)
        if field and not seen_body:
            # The bibliographic field list: metadata, kept as written.
            end = _field_list_end(lines, i)
            _collect_fields(lines[i:end], fields)
            scan.keep(end)
            continue
        # A paragraph (or list items, field entries); find its end.
        end = _paragraph_end(lines, i)
        seen_body = True
        for k in range(i, end):
            if k > i and indent_of(lines[k]) < indent:
                # A dedent inside a block ("term" over its definition, a lazy list): a new one.
                roles[k] = NEW
            if _ITEM.match(lines[k]) or _OPTION_ITEM.match(lines[k]) or _FIELD.match(lines[k]):
                roles[k] = NEW
        last = lines[end - 1].rstrip()
        scan.i = end
        if last.endswith("::") and not _EXPLICIT.match(lines[end - 1]):
            scan.i = _literal_block(lines, roles, end, indent)
    meta: dict[str, Any] = clean_mapping(
        {_FIELD_NAMES.get(name.lower(), name): value for name, value in fields.items()}
    )
    if "date" in meta:
        date = loose_date(meta["date"])
        if date is None:
            del meta["date"]  # "Spring 2024": not a date to filter on, so not refused for it
        else:
            meta["date"] = date
    if "tags" not in meta and "keywords" in meta:
        meta["tags"] = meta["keywords"]
    if title is not None and "title" not in meta:
        meta["title"] = title
    return meta


def _title_at(lines: list[str], i: int) -> tuple[int, str] | None:
    """(index after the title, title text) when a section title starts at line i."""
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if _ADORNMENT.match(line) and i + 2 < len(lines):
        # Overline, title, underline of the same character.
        under = lines[i + 2]
        if (
            lines[i + 1].strip()
            and _ADORNMENT.match(under)
            and under.strip()[0] == line.strip()[0]
            and not _ADORNMENT.match(lines[i + 1])
        ):
            return i + 3, lines[i + 1].strip()
    if (
        line.strip()
        and indent_of(line) == 0
        and not _ADORNMENT.match(line)
        and _ADORNMENT.match(nxt)
        and display_width(nxt.rstrip()) >= min(display_width(line.rstrip()), 4)
    ):
        return i + 2, line.strip()
    return None


def _paragraph_end(lines: list[str], i: int) -> int:
    end = i
    while end < len(lines) and lines[end].strip():
        if end > i and (_title_at(lines, end) is not None or _GRID_BORDER.match(lines[end])):
            break
        end += 1
    return end


def _grid_end(lines: list[str], i: int) -> int:
    end = i
    while end < len(lines) and lines[end].strip()[:1] in ("+", "|"):
        end += 1
    return end


def _simple_table_end(lines: list[str], i: int) -> int:
    """A simple table ends at the first blank line after its second or third border.

    The border under the header is followed by a row, not by a blank line; the closing border
    (the second of a table without a header, the third of one with) is.
    """
    borders = 0
    end = i
    while end < len(lines):
        line = lines[end]
        if _SIMPLE_BORDER.match(line):
            borders += 1
        elif not line.strip() and borders >= 2 and _SIMPLE_BORDER.match(lines[end - 1]):
            break
        end += 1
    return end


def _block_end(lines: list[str], i: int, indent: int) -> int:
    """End of the block that continues after line i with lines indented more than `indent`."""
    end = i
    last_filled = i - 1
    while end < len(lines):
        line = lines[end]
        if line.strip():
            if indent_of(line) <= indent:
                break
            last_filled = end
        end += 1
    return last_filled + 1


def _explicit_block(lines: list[str], roles: list[Role], i: int, indent: int) -> int:
    """A directive, comment, target, footnote or substitution definition starting at line i."""
    end = _block_end(lines, i + 1, indent)
    directive = _DIRECTIVE.match(lines[i])
    name = directive.group(1).lower() if directive else ""
    local = name.rsplit(":", 1)[-1]
    prose = directive is not None and (
        name in PROSE_DIRECTIVES or (":" in name and local in _DOMAIN_PROSE)
    )
    footnote = re.match(r"^[ \t]*\.\.[ \t]+\[[^\]]+\]", lines[i]) is not None
    if not prose and not footnote:
        return keep(roles, i, end)
    roles[i] = KEPT
    k = i + 1
    # The directive's arguments and options: up to the first blank line.
    while k < end and lines[k].strip() and (not footnote):
        roles[k] = KEPT
        k += 1
    if footnote:
        return end
    _scan_content(lines, roles, k, end)
    return end


def _scan_content(lines: list[str], roles: list[Role], start: int, end: int) -> None:
    """Label the prose content of a directive as if it were a document of its own."""
    if start >= end:
        return
    inner_roles = [PROSE] * (end - start)
    _scan(lines[start:end], inner_roles)
    roles[start:end] = inner_roles


def _literal_block(lines: list[str], roles: list[Role], i: int, indent: int) -> int:
    """The indented (or quoted) literal block after a paragraph ending in "::"."""
    k = i
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k >= len(lines):
        return k
    if indent_of(lines[k]) > indent:
        return keep(roles, k, _block_end(lines, k, indent))
    quote = lines[k].lstrip()[:1]
    if indent_of(lines[k]) == indent and quote in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
        return keep(roles, k, _paragraph_end(lines, k))
    return k


def _field_list_end(lines: list[str], i: int) -> int:
    end = i
    while end < len(lines) and lines[end].strip():
        if not _FIELD.match(lines[end]) and indent_of(lines[end]) == 0:
            break
        end += 1
    return end


def _collect_fields(block: list[str], fields: dict[str, str]) -> None:
    name: str | None = None
    for line in block:
        match = _FIELD.match(line)
        if match and indent_of(line) == 0:
            name = match.group(1).strip()
            fields[name] = (match.group(2) or "").strip()
        elif name is not None:
            fields[name] = f"{fields[name]} {line.strip()}".strip()
    for key in [key for key, value in fields.items() if not value]:
        del fields[key]
