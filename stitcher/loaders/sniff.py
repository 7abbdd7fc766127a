"""Files without an extension: which are documents (README, LICENSE, NEWS ...) and which are text
at all, told from the name and the first bytes."""

from __future__ import annotations

import codecs
from pathlib import Path

from stitcher.errors import LoadError
from stitcher.loaders.decoding import BOMS, INFO_MARKER, decode_text

#: Names (any case) that are prose by convention, not scripts or configuration: read as .txt.
#: A Makefile, Dockerfile or shell script is text too, but indexing it as prose would only add
#: noise to searches, so other names without an extension are skipped, with that reason.
DOCUMENT_NAMES = frozenset(
    {
        "acknowledgements",
        "acknowledgments",
        "authors",
        "bugs",
        "changelog",
        "changes",
        "contributing",
        "contributors",
        "copying",
        "copyright",
        "credits",
        "faq",
        "hacking",
        "history",
        "install",
        "licence",
        "license",
        "maintainers",
        "news",
        "notice",
        "patents",
        "readme",
        "thanks",
        "todo",
        "upgrading",
    }
)

#: The reader a text file without an extension is read with.
PLAIN_TEXT = ".txt"

#: Enough to tell text from binary; a document's encoding is decided on all of it when loaded.
_SNIFF_BYTES = 8192

# Bytes no text file carries (NUL is checked apart). Tab, newlines, form feed, backspace (man
# pages' overstrike bold), ESC (terminal colours in saved output), and the unit separator and
# DEL of GNU info files (node separators, tag tables) are text.
_BINARY_CONTROLS = bytes([*range(0x01, 0x08), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x1F)])
#: At most this share of the sniffed bytes may be such controls.
_MAX_CONTROL_SHARE = 0.01


def is_document_name(name: str) -> bool:
    """Whether a file named `name` (no extension) is a document by convention, e.g. "README"."""
    return name.lower() in DOCUMENT_NAMES


def looks_like_text(path: Path) -> bool | None:
    """Whether the file at `path` starts like text (see `head_is_text`); None if it cannot be
    read (the loader says why, if it is loaded)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return None
    return head_is_text(head, whole=len(head) < _SNIFF_BYTES)


def head_is_text(head: bytes, *, whole: bool = True) -> bool:
    """Whether these first bytes of a file are text: no NUL byte (except in GNU info markers),
    almost no other control characters, and an encoding `decode_text` accepts.

    Args:
        head: The file's first bytes.
        whole: `head` is the whole file (else its last line may be cut mid-character).
    """
    if not head:
        return True
    for bom, encoding in BOMS:
        if head.startswith(bom):  # UTF-16 and UTF-32 text is full of NUL bytes
            try:
                codecs.getincrementaldecoder(encoding)().decode(head[len(bom) :], final=whole)
            except UnicodeDecodeError:
                return False
            return True
    if b"\x00" in head:
        head = INFO_MARKER.sub(b"", head)
        if b"\x00" in head:
            return False
    controls = len(head) - len(head.translate(None, _BINARY_CONTROLS))
    if controls > _MAX_CONTROL_SHARE * len(head):
        return False
    if not whole and b"\n" in head:
        head = head[: head.rindex(b"\n") + 1]
    try:
        decode_text(head, "")
    except LoadError:
        return False
    return True
