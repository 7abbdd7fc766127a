"""What the lightweight-markup readers (reST, AsciiDoc, Org) share: rewrap around structure.

Each reader keeps the source text as it is, markup included, and only joins hard-wrapped prose
lines. It knows its format's structure better than `rewrap`'s general rule, so it labels every
line first: `PROSE` (rewrap decides), `KEPT` (a literal block, a table, a directive, a heading:
copied byte for byte) or `NEW` (prose that must not be joined to the line above, e.g. a list
item start). `rewrap_lines` then rewraps all prose in one call, so the document's wrap column is
measured on all of its prose, and copies the kept lines around it.

`read_markup` is that whole path (decode, label, rewrap, trim); a reader gives it only its
labelling function, which walks the lines with a `LineScan`: the walk over filled lines, the
paragraph starts that blank lines make, and the marking of kept spans are the same in every
format, so each reader's own code is only its syntax.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any

from stitcher.loaders.decoding import decode_text
from stitcher.loaders.extracted import Extracted
from stitcher.loaders.metadata import parse_date
from stitcher.loaders.rewrap import rewrap


class Role(Enum):
    """How a line of a markup document is treated."""

    PROSE = "prose"
    KEPT = "kept"
    NEW = "new"


PROSE, KEPT, NEW = Role.PROSE, Role.KEPT, Role.NEW

#: Item markers `rewrap` does not know, by line index → (start, end): see `rewrap_lines`.
Markers = Mapping[int, tuple[int, int]]
#: A format's labelling: sets the roles of the lines (all PROSE to start with) and returns the
#: item markers and the metadata the document states.
Labeller = Callable[[list[str], list[Role]], tuple[Markers, dict[str, Any]]]


def read_markup(data: bytes, source: str, label: Labeller) -> Extracted:
    """A markup file → its text and metadata: decoded, its lines labelled by `label`, the
    prose rewrapped around the kept lines, blank lines at the start and the end dropped."""
    original = decode_text(data, source)
    lines = original.split("\n")
    roles = [PROSE] * len(lines)
    markers, meta = label(lines, roles)
    return Extracted(trim(rewrap_lines(lines, roles, markers)), meta, original)


class LineScan:
    """One pass over lines `start`..`end` of a document, labelling them.

    `filled()` yields each filled line in turn at `self.i`; blank lines in between are passed
    over and make `paragraph_start` true (the next filled line starts a block). The loop body
    moves `i` on itself: `keep(end)` for a kept span, `take(role)` for one line of text, or by
    setting `i` for anything else.
    """

    def __init__(self, lines: list[str], roles: list[Role], start: int = 0, end: int = -1):
        self.lines = lines
        self.roles = roles
        self.i = start
        self.end = len(lines) if end < 0 else end
        self.paragraph_start = True

    def filled(self) -> Iterator[str]:
        """The filled lines from `i` on, each read when `i` is at it."""
        while self.i < self.end:
            line = self.lines[self.i]
            if not line.strip():
                self.paragraph_start = True
                self.i += 1
                continue
            yield line

    def keep(self, end: int) -> None:
        """Lines `i`..`end` - 1 are kept as written; what follows starts a block."""
        keep(self.roles, self.i, end)
        self.i = end
        self.paragraph_start = True

    def take(self, role: Role) -> None:
        """Line `i` is text with this role (NEW: it starts a paragraph); go on after it."""
        self.roles[self.i] = role
        self.i += 1
        self.paragraph_start = False


def keep(roles: list[Role], start: int, end: int) -> int:
    """Label lines `start`..`end` - 1 KEPT; returns `end`, where a scan goes on."""
    for k in range(start, end):
        roles[k] = KEPT
    return end


# Rewrap never joins across a blank line and leaves blank lines and a one-line block as they
# are, so a private-use line between blank lines separates the pieces and can be split on.
_SEPARATOR = "\n\n\ue020\n\n"


def rewrap_lines(
    lines: Sequence[str],
    roles: Sequence[Role],
    markers: Mapping[int, tuple[int, int]] | None = None,
) -> str:
    """The lines, joined by "\\n", with hard-wrapped prose joined and everything kept as is.

    Args:
        lines: The document's lines (no "\\n" in them).
        roles: One role per line.
        markers: For a list item whose marker `rewrap` does not know ("#.", "**", ". "), the
            line's index → (start, end) of the marker; rewrap sees a "-" bullet of the same
            width there, so the item's hanging-indented lines are joined to it, and the marker
            is put back. The line starts a new paragraph.

    Returns:
        The text; only whitespace inside prose (and hyphens that split a word, see `rewrap`)
        differs from "\\n".join(lines).
    """
    pieces: list[tuple[bool, list[str]]] = []  # (is prose, lines)
    restore: dict[int, tuple[str, str]] = {}  # prose piece number -> (seen by rewrap, real)
    for index, (line, role) in enumerate(zip(lines, roles, strict=True)):
        prose = role is not KEPT
        span = markers.get(index) if prose and markers else None
        if not pieces or pieces[-1][0] != prose or role is NEW or span is not None:
            pieces.append((prose, []))
        if span is not None:
            start, end = span
            alias = line[:start] + "-" + " " * (end - start - 1) + line[end:]
            restore[sum(p for p, _ in pieces) - 1] = (alias[:end], line[:end])
            line = alias
        pieces[-1][1].append(line)
    prose_texts = ["\n".join(group) for is_prose, group in pieces if is_prose]
    whole = "\n".join(lines)
    if "\ue020" in whole:
        # The separator would be ambiguous; rewrap each piece alone (weaker wrap evidence).
        rewrapped = [rewrap(text, vocabulary=whole) for text in prose_texts]
    else:
        rewrapped = rewrap(_SEPARATOR.join(prose_texts), vocabulary=whole).split(_SEPARATOR)
    if len(rewrapped) != len(prose_texts):  # pragma: no cover - rewrap keeps blank lines
        rewrapped = [rewrap(text, vocabulary=whole) for text in prose_texts]
    for number, (seen, real) in restore.items():
        if rewrapped[number].startswith(seen):
            rewrapped[number] = real + rewrapped[number][len(seen) :]
        else:  # pragma: no cover - rewrap keeps a paragraph's first line as it stands
            rewrapped[number] = rewrap(prose_texts[number].replace(seen, real, 1))
    out: list[str] = []
    prose_iter = iter(rewrapped)
    for is_prose, group in pieces:
        out.append(next(prose_iter) if is_prose else "\n".join(group))
    return "\n".join(out)


def trim(text: str) -> str:
    """Drop blank lines at the start and whitespace at the end; keep the first line's indent."""
    return re.sub(r"\A(?:[ \t]*\n)+", "", text).rstrip()


def indent_of(line: str) -> int:
    """Columns of leading whitespace (a tab counts to the next multiple of 8)."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 8 - width % 8
        else:
            break
    return width


_DATE_FORMATS = (
    "%B %Y",
    "%b %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%B %d %Y",
    "%b %d %Y",
    "%Y/%m/%d",
    "%Y年%m月%d日",
)


def loose_date(value: object) -> dt.datetime | None:
    """A date as people write it in a document header, or None.

    ISO 8601 first ("2024-05-01"), then "May 2024", "1 May 2024", "May 1, 2024", "2024/05/01",
    "2024年5月1日". A header date that is none of these is dropped rather than refusing the
    document: the file's own text is still worth indexing.
    """
    date = parse_date(value)
    if date is not None or not isinstance(value, str):
        return date
    text = " ".join(value.split())
    for form in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, form).replace(tzinfo=dt.timezone.utc)
        except ValueError:
            continue
    return None
