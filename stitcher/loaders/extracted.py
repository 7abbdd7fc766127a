"""What a format reader hands back to `stitcher.loaders.load`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Extracted:
    """What a format reader found: the text and the metadata stated in the file.

    `meta` uses the final key names; "title", "date" and "tags" may be present with raw values.
    `original` is the file's text as the reader decoded it, when `text` is made of the file's
    own lines (joined, trimmed, some dropped, never reordered: plain text, Markdown, info, the
    markup formats), so each line of the file can be found in `text`
    (`stitcher.loaders.lines`); None when `text` has no such lines (rendered man pages, e-mail
    bodies, the extracted formats).
    """

    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    original: str | None = None
